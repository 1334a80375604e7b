/**
 * A throwaway 3-master Redis Cluster on loopback, for the tests of cluster mode: three `redis-server`
 * processes with cluster mode on (no persistence, config files in a private temp directory), joined by
 * `redis-cli --cluster create`. `stop()` kills them and removes the directory. Never touches another Redis.
 */
import { spawn, execFile, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Cluster } from 'ioredis';
import { freePort } from './app.ts';

const run = promisify(execFile);

export interface TestRedisCluster {
  ports: number[];
  /** `redis+cluster://127.0.0.1:p1,127.0.0.1:p2,127.0.0.1:p3` */
  url: string;
  /** A client on the cluster (no key prefix); closed by `stop()`. */
  client(keyPrefix?: string): Cluster;
  stop(): Promise<void>;
}

/** A port whose cluster bus port (port + 10000) is also a valid port. */
async function clusterPort(): Promise<number> {
  for (;;) {
    const port = await freePort();
    if (port + 10_000 < 65_536) return port;
  }
}

/** Whether the server on `port` answers PING before it exits or 15 s pass. */
async function answers(port: number, child: ChildProcess): Promise<boolean> {
  const deadline = Date.now() + 15_000;
  while (Date.now() < deadline && child.exitCode === null && child.signalCode === null) {
    const ok = await run('redis-cli', ['-p', String(port), 'ping']).then(
      ({ stdout }) => stdout.trim() === 'PONG',
      () => false,
    );
    if (ok) return true;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return false;
}

export async function startRedisCluster(masters = 3): Promise<TestRedisCluster> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-redis-cluster-'));
  const ports: number[] = [];
  const processes: ChildProcess[] = [];
  const clients: Cluster[] = [];
  const stop = async () => {
    for (const client of clients) client.disconnect();
    await Promise.all(
      processes.map(
        (child) =>
          new Promise<void>((resolve) => {
            if (child.exitCode !== null || child.signalCode !== null) return resolve();
            child.once('exit', () => resolve());
            child.kill('SIGKILL');
          }),
      ),
    );
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    for (let i = 0; i < masters; i++) {
      // A port taken between choosing it and binding it (other test runs share the machine): another one.
      for (let attempt = 0; ; attempt++) {
        const port = await clusterPort();
        const child = spawn(
          'redis-server',
          ['--port', String(port), '--bind', '127.0.0.1', '--cluster-enabled', 'yes', '--cluster-config-file', join(dir, `nodes-${port}.conf`), '--dir', dir, '--save', '', '--appendonly', 'no', '--daemonize', 'no'],
          { stdio: process.env.SVC_CLUSTER_DEBUG ? 'inherit' : 'ignore' },
        );
        processes.push(child);
        if (await answers(port, child)) {
          ports.push(port);
          break;
        }
        child.kill('SIGKILL');
        if (attempt === 4) throw new Error(`redis-server did not start (last port ${port})`);
      }
    }
    await run('redis-cli', ['--cluster', 'create', ...ports.map((port) => `127.0.0.1:${port}`), '--cluster-replicas', '0', '--cluster-yes']);
    // Wait until every node agrees the cluster is up (all slots served).
    for (const port of ports) {
      const deadline = Date.now() + 20_000;
      for (;;) {
        const { stdout } = await run('redis-cli', ['-p', String(port), 'cluster', 'info']);
        if (stdout.includes('cluster_state:ok')) break;
        if (Date.now() > deadline) throw new Error(`cluster on ${port} did not become ok`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
  } catch (error) {
    await stop();
    throw error;
  }
  return {
    ports,
    url: `redis+cluster://${ports.map((port) => `127.0.0.1:${port}`).join(',')}`,
    client: (keyPrefix) => {
      const client = new Cluster(
        ports.map((port) => ({ host: '127.0.0.1', port })),
        keyPrefix ? { keyPrefix } : {},
      );
      clients.push(client);
      return client;
    },
    stop,
  };
}
