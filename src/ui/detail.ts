// What the web view shows of one selected sync: its conditions, revisions,
// inventory with each object's kstatus (read from the operator's cache of
// owned objects; a RemoteSync's objects live in its cluster, a ProxySync's in
// its remote Sync: their summary says how they are), and its recent Events,
// which are read now (the only request the view makes to the API server).
import { computeHealth, type HealthStatus } from '../apply/health.js';
import { entryApiVersion, parseObjectId } from '../apply/inventory.js';
import { lastSeenAt, type EventObject } from '../views/events-order.js';
import { OWNED_OBJECTS } from '../apply/owned-objects.js';
import type { KubeObject } from '../kube/resources.js';
import type { InformerSelector } from '../runtime/cache.js';
import type { Informer } from '../runtime/informer.js';
import { rolloutPanel, type RolloutPanel } from './rollout-panel.js';


/** At most this many inventory entries and Events are listed. */
export const MAX_INVENTORY = 200;
export const MAX_EVENTS = 20;

export interface InventoryItem {
  id: string;
  apiVersion: string;
  kind: string;
  namespace: string;
  name: string;
  status: HealthStatus | 'NotCached';
  message: string;
}

export interface EventItem {
  type?: string;
  reason?: string;
  message?: string;
  count?: number;
  lastSeen?: string;
}

export interface SyncDetail {
  key: string;
  kind: string;
  namespace: string;
  name: string;
  generation?: number;
  observedGeneration?: number;
  conditions: { type?: string; status?: string; reason?: string; message?: string; lastTransitionTime?: string }[];
  lastAttemptedRevision?: string;
  lastAppliedRevision?: string;
  summary?: Record<string, unknown>;
  /** ProxySync: the remote Sync it maintains, as it last mirrored it. */
  remote?: Record<string, unknown>;
  cluster?: string;
  inventory: InventoryItem[];
  inventoryTotal: number;
  /** Why the inventory's kstatus is not shown per object. */
  inventoryNote?: string;
  events: EventItem[];
  eventsError?: string;
  /** A FleetSync rolling out in waves: its rollout panel. */
  rollout?: RolloutPanel;
}

export interface DetailSources {
  /** A primed informer of the operator's, if one runs (never started here). */
  peek(apiVersion: string, kind: string, selector: InformerSelector): Promise<Pick<Informer<KubeObject>, 'store'> | undefined>;
  /** The Events of an object, read from the API server. */
  events(ref: { kind: string; namespace: string; name: string }): Promise<EventObject[]>;
}

interface SyncStatusLike {
  observedGeneration?: number;
  conditions?: SyncDetail['conditions'];
  lastAttemptedRevision?: string;
  lastAppliedRevision?: string;
  inventory?: { entries?: { id: string; v: string }[] };
  summary?: Record<string, unknown>;
  remote?: Record<string, unknown>;
}

export async function syncDetail(obj: KubeObject, sources: DetailSources): Promise<SyncDetail> {
  const status = (obj.status ?? {}) as SyncStatusLike;
  const spec = (obj.spec ?? {}) as { kubeConfig?: { secretRef?: { name?: string } }; clusterRef?: { name?: string } };
  const ref = { kind: obj.kind, namespace: obj.metadata.namespace ?? '', name: obj.metadata.name ?? '' };
  const entries = status.inventory?.entries ?? [];
  const [inventory, events] = await Promise.all([inventoryOf(obj.kind, entries.slice(0, MAX_INVENTORY), sources), eventsOf(ref, sources)]);
  const rollout = rolloutPanel(obj);
  return {
    key: `${ref.kind}/${ref.namespace}/${ref.name}`,
    ...ref,
    generation: obj.metadata.generation,
    observedGeneration: status.observedGeneration,
    conditions: status.conditions ?? [],
    lastAttemptedRevision: status.lastAttemptedRevision,
    lastAppliedRevision: status.lastAppliedRevision,
    summary: status.summary,
    remote: status.remote,
    cluster: spec.kubeConfig?.secretRef?.name ?? spec.clusterRef?.name,
    inventory,
    inventoryTotal: entries.length,
    inventoryNote: inventoryNote(obj.kind, entries.length),
    ...events,
    ...(rollout ? { rollout } : {}),
  };
}

function inventoryNote(kind: string, total: number): string | undefined {
  if (kind === 'RemoteSync') return 'these objects live in the remote cluster: the summary gives their kstatus';
  if (kind === 'ProxySync') return 'the remote Sync applies the objects: its summary is mirrored here';
  if (total > MAX_INVENTORY) return `the first ${MAX_INVENTORY} of ${total} objects`;
  return undefined;
}

async function inventoryOf(kind: string, entries: { id: string; v: string }[], sources: DetailSources): Promise<InventoryItem[]> {
  const stores = new Map<string, Promise<Pick<Informer<KubeObject>, 'store'> | undefined>>();
  const items = entries.flatMap((e) => {
    try {
      return [{ entry: e, ref: parseObjectId(e.id) }];
    } catch {
      return [];
    }
  });
  return Promise.all(
    items.map(async ({ entry, ref }) => {
      const apiVersion = entryApiVersion(entry);
      const base = { id: entry.id, apiVersion, kind: ref.kind, namespace: ref.namespace, name: ref.name };
      // Only a Sync's objects are in this cluster's caches.
      const typeKey = `${apiVersion}|${ref.kind}`;
      if (!stores.has(typeKey)) stores.set(typeKey, kind === 'Sync' ? sources.peek(apiVersion, ref.kind, OWNED_OBJECTS) : Promise.resolve(undefined));
      const informer = await stores.get(typeKey);
      if (!informer) return { ...base, status: 'NotCached' as const, message: 'not in the operator’s cache' };
      const health = computeHealth(informer.store.get(ref.namespace ? `${ref.namespace}/${ref.name}` : ref.name));
      return { ...base, status: health.status, message: health.message };
    }),
  );
}

async function eventsOf(ref: { kind: string; namespace: string; name: string }, sources: DetailSources): Promise<Pick<SyncDetail, 'events' | 'eventsError'>> {
  try {
    const events = await sources.events(ref);
    const recent = events
      .map((e) => ({ e, at: lastSeenAt(e) ?? '' }))
      .sort((a, b) => b.at.localeCompare(a.at))
      .slice(0, MAX_EVENTS);
    return { events: recent.map(({ e, at }) => ({ type: e.type, reason: e.reason, message: e.message, count: e.count ?? e.series?.count, lastSeen: at || undefined })) };
  } catch (err) {
    return { events: [], eventsError: err instanceof Error ? err.message : String(err) };
  }
}
