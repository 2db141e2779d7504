// PROVISIONAL (helm-cases): stands in for the helper engineer's test/support/helm-helper.ts until it lands.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { ROOT } from './controlplane.js';

export interface HelmHelperRun {
  code: number | null;
  stdout: string;
  stderr: string;
  json?: unknown;
}

export function helmHelperPath(): string {
  return process.env.SYNCPRIMS_HELM_HELPER || path.join(ROOT, 'dist', 'helm', 'syncprims-helm');
}

export function runHelmHelper(input: unknown, opts: { memory?: number; timeoutMs?: number; args?: string[] } = {}): Promise<HelmHelperRun> {
  const args = opts.args ?? ['-memory', String(opts.memory ?? 512 * 1024 * 1024), '-timeout', `${opts.timeoutMs ?? 20_000}ms`];
  const child = spawn(helmHelperPath(), args, { env: {}, cwd: '/', stdio: ['pipe', 'pipe', 'pipe'] });
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  child.stdout.on('data', (c: Buffer) => out.push(c));
  child.stderr.on('data', (c: Buffer) => err.push(c));
  child.stdin.on('error', () => undefined);
  child.stdin.end(typeof input === 'string' ? input : JSON.stringify(input));
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => {
      const stdout = Buffer.concat(out).toString('utf8');
      const run: HelmHelperRun = { code, stdout, stderr: Buffer.concat(err).toString('utf8') };
      if (code === 0) run.json = JSON.parse(stdout);
      resolve(run);
    });
  });
}
