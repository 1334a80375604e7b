import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../../server/config/config.ts';
import { Admission, type AdmissionDeps } from '../../../server/metering/admission.ts';
import type { Principal } from '../../../server/authz/principal.ts';

// `rateRules` reads only the config; the other dependencies are for admitting.
const admission = new Admission({ config: parseConfig({}) } as AdmissionDeps);
const principal = (): Principal => ({
  accountId: 'acct-1',
  email: 'member@example.com',
  role: 'member',
  payer: { kind: 'account', id: 'acct-1', package: 'pro' },
  credential: { kind: 'api_key', id: 'key-1' },
});

describe('rate rules per request', () => {
  it('are the same frozen rules for the same principal, address and plan limit', () => {
    const who = principal();
    const rules = admission.rateRules('203.0.113.7', who, 60);
    expect(admission.rateRules('203.0.113.7', who, 60)).toBe(rules);
    expect(Object.isFrozen(rules)).toBe(true);
    expect(rules.every((rule) => Object.isFrozen(rule))).toBe(true);
    expect(rules.map((rule) => [rule.key, rule.limit])).toEqual([
      ['ip:203.0.113.7', parseConfig({}).rateLimits.ipPerMinute],
      ['acct:acct-1', 60],
      ['cred:key-1', parseConfig({}).rateLimits.credentialPerMinute ?? 60],
    ]);
  });

  it('follow a plan change, a new address and a changed payer at once', () => {
    const who = principal();
    const before = admission.rateRules('203.0.113.7', who, 60);
    const upgraded = admission.rateRules('203.0.113.7', who, 600);
    expect(upgraded).not.toBe(before);
    expect(upgraded[1]).toMatchObject({ key: 'acct:acct-1', limit: 600 });

    const moved = admission.rateRules('198.51.100.2', who, 600);
    expect(moved[0]!.key).toBe('ip:198.51.100.2');

    who.payer = { kind: 'organisation', id: 'org-9', package: 'enterprise' };
    expect(admission.rateRules('198.51.100.2', who, 600)[1]!.key).toBe('acct:org-9');
  });

  it('are made anew for another principal with the same ids (the authentication cache refreshed it)', () => {
    const first = admission.rateRules('203.0.113.7', principal(), 60);
    const second = admission.rateRules('203.0.113.7', principal(), 60);
    expect(second).not.toBe(first);
    expect(second).toEqual(first);
  });
});
