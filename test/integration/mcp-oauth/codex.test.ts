/**
 * The real Codex CLI (node_modules/.bin/codex) against svc, offline, in a fresh HOME with analytics off:
 * svc is both its model provider (`/v1/responses`, over the scripted upstream) and its MCP server.
 *
 * - `codex mcp login svc`: Codex discovers svc from the MCP endpoint's metadata, registers itself (RFC 7591),
 *   prints the authorize URL and listens on a loopback port; the member approves on the consent page (its
 *   GraphQL mutation, from the member's signed-in browser session) and the browser is sent to Codex's
 *   callback, which exchanges the code. `codex mcp list` then shows OAuth.
 * - `codex exec`: the scripted model asks for `mcp__svc__web_search`; Codex calls svc's MCP server with the
 *   OAuth token, and the search is billed to the member.
 * - The same with a bearer token from an environment variable (`bearer_token_env_var`) instead of OAuth.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startScriptedSearxng, type ScriptedSearxng } from '../../fixtures/scripted-searxng.ts';
import { decideAs } from '../../helpers/mcp-oauth.ts';
import { seed, type Person } from '../../helpers/seed.ts';
import { ledgerRows, startHarness, type Harness } from '../gateway/harness.ts';

const codexBin = resolve(import.meta.dirname, '../../../node_modules/.bin/codex');

let searxng: ScriptedSearxng;
let h: Harness;
let home: string;
let member: Person;
let key: string;

beforeAll(async () => {
  searxng = await startScriptedSearxng();
  h = await startHarness({ config: { search: { provider: 'searxng', searxng: { url: searxng.url, timeoutMs: 2000 }, maxResults: 10, cacheSeconds: 0 } } });
  // The scripted model: search with svc's MCP tool first, then answer with what the tool returned.
  h.upstream.setScript((body) => {
    const messages = body.messages as { role: string; content: unknown }[];
    const last = messages.at(-1)!;
    if (last.role === 'tool') return { content: `ANSWER ${String(last.content).includes('"object":"svc.search.v1"') ? 'with svc.search.v1' : 'without results'}` };
    const tools = (body.tools as { function: { name: string } }[] | undefined) ?? [];
    if (tools.some((tool) => tool.function.name === 'mcp__svc__web_search')) {
      return { toolCalls: [{ name: 'mcp__svc__web_search', arguments: JSON.stringify({ query: 'codex through svc', maxResults: 2 }) }] };
    }
    return { content: 'NO MCP TOOL' };
  });
  member = await seed(h.app).member();
  key = await member.key('codex model provider');
  home = mkdtempSync(join(tmpdir(), 'svc-codex-home-'));
});

afterAll(async () => {
  await h?.close();
  await searxng?.close();
  if (home) rmSync(home, { recursive: true, force: true });
});

/** `~/.codex/config.toml`: svc as the model provider (Responses API), svc's MCP server, no telemetry. */
function writeConfig(mcp: 'oauth' | 'bearer'): void {
  mkdirSync(join(home, '.codex'), { recursive: true });
  const url = h.app.url;
  writeFileSync(
    join(home, '.codex', 'config.toml'),
    [
      'model = "auto"',
      'model_provider = "svc"',
      // The search here goes through svc's MCP tool: Codex's hosted web_search (which svc also runs) is off.
      'web_search = "disabled"',
      'mcp_oauth_credentials_store = "file"',
      'check_for_update_on_startup = false',
      '',
      '[analytics]',
      'enabled = false',
      '',
      '[model_providers.svc]',
      'name = "svc"',
      `base_url = "${url}/v1"`,
      'env_key = "SVC_API_KEY"',
      'wire_api = "responses"',
      '',
      '[mcp_servers.svc]',
      `url = "${url}/v1/mcp"`,
      ...(mcp === 'bearer' ? ['bearer_token_env_var = "SVC_API_KEY"'] : []),
      '',
    ].join('\n'),
  );
}

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs codex in the test's HOME; `onOutput` sees stdout as it comes (for the login URL). */
function codex(args: string[], onOutput?: (text: string) => void, timeoutMs = 90_000): Promise<Run> {
  return new Promise((done, fail) => {
    const child = spawn(codexBin, args, {
      cwd: home,
      env: { PATH: process.env.PATH ?? '', HOME: home, SVC_API_KEY: key, BROWSER: 'true', NO_COLOR: '1', RUST_LOG: 'error' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      fail(new Error(`codex ${args.join(' ')} did not finish in ${timeoutMs} ms\nstdout: ${stdout}\nstderr: ${stderr}`));
    }, timeoutMs);
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      onOutput?.(stdout + stderr);
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
      onOutput?.(stdout + stderr);
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      done({ code, stdout, stderr });
    });
  });
}

const searchRows = async (count: number) => (await ledgerRows(h.database, member.id, count)).filter((row) => row.product === 'search');

describe('Codex CLI with svc as model provider and MCP server', () => {
  it('signs in to the MCP server by OAuth (codex mcp login), then codex exec calls web_search with the OAuth token', async () => {
    writeConfig('oauth');
    let approval: Promise<void> | null = null;
    const login = await codex(['mcp', 'login', 'svc'], (output) => {
      const url = /(http:\/\/127\.0\.0\.1:\d+\/oauth\/authorize\?\S+)/.exec(output)?.[1];
      if (!url || approval) return;
      // The member's browser: consent page approval, then the redirect to Codex's loopback callback.
      approval = decideAs(member.web, new URL(url)).then(async (callback) => {
        expect(callback.hostname).toBe('127.0.0.1');
        expect(callback.searchParams.get('code')).toBeTruthy();
        await fetch(callback);
      });
    });
    await approval;
    expect(login.code, login.stdout + login.stderr).toBe(0);
    const clients = await h.database.query(`select c.client_name, c.redirect_uris from oauth_client c join oauth_authorization z on z.client_id = c.id where z.account_id = $1 and z.status = 'exchanged'`, [member.id]);
    expect(clients.rows).toHaveLength(1);

    const list = await codex(['mcp', 'list']);
    expect(list.code, list.stderr).toBe(0);
    expect(list.stdout).toMatch(/svc\s+\S+\/v1\/mcp.*OAuth/);

    const exec = await codex(['exec', '--skip-git-repo-check', 'Search the web for codex through svc.']);
    expect(exec.code, exec.stdout + exec.stderr).toBe(0);
    expect(exec.stdout + exec.stderr).toContain('ANSWER with svc.search.v1');
    const [search] = await searchRows(3);
    expect(search).toMatchObject({ product: 'search', model: 'svc-2.1-search', status: 'ok', payer_id: member.id, credential_kind: 'mcp_token' });
    // Codex asked the model through /v1/responses with svc's tools as a namespace, flattened for the upstream.
    expect(h.upstream.bodies.some((body) => (body.tools as { function: { name: string } }[] | undefined)?.some((tool) => tool.function.name === 'mcp__svc__web_search'))).toBe(true);
  });

  it('uses a bearer token from an environment variable instead (bearer_token_env_var)', async () => {
    writeConfig('bearer');
    const list = await codex(['mcp', 'list']);
    expect(list.stdout).toMatch(/svc\s+\S+\/v1\/mcp\s+SVC_API_KEY/);
    const before = (await h.database.query(`select count(*)::int as n from usage_ledger where account_id = $1 and product = 'search'`, [member.id])).rows[0].n as number;
    const exec = await codex(['exec', '--skip-git-repo-check', 'Search again, with the key.']);
    expect(exec.code, exec.stdout + exec.stderr).toBe(0);
    expect(exec.stdout + exec.stderr).toContain('ANSWER with svc.search.v1');
    await expect.poll(async () => (await h.database.query(`select count(*)::int as n from usage_ledger where account_id = $1 and product = 'search'`, [member.id])).rows[0].n).toBe(before + 1);
  });
});
