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

/** Sign-up with an address that has no account yet: the code that creates it. */
export const signUpCodeMail: Localized<(values: { code: string; minutes: number }) => MailText> = {
  en: ({ code, minutes }) => ({
    subject: `Your svc sign-up code: ${code}`,
    text: `Enter ${code} to finish creating your svc account. It expires in ${minutes} minutes. If you did not sign up, ignore this email: no account is created without the code.`,
  }),
  'zh-CN': ({ code, minutes }) => ({
    subject: `svc 注册验证码：${code}`,
    text: `输入验证码 ${code} 即可完成 svc 账户的注册，${minutes} 分钟内有效。如果您没有注册，请忽略此邮件：没有验证码不会创建账户。`,
  }),
};

/**
 * Sign-up with an address that already has an account: the owner is told (the sign-up answer is the same
 * as for a new address), with a sign-in code in case it was them. Nothing about the account changed.
 */
export const signUpExistingMail: Localized<(values: { code: string; minutes: number }) => MailText> = {
  en: ({ code, minutes }) => ({
    subject: 'Someone tried to sign up to svc with your address',
    text:
      `Someone (perhaps you) tried to create an svc account with this address, which already has one. No new account was made and your password was not changed. ` +
      `If it was you, sign in — with your password, or with the code ${code} within ${minutes} minutes (use it also if you forgot your password). If it was not you, ignore this email.`,
  }),
  'zh-CN': ({ code, minutes }) => ({
    subject: '有人尝试用您的邮箱注册 svc',
    text:
      `有人（也可能是您）尝试用此邮箱注册 svc 账户，但此邮箱已有账户。没有创建新账户，您的密码也未被更改。` +
      `如果是您本人，请直接登录：使用您的密码，或在 ${minutes} 分钟内使用验证码 ${code}（忘记密码时也可以用它登录）。如果不是您，请忽略此邮件。`,
  }),
};
