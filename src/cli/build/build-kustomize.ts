// `syncprims build --path`: kustomizations on disk, built by the operator's own code (src/source/kustomize.ts).
import { readdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import type { KubeObject } from '../../kube/resources.js';
import { buildKustomizations, SourceError, sourceLimits, type ArchiveFiles } from '../../source/index.js';
import { reachableFolders, type KustomizeTree } from '../../source/kustomize-files.js';
import { CliError } from '../errors.js';

/**
 * The objects of the kustomizations in `dirs` (relative to the folder `given`),
 * as the operator builds them from an archive: the helper is given the files
 * of every folder they reach through resources, bases, components and
 * plugin configs (a base in `../../base`), read from disk here, and nothing
 * else. Works offline: a remote base is refused, as in the operator.
 */
export async function buildLocalKustomizations(given: string, dirs: string[]): Promise<KubeObject[]> {
  const start = dirs.map((d) => path.resolve(given, d));
  const { folders, files: named } = await reachableFolders(start, DISK, (dir, entry) => path.resolve(dir, entry));
  const root = commonAncestor([...folders, ...named.map((f) => path.dirname(f))]);
  const files: ArchiveFiles = new Map();
  for (const folder of folders) await walk(folder, root, files, given);
  for (const f of named) files.set(rel(root, f), await readFile(f));
  const limits = sourceLimits();
  try {
    return await buildKustomizations(files, start.map((d) => rel(root, d)), given, { maxObjects: limits.maxObjects, maxOutputBytes: limits.maxUnpackedBytes });
  } catch (err) {
    if (err instanceof SourceError) throw new CliError(err.message, undefined, { cause: err });
    throw err;
  }
}

/** A folder on disk, for reachableFolders. */
const DISK: KustomizeTree = {
  kind: async (p) => {
    const info = await stat(p).catch(() => undefined);
    return info?.isDirectory() ? 'folder' : info?.isFile() ? 'file' : undefined;
  },
  read: (p) => readFile(p, 'utf8').catch(() => undefined),
};

function commonAncestor(dirs: string[]): string {
  let common = dirs[0] ?? path.resolve('.');
  for (const d of dirs) while (rel(common, d).startsWith('..')) common = path.dirname(common);
  return common;
}

function rel(root: string, p: string): string {
  return path.relative(root, p).split(path.sep).join('/');
}

/** Every file under `dir` (hidden entries skipped), keyed by its path from `root`. */
async function walk(dir: string, root: string, files: ArchiveFiles, given: string): Promise<void> {
  const { maxFiles } = sourceLimits();
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    if (entry.name.startsWith('.')) continue;
    const p = path.join(dir, entry.name);
    if (entry.isDirectory()) await walk(p, root, files, given);
    else if (entry.isFile()) files.set(rel(root, p), await readFile(p));
    if (files.size > maxFiles) throw new CliError(`--path ${given}: its kustomizations reach more than ${maxFiles} files (the source limit, --source-max-files)`);
  }
}
