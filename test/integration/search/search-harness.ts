/** Runs the `svc` command as an operator would, and writes a small corpus for it to ingest. */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const repo = resolve(import.meta.dirname, '../../..');

export interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** `node bin/svc.js …` with only the given environment (plus PATH and HOME). */
export function svc(args: string[], env: Record<string, string>): Promise<Run> {
  return new Promise((done) => {
    const child = spawn(process.execPath, [join(repo, 'bin/svc.js'), ...args], {
      cwd: repo,
      env: { PATH: process.env.PATH ?? '', HOME: tmpdir(), ...env },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('close', (code) => done({ code, stdout, stderr }));
  });
}

/** A small documentation site: Markdown, HTML and text in folders, one page with its own URL, noise. */
export function writeCorpus(): string {
  const dir = mkdtempSync(join(tmpdir(), 'svc-corpus-'));
  mkdirSync(join(dir, 'guide'));
  mkdirSync(join(dir, 'notes'));
  mkdirSync(join(dir, '.git'));
  writeFileSync(
    join(dir, 'guide', 'install.md'),
    '---\ndate: 2024-03-01\n---\n# Installing svc\n\nInstall the gateway with `npm ci`, then start it with npm start. Installation takes a minute.\n',
  );
  writeFileSync(
    join(dir, 'guide', 'pricing.html'),
    `<!doctype html><html><head><title>Pricing and plans</title><meta property="article:published_time" content="2024-05-02T10:00:00+02:00">
     <script>var secretword = 1;</script><style>.zebra { color: red }</style></head>
     <body><h1>Pricing</h1><p>The Pro plan costs nine dollars per month. Max plans multiply the pools.</p></body></html>`,
  );
  writeFileSync(join(dir, 'notes', 'quotas.txt'), 'Quotas and pools\n\nEvery account has daily, weekly and monthly pools per model class.\n');
  writeFileSync(join(dir, 'external.md'), '---\nurl: https://blog.example.org/posts/launch\ntitle: Launch post\n---\nWe launched the gateway with embedded search.\n');
  writeFileSync(join(dir, 'image.png'), 'not text');
  writeFileSync(join(dir, '.git', 'HEAD.md'), '# hidden');
  return dir;
}
