import { AppError, bilingual } from '../../errors/app-error.ts';

export const maxReasonLength = 500;

/** The reason staff give for an action (it goes into the audit log): required, trimmed, at most 500 characters. */
export function checkReason(input: unknown, param = 'reason'): string {
  const reason = typeof input === 'string' ? input.trim() : '';
  if (!reason) throw new AppError('invalid_request', bilingual('{param} is required: say why (it goes into the audit log).', '请填写 {param}，说明操作原因（会记入审计日志）。', { param }), { param });
  if (reason.length > maxReasonLength) throw new AppError('invalid_request', bilingual('{param} must be at most {max} characters.', '{param} 最多 {max} 个字符。', { param, max: maxReasonLength }), { param });
  // Line breaks and tabs are fine in a note; other control characters (NUL among them) are not.
  if (/[\p{Cc}]/u.test(reason.replace(/[\n\r\t]/g, ''))) throw new AppError('invalid_request', bilingual('{param} must not contain control characters.', '{param} 不能包含控制字符。', { param }), { param });
  return reason;
}

/** An optional reason: null when absent or blank, else checked like a required one. */
export function optionalReason(input: unknown, param = 'reason'): string | null {
  if (input === undefined || input === null || (typeof input === 'string' && input.trim() === '')) return null;
  return checkReason(input, param);
}
