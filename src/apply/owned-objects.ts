import { OWNER_KIND_LABEL, OWNER_NAME_LABEL, OWNER_NAMESPACE_LABEL } from '../api/marks.js';
import type { InventoryEntry } from '../api/status.js';
import { compareResourceVersions, type KubeObject } from '../kube/resources.js';
import type { ClusterCache } from '../runtime/cache.js';
import type { Informer } from '../runtime/informer.js';
import type { LiveLookup, LiveObjects, Owner } from './engine.js';
import { computeHealth, type HealthStatus } from './health.js';
import { parseObjectId } from './inventory.js';

export type OwnerListener = (owner: Owner) => void;

/**
 * The objects that syncs applied, followed through shared watches: one
 * informer per kind and cluster, selected by the owner label, so health is
 * read from the cache (no polling) and a change of an owned object wakes its
 * owner at once.
 */
export class OwnedObjects implements LiveObjects {
  private readonly informers = new Map<string, Promise<Informer<KubeObject>>>();
  /** The informers whose initial list is in: they can answer lookups. */
  private readonly primed = new Map<string, Informer<KubeObject>>();
  private readonly listeners = new Set<OwnerListener>();

  constructor(private readonly cache: ClusterCache) {}

  /** Calls `fn` with the owner of every owned object that changes. */
  onOwnerChange(fn: OwnerListener): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  /** Watches the kinds of `entries` (primed before this resolves). */
  async track(entries: InventoryEntry[]): Promise<void> {
    const kinds = new Set(entries.map((e) => apiVersionKind(e)));
    await Promise.all([...kinds].map((k) => this.informerFor(k)));
  }

  /**
   * Starts watching the kinds of objects about to be applied, so the engine
   * can read what they are now from the cache instead of a GET each. A kind
   * that cannot be watched yet (its CRD is in the same set) is skipped: the
   * engine GETs those.
   */
  async prime(objects: KubeObject[]): Promise<void> {
    const kinds = new Set(objects.map((o) => `${o.apiVersion}|${o.kind}`));
    await Promise.all([...kinds].map((k) => this.informerFor(k).catch(() => undefined)));
  }

  /**
   * What the cache knows of an object about to be applied: `known` once the
   * kind is watched; then `object` is the object if any sync owns it, and
   * undefined when it does not exist or carries no owner labels (so nobody
   * else's: it is created, or adopted).
   */
  lookup(obj: KubeObject): LiveLookup {
    const informer = this.primed.get(`${obj.apiVersion}|${obj.kind}`);
    if (!informer) return { known: false };
    const { namespace, name = '' } = obj.metadata;
    return { known: true, object: informer.store.get(namespace ? `${namespace}/${name}` : name) };
  }

  /**
   * The health of each entry as the cache has it; `fresher` (what the apply
   * just returned) is used where the watch has not delivered that write yet.
   */
  async health(
    entries: InventoryEntry[],
    fresher: Map<string, KubeObject> = new Map(),
  ): Promise<{ id: string; status: HealthStatus; message: string }[]> {
    return Promise.all(
      entries.map(async (e) => {
        const ref = parseObjectId(e.id);
        const informer = await this.informerFor(apiVersionKind(e));
        const key = ref.namespace ? `${ref.namespace}/${ref.name}` : ref.name;
        const cached = informer.store.get(key);
        const applied = fresher.get(e.id);
        const obj = newer(cached, applied);
        return { id: e.id, ...computeHealth(obj) };
      }),
    );
  }

  private informerFor(apiVersionAndKind: string): Promise<Informer<KubeObject>> {
    let pending = this.informers.get(apiVersionAndKind);
    if (!pending) {
      const [apiVersion, kind] = apiVersionAndKind.split('|') as [string, string];
      pending = this.cache.informer(apiVersion, kind, { allNamespaces: true, labelSelector: OWNER_KIND_LABEL }).then((informer) => {
        informer.onEvent((e) => this.notify(e.object));
        this.primed.set(apiVersionAndKind, informer);
        return informer;
      });
      this.informers.set(apiVersionAndKind, pending);
      pending.catch(() => this.informers.delete(apiVersionAndKind));
    }
    return pending;
  }

  private notify(obj: KubeObject): void {
    const l = obj.metadata.labels ?? {};
    const kind = l[OWNER_KIND_LABEL];
    const namespace = l[OWNER_NAMESPACE_LABEL];
    const name = l[OWNER_NAME_LABEL];
    if (!kind || !namespace || !name) return;
    for (const fn of this.listeners) fn({ kind, namespace, name });
  }
}

function apiVersionKind(e: InventoryEntry): string {
  const ref = parseObjectId(e.id);
  return `${ref.group ? `${ref.group}/${e.v}` : e.v}|${ref.kind}`;
}

/** The later of two copies of one object (resource versions grow with etcd's revision). */
function newer(a: KubeObject | undefined, b: KubeObject | undefined): KubeObject | undefined {
  if (!a || !b) return a ?? b;
  return (compareResourceVersions(b.metadata.resourceVersion, a.metadata.resourceVersion) ?? 0) > 0 ? b : a;
}
