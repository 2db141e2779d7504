import type { KubeObject } from '../kube/resources.js';
import { extractTarGz, type ArchiveFiles } from './archive.js';
import type { BudgetLease } from './budget.js';
import { buildKustomizations } from './kustomize.js';
import type { SourceLimits } from './limits.js';

export interface ArchiveKustomize {
  /** The archive's compressed bytes, extracted again whole. */
  data: Buffer;
  /** What the first extraction kept (its bytes are given back to the lease). */
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
 * The objects of an archive's kustomizations. A kustomization may read any
 * file of the archive (a base in another folder, a generator's files, a
 * patch), so the archive is extracted again keeping everything (charged to
 * the lease, as the first extraction was), once the manifests it kept are
 * parsed and given back.
 */
export async function kustomizeArchive(a: ArchiveKustomize): Promise<KubeObject[]> {
  let kept = 0;
  for (const f of a.kept.values()) kept += f.length;
  a.lease.release(kept);
  a.kept.clear();
  const files = await extractTarGz(a.data, a.limits, a.label, { lease: a.lease, signal: a.signal });
  return buildKustomizations(files, a.dirs, a.label, {
    lease: a.lease,
    signal: a.signal,
    maxObjects: a.maxObjects,
    maxOutputBytes: a.limits.maxUnpackedBytes,
  });
}
