import type { KubeObject } from '../kube/resources.js';
import type { ArchiveFiles } from './archive.js';
import type { BudgetLease } from './budget.js';
import { helperBinary, helperExitMessage, runHelper } from './helper-process.js';
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
  const where = `${label}: kustomize build ${dir || '.'}`;
  return runHelper({
    name: 'kustomize',
    path: helperPath(),
    memory: KUSTOMIZE_BASE_MEMORY + 2 * inputBytes,
    timeoutMs: opts.timeoutMs ?? KUSTOMIZE_TIME_LIMIT_MS,
    maxOutputBytes: opts.maxOutputBytes,
    where,
    input: inputOf(files, dir),
    exitMessage: (code, said) => helperExitMessage(code, said, { refused: (s) => `${label}: ${s}; refused (kustomize runs in a sandbox: docs/source.md, Kustomize)`, failed: label, limit: where }),
    lease: opts.lease,
    signal: opts.signal,
  });
}

/** The input as JSON, one file at a time (as base64). */
function* inputOf(files: ArchiveFiles, dir: string): Generator<string> {
  yield `{"dir":${JSON.stringify(dir)},"files":{`;
  let first = true;
  for (const [p, data] of files) {
    yield `${first ? '' : ','}${JSON.stringify(p)}:"${data.toString('base64')}"`;
    first = false;
  }
  yield '}}';
}

/** Where the helper is: dist/kustomize/ of this package (`make build`), or SYNCPRIMS_KUSTOMIZE_HELPER. */
export const helperPath = (): string => helperBinary('SYNCPRIMS_KUSTOMIZE_HELPER', 'kustomize/syncprims-kustomize');
