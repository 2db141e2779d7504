// What `syncprims diff` is asked, checked (and a file read and parsed) before
// the cluster's modules are loaded: bad usage and bad files fail at once.
import { readFile } from 'node:fs/promises';
import { isSyncKind, SYNC_KINDS, type SyncKind } from '../../api/kinds.js';
import type { KubeObject } from '../../kube/resources.js';
import { SourceError } from '../../source/errors.js';
import { DEFAULT_SOURCE_LIMITS } from '../../source/limits.js';
import { parseManifests } from '../../source/parse.js';
import type { ClusterFlags } from '../cluster.js';
import { CliError, UsageError } from '../errors.js';
import { parseSyncRef, type KindName } from '../kind-name.js';
import { useSourceLimitFlags, type SourceLimitFlags } from '../source-flags.js';

export interface DiffFlags extends ClusterFlags, SourceLimitFlags {
  filename?: string;
  clusterId?: string;
  defaultServiceAccount?: string;
  output: 'diff' | 'yaml' | 'json';
}

/** What to diff, checked (and a file read and parsed) before any cluster is asked. */
export type DiffRequest = { ref: Required<KindName<SyncKind>> } | { file: string; objects: KubeObject[] };

export async function diffRequest(target: string | undefined, flags: DiffFlags): Promise<DiffRequest> {
  if ((target === undefined) === (flags.filename === undefined)) {
    throw new UsageError('give diff a sync as kind/name, or a file with -f (see syncprims diff --help)');
  }
  useSourceLimitFlags(flags);
  if (target !== undefined) return { ref: parseSyncRef(target, SYNC_KINDS) };
  const file = flags.filename as string;
  const objects = parseFile(await readFile(file, 'utf8').catch((err: NodeJS.ErrnoException) => {
    throw new CliError(`cannot read ${file}: ${err.code === 'ENOENT' ? 'no such file or directory' : err.message}`);
  }), file);
  const other = objects.find((o) => !isSyncKind(o.kind));
  if (other) throw new CliError(`${file}: ${other.kind} ${other.metadata?.name ?? ''} is not a Sync, RemoteSync or ProxySync (to see what a sync would apply, use syncprims build)`);
  if (objects.length === 0) throw new CliError(`${file}: no objects: want a Sync, RemoteSync or ProxySync`);
  return { file, objects };
}

/** The file's objects, parsed as the operator parses a source: errors name the file, document and line. */
function parseFile(text: string, file: string): KubeObject[] {
  try {
    return parseManifests(text, file, { maxObjects: DEFAULT_SOURCE_LIMITS.maxObjects });
  } catch (err) {
    if (err instanceof SourceError) throw new CliError(err.message, undefined, { cause: err });
    throw err;
  }
}
