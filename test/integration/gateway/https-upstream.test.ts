/**
 * Chat through a model server on HTTPS, as OpenAI-style upstreams are: svc's own client connects with TLS,
 * checks the certificate, streams and bills exactly as over plain HTTP. The test's certificate is trusted the
 * way an operator's would be (`tls.setDefaultCACertificates`, what `NODE_EXTRA_CA_CERTS` does at start).
 */
import { getCACertificates, setDefaultCACertificates } from 'node:tls';
import type OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startScriptedUpstream, type ScriptedUpstream } from '../../fixtures/scripted-upstream.ts';
import { certificate } from '../../fixtures/tls-certificates.ts';
import { startApp } from '../../helpers/app.ts';
import { createMember, ledgerRows, relaxedLimits, startHarness, type Harness, type Member } from './harness.ts';

const localhost = certificate('localhost');
let h: Harness;
let m: Member;
const trusted = getCACertificates('default');

beforeAll(async () => {
  setDefaultCACertificates([...trusted, localhost.cert.toString()]);
  h = await startHarness({ upstream: { tls: localhost } });
  m = await h.member();
});
afterAll(async () => {
  await h?.close();
  setDefaultCACertificates(trusted);
});

const hello = [{ role: 'user' as const, content: 'Say hello.' }];

describe('an HTTPS model server', () => {
  it('streams through it to the official SDK, billed exactly', async () => {
    expect(h.upstream.url.startsWith('https://127.0.0.1:')).toBe(true);
    const stream = await m.client.chat.completions.create({ model: 'svc-2.1', messages: hello, stream: true, stream_options: { include_usage: true } });
    const chunks: OpenAI.ChatCompletionChunk[] = [];
    for await (const chunk of stream) chunks.push(chunk);
    expect(chunks.map((c) => c.choices[0]?.delta.content ?? '').join('')).toBe('tok '.repeat(8));
    expect(chunks.at(-1)!.usage).toEqual({ prompt_tokens: 3, completion_tokens: 8, total_tokens: 11, cost: { amount_micros: expect.any(Number), currency: 'USD' } });
    const completion = await m.client.chat.completions.create({ model: 'svc-2.1', messages: hello });
    expect(completion.choices[0]!.message.content).toBe('Hello from the scripted upstream.');
    const rows = await ledgerRows(h.database, m.accountId, 2);
    expect(rows.map(({ status, stream, input_tokens, output_tokens, estimated }) => ({ status, stream, input_tokens, output_tokens, estimated }))).toEqual([
      { status: 'ok', stream: true, input_tokens: 3, output_tokens: 8, estimated: false },
      { status: 'ok', stream: false, input_tokens: 3, output_tokens: 8, estimated: false },
    ]);
  });

  it('is refused when its certificate is not trusted or names another host: the next deployment answers', async () => {
    const impostor: ScriptedUpstream = await startScriptedUpstream({ tls: certificate('elsewhere') });
    const app = await startApp(h.mode.config, {
      config: {
        ...relaxedLimits,
        upstreams: { impostor: { baseUrl: impostor.url, label: 'gpu-impostor' }, good: { baseUrl: h.upstream.url, label: 'gpu-good' } },
        models: { 'svc-2.1-pro': { tier: 'premium', inputPrice: 0.435, outputPrice: 0.87, deployments: [{ upstream: 'impostor', model: 'a' }, { upstream: 'good', model: 'b' }] } },
      },
    });
    try {
      const member = await createMember(app, { planPackage: 'pro' });
      const completion = await member.client.chat.completions.create({ model: 'svc-2.1-pro', messages: hello });
      expect(completion.choices[0]!.message.content).toBe('Hello from the scripted upstream.');
      expect(impostor.stats.requests).toBe(0);
      const [row] = await ledgerRows(h.database, member.accountId);
      expect(row).toMatchObject({ status: 'ok', input_tokens: 3, output_tokens: 8 });
    } finally {
      await app.close();
      await impostor.close();
    }
  });
});
