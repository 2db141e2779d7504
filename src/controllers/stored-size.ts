import type { InventoryEntry } from '../api/status.js';
import type { KubeObject } from '../kube/resources.js';

/**
 * The size of a sync once its status lists what it applied, against what an
 * object may take in etcd. A sync whose objects are inline carries them in
 * itself; with the inventory of them its status write would be refused
 * ("etcdserver: request is too large") after the whole set was applied, and
 * the set would never be recorded. It is refused before, instead.
 */

/** What an object may take in etcd: its default --max-request-bytes (1.5 MiB), as on managed clusters. */
export const MAX_STORED_BYTES = 1.5 * 1024 * 1024;
/** Room kept for the rest of the status (conditions, revisions, summary) and etcd's own overhead. */
const STATUS_ROOM_BYTES = 16 * 1024;
/** `{"id":"","v":""},` around each inventory entry. */
const ENTRY_OVERHEAD_BYTES = 17;

/** About how many bytes the sync takes with `entries` as its inventory: all of it but its status, as it is, and that. */
export function storedBytes(obj: KubeObject, entries: readonly InventoryEntry[]): number {
  const { status: _status, ...rest } = obj;
  let bytes = Buffer.byteLength(JSON.stringify(rest)) + STATUS_ROOM_BYTES;
  for (const e of entries) bytes += Buffer.byteLength(e.id) + Buffer.byteLength(e.v) + ENTRY_OVERHEAD_BYTES;
  return bytes;
}

/** Why the sync cannot record `entries` in its status, or undefined when it can. */
export function oversized(obj: KubeObject, entries: readonly InventoryEntry[]): string | undefined {
  const bytes = storedBytes(obj, entries);
  if (bytes <= MAX_STORED_BYTES) return undefined;
  const mib = (n: number): string => (n / 1024 / 1024).toFixed(2);
  const inline = ((obj.spec as { source?: { inline?: unknown[] } } | undefined)?.source?.inline?.length ?? 0) > 0;
  const advice = inline
    ? 'move the objects out of spec.source.inline into an http or artifact source, or split them into several syncs'
    : 'split the objects into several syncs';
  return (
    `with the inventory of its ${entries.length} objects this ${obj.kind} would take about ${mib(bytes)} MiB, past the ` +
    `${mib(MAX_STORED_BYTES)} MiB an object may take in etcd (its default --max-request-bytes): its status could not ` +
    `record them, so nothing was applied; ${advice}`
  );
}
