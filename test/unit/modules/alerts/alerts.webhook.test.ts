import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { checkWebhookUrl, newWebhookSecret, signWebhook } from '../../../../server/modules/alerts/alerts.webhook.ts';

describe('webhook signatures', () => {
  it('are v1= HMAC-SHA256 of "<timestamp>.<body>" with the secret, as documented', () => {
    const secret = newWebhookSecret();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
    const body = '{"type":"alert.test"}';
    expect(signWebhook(secret, 1_733_529_600, body)).toBe(`v1=${createHmac('sha256', secret).update(`1733529600.${body}`).digest('hex')}`);
    // The timestamp is signed: the same body at another time has another signature.
    expect(signWebhook(secret, 1_733_529_601, body)).not.toBe(signWebhook(secret, 1_733_529_600, body));
  });
});

describe('webhook URLs', () => {
  const refused = (url: string, production: boolean) => {
    try {
      checkWebhookUrl(url, production);
      return null;
    } catch (error) {
      return (error as { code: string; message: string }).message;
    }
  };

  it('must be https in production, with plain http only to localhost outside it', () => {
    expect(checkWebhookUrl('https://hooks.example.com/svc', true)).toBe('https://hooks.example.com/svc');
    expect(refused('http://hooks.example.com/svc', true)).toBe('The webhook URL must use https.');
    expect(refused('http://127.0.0.1:9000/hook', true)).toBe('The webhook URL must use https.');
    expect(refused('http://localhost:9000/hook', false)).toBeNull();
    expect(refused('http://[::1]:9000/hook', false)).toBeNull();
    expect(refused('http://hooks.example.com/svc', false)).toMatch(/must use https/);
  });

  it('refuses credentials and literal addresses svc must not call', () => {
    expect(refused('https://user:pw@hooks.example.com/', true)).toMatch(/user name or password/);
    expect(refused('https://169.254.169.254/latest/meta-data', true)).toMatch(/cloud metadata/);
    expect(refused('https://10.0.0.5/hook', true)).toMatch(/private/);
    expect(refused('https://127.0.0.1/hook', true)).toMatch(/loopback/);
    expect(refused('https://[::ffff:127.0.0.1]/hook', true)).not.toBeNull();
    expect(refused('https://127.0.0.1/hook', false)).toBeNull();
    expect(refused('no url', true)).toMatch(/not a valid URL/);
  });
});
