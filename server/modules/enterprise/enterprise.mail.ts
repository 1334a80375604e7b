/**
 * The emails the enterprise module sends (the applicant on every decision; an invitee), in each language
 * svc speaks: a missing language is a type error, and one function per mail gives both languages the same values.
 */
import type { Localized } from '../../i18n/locale.ts';
import type { MailText } from '../account/account.mail.ts';

interface DecisionValues {
  organisation: string;
  note: string | null;
  url: string;
}

export const applicationSubmittedMail: Localized<(values: DecisionValues) => MailText> = {
  en: ({ organisation, url }) => ({
    subject: `svc: we received the enterprise application for ${organisation}`,
    text: `We received your enterprise application for ${organisation}. Our staff will review it and you will get an email when it is decided. You can follow it, or withdraw it, at ${url}.`,
  }),
  'zh-CN': ({ organisation, url }) => ({
    subject: `svc：已收到 ${organisation} 的企业申请`,
    text: `我们已收到您为 ${organisation} 提交的企业申请。工作人员审核后会发邮件通知您结果。您可以在 ${url} 查看进度或撤回申请。`,
  }),
};

export const applicationApprovedMail: Localized<(values: DecisionValues & { automatic: boolean }) => MailText> = {
  en: ({ organisation, note, url, automatic }) => ({
    subject: `svc: ${organisation} is approved`,
    text: [
      automatic
        ? `Your commercial application for ${organisation} was approved at once. It starts on Free; its owner and admins can upgrade it in the console (the organisation pays).`
        : `Your enterprise application for ${organisation} was approved.`,
      note ? `Note from our staff: ${note}` : null,
      `The organisation is ready: mint its svc_ent_ keys, invite members and watch its usage at ${url}.`,
    ]
      .filter(Boolean)
      .join('\n\n'),
  }),
  'zh-CN': ({ organisation, note, url, automatic }) => ({
    subject: `svc：${organisation} 已获批准`,
    text: [
      automatic
        ? `您为 ${organisation} 提交的商业申请已即时批准。组织从免费版开始；所有者和管理员可以在控制台为它升级（由组织付款）。`
        : `您为 ${organisation} 提交的企业申请已获批准。`,
      note ? `工作人员备注：${note}` : null,
      `组织已就绪：请在 ${url} 创建 svc_ent_ 密钥、邀请成员并查看用量。`,
    ]
      .filter(Boolean)
      .join('\n\n'),
  }),
};

export const applicationRejectedMail: Localized<(values: DecisionValues) => MailText> = {
  en: ({ organisation, note, url }) => ({
    subject: `svc: the application for ${organisation} was not approved`,
    text: `Your enterprise application for ${organisation} was not approved.\n\nReason: ${note ?? '-'}\n\nYou can submit a new application at ${url}.`,
  }),
  'zh-CN': ({ organisation, note, url }) => ({
    subject: `svc：${organisation} 的申请未获批准`,
    text: `您为 ${organisation} 提交的企业申请未获批准。\n\n原因：${note ?? '-'}\n\n您可以在 ${url} 重新提交申请。`,
  }),
};

export const applicationWithdrawnMail: Localized<(values: DecisionValues) => MailText> = {
  en: ({ organisation, url }) => ({
    subject: `svc: the application for ${organisation} was withdrawn`,
    text: `Your enterprise application for ${organisation} was withdrawn. You can submit a new one at any time at ${url}.`,
  }),
  'zh-CN': ({ organisation, url }) => ({
    subject: `svc：${organisation} 的申请已撤回`,
    text: `您为 ${organisation} 提交的企业申请已撤回。您可以随时在 ${url} 重新提交。`,
  }),
};

export const invitationMail: Localized<(values: { organisation: string; role: string; url: string }) => MailText> = {
  en: ({ organisation, role, url }) => ({
    subject: `svc: you are invited to ${organisation}`,
    text: `You were invited to the organisation ${organisation} on svc as ${role}. Sign in at ${url} with a sign-in code sent to this email address (that confirms it is yours) and the organisation appears in your enterprise console.`,
  }),
  'zh-CN': ({ organisation, role, url }) => ({
    subject: `svc：您受邀加入 ${organisation}`,
    text: `您受邀以 ${role} 身份加入 svc 上的组织 ${organisation}。请在 ${url} 使用发送到此邮箱的登录验证码登录（以确认邮箱属于您），该组织随后会出现在您的企业控制台中。`,
  }),
};
