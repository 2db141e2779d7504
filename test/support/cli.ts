// Runs the `syncprims` CLI (dist/cli/main.js) as users do: a real process,
// its stdout a pipe (not a terminal), its exit code and output kept.
import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { kubeconfigViaPort, ROOT } from './controlplane.js';

export const CLI = path.join(ROOT, 'dist', 'cli', 'main.js');

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `syncprims ...args`; resolves with whatever the exit code (a hang fails after `timeoutMs`). */
export function runCli(args: string[], opts: { env?: NodeJS.ProcessEnv; timeoutMs?: number } = {}): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    execFile('node', [CLI, ...args], { env: { ...process.env, ...opts.env }, timeout: opts.timeoutMs ?? 30_000, maxBuffer: 16 * 1024 * 1024 }, (err, stdout, stderr) => {
      const code = err ? (err as { code?: unknown }).code : 0;
      if (typeof code !== 'number') return reject(new Error(`syncprims ${args.join(' ')}: ${String(err)} (stderr: ${stderr})`));
      resolve({ code, stdout, stderr });
    });
  });
}

/** Fails clearly when dist/ is older than src/cli (the tests run the built CLI). */
export function assertCliBuilt(): void {
  const newest = (dir: string, ext: string): number =>
    Math.max(0, ...readdirSync(dir).filter((f) => f.endsWith(ext)).map((f) => statSync(path.join(dir, f)).mtimeMs));
  const src = newest(path.join(ROOT, 'src', 'cli'), '.ts');
  let built = 0;
  try {
    built = newest(path.join(ROOT, 'dist', 'cli'), '.js');
  } catch {
    // not built
  }
  if (built < src) throw new Error('dist/cli is older than src/cli: run `npx tsc -p tsconfig.build.json` (or `make build`) first');
}

/** A directory of this test file's own for temporary files. */
export function tempDir(prefix = 'syncprims-cli-'): string {
  return mkdtempSync(path.join(tmpdir(), prefix));
}

/** A local port that nothing listens on (it was free a moment ago). */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** A kubeconfig file for `cluster` whose server is a closed port: every request fails to connect. */
export async function unreachableKubeconfig(dir: string, cluster = 'mgmt'): Promise<{ file: string; port: number }> {
  const port = await closedPort();
  const file = path.join(dir, `unreachable-${port}.kubeconfig`);
  writeFileSync(file, kubeconfigViaPort(cluster, port).exportConfig());
  return { file, port };
}

/** The cells of a table's lines (columns are at least three spaces apart; no cell holds three spaces). */
export function tableCells(stdout: string): string[][] {
  return stdout
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => l.split(/ {3,}/));
}
