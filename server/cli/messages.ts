/**
 * Everything the `svc` command prints, in the language of the terminal (`LC_ALL`, `LC_MESSAGES`, `LANG`:
 * `zh_CN.UTF-8` → Chinese; anything else → English). One interface, one object per language: a message
 * missing in a language, or taking different values, is a type error.
 */
import { terminalLocale, type Locale, type Localized } from '../i18n/locale.ts';

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
  whoami(account: { email: string; plan: string; role: string }, baseUrl: string): string;
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
}

const en: CliMessages = {
  usage: `usage:
  svc login [--base-url URL] [--client NAME]   sign this machine in by device code
  svc whoami                                  show the signed-in account
  svc logout                                  revoke the stored session token
  svc models                                  list the models you may use
  svc admin create-user --email E [--role member|support|admin] [--email-code]
                                              the password is asked for (no echo) or read from stdin,
                                              never taken from the command line; --email-code sends
                                              a sign-in code instead
  svc search ingest <file|dir|urls.txt|URL>… [--base-url URL] [--timeout-ms N] [--max-bytes N]
                                              add Markdown, HTML and text to the embedded search index
                                              (--base-url: where the files live on the web)
  svc search stats                            documents, size, last ingest and top domains of that index

The server: --base-url URL, or the environment variable SVC_BASE_URL, or http://localhost:8080.
whoami, models and logout use the server you signed in to.`,
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
  whoami: ({ email, plan, role }, baseUrl) => `${email} (plan ${plan}, role ${role}) at ${baseUrl}`,
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
};

const zhCN: CliMessages = {
  usage: `用法：
  svc login [--base-url URL] [--client NAME]   通过设备码让这台机器登录
  svc whoami                                  显示当前登录的账户
  svc logout                                  撤销本机保存的会话令牌
  svc models                                  列出您可以使用的模型
  svc admin create-user --email E [--role member|support|admin] [--email-code]
                                              密码在提示时输入（不回显）或从标准输入读取，
                                              绝不从命令行参数获取；--email-code 改为发送登录验证码
  svc search ingest <文件|目录|urls.txt|URL>… [--base-url URL] [--timeout-ms N] [--max-bytes N]
                                              将 Markdown、HTML 和纯文本加入内置搜索索引
                                              （--base-url：这些文件在网上的地址）
  svc search stats                            内置搜索索引的文档数、大小、最近导入时间和主要域名

服务器：--base-url URL，或环境变量 SVC_BASE_URL，默认 http://localhost:8080。
whoami、models 和 logout 使用您登录时的服务器。`,
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
  whoami: ({ email, plan, role }, baseUrl) => `${email}（套餐 ${plan}，角色 ${role}），服务器 ${baseUrl}`,
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
