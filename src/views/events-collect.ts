import type { InventoryEntry } from '../api/status.js';
import { mapLimit } from '../apply/map-limit.js';
import { parseObjectId, type ObjectRef } from '../apply/inventory.js';
import type { Requester } from '../kube/client.js';
import { collectionPath, CORE, splitApiVersion } from '../kube/resources.js';
import type { EventObject } from './events-order.js';

/**
 * Reading the core/v1 Events of objects: one paged list per namespace (the
 * Events of cluster-scoped objects are recorded in `default`, as client-go
 * and the operator record them), matched by the involved object's group,
 * kind, namespace and name.
 */

const LISTS_IN_FLIGHT = 8;

interface EventList {
  items: EventObject[];
  metadata: { continue?: string };
}

/** The Events of `refs`, in whatever order the server lists them. */
export async function eventsOf(client: Requester, refs: readonly ObjectRef[]): Promise<EventObject[]> {
  const byNamespace = new Map<string, ObjectRef[]>();
  for (const ref of refs) {
    const ns = ref.namespace || 'default';
    byNamespace.set(ns, [...(byNamespace.get(ns) ?? []), ref]);
  }
  const lists = await mapLimit([...byNamespace], LISTS_IN_FLIGHT, async ([namespace, wanted]) => {
    // One object: the server filters; more: one list of the namespace, filtered here.
    const only = wanted.length === 1 ? wanted[0] : undefined;
    const selector = only ? `involvedObject.kind=${only.kind},involvedObject.name=${only.name}` : undefined;
    const keys = new Set(wanted.map(refKey));
    return (await listEvents(client, namespace, selector)).filter((e) => keys.has(involvedKey(e)));
  });
  // A list leaves out each item's apiVersion and kind: put back first, where kubectl shows them.
  return lists.flat().map(({ apiVersion, kind, ...rest }) => ({ apiVersion: apiVersion || 'v1', kind: kind || 'Event', ...rest }));
}

/** The objects of inventory entries. */
export function refsOf(entries: readonly InventoryEntry[]): ObjectRef[] {
  return entries.flatMap((e) => {
    try {
      return [parseObjectId(e.id)];
    } catch {
      return [];
    }
  });
}

async function listEvents(client: Requester, namespace: string, fieldSelector: string | undefined): Promise<EventObject[]> {
  const items: EventObject[] = [];
  let token: string | undefined;
  do {
    const page = await client.request<EventList>({
      path: collectionPath(CORE.events, namespace),
      query: { limit: 500, continue: token, fieldSelector },
    });
    items.push(...page.items);
    token = page.metadata.continue || undefined;
  } while (token);
  return items;
}

function refKey(ref: ObjectRef): string {
  return [ref.group, ref.kind, ref.namespace, ref.name].join('|');
}

function involvedKey(e: EventObject): string {
  const o = e.involvedObject ?? {};
  return [splitApiVersion(o.apiVersion ?? '').group, o.kind ?? '', o.namespace ?? '', o.name ?? ''].join('|');
}
