// Reading the objects a sync applied (its inventory) from the cluster they
// are in, for `syncprims tree`: one LIST per kind and namespace, selected by
// the sync's owner labels (a GET each where listing is forbidden), a few at
// a time; their kstatus computed by the operator's own health rules.
import type { InventoryEntry } from '../../api/status.js';
import { computeHealth, type Health } from '../../apply/health.js';
import { entryApiVersion, formatObjectId, parseObjectId, type ObjectRef } from '../../apply/inventory.js';
import { mapLimit } from '../../apply/map-limit.js';
import { ownedBy, ownerSelector, type Owner } from '../../apply/owner.js';
import { getIfExists, type Requester } from '../../kube/client.js';
import { UnknownKindError, type Discovery } from '../../kube/discovery.js';
import { ApiError } from '../../kube/errors.js';
import { collectionPath, objectPath, type KubeObject, type ResourceInfo } from '../../kube/resources.js';

/** Requests in flight at once in one cluster. */
const CONCURRENCY = 4;
const PAGE = 500;

/** One inventory entry as found now. */
export interface LiveEntry {
  ref: ObjectRef;
  apiVersion: string;
  /** The object; absent when it does not exist (or no longer carries the owner's labels). */
  object?: KubeObject;
  health: Health;
}

/** The entries of `status.inventory`, skipping any that is not a well-formed id. */
export function inventoryEntries(obj: KubeObject): InventoryEntry[] {
  const entries = (obj.status as { inventory?: { entries?: unknown } } | undefined)?.inventory?.entries;
  if (!Array.isArray(entries)) return [];
  return (entries as Partial<InventoryEntry>[]).filter((e): e is InventoryEntry => {
    if (typeof e?.id !== 'string' || typeof e.v !== 'string') return false;
    try {
      parseObjectId(e.id);
      return true;
    } catch {
      return false;
    }
  });
}

interface Group {
  apiVersion: string;
  kind: string;
  namespace: string;
  entries: { entry: InventoryEntry; ref: ObjectRef }[];
}

/**
 * The inventory's objects as they are now, in inventory order. Errors of the
 * cluster (unreachable, forbidden) are thrown: the caller says them on the
 * sync's node. A kind the cluster does not serve makes its objects NotFound.
 */
export async function readApplied(client: Requester, discovery: Discovery, owner: Owner, entries: InventoryEntry[], now = Date.now()): Promise<LiveEntry[]> {
  const groups = new Map<string, Group>();
  for (const entry of entries) {
    const ref = parseObjectId(entry.id);
    const apiVersion = entryApiVersion(entry);
    const key = `${apiVersion}|${ref.kind}|${ref.namespace}`;
    let group = groups.get(key);
    if (!group) groups.set(key, (group = { apiVersion, kind: ref.kind, namespace: ref.namespace, entries: [] }));
    group.entries.push({ entry, ref });
  }
  const found = new Map<string, LiveEntry>();
  await mapLimit([...groups.values()], CONCURRENCY, async (group) => {
    for (const live of await readGroup(client, discovery, owner, group, now)) found.set(formatObjectId(live.ref), live);
  });
  return entries.map((e) => found.get(e.id)).filter((l): l is LiveEntry => l !== undefined);
}

async function readGroup(client: Requester, discovery: Discovery, owner: Owner, group: Group, now: number): Promise<LiveEntry[]> {
  let info: ResourceInfo;
  try {
    info = await discovery.resolve(group.apiVersion, group.kind);
  } catch (err) {
    if (!(err instanceof UnknownKindError)) throw err;
    return group.entries.map(({ ref }) => ({
      ref,
      apiVersion: group.apiVersion,
      health: { status: 'NotFound', message: `${ref.kind} ${ref.name}: ${err.message}` },
    }));
  }
  const byName = await listOwned(client, info, group, owner).catch(async (err: unknown) => {
    if (!(err instanceof ApiError && err.status === 403)) throw err;
    return getEach(client, info, group, owner);
  });
  return group.entries.map(({ ref }) => {
    const object = byName.get(ref.name);
    return { ref, apiVersion: group.apiVersion, object, health: computeHealth(object, now) };
  });
}

/** The owner's objects of one kind in one namespace (cluster-wide for a cluster-scoped kind), by name. */
async function listOwned(client: Requester, info: ResourceInfo, group: Group, owner: Owner): Promise<Map<string, KubeObject>> {
  const byName = new Map<string, KubeObject>();
  const path = collectionPath(info, info.namespaced ? group.namespace : undefined);
  let token: string | undefined;
  do {
    const page = await client.request<{ items: KubeObject[]; metadata: { continue?: string } }>({
      path,
      query: { labelSelector: ownerSelector(owner), limit: PAGE, continue: token },
    });
    // Selected by the owner labels; ownedBy also holds the origin (another managing cluster's twin is not ours).
    for (const item of page.items.filter((o) => ownedBy(o, owner))) {
      byName.set(item.metadata.name ?? '', { ...item, apiVersion: item.apiVersion || group.apiVersion, kind: item.kind || group.kind });
    }
    token = page.metadata.continue || undefined;
  } while (token);
  return byName;
}

/** Where listing is forbidden: a GET of each object (those not carrying the owner's labels count as gone, as in a list). */
async function getEach(client: Requester, info: ResourceInfo, group: Group, owner: Owner): Promise<Map<string, KubeObject>> {
  const byName = new Map<string, KubeObject>();
  await mapLimit(group.entries, CONCURRENCY, async ({ ref }) => {
    const obj = await getIfExists<KubeObject>(client, objectPath(info, ref.name, info.namespaced ? ref.namespace : undefined));
    if (obj && ownedBy(obj, owner)) byName.set(ref.name, { ...obj, apiVersion: obj.apiVersion || group.apiVersion, kind: obj.kind || group.kind });
  });
  return byName;
}
