// Helpers of the kustomize tests: a folder read as an archive's files, the
// objects `syncprims build` prints without its own marks, work a few at a time.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { KubeObject } from '../../src/kube/resources.js';
import type { ArchiveFiles } from '../../src/source/archive.js';

/** Every file under `dir`, keyed by its relative path (as an archive's files). */
export function readTree(dir: string, rel = '', files: ArchiveFiles = new Map()): ArchiveFiles {
  for (const entry of readdirSync(path.join(dir, rel), { withFileTypes: true })) {
    const p = rel ? `${rel}/${entry.name}` : entry.name;
    if (entry.isDirectory()) readTree(dir, p, files);
    else files.set(p, readFileSync(path.join(dir, p)));
  }
  return files;
}

const OWNER_LABELS = ['syncprims.dev/owner-kind', 'syncprims.dev/owner-namespace', 'syncprims.dev/owner-name'];

/**
 * An object as rendered, less what syncprims adds: the owner labels (and a
 * labels map they alone made), and `namespace` where the same object of
 * `expected` (by kind and name) names none.
 */
export function withoutBuildMarks(obj: KubeObject, namespace: string, expected: KubeObject[]): KubeObject {
  const copy = structuredClone(obj);
  const labels = copy.metadata.labels;
  if (labels) {
    for (const l of OWNER_LABELS) delete labels[l];
    if (Object.keys(labels).length === 0) delete copy.metadata.labels;
  }
  const same = expected.find((e) => e.kind === obj.kind && e.metadata.name === obj.metadata.name);
  if (copy.metadata.namespace === namespace && same?.metadata.namespace === undefined) delete copy.metadata.namespace;
  return copy;
}

/** `work` over `items`, at most `n` at once. */
export async function inParallel<T>(items: T[], n: number, work: (item: T) => Promise<void>): Promise<void> {
  const queue = [...items];
  const worker = async (): Promise<void> => {
    for (let item = queue.shift(); item !== undefined; item = queue.shift()) await work(item);
  };
  await Promise.all(Array.from({ length: Math.min(n, items.length) }, worker));
}
