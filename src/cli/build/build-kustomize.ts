// `syncprims build --path`: kustomizations on disk, built by the operator's own code (src/source/kustomize.ts).
import { readdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { parse } from 'yaml';
import type { KubeObject } from '../../kube/resources.js';
import { buildKustomizations, SourceError, sourceLimits, type ArchiveFiles } from '../../source/index.js';
import { KUSTOMIZATION_FILE_NAMES } from '../../source/kustomize-files.js';
import { CliError } from '../errors.js';

/** The fields of a kustomization that name another folder of kustomizations (or a file) to read. */
const INCLUDING = ['resources', 'bases', 'components', 'generators', 'transformers', 'validators'];

/** At most this many folders are followed from one path (the helper refuses nesting past 20 anyway). */
const MAX_FOLDERS = 500;

/**
 * The objects of the kustomizations in `dirs` (relative to the folder `given`),
 * as the operator builds them from an archive: the helper is given the files
 * of every folder they reach through resources, bases, components and
 * plugin configs (a base in `../../base`), read from disk here, and nothing
 * else. Works offline: a remote base is refused, as in the operator.
 */
export async function buildLocalKustomizations(given: string, dirs: string[]): Promise<KubeObject[]> {
  const start = dirs.map((d) => path.resolve(given, d));
  const { folders, files: named } = await reachable(start);
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

/** The folders reachable from `start` by the fields that include others, and files those fields name outside them. */
async function reachable(start: string[]): Promise<{ folders: string[]; files: string[] }> {
  const folders = new Set<string>();
  const files = new Set<string>();
  const queue = [...start];
  for (let dir = queue.shift(); dir !== undefined; dir = queue.shift()) {
    if (folders.has(dir)) continue;
    if (folders.size >= MAX_FOLDERS) throw new CliError(`${dir}: kustomizations reach more than ${MAX_FOLDERS} folders`);
    folders.add(dir);
    for (const entry of await includedBy(dir)) {
      const target = path.resolve(dir, entry);
      const info = await stat(target).catch(() => undefined);
      if (info?.isDirectory()) queue.push(target);
      else if (info?.isFile()) files.add(target);
    }
  }
  return { folders: [...folders], files: [...files] };
}

/** The one-line entries of a folder's kustomization's including fields (none when it has no readable one). */
async function includedBy(dir: string): Promise<string[]> {
  for (const name of KUSTOMIZATION_FILE_NAMES) {
    const text = await readFile(path.join(dir, name), 'utf8').catch(() => undefined);
    if (text === undefined) continue;
    let k: Record<string, unknown> | undefined;
    try {
      k = parse(text) as Record<string, unknown> | undefined;
    } catch {
      return []; // kustomize says what is wrong with it
    }
    return INCLUDING.flatMap((f) => (Array.isArray(k?.[f]) ? (k[f] as unknown[]) : [])).filter((e): e is string => typeof e === 'string' && !e.includes('\n'));
  }
  return [];
}

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
