/**
 * The emails the account module sends, in each language svc speaks. `Localized` makes a missing language a
 * type error, and one function per mail gives every language the same values.
 */
import type { Localized } from '../../i18n/locale.ts';

export interface MailText {
  subject: string;
  text: string;
}

export const signInCodeMail: Localized<(values: { code: string; minutes: number }) => MailText> = {
  en: ({ code, minutes }) => ({
    subject: `Your svc sign-in code: ${code}`,
    text: `Your svc sign-in code is ${code}. It expires in ${minutes} minutes. If you did not ask for it, ignore this email.`,
  }),
  'zh-CN': ({ code, minutes }) => ({
    subject: `svc 登录验证码：${code}`,
    text: `您的 svc 登录验证码是 ${code}，${minutes} 分钟内有效。如果这不是您本人的操作，请忽略此邮件。`,
  }),
};
