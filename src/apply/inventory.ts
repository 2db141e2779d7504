import type { InventoryEntry } from '../api/status.js';
import { splitApiVersion, type KubeObject } from '../kube/resources.js';

/**
 * Object ids and the inventory (API.md "Status": `inventory.entries[{id, v}]`).
 *
 * An id is `<namespace>_<name>_<group>_<kind>`: the namespace is empty for a
 * cluster-scoped object, the group empty for the core group. The version is
 * not part of the id (it is `v` in an entry), so an object whose apiVersion
 * moves from v1beta1 to v1 keeps its id and is not pruned.
 *
 * Ids are literal: unlike cli-utils, a `:` in a name (RBAC names such as
 * `system:metrics`) is not written as `__`. Namespaces, groups and kinds
 * cannot contain `_`, so parsing takes the namespace before the first `_` and
 * the group and kind after the last two; the name is the rest, whatever it holds.
 */

/** The four parts of an id. */
export interface ObjectRef {
  namespace: string;
  name: string;
  group: string;
  kind: string;
}

const SEPARATOR = '_';

export function objectRef(obj: KubeObject): ObjectRef {
  return {
    namespace: obj.metadata.namespace ?? '',
    name: obj.metadata.name ?? '',
    group: splitApiVersion(obj.apiVersion).group,
    kind: obj.kind,
  };
}

export function formatObjectId(ref: ObjectRef): string {
  return [ref.namespace, ref.name, ref.group, ref.kind].join(SEPARATOR);
}

/** `<namespace>_<name>_<group>_<kind>` of an object (as rendered: namespace already defaulted). */
export function objectId(obj: KubeObject): string {
  return formatObjectId(objectRef(obj));
}

/** The parts of an id; throws on a string that is not one (no name or no kind). */
export function parseObjectId(id: string): ObjectRef {
  const first = id.indexOf(SEPARATOR);
  const last = id.lastIndexOf(SEPARATOR);
  const beforeLast = last > 0 ? id.lastIndexOf(SEPARATOR, last - 1) : -1;
  if (first < 0 || beforeLast <= first) throw new Error(`not an object id: ${JSON.stringify(id)}`);
  const ref = {
    namespace: id.slice(0, first),
    name: id.slice(first + 1, beforeLast),
    group: id.slice(beforeLast + 1, last),
    kind: id.slice(last + 1),
  };
  if (ref.name === '' || ref.kind === '') throw new Error(`not an object id: ${JSON.stringify(id)}`);
  return ref;
}

/** `Kind/namespace/name`, or `Kind/name` for a cluster-scoped object: for messages, Events and logs. */
export function displayName(idOrRef: string | ObjectRef): string {
  const ref = typeof idOrRef === 'string' ? parseObjectId(idOrRef) : idOrRef;
  return ref.namespace === '' ? `${ref.kind}/${ref.name}` : `${ref.kind}/${ref.namespace}/${ref.name}`;
}

/** The display name of an object. */
export function displayNameOf(obj: KubeObject): string {
  return displayName(objectRef(obj));
}

export function compareIds(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** The inventory of a rendered set: one entry per id (the last object wins), sorted by id. */
export function inventoryOf(objects: readonly KubeObject[]): InventoryEntry[] {
  const byId = new Map<string, InventoryEntry>();
  for (const obj of objects) {
    const id = objectId(obj);
    byId.set(id, { id, v: splitApiVersion(obj.apiVersion).version });
  }
  return [...byId.values()].sort((a, b) => compareIds(a.id, b.id));
}

/** Entries of `previous` whose id is not in `next`, in the order of `previous`: the objects to prune. */
export function staleEntries(
  previous: readonly InventoryEntry[],
  next: readonly InventoryEntry[],
): InventoryEntry[] {
  const keep = new Set(next.map((e) => e.id));
  return previous.filter((e) => !keep.has(e.id));
}

/** The apiVersion an entry was applied with: `group/v`, or `v` for the core group. */
export function entryApiVersion(entry: InventoryEntry): string {
  const { group } = parseObjectId(entry.id);
  return group === '' ? entry.v : `${group}/${entry.v}`;
}

/**
 * The entries of both, one per id (`next`'s version wins), sorted by id: what
 * a sync may own while it applies `next` over `previous` (the write-ahead
 * inventory, sync-pipeline.ts).
 */
export function mergeInventories(previous: readonly InventoryEntry[], next: readonly InventoryEntry[]): InventoryEntry[] {
  const byId = new Map(previous.map((e) => [e.id, e]));
  for (const e of next) byId.set(e.id, e);
  return [...byId.values()].sort((a, b) => compareIds(a.id, b.id));
}
