import { ORIGIN_LABEL } from '../../api/marks.js';
import { OWNER_LABEL_KEYS } from '../../apply/owner.js';
import type { KubeObject } from '../../kube/resources.js';

/**
 * What `syncprims diff` leaves out of the objects it compares: what the
 * server bumps on every write (managedFields, resourceVersion, generation,
 * uid, creationTimestamp), status (a controller's, never applied), and our
 * own marks (the owner and origin labels, the same on every object we
 * apply) unless the apply changes them. Secret values are masked as
 * kubectl diff masks them.
 */

const SERVER_METADATA = ['managedFields', 'resourceVersion', 'generation', 'uid', 'creationTimestamp', 'selfLink'] as const;

/** Our labels: on every object a sync applies, so they say nothing about one object's change. */
export const OUR_LABELS: readonly string[] = [...OWNER_LABEL_KEYS, ORIGIN_LABEL];

/** A deep copy of the object without the noise (our labels too, unless `keepOurLabels`), its keys sorted. */
export function withoutNoise(obj: KubeObject, keepOurLabels = false): KubeObject {
  const copy = sortedKeys(obj);
  delete copy.status;
  for (const field of SERVER_METADATA) delete copy.metadata[field];
  const labels = { ...copy.metadata.labels };
  if (!keepOurLabels) for (const label of OUR_LABELS) delete labels[label];
  if (Object.keys(labels).length > 0) copy.metadata.labels = labels;
  else delete copy.metadata.labels;
  if (copy.metadata.annotations && Object.keys(copy.metadata.annotations).length === 0) delete copy.metadata.annotations;
  return copy;
}

/** A deep copy with the keys of every map in sorted order (as kubectl diff shows objects): the order the server sends them in is no change. */
export function sortedKeys<T>(value: T): T {
  if (Array.isArray(value)) return value.map(sortedKeys) as T;
  if (value === null || typeof value !== 'object') return value;
  const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return Object.fromEntries(entries.map(([k, v]) => [k, sortedKeys(v)])) as T;
}

/** Whether our labels differ between the two objects (an adoption, another owner, another origin): then they are no noise. */
export function ourLabelsDiffer(a: KubeObject, b: KubeObject): boolean {
  return OUR_LABELS.some((l) => a.metadata.labels?.[l] !== b.metadata.labels?.[l]);
}

const MASK = '***';

/**
 * The two sides of a core Secret with every value of `data` and `stringData`
 * masked (kubectl diff's rule): `***` where both sides agree or only one has
 * the key, `*** (before)` and `*** (after)` where the value changes. Other
 * objects are returned as they are.
 */
export function maskSecrets(live: KubeObject | undefined, merged: KubeObject | undefined): [KubeObject | undefined, KubeObject | undefined] {
  if (!isSecret(live) && !isSecret(merged)) return [live, merged];
  const before = live && structuredClone(live);
  const after = merged && structuredClone(merged);
  for (const field of ['data', 'stringData']) mask(valuesOf(before, field) ?? {}, valuesOf(after, field) ?? {});
  return [before, after];
}

function isSecret(obj: KubeObject | undefined): boolean {
  return obj !== undefined && obj.kind === 'Secret' && obj.apiVersion === 'v1';
}

/** Masks the values of both maps in place. */
function mask(a: Record<string, string>, b: Record<string, string>): void {
  for (const key of new Set([...Object.keys(a), ...Object.keys(b)])) {
    const changed = key in a && key in b && a[key] !== b[key];
    if (key in a) a[key] = changed ? `${MASK} (before)` : MASK;
    if (key in b) b[key] = changed ? `${MASK} (after)` : MASK;
  }
}

function valuesOf(obj: KubeObject | undefined, field: string): Record<string, string> | undefined {
  const value = obj?.[field];
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, string>) : undefined;
}
