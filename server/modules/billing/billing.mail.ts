/**
 * Payment emails — the receipt after a paid order and the notice after a refund — in the account's
 * language. Amounts come formatted with their currency code; times are shown in the service time zone.
 * The period's end is said as the web app says it ("Ends on {date}, won't renew"): nothing renews by itself.
 */
import type { Localized } from '../../i18n/locale.ts';
import type { MailText } from '../account/account.mail.ts';

export interface ReceiptValues {
  orderId: string;
  packageName: string;
  /** "CNY 65.00" */
  amount: string;
  /** Credit from the previous period, formatted; null when none. */
  credit: string | null;
  provider: string;
  paidAt: Date;
  periodEnd: Date | null;
  timeZone: string;
  accountUrl: string;
}

const providerNames: Localized<Record<string, string>> = {
  en: { alipay: 'Alipay', wechat: 'WeChat Pay', stripe: 'card (Stripe)', sandbox: 'sandbox (no money)' },
  'zh-CN': { alipay: '支付宝', wechat: '微信支付', stripe: '银行卡（Stripe）', sandbox: '沙盒（不扣款）' },
};

function when(date: Date, locale: 'en' | 'zh-CN', timeZone: string): string {
  return new Intl.DateTimeFormat(locale, { dateStyle: 'long', timeStyle: 'short', timeZone }).format(date);
}

export const receiptMail: Localized<(values: ReceiptValues) => MailText> = {
  en: (v) => ({
    subject: `svc receipt: ${v.packageName}, ${v.amount}`,
    text: [
      `Thank you for your payment.`,
      ``,
      `Order: ${v.orderId}`,
      `Package: ${v.packageName} (1 month)`,
      ...(v.credit ? [`Credit for the unused part of your previous period: ${v.credit}`] : []),
      `Paid: ${v.amount} by ${providerNames.en[v.provider] ?? v.provider}`,
      `Date: ${when(v.paidAt, 'en', v.timeZone)}`,
      ...(v.periodEnd ? [`Ends on ${when(v.periodEnd, 'en', v.timeZone)}, won't renew: renew before then to keep it.`] : []),
      ``,
      `Your orders and receipts: ${v.accountUrl}`,
    ].join('\n'),
  }),
  'zh-CN': (v) => ({
    subject: `svc 付款收据：${v.packageName}，${v.amount}`,
    text: [
      `感谢您的付款。`,
      ``,
      `订单号：${v.orderId}`,
      `套餐：${v.packageName}（1 个月）`,
      ...(v.credit ? [`上一周期未使用部分的抵扣：${v.credit}`] : []),
      `实付：${v.amount}（${providerNames['zh-CN'][v.provider] ?? v.provider}）`,
      `日期：${when(v.paidAt, 'zh-CN', v.timeZone)}`,
      ...(v.periodEnd ? [`${when(v.periodEnd, 'zh-CN', v.timeZone)} 到期，不会自动续费：如需继续使用，请在此之前续费。`] : []),
      ``,
      `查看订单和收据：${v.accountUrl}`,
    ].join('\n'),
  }),
};

export const refundMail: Localized<(values: ReceiptValues) => MailText> = {
  en: (v) => ({
    subject: `svc refund: ${v.amount} for order ${v.orderId}`,
    text: [
      `Order ${v.orderId} (${v.packageName}) was refunded: ${v.amount} goes back through ${providerNames.en[v.provider] ?? v.provider}.`,
      ``,
      `Your orders and receipts: ${v.accountUrl}`,
    ].join('\n'),
  }),
  'zh-CN': (v) => ({
    subject: `svc 退款：订单 ${v.orderId}，${v.amount}`,
    text: [`订单 ${v.orderId}（${v.packageName}）已退款：${v.amount} 将原路退回（${providerNames['zh-CN'][v.provider] ?? v.provider}）。`, ``, `查看订单和收据：${v.accountUrl}`].join('\n'),
  }),
};
