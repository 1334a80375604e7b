/**
 * The one code table for the whole service (spec §7, DESIGN §5). Every error a client can see has a row
 * here: HTTP status, OpenAI-style `type`, default stage, suggested actions and bilingual default text.
 * `message` and `messageZh` are each a whole sentence saying the same thing, with the same numbers, and
 * no `{placeholders}` (test/unit/errors/codes.test.ts checks every row). A message that carries values is
 * built where it is thrown, with `bilingual(…)` from `app-error.ts`.
 */
export type ErrorStage =
  | 'auth'
  | 'validation'
  | 'rate_limit'
  | 'quota'
  | 'routing'
  | 'upstream'
  | 'stream'
  | 'payment'
  | 'internal';

export type ErrorAction = 'sign_in' | 'fix_request' | 'retry_later' | 'switch_model' | 'upgrade' | 'top_up' | 'wait';

export interface ErrorCodeInfo {
  status: number;
  type: string;
  stage: ErrorStage;
  actions: readonly ErrorAction[];
  message: string;
  messageZh: string;
}

const code = (info: ErrorCodeInfo) => info;

export const errorCodes = {
  invalid_request: code({
    status: 400,
    type: 'invalid_request_error',
    stage: 'validation',
    actions: ['fix_request'],
    message: 'The request is invalid.',
    messageZh: '请求无效，请检查请求内容。',
  }),
  invalid_json: code({
    status: 400,
    type: 'invalid_request_error',
    stage: 'validation',
    actions: ['fix_request'],
    message: 'The request body is not valid JSON.',
    messageZh: '请求体不是有效的 JSON。',
  }),
  tools_require_non_streaming: code({
    status: 400,
    type: 'invalid_request_error',
    stage: 'validation',
    actions: ['fix_request'],
    message: 'Requests that use tools must set "stream": false.',
    messageZh: '使用工具（tools）的请求必须设置 "stream": false。',
  }),
  sign_in_required: code({
    status: 401,
    type: 'authentication_error',
    stage: 'auth',
    actions: ['sign_in'],
    message: 'Sign in required: the credential is missing or invalid.',
    messageZh: '请先登录：凭证缺失或无效。',
  }),
  invalid_credentials: code({
    status: 401,
    type: 'authentication_error',
    stage: 'auth',
    actions: ['sign_in'],
    message: 'The email or password is incorrect.',
    messageZh: '邮箱或密码不正确。',
  }),
  account_disabled: code({
    status: 401,
    type: 'authentication_error',
    stage: 'auth',
    actions: [],
    message: 'This account is disabled; contact support.',
    messageZh: '该账户已被停用，请联系客服。',
  }),
  account_exists: code({
    status: 409,
    type: 'invalid_request_error',
    stage: 'auth',
    actions: ['sign_in'],
    message: 'An account with this email already exists; sign in instead.',
    messageZh: '该邮箱已注册，请直接登录。',
  }),
  authorization_pending: code({
    status: 400,
    type: 'invalid_request_error',
    stage: 'auth',
    actions: ['wait'],
    message: 'The device code has not been approved yet; keep polling at the given interval.',
    messageZh: '设备码尚未获得批准，请按指定间隔继续轮询。',
  }),
  slow_down: code({
    status: 400,
    type: 'invalid_request_error',
    stage: 'auth',
    actions: ['wait'],
    message: 'Polling too fast: wait 5 seconds longer between polls from now on.',
    messageZh: '轮询过于频繁：此后每次轮询的间隔请再延长 5 秒。',
  }),
  access_denied: code({
    status: 400,
    type: 'invalid_request_error',
    stage: 'auth',
    actions: [],
    message: 'The user denied the device login.',
    messageZh: '用户拒绝了此次设备登录。',
  }),
  expired_token: code({
    status: 400,
    type: 'invalid_request_error',
    stage: 'auth',
    actions: ['sign_in'],
    message: 'The device code has expired; start a new device login.',
    messageZh: '设备码已过期，请重新发起设备登录。',
  }),
  invalid_grant: code({
    status: 400,
    type: 'invalid_request_error',
    stage: 'auth',
    actions: ['sign_in'],
    message: 'The code or token is unknown, has expired, or has already been used.',
    messageZh: '代码或令牌无效、已过期或已被使用。',
  }),
  invalid_client: code({
    status: 401,
    type: 'authentication_error',
    stage: 'auth',
    actions: ['fix_request'],
    message: 'The OAuth client is unknown or not the one this grant was issued to; register the client again.',
    messageZh: 'OAuth 客户端不存在，或不是此授权所属的客户端，请重新注册客户端。',
  }),
  invalid_target: code({
    status: 400,
    type: 'invalid_request_error',
    stage: 'validation',
    actions: ['fix_request'],
    message: 'The resource named in the OAuth request is not one this server issues tokens for.',
    messageZh: 'OAuth 请求中指定的 resource 不是本服务器签发令牌的资源。',
  }),
  invalid_redirect_uri: code({
    status: 400,
    type: 'invalid_request_error',
    stage: 'validation',
    actions: ['fix_request'],
    message: 'A redirect URI must be https, or http on a loopback address.',
    messageZh: '重定向 URI 必须使用 https，或是回环地址上的 http。',
  }),
  invalid_client_metadata: code({
    status: 400,
    type: 'invalid_request_error',
    stage: 'validation',
    actions: ['fix_request'],
    message: 'The client registration metadata is invalid.',
    messageZh: '客户端注册信息无效。',
  }),
  unsupported_grant_type: code({
    status: 400,
    type: 'invalid_request_error',
    stage: 'validation',
    actions: ['fix_request'],
    message: 'This grant type is not supported by the token endpoint.',
    messageZh: '令牌端点不支持此授权类型。',
  }),
  forbidden: code({
    status: 403,
    type: 'permission_error',
    stage: 'auth',
    actions: [],
    message: 'You are not allowed to do this.',
    messageZh: '您无权执行此操作。',
  }),
  model_not_found: code({
    status: 404,
    type: 'invalid_request_error',
    stage: 'routing',
    actions: ['switch_model'],
    message: 'The model does not exist or is not available to you.',
    messageZh: '该模型不存在，或您当前无法使用。',
  }),
  not_found: code({
    status: 404,
    type: 'not_found_error',
    stage: 'routing',
    actions: [],
    message: 'Not found.',
    messageZh: '未找到请求的资源。',
  }),
  tool_not_found: code({
    status: 404,
    type: 'invalid_request_error',
    stage: 'routing',
    actions: ['fix_request'],
    message: 'There is no tool with that name on this server.',
    messageZh: '本服务器上没有该名称的工具。',
  }),
  method_not_allowed: code({
    status: 405,
    type: 'invalid_request_error',
    stage: 'routing',
    actions: ['fix_request'],
    message: 'Method not allowed.',
    messageZh: '不支持该请求方法。',
  }),
  request_timeout: code({
    status: 408,
    type: 'invalid_request_error',
    stage: 'validation',
    actions: ['retry_later'],
    message: 'The request was not received in time.',
    messageZh: '未能在规定时间内收到完整的请求。',
  }),
  headers_too_large: code({
    status: 431,
    type: 'invalid_request_error',
    stage: 'validation',
    actions: ['fix_request'],
    message: 'The request headers are too large.',
    messageZh: '请求头过大。',
  }),
  payload_too_large: code({
    status: 413,
    type: 'invalid_request_error',
    stage: 'validation',
    actions: ['fix_request'],
    message: 'The request body is too large.',
    messageZh: '请求体过大。',
  }),
  range_not_satisfiable: code({
    status: 416,
    type: 'invalid_request_error',
    stage: 'validation',
    actions: ['fix_request'],
    message: 'The requested byte range is outside the file.',
    messageZh: '请求的字节范围超出了文件大小。',
  }),
  unsupported_media_type: code({
    status: 415,
    type: 'invalid_request_error',
    stage: 'validation',
    actions: ['fix_request'],
    message: 'Requests with a body must carry Content-Type: application/json.',
    messageZh: '带请求体的请求必须设置 Content-Type: application/json。',
  }),
  quota_exceeded: code({
    status: 402,
    type: 'insufficient_quota',
    stage: 'quota',
    actions: ['upgrade', 'top_up', 'wait'],
    message: 'Your usage pool is exhausted.',
    messageZh: '您的用量额度已用完。',
  }),
  payment_provider_unavailable: code({
    status: 503,
    type: 'api_error',
    stage: 'payment',
    actions: ['retry_later'],
    message: 'This payment method is not available.',
    messageZh: '该支付方式暂不可用。',
  }),
  payment_provider_error: code({
    status: 502,
    type: 'api_error',
    stage: 'payment',
    actions: ['retry_later'],
    message: 'The payment provider did not answer as expected; try again later.',
    messageZh: '支付服务商未正常响应，请稍后重试。',
  }),
  order_not_refundable: code({
    status: 409,
    type: 'invalid_request_error',
    stage: 'payment',
    actions: [],
    message: 'Only a paid order can be refunded.',
    messageZh: '只有已支付的订单可以退款。',
  }),
  rate_limited: code({
    status: 429,
    type: 'rate_limit_error',
    stage: 'rate_limit',
    actions: ['wait'],
    message: 'Too many requests; slow down and retry.',
    messageZh: '请求过于频繁，请放慢速度后重试。',
  }),
  upstream_error: code({
    status: 502,
    type: 'api_error',
    stage: 'upstream',
    actions: ['retry_later', 'switch_model'],
    message: 'The model server failed; your quota for this turn was refunded.',
    messageZh: '模型服务出错，本次请求占用的额度已退还。',
  }),
  upstream_rejected: code({
    // The status is the upstream's own (400, 404, 413 or 422): the request itself is at fault.
    status: 400,
    type: 'invalid_request_error',
    stage: 'upstream',
    actions: ['fix_request'],
    message: 'The model server rejected the request; nothing was billed.',
    messageZh: '上游模型服务拒绝了该请求，本轮未计费。',
  }),
  upstream_rate_limited: code({
    status: 429,
    type: 'rate_limit_error',
    stage: 'upstream',
    actions: ['wait', 'switch_model'],
    message: 'The model server is busy (too many requests); nothing was billed. Retry after the time given in Retry-After.',
    messageZh: '上游模型服务繁忙（请求过多），本轮未计费；请在 Retry-After 指定的时间后重试。',
  }),
  upstream_unavailable: code({
    status: 503,
    type: 'api_error',
    stage: 'upstream',
    actions: ['retry_later', 'switch_model'],
    message: 'The model server is unavailable; your quota for this turn was refunded.',
    messageZh: '模型服务暂时不可用，本次请求占用的额度已退还。',
  }),
  upstream_not_configured: code({
    // Not transient: retrying cannot help until the operator configures a model server.
    status: 503,
    type: 'api_error',
    stage: 'routing',
    actions: [],
    message: 'No model server is configured for this model: the operator must set SVC_UPSTREAM_URL, or models.<id>.deployments in the config file. Nothing was billed.',
    messageZh: '此模型尚未配置模型服务器：需由运维人员设置 SVC_UPSTREAM_URL，或在配置文件中设置 models.<id>.deployments。本次未计费。',
  }),
  upstream_timeout: code({
    status: 504,
    type: 'api_error',
    stage: 'upstream',
    actions: ['retry_later', 'switch_model'],
    message: 'The model server timed out; your quota for this turn was refunded.',
    messageZh: '模型服务响应超时，本次请求占用的额度已退还。',
  }),
  service_unavailable: code({
    status: 503,
    type: 'api_error',
    stage: 'internal',
    actions: ['retry_later'],
    message: 'The service is temporarily unavailable.',
    messageZh: '服务暂时不可用，请稍后重试。',
  }),
  mail_not_configured: code({
    // Not transient: no code can be delivered until the operator configures a mail server.
    status: 503,
    type: 'api_error',
    stage: 'internal',
    actions: [],
    message: 'This server cannot send email (no mail server is configured), so sign-up and sign-in codes cannot be delivered. Sign in with a password, or ask the operator to set mail.smtp.',
    messageZh: '本服务器无法发送邮件（未配置邮件服务器），因此无法发送注册和登录验证码。请使用密码登录，或请运维人员设置 mail.smtp。',
  }),
  key_expired: code({
    status: 401,
    type: 'authentication_error',
    stage: 'auth',
    actions: [],
    message: "This API key has passed its expiry date; create a new key or extend the key's expiry.",
    messageZh: '该 API 密钥已超过其有效期；请创建新密钥或延长该密钥的有效期。',
  }),
  key_budget_exceeded: code({
    status: 402,
    type: 'insufficient_quota',
    stage: 'quota',
    actions: ['wait'],
    message: "This API key's spend cap is reached; it resets with its window, or the key's owner can raise it.",
    messageZh: '该 API 密钥的消费上限已达到；上限会随周期重置，也可由密钥所有者调高。',
  }),
  key_rate_limited: code({
    status: 429,
    type: 'rate_limit_error',
    stage: 'rate_limit',
    actions: ['wait'],
    message: "This API key's requests-per-minute cap is reached; retry after the time given in Retry-After.",
    messageZh: '该 API 密钥的每分钟请求数上限已达到；请在 Retry-After 指定的时间后重试。',
  }),
  key_model_not_allowed: code({
    status: 403,
    type: 'permission_error',
    stage: 'routing',
    actions: ['switch_model'],
    message: "This API key may not call this model (it is outside the key's model allow-list).",
    messageZh: '该 API 密钥不能调用此模型（不在密钥的模型允许列表内）。',
  }),
  ip_not_allowed: code({
    status: 403,
    type: 'permission_error',
    stage: 'auth',
    actions: [],
    message: "This organisation key may not be used from this IP address (it is outside the key's allow-list).",
    messageZh: '该组织密钥不允许从此 IP 地址使用（不在密钥的允许列表内）。',
  }),
  conflict: code({
    status: 409,
    type: 'invalid_request_error',
    stage: 'validation',
    actions: ['fix_request'],
    message: 'This conflicts with something that already exists.',
    messageZh: '与已有的内容冲突。',
  }),
  organisation_limit_reached: code({
    status: 409,
    type: 'invalid_request_error',
    stage: 'validation',
    actions: [],
    message: 'This account already owns as many organisations as one account may.',
    messageZh: '该账户拥有的组织数量已达上限。',
  }),
  internal_error: code({
    status: 500,
    type: 'api_error',
    stage: 'internal',
    actions: ['retry_later'],
    message: 'Internal error.',
    messageZh: '服务器内部错误，请稍后重试。',
  }),
} satisfies Record<string, ErrorCodeInfo>;

export type ErrorCode = keyof typeof errorCodes;
