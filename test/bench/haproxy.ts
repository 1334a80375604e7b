/**
 * HAProxy from Debian in front of the svc instances of `npm run bench:cluster`: a config written at run time
 * to a temp directory, round-robin per request (HTTP mode, keep-alive on both sides), `X-Forwarded-For` added
 * (`option forwardfor`: svc trusts 127.0.0.1, the balancer), a health check every 500 ms on `/healthz` (an
 * instance killed is out after three failed checks, 200 ms apart once one failed), and a stats page whose CSV tells how many requests each
 * instance got. Retries only when a connection to an instance fails (HAProxy's default): a request that
 * reached an instance is never sent twice, so it is never billed twice.
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, spawnPinned, waitForPort } from './procs.ts';

export const HAPROXY = process.env.BENCH_HAPROXY ?? '/usr/sbin/haproxy';

export const HAPROXY_MISSING = `bench: HAProxy is not installed (${HAPROXY} not found). On Debian or Ubuntu: sudo apt-get install -y haproxy
       (or set BENCH_HAPROXY to the haproxy binary). It is needed by this benchmark only, never by svc or npm test.`;

export interface Balancer {
  origin: string;
  /** Requests each backend server got so far (HAProxy's `req_tot`, else its sessions), by server name `svc1`…. */
  served(): Promise<Record<string, number>>;
  stop(): Promise<void>;
}

export function haproxyInstalled(): boolean {
  return existsSync(HAPROXY);
}

export async function startHaproxy(backends: string[], log: string, core?: number): Promise<Balancer> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-bench-haproxy-'));
  const [port, statsPort] = [await freePort(), await freePort()];
  const servers = backends.map((origin, i) => `  server svc${i + 1} ${new URL(origin).host} check`).join('\n');
  const config = `global
  maxconn 8192
defaults
  mode http
  option forwardfor
  timeout connect 2s
  timeout client 60s
  timeout server 60s
  timeout check 3s
  retries 2
  option redispatch
frontend svc_in
  bind 127.0.0.1:${port}
  default_backend svc
backend svc
  balance roundrobin
  option httpchk GET /healthz
  # A refused connection (an instance killed) takes it out within ~0.6 s; a slow answer on a busy machine does not.
  default-server inter 500ms fastinter 200ms fall 3 rise 2
${servers}
listen stats
  bind 127.0.0.1:${statsPort}
  stats enable
  stats uri /stats
`;
  const file = join(dir, 'haproxy.cfg');
  writeFileSync(file, config);
  // -db: stay in the foreground (the runner holds its pid and kills it on any exit).
  const child = spawnPinned('haproxy', HAPROXY, ['-db', '-f', file], { log, core });
  try {
    await waitForPort(port, child);
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  return {
    origin: `http://127.0.0.1:${port}`,
    served: async () => {
      const csv = await (await fetch(`http://127.0.0.1:${statsPort}/stats;csv`)).text();
      const [head, ...lines] = csv.trim().split('\n');
      const columns = head!.replace(/^# /, '').split(',');
      const at = (name: string) => columns.indexOf(name);
      const column = at('req_tot') >= 0 ? at('req_tot') : at('stot');
      const out: Record<string, number> = {};
      for (const line of lines) {
        const cells = line.split(',');
        if (cells[at('pxname')] === 'svc' && cells[at('svname')]!.startsWith('svc')) out[cells[at('svname')]!] = Number(cells[column]);
      }
      return out;
    },
    stop: async () => {
      await child.stop(3_000);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
