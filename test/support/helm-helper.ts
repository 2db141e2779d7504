// Runs the Helm helper (helm/, built by `make build` into dist/helm/) as the
// chart source runs it: env {}, cwd `/`, one JSON object on stdin
// (helm/PROTOCOL.md), and returns what it said and how it ended.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** What the helper printed and its exit code (`null` when a signal ended it). */
export interface HelmHelperResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  /** stdout parsed, when it is JSON. */
  json?: unknown;
}

export interface HelmHelperOptions {
  /** `-memory` in bytes (default 256 MiB). */
  memory?: number;
  /** `-timeout` in milliseconds (default 20 s). */
  timeoutMs?: number;
  /** More flags, after `-memory` and `-timeout` (e.g. `['-probe', '-no-sandbox']`). */
  args?: string[];
}

/** The helper: SYNCPRIMS_HELM_HELPER, or dist/helm/syncprims-helm of this checkout. */
export function helmHelperPath(): string {
  const given = process.env.SYNCPRIMS_HELM_HELPER;
  if (given) return given;
  return fileURLToPath(new URL('../../dist/helm/syncprims-helm', import.meta.url));
}

/** Runs the helper once with `input` (an object, sent as JSON; a string, sent as it is) on its stdin. */
export function runHelmHelper(input: unknown, opts: HelmHelperOptions = {}): Promise<HelmHelperResult> {
  const memory = opts.memory ?? 256 * 1024 * 1024;
  const timeoutMs = opts.timeoutMs ?? 20_000;
  const child = spawn(helmHelperPath(), ['-memory', String(memory), '-timeout', `${timeoutMs}ms`, ...(opts.args ?? [])], {
    env: {},
    cwd: '/',
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  child.stdout.on('data', (chunk: Buffer) => out.push(chunk));
  child.stderr.on('data', (chunk: Buffer) => err.push(chunk));
  child.stdin.on('error', () => undefined); // a helper that exits early closes its stdin
  child.stdin.end(typeof input === 'string' ? input : JSON.stringify(input));
  // A backstop for a helper that cannot stop itself: the test then sees the signal.
  const backstop = setTimeout(() => child.kill('SIGKILL'), timeoutMs + 30_000);
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(backstop);
      const stdout = Buffer.concat(out).toString('utf8');
      resolve({ code, signal, stdout, stderr: Buffer.concat(err).toString('utf8'), json: parsed(stdout) });
    });
  });
}

/** The files of a chart (text by path) as the protocol's `files` (base64 by path). */
export function helmFiles(tree: Record<string, string | Buffer>): Record<string, string> {
  return Object.fromEntries(Object.entries(tree).map(([p, data]) => [p, Buffer.from(data).toString('base64')]));
}

function parsed(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}
