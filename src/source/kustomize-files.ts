import path from 'node:path';
import { parse } from 'yaml';

/** The names kustomize recognizes as a folder's kustomization, in its order. */
export const KUSTOMIZATION_FILE_NAMES = ['kustomization.yaml', 'kustomization.yml', 'Kustomization'] as const;

const NAMES = new Set<string>(KUSTOMIZATION_FILE_NAMES);

/** Whether `p` (a relative path) is a kustomization file. */
export function isKustomizationFile(p: string): boolean {
  return NAMES.has(path.posix.basename(p));
}

/** Whether the file or folder `p` is `dir` or inside it (`''` is the root). */
export function isUnder(p: string, dir: string): boolean {
  return dir === '' || p === dir || p.startsWith(`${dir}/`);
}

/**
 * The folders at or below `folder` that hold a kustomization, the topmost
 * only (a folder below a kustomization belongs to it), sorted. None when
 * `folder` is undefined (a file was named).
 */
export function kustomizationRoots(names: Iterable<string>, folder: string | undefined): string[] {
  if (folder === undefined) return [];
  const holding = new Set<string>();
  for (const p of names) {
    if (isKustomizationFile(p) && isUnder(p, folder)) holding.add(path.posix.dirname(p).replace(/^\.$/, ''));
  }
  const sorted = [...holding].sort();
  return sorted.filter((d) => !sorted.some((other) => other !== d && isUnder(d, other)));
}

/** Where reachableFolders looks: an archive's files, or a folder on disk. */
export interface KustomizeTree {
  /** What `p` is, if anything. */
  kind(p: string): Promise<'folder' | 'file' | undefined>;
  /** A file's text, or undefined when it cannot be read. */
  read(p: string): Promise<string | undefined>;
}

/** The fields of a kustomization that name another folder of kustomizations (or a file) to read. */
const INCLUDING = ['resources', 'bases', 'components', 'generators', 'transformers', 'validators'];

/** At most this many folders are followed (the helper refuses nesting past 20 anyway). */
export const MAX_REACHABLE_FOLDERS = 500;

/**
 * The folders a build of `start` may read (the start folders, and those
 * their kustomizations include through resources, bases, components and
 * plugin configs, transitively), and the files those fields name outside
 * them: all that a build can load, since kustomize's default load
 * restrictor keeps every other file it reads at or below a kustomization's
 * own folder. `resolve` joins a folder and an entry (undefined: outside the tree).
 */
export async function reachableFolders(
  start: string[],
  tree: KustomizeTree,
  resolve: (dir: string, entry: string) => string | undefined,
): Promise<{ folders: string[]; files: string[] }> {
  const folders = new Set<string>();
  const files = new Set<string>();
  const queue = [...start];
  for (let dir = queue.shift(); dir !== undefined && folders.size < MAX_REACHABLE_FOLDERS; dir = queue.shift()) {
    if (folders.has(dir)) continue;
    folders.add(dir);
    for (const entry of await includedBy(dir, tree, resolve)) {
      const target = resolve(dir, entry);
      const kind = target === undefined ? undefined : await tree.kind(target);
      if (kind === 'folder') queue.push(target as string);
      else if (kind === 'file') files.add(target as string);
    }
  }
  return { folders: [...folders], files: [...files] };
}

/** The one-line entries of a folder's kustomization's including fields (none when it has no readable one). */
async function includedBy(dir: string, tree: KustomizeTree, resolve: (dir: string, entry: string) => string | undefined): Promise<string[]> {
  for (const name of KUSTOMIZATION_FILE_NAMES) {
    const file = resolve(dir, name);
    const text = file === undefined ? undefined : await tree.read(file);
    if (text === undefined) continue;
    let k: Record<string, unknown> | undefined;
    try {
      k = parse(text) as Record<string, unknown> | undefined;
    } catch {
      return []; // kustomize says what is wrong with it
    }
    const entries = INCLUDING.flatMap((f) => (Array.isArray(k?.[f]) ? (k[f] as unknown[]) : []));
    return entries.filter((e): e is string => typeof e === 'string' && !e.includes('\n'));
  }
  return [];
}
