import { fileURLToPath } from 'node:url';
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import type { BudgetLease } from './budget.js';
import { messageOf, SourceError } from './errors.js';
import { formatBytes } from './limits.js';

/**
 * Running a sandboxed helper (the kustomize helper, the Helm helper) once:
 * spawned with an empty environment in `/`, told its memory and time limits
 * (`-memory BYTES -timeout Nms`), its input written to its stdin as it
 * drains, its stdout read whole and bounded. Its memory limit is taken from
 * the source's lease of the process-wide budget for as long as it runs, and
 * so is every byte it prints; all of it is given back when it ends. The
 * helper stops itself at its limits (and says so with an exit code); a
 * SIGKILL after the time limit (and a grace) stops one that cannot, and an
 * abort of `signal` stops it at once.
 */

export interface HelperRun {
  /** The helper in messages: `kustomize` (`the kustomize helper`, `the kustomize time limit`). */
  name: string;
  /** The program. */
  path: string;
  /** Bytes the helper may use (its `-memory` flag), taken from `lease` while it runs. */
  memory: number;
  /** How long it may take (its `-timeout` flag); killed a grace after. */
  timeoutMs: number;
  /** Bytes it may print; past them it is killed and refused. */
  maxOutputBytes: number;
  /** What is being done, for messages: `<label>: kustomize build apps`. */
  where: string;
  /** The input, in pieces, written in order as the helper takes them. */
  input: Iterable<string> | AsyncIterable<string>;
  /** The message of an exit code the helper gives a meaning (undefined: it ended otherwise). `said` is stderr's first line. */
  exitMessage: (code: number, said: string) => string | undefined;
  lease?: BudgetLease;
  signal?: AbortSignal;
}

/** The exit codes every helper gives a meaning (kustomize/, helm/ and fetch/ PROTOCOL.md). */
export const HELPER_EXIT = { refused: 10, failed: 11, memory: 12, time: 13, output: 14 } as const;

/**
 * The message of a helper's own exit code: a refusal as `refused` words it
 * (stderr's first line given), a failure and a limit after their prefixes;
 * undefined for any other code (HelperRun.exitMessage).
 */
export function helperExitMessage(code: number, said: string, words: { refused: (said: string) => string; failed: string; limit: string }): string | undefined {
  if (code === HELPER_EXIT.refused) return words.refused(said);
  if (code === HELPER_EXIT.failed) return `${words.failed}: ${said}`;
  if (code === HELPER_EXIT.memory || code === HELPER_EXIT.time || code === HELPER_EXIT.output) return `${words.limit}: ${said}`;
  return undefined;
}

/** A grace beyond the time limit before the helper is killed: it stops itself, and says why, first. */
const BACKSTOP_GRACE_MS = 5_000;

/** Keeps this much of stderr: the first line is the message, the rest is for people. */
const MAX_STDERR_CHARS = 4096;

/** Runs the helper and returns what it printed (exit 0). Every failure is a SourceError. */
export async function runHelper(run: HelperRun): Promise<string> {
  await run.lease?.take(run.memory, run.signal);
  const taken = { bytes: run.memory };
  try {
    return await spawnHelper(run, taken);
  } finally {
    run.lease?.release(taken.bytes);
  }
}

function spawnHelper(run: HelperRun, taken: { bytes: number }): Promise<string> {
  const { where, timeoutMs } = run;
  const child = spawn(run.path, ['-memory', String(run.memory), '-timeout', `${timeoutMs}ms`], {
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
    const backstop = setTimeout(() => stop(new SourceError(`${where}: took longer than ${timeoutMs / 1000} s (the ${run.name} time limit); refused`)), timeoutMs + BACKSTOP_GRACE_MS);
    const onAbort = (): void => stop(new SourceError(`${where}: cancelled`));
    run.signal?.addEventListener('abort', onAbort, { once: true });
    child.stdout.on('data', (chunk: Buffer) => {
      outBytes += chunk.length;
      if (outBytes > run.maxOutputBytes) return stop(new SourceError(`${where}: printed more than ${formatBytes(run.maxOutputBytes)}; refused`));
      out.push(chunk);
      taken.bytes += chunk.length;
      run.lease?.take(chunk.length).catch((e: unknown) => stop(e instanceof SourceError ? e : new SourceError(`${where}: ${messageOf(e)}`)));
    });
    child.stderr.on('data', (chunk: Buffer) => {
      if (err.length < MAX_STDERR_CHARS) err += chunk.toString('utf8');
    });
    child.on('error', (e: NodeJS.ErrnoException) => {
      const why = e.code === 'ENOENT' ? `the ${run.name} helper ${run.path} is missing (make build builds it)` : messageOf(e);
      stop(new SourceError(`${where}: ${why}`, { cause: e }));
    });
    child.on('close', (code, signal) => {
      clearTimeout(backstop);
      run.signal?.removeEventListener('abort', onAbort);
      if (failure) return reject(failure);
      if (code === 0) return resolve(Buffer.concat(out).toString('utf8'));
      reject(new SourceError(endedMessage(run, code, signal, err.trim())));
    });
    writeInput(child, run.input).catch(() => undefined); // a helper that exits early closes its stdin: its exit says why
  });
}

function endedMessage(run: HelperRun, code: number | null, signal: NodeJS.Signals | null, stderr: string): string {
  const said = stderr.split('\n')[0] ?? '';
  const known = code === null ? undefined : run.exitMessage(code, said);
  if (known !== undefined) return known;
  // Killed by the kernel (out of memory) or crashed: the helper's memory is not the operator's.
  return `${run.where}: the ${run.name} helper ended (${signal ?? `exit ${code}`})${said ? `: ${said}` : ''}; refused`;
}

/** Writes the pieces in order, minding back-pressure, then ends the helper's stdin. */
async function writeInput(child: ChildProcessWithoutNullStreams, input: Iterable<string> | AsyncIterable<string>): Promise<void> {
  child.stdin.on('error', () => undefined);
  for await (const text of input) {
    if (child.stdin.destroyed) return;
    if (!child.stdin.write(text)) {
      await new Promise<void>((resolve) => {
        const done = (): void => {
          child.stdin.off('drain', done).off('close', done);
          resolve();
        };
        child.stdin.on('drain', done).on('close', done);
      });
    }
  }
  child.stdin.end();
}

/** Where a helper is: the environment variable `env` when set, else `dist/<built>` of this package (`make build`). */
export function helperBinary(env: string, built: string): string {
  return process.env[env] || fileURLToPath(new URL(`../../dist/${built}`, import.meta.url));
}
