/**
 * Everything the `svc` command prints, in the language of the terminal (`LC_ALL`, `LC_MESSAGES`, `LANG`:
 * `zh_CN.UTF-8` → Chinese; anything else → English). One interface, one object per language: a message
 * missing in a language, or taking different values, is a type error.
 */
import { terminalLocale, type Locale, type Localized } from '../i18n/locale.ts';

/**
 * The built-in packages as the web app and the emails name them (the web catalogues' plan.json `catalogue`):
 * one vocabulary everywhere. A package an operator added is shown by its id.
 */
const packageNames: Localized<Record<string, string>> = {
  en: { free: 'Free', pro: 'Pro', max_x5: 'Max x5', max_x20: 'Max x20', enterprise: 'Enterprise' },
  'zh-CN': { free: '免费版', pro: 'Pro', max_x5: 'Max x5', max_x20: 'Max x20', enterprise: '企业版' },
};

/** A day as the reader writes it ("Jan 7, 2027", "2027年1月7日"). */
function day(date: Date, locale: Locale): string {
  return new Intl.DateTimeFormat(locale, { dateStyle: 'medium' }).format(date);
}

export interface CliMessages {
  usage: string;
  unknownCommand(command: string): string;
  cannotReach(origin: string, reason: string, hint: string): string;
  notJson(url: string, status: number): string;
  loginStartFailed(reason: string): string;
  openToSignIn(url: string): string;
  checkCode(code: string): string;
  signedInAs(email: string): string;
  loginDenied: string;
  codeExpired: string;
  loginFailed(reason: string): string;
  notSignedIn: string;
  sessionInvalid: string;
  whoamiFailed(reason: string): string;
  /** `plan` is the package id; `until` when its paid period ends (nothing renews by itself). */
  whoami(account: { email: string; plan: string; until: Date | null; role: string }, baseUrl: string): string;
  alreadySignedOut: string;
  revokeFailed(reason: string): string;
  signedOutRevoked: string;
  signedOutLocally: string;
  listModelsFailed(reason: string): string;
  createUserUsage: string;
  roleMustBe(roles: string): string;
  userSaved(created: boolean, account: { email: string; role: string; id: string }): string;
  passwordRefused: string;
  pointElsewhere: string;
  pointElsewhereStored: string;
  connectionRefused: string;
  hostNotFound: string;
  timedOut: string;
  codeSent(email: string, minutes: number, url: string): string;
  codeShown(code: string, minutes: number, url: string): string;
  viaRunningServer: string;
  noLocalAdminHandle: string;
  stopServerFirst(dataDir: string, pid: number, why: string): string;
  modelsHeader: { id: string; name: string; kind: string; class: string; input: string; output: string; context: string; maxOutput: string };
  modelsPriceNote(currency: string, perTokens: string): string;
  modelKinds: Record<'chat' | 'search' | 'image' | 'speech' | 'music' | 'embedding', string>;
  ledgerUsage: string;
  ledgerNothingToArchive(before: string): string;
  ledgerArchived(month: string, rows: number, file: string): string;
  ledgerRestored(month: string, rows: number): string;
  ledgerChecked(compared: { hour: number; day: number; model_day: number; revenue_day: number }, differences: number, timezone: string, archived: string[]): string;
  keysUsage: string;
  keysFailed(reason: string): string;
  noKeys: string;
  alertsUsage: string;
  alertsFailed(reason: string): string;
  alertsOff: string;
  /** The channels under the meters: email on or off, and the webhook's URL or none. */
  alertChannels(email: boolean, webhook: string | null): string;
  webhookSecret(secret: string): string;
  noDeliveries: string;
  keyCreated(token: string): string;
  keyRevoked(id: string): string;
  keyLimits(limits: { today: string; month: string; rpm: string | null; models: string | null; expires: string | null }): string;
  creditBalance(amount: string, currency: string, payFromCredit: boolean): string;
  creditEntriesHeader: { at: string; kind: string; amount: string; balance: string; reference: string };
  creditKinds: Record<'purchase' | 'code' | 'spend' | 'refund' | 'adjustment', string>;
  noCreditEntries: string;
  creditsFailed(reason: string): string;
  redeemUsage: string;
  redeemed(amount: string, currency: string, balance: string): string;
  mintUsage: string;
  minted(count: number, value: string, currency: string, batchId: string): string;
  exportUsage: string;
  exportFailed(reason: string): string;
}

const en: CliMessages = {
  usage: `usage:
  svc login [--base-url URL] [--client NAME]   sign this machine in by device code
  svc whoami                                  show the signed-in account
  svc logout                                  revoke the stored session token
  svc models                                  the models you may use: name, kind, prices, limits
  svc keys list                               your API keys, their limits and today's spend
  svc keys create --name N [--budget-day 5] [--budget-month 50] [--rpm 30] [--models a,b] [--expires 2027-01-31]
                                              mint a key (the token is shown once) with its own limits
  svc keys update <id> [--name N] [--budget-day 5|none] [--budget-month …] [--rpm …] [--models …] [--expires …]
                                              change a key's limits; none lifts one
  svc keys revoke <id>                        revoke a key at once
  svc alerts [--org ID]                       spend alert thresholds per pool and key cap, and the channels
  svc alerts set <meter> 80,100|none          alert at these percentages of a meter (none: off)
  svc alerts email on|off | webhook <URL|none> | test | deliveries
                                              the channels; send a signed test event; what was sent
  svc admin create-user --email E [--role member|support|admin] [--email-code]
                                              the password is asked for (no echo) or read from stdin,
                                              never taken from the command line; --email-code sends
                                              a sign-in code instead (while svc runs on the embedded
                                              database, the running server does it)
  svc search ingest <file|dir|urls.txt|URL>… [--base-url URL] [--timeout-ms N] [--max-bytes N]
                                              add Markdown, HTML and text to the embedded search index
                                              (--base-url: where the files live on the web); URLs are
                                              fetched over https, never from private or loopback
                                              addresses (search.ingest in the config lists exceptions)
  svc search stats                            documents, size, last ingest and top domains of that index
  svc ledger archive --before YYYY-MM [--dir PATH]
                                              write each ledger month before that one to
                                              PATH/usage_ledger_YYYY_MM.jsonl.gz (default ./data/archive)
                                              and drop it from the database; charts keep their figures
  svc ledger restore <file>                   put an archived month back
  svc ledger check [--from YYYY-MM-DD] [--to YYYY-MM-DD]
                                              compare the usage rollups with the ledger (months not
                                              archived); prints each difference, exits 1 if any
  svc credits                                 your credit balance and latest entries
  svc credits redeem CODE                     redeem a credit code
  svc credits mint --value V --count N [--uses N] [--expires DATE] [--note TEXT]
                                              (operator, on the server's database) mint a batch of
                                              credit codes; the CSV goes to standard output
  svc export usage|payments|credits --from DATE --to DATE [--granularity request|day]
                                              CSV of your usage, orders or credit entries, streamed

The server: --base-url URL, or the environment variable SVC_BASE_URL, or http://localhost:8080.
whoami, models, keys and logout use the server you signed in to.`,
  unknownCommand: (command) => `unknown command: ${command}`,
  cannotReach: (origin, reason, hint) => `cannot reach ${origin} (${reason}). ${hint}`,
  notJson: (url, status) => `${url} answered ${status} with a non-JSON body`,
  loginStartFailed: (reason) => `could not start login: ${reason}`,
  openToSignIn: (url) => `To sign in, open ${url}`,
  checkCode: (code) => `and check that it shows the code ${code}. Waiting for approval…`,
  signedInAs: (email) => `Signed in as ${email}.`,
  loginDenied: 'the login was denied in the browser.',
  codeExpired: 'the code expired before it was approved; run `svc login` again.',
  loginFailed: (reason) => `login failed: ${reason}`,
  notSignedIn: 'not signed in; run `svc login`.',
  sessionInvalid: 'the stored session is no longer valid; run `svc login`.',
  whoamiFailed: (reason) => `whoami failed: ${reason}`,
  whoami: ({ email, plan, until, role }, baseUrl) =>
    `${email} (plan ${packageNames.en[plan] ?? plan}${until ? `, ends on ${day(until, 'en')}, won't renew` : ''}, role ${role}) at ${baseUrl}`,
  alreadySignedOut: 'Not signed in.',
  revokeFailed: (reason) => `warning: could not revoke the token on the server (${reason}); removing it locally.`,
  signedOutRevoked: 'Signed out; the session token is revoked.',
  signedOutLocally: 'Signed out locally.',
  listModelsFailed: (reason) => `listing models failed: ${reason}`,
  createUserUsage: 'usage: svc admin create-user --email <email> [--role member|support|admin] [--email-code]',
  roleMustBe: (roles) => `--role must be one of ${roles}`,
  userSaved: (created, { email, role, id }) => `${created ? 'Created' : 'Updated'} ${email} with role ${role} (id ${id}).`,
  pointElsewhere: 'Is svc running there? Point svc at another server with --base-url URL or SVC_BASE_URL=URL (see svc --help).',
  pointElsewhereStored: 'Is svc running there? This is the server you signed in to; to use another, run svc login --base-url URL (or set SVC_BASE_URL).',
  connectionRefused: 'connection refused',
  hostNotFound: 'host not found',
  timedOut: 'timed out',
  passwordRefused:
    '--password is not accepted: command-line arguments are visible to other users (ps) and stay in shell history. ' +
    'Type the password when asked, pipe it on stdin (e.g. `svc admin create-user --email E < password.txt`), or use --email-code.',
  codeSent: (email, minutes, url) => `Sent a sign-in code to ${email}; it works for ${minutes} minutes at ${url}.`,
  codeShown: (code, minutes, url) => `mail.smtp is not configured, so nothing was emailed. The sign-in code is ${code} (valid ${minutes} minutes at ${url}).`,
  viaRunningServer: 'The embedded database is held by the running svc, so it did this for you.',
  noLocalAdminHandle: 'it did not leave a way in for this command (an older svc, or one still starting)',
  stopServerFirst: (dataDir, pid, why) =>
    `the embedded database in ${dataDir} is held by a running svc (process ${pid}), and this command could not ask it instead: ${why}. ` +
    'Stop that server first (Ctrl-C where it runs), run this command again, then start the server again. With DATABASE_URL (PostgreSQL) both can run at once.',
  modelsHeader: { id: 'ID', name: 'NAME', kind: 'KIND', class: 'CLASS', input: 'INPUT', output: 'OUTPUT', context: 'CONTEXT', maxOutput: 'MAX OUTPUT' },
  modelsPriceNote: (currency, perTokens) => `Prices in ${currency} per ${perTokens} tokens, after the current promotion; context and max output in tokens.`,
  modelKinds: { chat: 'chat', search: 'search', image: 'image', speech: 'speech', music: 'music', embedding: 'embedding' },
  ledgerUsage: 'usage: svc ledger archive --before YYYY-MM [--dir PATH] | svc ledger restore <file> | svc ledger check [--from YYYY-MM-DD] [--to YYYY-MM-DD]',
  ledgerNothingToArchive: (before) => `no ledger month before ${before} is left to archive`,
  ledgerArchived: (month, rows, file) => `archived ${month}: ${rows} rows to ${file}`,
  ledgerRestored: (month, rows) => `restored ${month}: ${rows} rows`,
  ledgerChecked: (compared, differences, timezone, archived) =>
    `${differences} differences (compared ${compared.hour} hour, ${compared.day} day, ${compared.model_day} model-day and ${compared.revenue_day} revenue-day groups; days in ${timezone}; archived months skipped: ${archived.length > 0 ? archived.join(', ') : 'none'})`,
  keysUsage:
    'usage: svc keys list | create --name N [--budget-day D] [--budget-month M] [--rpm R] [--models a,b] [--expires YYYY-MM-DD] | update <id> [same flags; none lifts one] | revoke <id>',
  keysFailed: (reason) => `keys: ${reason}`,
  alertsUsage:
    'usage: svc alerts [list] | set <meter> <80,100|none> | email on|off | webhook <https URL|none> | test | deliveries  [--org ID]',
  alertsFailed: (reason) => `alerts: ${reason}`,
  alertsOff: 'off',
  alertChannels: (email, webhook) => `email ${email ? 'on' : 'off'}; webhook ${webhook ?? 'none'}`,
  webhookSecret: (secret) => `Webhook signing secret (shown this once): ${secret}`,
  noDeliveries: 'No alert emails or webhooks sent yet: svc alerts test sends one to the webhook.',
  noKeys: 'No API keys yet: svc keys create --name NAME',
  keyCreated: (token) => `Key created. Its token (shown this once): ${token}`,
  keyRevoked: (id) => `Key ${id} is revoked.`,
  keyLimits: ({ today, month, rpm, models, expires }) =>
    `today ${today}; this month ${month}; rpm ${rpm ?? "plan's"}; models ${models ?? 'all of the plan'}; expires ${expires ?? 'never'}`,
  creditBalance: (amount, currency, payFromCredit) =>
    `Credit: ${amount} ${currency}. ${payFromCredit ? 'Pays for requests once a pool is exhausted (at list price).' : 'Not used when a pool is exhausted (turn it on on the Credits page).'}`,
  creditEntriesHeader: { at: 'When', kind: 'Kind', amount: 'Amount', balance: 'Balance', reference: 'Reference' },
  creditKinds: { purchase: 'bought', code: 'code', spend: 'spent', refund: 'returned', adjustment: 'adjustment' },
  noCreditEntries: 'No credit entries yet.',
  creditsFailed: (reason) => `credit request failed: ${reason}`,
  redeemUsage: 'usage: svc credits redeem CODE',
  redeemed: (amount, currency, balance) => `Redeemed: +${amount} ${currency}. Credit now ${balance} ${currency}.`,
  mintUsage: 'usage: svc credits mint --value 5 --count 100 [--uses 1] [--expires 2027-01-01] [--note TEXT] > codes.csv',
  minted: (count, value, currency, batchId) => `Minted ${count} codes of ${value} ${currency} (batch ${batchId}); the CSV went to standard output.`,
  exportUsage: 'usage: svc export usage|payments|credits --from YYYY-MM-DD --to YYYY-MM-DD [--granularity request|day] > file.csv',
  exportFailed: (reason) => `export failed: ${reason}`,
};
const zhCN: CliMessages = {
  usage: `用法：
  svc login [--base-url URL] [--client NAME]   通过设备码让这台机器登录
  svc whoami                                  显示当前登录的账户
  svc logout                                  撤销本机保存的会话令牌
  svc models                                  您可以使用的模型：名称、类型、价格、上限
  svc keys list                               您的 API 密钥、各自的限制和今日消费
  svc keys create --name N [--budget-day 5] [--budget-month 50] [--rpm 30] [--models a,b] [--expires 2027-01-31]
                                              创建带自身限制的密钥（令牌只显示一次）
  svc keys update <id> [--name N] [--budget-day 5|none] [--budget-month …] [--rpm …] [--models …] [--expires …]
                                              修改密钥的限制；none 表示取消该项限制
  svc keys revoke <id>                        立即撤销密钥
  svc alerts [--org 组织ID]                   各用量池和密钥上限的提醒阈值，以及提醒渠道
  svc alerts set <计量项> 80,100|none         在计量项达到这些百分比时提醒（none：关闭）
  svc alerts email on|off | webhook <地址|none> | test | deliveries
                                              设置渠道；发送一次签名测试事件；查看已发送的提醒
  svc admin create-user --email E [--role member|support|admin] [--email-code]
                                              密码在提示时输入（不回显）或从标准输入读取，
                                              绝不从命令行参数获取；--email-code 改为发送登录验证码
                                              （svc 使用内置数据库运行时，由运行中的服务器代为完成）
  svc search ingest <文件|目录|urls.txt|URL>… [--base-url URL] [--timeout-ms N] [--max-bytes N]
                                              将 Markdown、HTML 和纯文本加入内置搜索索引
                                              （--base-url：这些文件在网上的地址）；网址只通过
                                              https 获取，绝不访问私有或回环地址（例外见配置中的
                                              search.ingest）
  svc search stats                            内置搜索索引的文档数、大小、最近导入时间和主要域名
  svc ledger archive --before YYYY-MM [--dir PATH]
                                              把该月之前的每个账本月份写到
                                              PATH/usage_ledger_YYYY_MM.jsonl.gz（默认 ./data/archive）
                                              并从数据库删除；图表数字保持不变
  svc ledger restore <文件>                   恢复一个已归档的月份
  svc ledger check [--from YYYY-MM-DD] [--to YYYY-MM-DD]
                                              核对用量汇总与账本（未归档的月份）；逐条列出差异，
                                              有差异时退出码为 1
  svc credits                                 您的余额和最近的余额记录
  svc credits redeem 充值码                   兑换充值码
  svc credits mint --value V --count N [--uses N] [--expires 日期] [--note 备注]
                                              （运维，直接使用服务器的数据库）生成一批充值码；
                                              CSV 写到标准输出
  svc export usage|payments|credits --from 日期 --to 日期 [--granularity request|day]
                                              以 CSV 流式导出您的用量、订单或余额记录

服务器：--base-url URL，或环境变量 SVC_BASE_URL，默认 http://localhost:8080。
whoami、models、keys 和 logout 使用您登录时的服务器。`,
  unknownCommand: (command) => `未知命令：${command}`,
  cannotReach: (origin, reason, hint) => `无法连接 ${origin}（${reason}）。${hint}`,
  notJson: (url, status) => `${url} 返回了 ${status}，但响应体不是 JSON`,
  loginStartFailed: (reason) => `无法发起登录：${reason}`,
  openToSignIn: (url) => `请在浏览器中打开 ${url} 进行登录，`,
  checkCode: (code) => `并确认页面上显示的代码是 ${code}。正在等待批准…`,
  signedInAs: (email) => `已登录为 ${email}。`,
  loginDenied: '此次登录已在浏览器中被拒绝。',
  codeExpired: '代码在获得批准前已过期，请重新运行 `svc login`。',
  loginFailed: (reason) => `登录失败：${reason}`,
  notSignedIn: '尚未登录，请运行 `svc login`。',
  sessionInvalid: '本机保存的会话已失效，请运行 `svc login`。',
  whoamiFailed: (reason) => `查询账户失败：${reason}`,
  whoami: ({ email, plan, until, role }, baseUrl) =>
    `${email}（套餐 ${packageNames['zh-CN'][plan] ?? plan}${until ? `，${day(until, 'zh-CN')} 到期，不会自动续费` : ''}，角色 ${role}），服务器 ${baseUrl}`,
  alreadySignedOut: '当前未登录。',
  revokeFailed: (reason) => `警告：无法在服务器上撤销令牌（${reason}），将只删除本机保存的令牌。`,
  signedOutRevoked: '已退出登录，会话令牌已撤销。',
  signedOutLocally: '已在本机退出登录。',
  listModelsFailed: (reason) => `获取模型列表失败：${reason}`,
  createUserUsage: '用法：svc admin create-user --email <邮箱> [--role member|support|admin] [--email-code]',
  roleMustBe: (roles) => `--role 必须是 ${roles} 之一`,
  userSaved: (created, { email, role, id }) => `已${created ? '创建' : '更新'}用户 ${email}，角色为 ${role}（ID ${id}）。`,
  pointElsewhere: 'svc 是否在那里运行？可用 --base-url URL 或 SVC_BASE_URL=URL 指向另一台服务器（见 svc --help）。',
  pointElsewhereStored: 'svc 是否在那里运行？这是您登录时使用的服务器；要改用其他服务器，请运行 svc login --base-url URL（或设置 SVC_BASE_URL）。',
  connectionRefused: '连接被拒绝',
  hostNotFound: '找不到主机',
  timedOut: '连接超时',
  passwordRefused:
    '不接受 --password：命令行参数对其他用户可见（ps），并会留在 shell 历史中。' +
    '请在提示时输入密码，或通过标准输入传入（例如 `svc admin create-user --email E < password.txt`），或使用 --email-code。',
  codeSent: (email, minutes, url) => `已向 ${email} 发送登录验证码，${minutes} 分钟内可在 ${url} 使用。`,
  codeShown: (code, minutes, url) => `未配置 mail.smtp，因此没有发送邮件。登录验证码为 ${code}（${minutes} 分钟内可在 ${url} 使用）。`,
  viaRunningServer: '内置数据库正由运行中的 svc 使用，已由它代为完成此操作。',
  noLocalAdminHandle: '它没有为此命令留下访问入口（可能是旧版 svc，或仍在启动中）',
  stopServerFirst: (dataDir, pid, why) =>
    `${dataDir} 中的内置数据库正由运行中的 svc（进程 ${pid}）使用，且此命令无法改由它代为执行：${why}。` +
    '请先停止该服务器（在其运行的终端按 Ctrl-C），再次运行此命令，然后重新启动服务器。若使用 DATABASE_URL（PostgreSQL），两者可以同时运行。',
  modelsHeader: { id: 'ID', name: '名称', kind: '类型', class: '档位', input: '输入', output: '输出', context: '上下文', maxOutput: '最大输出' },
  modelsPriceNote: (currency, perTokens) => `价格单位为 ${currency} / ${perTokens} token，已计入当前优惠；上下文和最大输出以 token 计。`,
  modelKinds: { chat: '对话', search: '搜索', image: '图像', speech: '语音', music: '音乐', embedding: '嵌入' },
  ledgerUsage: '用法：svc ledger archive --before YYYY-MM [--dir PATH] | svc ledger restore <文件> | svc ledger check [--from YYYY-MM-DD] [--to YYYY-MM-DD]',
  ledgerNothingToArchive: (before) => `${before} 之前没有可归档的账本月份`,
  ledgerArchived: (month, rows, file) => `已归档 ${month}：${rows} 行，写入 ${file}`,
  ledgerRestored: (month, rows) => `已恢复 ${month}：${rows} 行`,
  ledgerChecked: (compared, differences, timezone, archived) =>
    `${differences} 处差异（比较了 ${compared.hour} 个小时分组、${compared.day} 个日分组、${compared.model_day} 个模型日分组和 ${compared.revenue_day} 个收入日分组；日期按 ${timezone}；跳过的已归档月份：${archived.length > 0 ? archived.join('、') : '无'}）`,
  keysUsage: '用法：svc keys list | create --name N [--budget-day D] [--budget-month M] [--rpm R] [--models a,b] [--expires YYYY-MM-DD] | update <id> [同样的参数；none 表示取消] | revoke <id>',
  keysFailed: (reason) => `keys：${reason}`,
  alertsUsage:
    '用法：svc alerts [list] | set <计量项> <80,100|none> | email on|off | webhook <https 地址|none> | test | deliveries  [--org 组织ID]',
  alertsFailed: (reason) => `alerts：${reason}`,
  alertsOff: '关闭',
  alertChannels: (email, webhook) => `邮件${email ? '开启' : '关闭'}；Webhook ${webhook ?? '未设置'}`,
  webhookSecret: (secret) => `Webhook 签名密钥（只显示这一次）：${secret}`,
  noDeliveries: '还没有发送过提醒邮件或 Webhook：svc alerts test 会向 Webhook 发送一次。',
  noKeys: '还没有 API 密钥：svc keys create --name 名称',
  keyCreated: (token) => `密钥已创建。其令牌（只显示这一次）：${token}`,
  keyRevoked: (id) => `密钥 ${id} 已撤销。`,
  keyLimits: ({ today, month, rpm, models, expires }) =>
    `今日 ${today}；本月 ${month}；每分钟请求 ${rpm ?? '按套餐'}；模型 ${models ?? '套餐内全部'}；有效期至 ${expires ?? '永久'}`,
  creditBalance: (amount, currency, payFromCredit) =>
    `余额：${amount} ${currency}。${payFromCredit ? '额度用完后按标价从余额支付请求。' : '额度用完时不使用余额（可在"余额"页面开启）。'}`,
  creditEntriesHeader: { at: '时间', kind: '类型', amount: '金额', balance: '余额', reference: '关联' },
  creditKinds: { purchase: '购买', code: '充值码', spend: '支出', refund: '退回', adjustment: '调整' },
  noCreditEntries: '还没有余额记录。',
  creditsFailed: (reason) => `余额请求失败：${reason}`,
  redeemUsage: '用法：svc credits redeem 充值码',
  redeemed: (amount, currency, balance) => `兑换成功：+${amount} ${currency}。当前余额 ${balance} ${currency}。`,
  mintUsage: '用法：svc credits mint --value 5 --count 100 [--uses 1] [--expires 2027-01-01] [--note 备注] > codes.csv',
  minted: (count, value, currency, batchId) => `已生成 ${count} 个面值 ${value} ${currency} 的充值码（批次 ${batchId}）；CSV 已写到标准输出。`,
  exportUsage: '用法：svc export usage|payments|credits --from YYYY-MM-DD --to YYYY-MM-DD [--granularity request|day] > file.csv',
  exportFailed: (reason) => `导出失败：${reason}`,
};
const messages: Localized<CliMessages> = { en, 'zh-CN': zhCN };

/** The CLI's language and its messages, from the terminal's environment. */
export function cliLanguage(env: Record<string, string | undefined>): { locale: Locale; say: CliMessages } {
  const locale = terminalLocale(env);
  return { locale, say: messages[locale] };
}

/** A server error envelope's text in the terminal's language (`messageZh` for Chinese), or a fallback. */
export function envelopeMessage(locale: Locale, body: { message?: unknown; messageZh?: unknown }, fallback: string | number): string {
  const text = locale === 'zh-CN' ? (body.messageZh ?? body.message) : body.message;
  return typeof text === 'string' ? text : String(fallback);
}
