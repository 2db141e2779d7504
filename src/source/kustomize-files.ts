import path from 'node:path';

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
