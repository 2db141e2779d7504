import type { BudgetLease } from './budget.js';
import { SourceError } from './errors.js';
import { helperBinary, helperExitMessage, runHelper } from './helper-process.js';

/**
 * The fetch helper (`dist/fetch/syncprims-fetch`, fetch/PROTOCOL.md): Git
 * repositories and OCI artifacts are listed and fetched by go-git and
 * go-containerregistry in a process of their own, every connection checked
 * against `--source-deny-cidrs` by its dialer (docs/adr/0014).
 */

export type RepositoryKind = 'git' | 'oci';

/** What the helper is told (fetch/PROTOCOL.md "Input"), without the op. */
export interface FetchRequest {
  kind: RepositoryKind;
  url: string;
  ref?: Record<string, string>;
  auth?: Record<string, string>;
  caPEM?: string;
  insecure?: boolean;
  denyCidrs: readonly string[];
  maxFetchedBytes: number;
  maxUnpackedBytes: number;
  maxFiles: number;
  layerSelector?: { mediaType?: string; operation?: string };
  verify?: { provider: 'cosign'; publicKeys: string[] };
  /** For a fetch: what the resolution gave (a commit, a digest). */
  resolved?: string;
}

/** What a resolution gives (fetch/PROTOCOL.md "Output"). */
export interface Resolution {
  revision: string;
  resolved: string;
  ref?: Record<string, string>;
  verified?: string;
}

/** What a fetch gives: the resolution, and the tree (git) or layer (oci). */
export interface Fetched extends Resolution {
  /** `tree.tar.gz`, or the layer's title. */
  name: string;
  data: Buffer;
  files?: number;
  bytes?: number;
}

/** The helper's memory beside what it fetches. */
const FETCH_BASE_MEMORY = 64 * 1024 * 1024;
/** What it holds per byte it may fetch: the pack (objects are inflated and written to the tarball one at a time). */
const FETCH_MEMORY_PER_FETCHED_BYTE = 1;


function fetchHelperPath(): string {
  return helperBinary('SYNCPRIMS_FETCH_HELPER', 'fetch/syncprims-fetch');
}

export interface FetchRunOptions {
  /** The source in messages: its URL without credentials. */
  label: string;
  timeoutMs: number;
  lease?: BudgetLease;
}

/** Lists the remote's refs (or tags) and picks what the ref names. Every failure is a SourceError. */
export async function resolveRepository(request: FetchRequest, opts: FetchRunOptions): Promise<Resolution> {
  const answer = await run('resolve', request, opts, 4 * 1024 * 1024);
  return resolutionOf(answer, opts.label);
}

/** Fetches exactly `request.resolved` (resolving first when it is unset). Every failure is a SourceError. */
export async function fetchRepository(request: FetchRequest, opts: FetchRunOptions): Promise<Fetched> {
  // The tree is sent as base64 in JSON: a third more than its bytes, beside the rest.
  const maxOutput = Math.ceil(request.maxUnpackedBytes * 1.4) + 1024 * 1024;
  const answer = await run('fetch', request, opts, maxOutput);
  if (typeof answer.data !== 'string' || typeof answer.name !== 'string') {
    throw new SourceError(`${opts.label}: the fetch helper gave no tree (a bug: please report it)`);
  }
  const data = Buffer.from(answer.data, 'base64');
  return { ...resolutionOf(answer, opts.label), name: answer.name, data, files: numberOr(answer.files), bytes: numberOr(answer.bytes) };
}

async function run(op: 'resolve' | 'fetch', request: FetchRequest, opts: FetchRunOptions, maxOutputBytes: number): Promise<Record<string, unknown>> {
  const where = `${opts.label}: ${op === 'resolve' ? 'listing refs' : 'fetching'}`;
  const memory = FETCH_BASE_MEMORY + (op === 'fetch' ? FETCH_MEMORY_PER_FETCHED_BYTE * request.maxFetchedBytes : 0);
  const stdout = await runHelper({
    name: 'fetch',
    path: fetchHelperPath(),
    memory,
    timeoutMs: opts.timeoutMs,
    maxOutputBytes,
    where,
    input: [JSON.stringify({ op, ...request, maxOutputBytes })],
    // The helper's refusals mostly say so themselves.
    exitMessage: (code, said) => helperExitMessage(code, said, { refused: (s) => `${opts.label}: ${/\brefused\b/.test(s) ? s : `${s}; refused`}`, failed: where, limit: where }),
    lease: opts.lease,
  });
  try {
    return JSON.parse(stdout) as Record<string, unknown>;
  } catch {
    throw new SourceError(`${where}: the fetch helper's answer is not JSON (a bug: please report it)`);
  }
}

function resolutionOf(answer: Record<string, unknown>, label: string): Resolution {
  const { revision, resolved, ref, verified } = answer;
  if (typeof revision !== 'string' || typeof resolved !== 'string') {
    throw new SourceError(`${label}: the fetch helper gave no revision (a bug: please report it)`);
  }
  return {
    revision,
    resolved,
    ref: ref && typeof ref === 'object' ? (ref as Record<string, string>) : undefined,
    verified: typeof verified === 'string' ? verified : undefined,
  };
}

function numberOr(v: unknown): number | undefined {
  return typeof v === 'number' ? v : undefined;
}
