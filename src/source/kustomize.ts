import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { KubeObject } from '../kube/resources.js';
import type { ArchiveFiles } from './archive.js';
import type { BudgetLease } from './budget.js';
import { messageOf, SourceError } from './errors.js';
import { formatBytes } from './limits.js';
import { parseManifests } from './parse.js';

/**
 * Kustomizations built as `kubectl kustomize` (v1.36) builds them, in a
 * sandbox (docs/adr/0006-kustomize-native-helper.md): a small Go program
 * (kustomize/, built by `make build` into dist/kustomize/) run once per
 * folder, given only the source's own files on its stdin (an in-memory
 * filesystem), with no network, no program it could run, builtin plugins
 * only, and its memory and time bounded. Its memory is taken from the
 * source's lease of the process-wide budget for as long as it runs. The
 * operator loads nothing for it: a process that builds no kustomization
 * pays nothing.
 */

export interface KustomizeOptions {
  /** Charged with the helper's memory limit and its output while it runs. */
  lease?: BudgetLease;
  signal?: AbortSignal;
  /** More objects than this in the output is a SourceError. */
  maxObjects: number;
  /** Bytes the build may print. */
  maxOutputBytes: number;
  /** How long one build may take (default KUSTOMIZE_TIME_LIMIT_MS). */
  timeoutMs?: number;
}

/** How long one kustomization may take to build. */
export const KUSTOMIZE_TIME_LIMIT_MS = 20_000;

/** The helper's memory beside the files it is given (twice their size: held, then built). */
export const KUSTOMIZE_BASE_MEMORY = 64 * 1024 * 1024;

/** The helper's exit codes (kustomize/main.go). */
const EXIT = { refused: 10, failed: 11, memory: 12, time: 13 } as const;

/** Builds each folder in turn (`''` is the root) from `files`, and returns their objects in that order. */
export async function buildKustomizations(files: ArchiveFiles, dirs: string[], label: string, opts: KustomizeOptions): Promise<KubeObject[]> {
  const objects: KubeObject[] = [];
  for (const dir of dirs) {
    const shown = dir || '.';
    const yaml = await buildKustomization(files, dir, label, opts);
    objects.push(...parseManifests(yaml, `${label}: kustomize build ${shown}`, { maxObjects: opts.maxObjects - objects.length }));
  }
  return objects;
}

/** The YAML `kubectl kustomize <dir>` prints, built by the helper. */
export async function buildKustomization(files: ArchiveFiles, dir: string, label: string, opts: KustomizeOptions): Promise<string> {
  let inputBytes = 0;
  for (const data of files.values()) inputBytes += data.length;
  const memory = KUSTOMIZE_BASE_MEMORY + 2 * inputBytes;
  const lease = opts.lease;
  await lease?.take(memory, opts.signal);
  const taken = { bytes: memory };
  try {
    return await runHelper(files, dir, memory, { ...opts, label, taken });
  } finally {
    lease?.release(taken.bytes);
  }
}

interface Run extends KustomizeOptions {
  label: string;
  /** What was taken from the lease so far (the output adds to it). */
  taken: { bytes: number };
}

function runHelper(files: ArchiveFiles, dir: string, memory: number, run: Run): Promise<string> {
  const timeoutMs = run.timeoutMs ?? KUSTOMIZE_TIME_LIMIT_MS;
  const where = `${run.label}: kustomize build ${dir || '.'}`;
  const child = spawn(helperPath(), ['-memory', String(memory), '-timeout', `${timeoutMs}ms`], {
    env: {},
    cwd: '/',
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  return new Promise<string>((resolve, reject) => {
    const out: Buffer[] = [];
    let outBytes = 0;
    let err = '';
    let failure: SourceError | undefined;
    const stop = (why: SourceError): void => {
      failure ??= why;
      child.kill('SIGKILL');
    };
    // The helper stops itself at the time limit; this is for a helper that cannot.
    const backstop = setTimeout(() => stop(new SourceError(`${where}: took longer than ${timeoutMs / 1000} s (the kustomize time limit); refused`)), timeoutMs + 5_000);
    const onAbort = (): void => stop(new SourceError(`${where}: cancelled`));
    run.signal?.addEventListener('abort', onAbort, { once: true });
    child.stdout.on('data', (chunk: Buffer) => {
      outBytes += chunk.length;
      if (outBytes > run.maxOutputBytes) return stop(new SourceError(`${where}: printed more than ${formatBytes(run.maxOutputBytes)}; refused`));
      out.push(chunk);
      run.taken.bytes += chunk.length;
      run.lease?.take(chunk.length).catch((e: unknown) => stop(e instanceof SourceError ? e : new SourceError(`${where}: ${messageOf(e)}`)));
    });
    child.stderr.on('data', (chunk: Buffer) => {
      if (err.length < 4096) err += chunk.toString('utf8');
    });
    child.on('error', (e: NodeJS.ErrnoException) => {
      const why = e.code === 'ENOENT' ? `the kustomize helper ${helperPath()} is missing (make build builds it)` : messageOf(e);
      stop(new SourceError(`${where}: ${why}`, { cause: e }));
    });
    child.on('close', (code, signal) => {
      clearTimeout(backstop);
      run.signal?.removeEventListener('abort', onAbort);
      if (failure) return reject(failure);
      if (code === 0) return resolve(Buffer.concat(out).toString('utf8'));
      reject(new SourceError(exitMessage(where, run.label, code, signal, err.trim())));
    });
    writeInput(child, files, dir).catch(() => undefined); // a helper that exits early closes its stdin: its exit says why
  });
}

function exitMessage(where: string, label: string, code: number | null, signal: NodeJS.Signals | null, stderr: string): string {
  const said = stderr.split('\n')[0] ?? '';
  if (code === EXIT.refused) return `${label}: ${said}; refused (kustomize runs in a sandbox: docs/source.md, Kustomize)`;
  if (code === EXIT.failed) return `${label}: ${said}`;
  if (code === EXIT.memory || code === EXIT.time) return `${where}: ${said}`;
  // Killed by the kernel (out of memory) or crashed: the helper's memory is not the operator's.
  return `${where}: the kustomize helper ended (${signal ?? `exit ${code}`})${said ? `: ${said}` : ''}; refused`;
}

/** The input as JSON, one file at a time (as base64), minding back-pressure. */
async function writeInput(child: ChildProcessWithoutNullStreams, files: ArchiveFiles, dir: string): Promise<void> {
  const write = (text: string): Promise<void> =>
    child.stdin.write(text) ? Promise.resolve() : new Promise((resolve) => child.stdin.once('drain', resolve));
  child.stdin.on('error', () => undefined);
  await write(`{"dir":${JSON.stringify(dir)},"files":{`);
  let first = true;
  for (const [p, data] of files) {
    await write(`${first ? '' : ','}${JSON.stringify(p)}:"${data.toString('base64')}"`);
    first = false;
  }
  child.stdin.end('}}');
}

/** Where the helper is: dist/kustomize/ of this package (`make build`), or SYNCPRIMS_KUSTOMIZE_HELPER. */
export function helperPath(): string {
  const given = process.env.SYNCPRIMS_KUSTOMIZE_HELPER;
  if (given) return given;
  return fileURLToPath(new URL('../../dist/kustomize/syncprims-kustomize', import.meta.url));
}

/** Whether the helper is built (for `syncprims doctor`-like checks and tests). */
export function helperBuilt(): boolean {
  return existsSync(helperPath());
}
