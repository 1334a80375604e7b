/**
 * The spend alert email, in the recipient's language: which meter (a pool, or a key's spend cap) crossed which threshold, how much is
 * used of how much, when it resets, and where to change the thresholds.
 */
import type { Localized } from '../../i18n/locale.ts';
import type { Bilingual } from '../../errors/app-error.ts';
import type { MailText } from '../account/account.mail.ts';
import type { MeterKind } from './alerts.meter.ts';

export interface AlertMailValues {
  threshold: number;
  /** A usage pool's allowance, or an API key's spend cap. */
  kind: MeterKind;
  meter: Bilingual;
  /** "USD 0.85" */
  used: string;
  limit: string;
  /** The organisation's name when the alert is about one; null for the recipient's own account. */
  organisation: string | null;
  resetsAt: Date;
  timeZone: string;
  alertsUrl: string;
}

function when(date: Date, locale: 'en' | 'zh-CN', timeZone: string): string {
  return new Intl.DateTimeFormat(locale, { dateStyle: 'long', timeStyle: 'short', timeZone }).format(date);
}

export const alertMail: Localized<(values: AlertMailValues) => MailText> = {
  en: (v) => {
    const key = v.kind === 'key';
    const of = key ? `the ${v.meter.en}` : `the ${v.meter.en} allowance`;
    return {
      subject: key ? `svc: ${v.threshold}% of ${v.meter.en} used${v.organisation ? ` (${v.organisation})` : ''}` : `svc: ${v.threshold}% of your ${v.meter.en} allowance used${v.organisation ? ` (${v.organisation})` : ''}`,
      text: [
        `${v.organisation ? `The organisation ${v.organisation} has` : 'You have'} used ${v.threshold}% or more of ${of}.`,
        ``,
        `Used: ${v.used} of ${v.limit}`,
        `Resets: ${when(v.resetsAt, 'en', v.timeZone)}`,
        ...(v.threshold >= 100
          ? [``, key ? `Requests with this key that need more are refused (402) until it resets, or until the key's cap is raised.` : `Requests that need more are refused (402) until it resets, or until you upgrade.`]
          : []),
        ``,
        `Change alert thresholds and channels: ${v.alertsUrl}`,
      ].join('\n'),
    };
  },
  'zh-CN': (v) => {
    const key = v.kind === 'key';
    const of = key ? v.meter.zh : `${v.meter.zh}额度`;
    return {
      subject: `svc：${of}已使用 ${v.threshold}%${v.organisation ? `（${v.organisation}）` : ''}`,
      text: [
        `${v.organisation ? `组织 ${v.organisation} ` : '您'}已使用${of}的 ${v.threshold}% 或更多。`,
        ``,
        `已用：${v.used} / ${v.limit}`,
        `重置时间：${when(v.resetsAt, 'zh-CN', v.timeZone)}`,
        ...(v.threshold >= 100 ? [``, key ? `在上限重置或调高该密钥的上限之前，使用该密钥且超出上限的请求将被拒绝（402）。` : `在额度重置或升级套餐之前，超出额度的请求将被拒绝（402）。`] : []),
        ``,
        `修改提醒阈值和通知方式：${v.alertsUrl}`,
      ].join('\n'),
    };
  },
};
