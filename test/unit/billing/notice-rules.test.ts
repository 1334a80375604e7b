import { describe, expect, it } from 'vitest';
import { newOrderId } from '../../../server/modules/billing/billing.service.ts';
import { decideNotice, type OrderFacts } from '../../../server/modules/billing/notice-rules.ts';
import type { PaymentNotice } from '../../../server/modules/billing/providers/provider.ts';

const order: OrderFacts = {
  provider: 'alipay',
  state: 'created',
  amountMinor: 6500,
  currency: 'CNY',
  appId: '2021000000000001',
  merchantId: '2088000000000001',
  providerTradeNo: null,
};

const notice: PaymentNotice = {
  provider: 'alipay',
  orderId: 'svcORDER',
  providerTradeNo: 'T1',
  amountMinor: 6500,
  currency: 'CNY',
  appId: '2021000000000001',
  merchantId: '2088000000000001',
  status: 'paid',
  eventId: 'n1',
  source: 'notify',
  raw: {},
};

describe('what a verified notice may do to an order', () => {
  it.each([
    ['pays a created order', {}, {}, { kind: 'pay' }],
    ['no order', null, {}, { kind: 'reject', reason: 'unknown_order' }],
    ['another provider for the same order number', {}, { provider: 'wechat' }, { kind: 'reject', reason: 'provider_mismatch' }],
    ['another app', {}, { appId: '2021000000000002' }, { kind: 'reject', reason: 'merchant_mismatch' }],
    ['another merchant', {}, { merchantId: '2088000000000002' }, { kind: 'reject', reason: 'merchant_mismatch' }],
    ['no merchant at all', {}, { merchantId: null }, { kind: 'reject', reason: 'merchant_mismatch' }],
    ['one fen less', {}, { amountMinor: 6499 }, { kind: 'reject', reason: 'amount_mismatch' }],
    ['one fen more', {}, { amountMinor: 6501 }, { kind: 'reject', reason: 'amount_mismatch' }],
    ['another currency', {}, { currency: 'USD' }, { kind: 'reject', reason: 'currency_mismatch' }],
    ['a replay on a paid order', { state: 'paid', providerTradeNo: 'T1' }, {}, { kind: 'duplicate' }],
    ['a replay on a refunded order', { state: 'refunded', providerTradeNo: 'T1' }, {}, { kind: 'duplicate' }],
    ['a second trade paying a paid order', { state: 'paid', providerTradeNo: 'T0' }, {}, { kind: 'reject', reason: 'paid_by_other_trade' }],
    ['a session other than the order’s', { providerTradeNo: 'cs_A' }, { providerTradeNo: 'cs_B' }, { kind: 'reject', reason: 'trade_mismatch' }],
    ['money for an expired order', { state: 'expired' }, {}, { kind: 'reject', reason: 'order_not_payable' }],
    ['money for a failed order', { state: 'failed' }, {}, { kind: 'reject', reason: 'order_not_payable' }],
    ['waiting for the payer', {}, { status: 'pending' }, { kind: 'pending' }],
    ['closed unpaid', {}, { status: 'failed' }, { kind: 'fail' }],
    ['closed after it was paid (a refund elsewhere)', { state: 'paid', providerTradeNo: 'T1' }, { status: 'failed' }, { kind: 'ignore' }],
    ['pending after expiry', { state: 'expired' }, { status: 'pending' }, { kind: 'ignore' }],
  ] as const)('%s', (_label, orderChanges, noticeChanges, expected) => {
    const facts = orderChanges === null ? null : { ...order, ...orderChanges };
    expect(decideNotice(facts, { ...notice, ...noticeChanges })).toMatchObject(expected);
  });

  it('checks the provider before anything else, so a foreign notice reveals nothing about the order', () => {
    expect(decideNotice(order, { ...notice, provider: 'stripe', amountMinor: 1, currency: 'USD', appId: null, merchantId: null })).toMatchObject({
      reason: 'provider_mismatch',
    });
  });
});

describe('order ids', () => {
  it('are out_trade_nos both Alipay and WeChat Pay accept, and do not repeat', () => {
    const ids = new Set<string>();
    for (let i = 0; i < 5000; i++) {
      const id = newOrderId();
      expect(id).toMatch(/^svc[A-Za-z0-9]{24}$/);
      ids.add(id);
    }
    expect(ids.size).toBe(5000);
  });

  it('use every character of the alphabet about equally', () => {
    const counts = new Map<string, number>();
    for (let i = 0; i < 4000; i++) for (const char of newOrderId().slice(3)) counts.set(char, (counts.get(char) ?? 0) + 1);
    expect(counts.size).toBe(62);
    const expected = (4000 * 24) / 62;
    for (const count of counts.values()) expect(Math.abs(count - expected)).toBeLessThan(expected * 0.2);
  });
});
