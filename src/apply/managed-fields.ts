import { FIELD_MANAGER } from '../api/marks.js';
import type { KubeObject } from '../kube/resources.js';

/** A `fieldsV1` set: `f:<name>`, `k:<key json>`, `v:<value json>` and `.` (the element itself). */
export interface FieldSet {
  [key: string]: FieldSet;
}

/** One managedFields entry, as much of it as is read here. */
export interface ManagedFieldsEntry {
  manager?: string;
  operation?: string;
  apiVersion?: string;
  time?: string;
  subresource?: string;
  fieldsV1?: FieldSet;
}

/** A field as a path of `fieldsV1` keys, e.g. `['f:data', 'f:a']`. */
export type FieldPath = string[];

function entriesOf(obj: KubeObject | undefined): ManagedFieldsEntry[] {
  const mf = obj?.metadata.managedFields;
  return Array.isArray(mf) ? (mf as ManagedFieldsEntry[]) : [];
}

/** Our (`syncprims`) Apply entry of the main resource, if the object has one. */
export function ourEntry(obj: KubeObject | undefined): ManagedFieldsEntry | undefined {
  return entriesOf(obj).find((e) => e?.manager === FIELD_MANAGER && e.operation === 'Apply' && !e.subresource);
}

/** Whether a field set holds the field at `path`. */
export function holds(set: FieldSet | undefined, path: FieldPath): boolean {
  let node = set;
  for (const key of path) {
    node = node?.[key];
    if (!node) return false;
  }
  return true;
}

/**
 * The field managers other than ours that changed `paths`: those that own
 * one of them now, and, for a path nobody owns (it was removed), the
 * managers of the latest updates.
 */
export function changersOf(obj: KubeObject, paths: FieldPath[]): string[] {
  const others = entriesOf(obj).filter((e) => e?.manager && e.manager !== FIELD_MANAGER);
  const names = new Set<string>();
  let unowned = false;
  for (const path of paths) {
    const owners = others.filter((e) => holds(e.fieldsV1, path));
    for (const e of owners) names.add(e.manager!);
    if (owners.length === 0) unowned = true;
  }
  if (unowned) {
    const latest = others.map((e) => e.time ?? '').sort().at(-1);
    for (const e of others) if (latest !== undefined && (e.time ?? '') === latest) names.add(e.manager!);
  }
  return [...names].sort();
}

/** `.data.a`, `.spec.containers[name=web].image`, `.metadata.labels["app.kubernetes.io/name"]`, `.spec.finalizers[="x"]`. */
export function displayPath(path: FieldPath): string {
  return path.map(displayKey).join('') || '.';
}

function displayKey(key: string): string {
  if (key === '.') return '';
  const body = key.slice(2);
  if (key.startsWith('f:')) return /^[A-Za-z_$][\w$-]*$/.test(body) ? `.${body}` : `[${JSON.stringify(body)}]`;
  if (key.startsWith('k:')) {
    try {
      const fields = JSON.parse(body) as Record<string, unknown>;
      return `[${Object.entries(fields).map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`).join(',')}]`;
    } catch {
      return `[${body}]`;
    }
  }
  return `[=${body}]`;
}

/**
 * The fields (leaves) `before` holds and `after` does not: what an entry
 * lost between two versions of an object.
 */
export function lostFields(before: FieldSet | undefined, after: FieldSet | undefined, path: FieldPath = []): FieldPath[] {
  const lost: FieldPath[] = [];
  for (const [key, child] of Object.entries(before ?? {})) {
    if (key === '.') continue;
    const at = [...path, key];
    const kept = after?.[key];
    if (!kept) lost.push(...leavesOf(child, at));
    else lost.push(...lostFields(child, kept, at));
  }
  return lost;
}

function leavesOf(set: FieldSet, path: FieldPath): FieldPath[] {
  const keys = Object.keys(set).filter((k) => k !== '.');
  return keys.length === 0 ? [path] : keys.flatMap((k) => leavesOf(set[k]!, [...path, k]));
}
