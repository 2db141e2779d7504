import path from 'node:path';
import type { KubeObject } from '../kube/resources.js';
import { extractTarGz, insideRoot, type ArchiveFiles } from './archive.js';
import type { BudgetLease } from './budget.js';
import { buildKustomizations } from './kustomize.js';
import { isKustomizationFile, isUnder, reachableFolders, type KustomizeTree } from './kustomize-files.js';
import type { SourceLimits } from './limits.js';

export interface ArchiveKustomize {
  /** The archive's compressed bytes, extracted again whole. */
  data: Buffer;
  /** What the first extraction kept (keepForKustomize; its bytes are given back to the lease). */
  kept: ArchiveFiles;
  /** The folders to build (select.ts `selectSource`). */
  dirs: string[];
  label: string;
  limits: SourceLimits;
  /** Objects the source may still have. */
  maxObjects: number;
  lease: BudgetLease;
  signal?: AbortSignal;
}

/**
 * The objects of an archive's kustomizations. A kustomization may read files
 * the first extraction did not keep (a generator's files, a patch, a base in
 * another folder), so the archive is extracted again, keeping the files of
 * the folders the builds can reach (kustomize-files.ts `reachableFolders`,
 * from the kustomization files the first extraction kept) and only those,
 * charged to the lease as the first extraction was, once the manifests it
 * kept are parsed and given back.
 */
export async function kustomizeArchive(a: ArchiveKustomize): Promise<KubeObject[]> {
  const { folders, files: named } = await reachableFolders(a.dirs, archiveTree(a.kept), (dir, entry) => insideRoot(path.posix.join(dir, entry)));
  let kept = 0;
  for (const f of a.kept.values()) kept += f.length;
  a.lease.release(kept);
  a.kept.clear();
  const needed = new Set(named);
  const keep = (p: string): boolean => needed.has(p) || folders.some((f) => isUnder(p, f));
  const files = await extractTarGz(a.data, a.limits, a.label, { keep, lease: a.lease, signal: a.signal });
  // The others are listed with no content: the helper is not given them.
  for (const p of [...files.keys()]) if (!keep(p)) files.delete(p);
  return buildKustomizations(files, a.dirs, a.label, {
    lease: a.lease,
    signal: a.signal,
    maxObjects: a.maxObjects,
    maxOutputBytes: a.limits.maxUnpackedBytes,
  });
}

/** The archive's files as reachableFolders sees them: its folders are the prefixes of its paths. */
function archiveTree(files: ArchiveFiles): KustomizeTree {
  const folders = new Set<string>(['']);
  for (const p of files.keys()) for (let d = path.posix.dirname(p); d !== '.' && !folders.has(d); d = path.posix.dirname(d)) folders.add(d);
  return {
    kind: async (p) => (files.has(p) ? 'file' : folders.has(p) ? 'folder' : undefined),
    read: async (p) => files.get(p)?.toString('utf8'),
  };
}

/** What the first extraction keeps: the files `paths` selects, and every kustomization file (to know what a build reaches). */
export function keepForKustomize(selected: (p: string) => boolean): (p: string) => boolean {
  return (p) => selected(p) || isKustomizationFile(p);
}
