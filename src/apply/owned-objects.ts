import { FIELD_MANAGER } from '../api/marks.js';
import type { InventoryEntry } from '../api/status.js';
import { ApiError } from '../kube/errors.js';
import { compareResourceVersions, splitApiVersion, type KubeObject } from '../kube/resources.js';
import type { ClusterCache, InformerSelector } from '../runtime/cache.js';
import type { Informer, InformerEvent } from '../runtime/informer.js';
import { Arrivals, CRDS, NAMESPACES } from './arrivals.js';
import { DriftLedger, driftOf, type Drift, type DueDrifts } from './drift.js';
import type { LiveLookup, LiveObjects, Owner, VerdictMemory } from './engine.js';
import { computeHealth, type HealthStatus } from './health.js';
import { objectId, parseObjectId } from './inventory.js';
import { ANY_OWNER_SELECTOR, holderOf, labelledOwner, originOf, ownerKey } from './owner.js';
import { Waiters } from './waiters.js';
import { kindKey, type KindKey } from './render.js';

/** `cause`: why the owner is woken (`owned object updated: <id>`, `owned object drifted: <id>`, ...). */
export type OwnerListener = (owner: Owner, cause: string) => void;

/** The store index from an owned kind (`apiVersion|kind`) to the syncs whose inventory lists it. */
export const INVENTORY_KINDS_INDEX = 'syncprims.dev/inventory-kinds';

/**
 * Owned objects of every namespace that carry the owner labels, with our
 * managedFields entry (and those written since by others): what tells a
 * no-op apply and names who changed our fields.
 */
export const OWNED_OBJECTS: InformerSelector = { allNamespaces: true, labelSelector: ANY_OWNER_SELECTOR, keepManagedFieldsOf: FIELD_MANAGER };

/** The syncs whose inventories say which kinds are needed: their informers. */
type Holders = Pick<Informer<KubeObject>, 'store' | 'onEvent'>[];

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
  private readonly unsubscribers = new Map<string, () => void>();
  /** Kinds that reconciles in progress are applying (their inventories may not list them yet). */
  private readonly holds = new Map<string, number>();
  private holders: Holders = [];
  /** Dry-run verdicts "unchanged" per object id: a hash each (see VerdictMemory). */
  private readonly unchangedAt = new Map<string, string>();
  readonly verdicts: VerdictMemory = {
    has: (id, hash) => this.unchangedAt.get(id) === hash,
    remember: (id, hash) => void this.unchangedAt.set(id, hash),
  };
  /** Changes of our fields by others, per owner, until its reconcile corrects them. */
  readonly drifts = new DriftLedger();
  /** Owned-object events so far (their order, for `InFlight.readAt`). */
  private events = 0;
  /** Owners being reconciled: their plain wakes are held until the reconcile ends (see `begin`). */
  private readonly inFlight = new Map<string, InFlight>();
  /**
   * Objects whose health was read from an apply's answer before the watch
   * brought it: object id -> that version. Its event wakes nobody (the owner
   * has read it); the entry goes when the event comes.
   */
  private readonly echoes = new Map<string, string>();
  private counts: ((holder: KubeObject) => boolean) | undefined;
  /**
   * Objects an apply found owned by another sync, and the owners that want
   * them, woken the moment one is released (deleted, or its owner labels
   * changed) rather than at their retry. Each owner's claims are the ones
   * its last apply met (see `awaitRelease`).
   */
  private readonly claimants = new Waiters();

  /** Syncs waiting for a kind that is not served yet, woken when a CRD serving it is Established. */
  private readonly crds: Arrivals;
  /** Syncs waiting for a namespace to apply into, woken when it is created. */
  private readonly namespaces: Arrivals;

  /** Kinds that may not be listed cluster-wide here: watched per namespace instead. */
  private readonly namespacedKinds = new Set<string>();

  /**
   * `origin`: in a remote cluster, our `--cluster-id`. The cache holds
   * what every sync owns there, whatever its origin (the cluster's own
   * syncs', another managing cluster's), so that an object absent from it
   * is owned by nobody and needs no read before it is applied; only those
   * of our origin are ours (they wake their owners, and drift).
   * `namespacedFallback`: where listing a kind
   * cluster-wide is forbidden (an identity with namespaced RBAC), watch it
   * in each namespace the syncs use instead. `ownNamespace`: the namespace
   * the identity most likely is confined to (a ServiceAccount's own): its
   * objects there are watched in that namespace from the first, with no
   * cluster-wide attempt (and 403) before. `ownerNamespace`: the one
   * namespace whose syncs this operator reconciles (`--namespace`); objects
   * of syncs elsewhere stay cached (an apply must see that another sync owns
   * an object) but wake nobody and record no drift here.
   */
  constructor(
    private readonly cache: ClusterCache,
    private readonly opts: { origin?: string; namespacedFallback?: boolean; ownNamespace?: string; ownerNamespace?: string } = {},
  ) {
    this.crds = new Arrivals(cache, CRDS, (owner, cause) => this.wake(owner, cause));
    this.namespaces = new Arrivals(cache, NAMESPACES, (owner, cause) => this.wake(owner, cause));
  }

  /**
   * Keeps an informer only while some sync needs its kind: while a
   * reconcile applies objects of it, or an inventory of `holders` lists it
   * (every entry counts: stale ones not pruned, and those of syncs with
   * `prune: false`). A kind that leaves the last inventory stops its watch.
   */
  followInventories(holders: Holders): void {
    this.countInventories(holders);
    for (const h of holders) h.onEvent((e) => this.inventoryChanged(e));
  }

  /**
   * As followInventories, but only the holders for which `counts` is true
   * keep a kind (in a remote cluster: the RemoteSyncs that use it), and
   * their changes come through inventoryChanged(): the caller routes each
   * to the cluster it concerns rather than every cluster hearing every one.
   */
  countInventories(holders: Holders, counts?: (holder: KubeObject) => boolean): void {
    this.holders = holders;
    this.counts = counts;
    for (const h of holders) {
      if (!h.store.hasIndex(INVENTORY_KINDS_INDEX)) h.store.addIndex(INVENTORY_KINDS_INDEX, inventoryKindsOf);
    }
  }

  /** An inventory changed or went: the kinds it listed before may be needed by nobody now. */
  inventoryChanged(e: InformerEvent<KubeObject>): void {
    const before = e.type === 'deleted' ? e.object : e.old;
    if (!before) return;
    const after = e.type === 'deleted' ? [] : inventoryKindsOf(e.object);
    for (const k of inventoryKindsOf(before)) {
      if (!after.includes(k) && !this.needed(k)) void this.stop(k);
    }
  }

  /** The informers running now: `apiVersion|kind`, or `apiVersion|kind|namespace` where watched per namespace (for tests). */
  watchedKinds(): string[] {
    return [...this.informers.keys()].sort();
  }

  /** Calls `fn` with the owner of every owned object that changes. */
  onOwnerChange(fn: OwnerListener): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  /**
   * A reconcile of `owner` begins. Until `end`, a change of one of its
   * objects that is not drift (its own applies coming back from the watch,
   * a status update) does not wake it at once: at `end` it wakes it only if
   * the change came after the reconcile last read its objects' health from
   * the cache (which, updated before the event, had the change otherwise).
   * And whenever it comes, the watch's echo of an apply whose answer health
   * was read from (the cache had not caught up) wakes nobody (`echoes`).
   * Without this, a new sync's own creations queue a second reconcile that
   * reads what the first already read. Drift and deletions wake it at once.
   */
  begin(owner: Owner): void {
    this.inFlight.set(ownerKey(owner), { readAt: -1, held: [] });
  }

  /** The reconcile of `owner` ended: the wakes it held that it did not read are sent. */
  end(owner: Owner): void {
    const key = ownerKey(owner);
    const flight = this.inFlight.get(key);
    this.inFlight.delete(key);
    const unread = flight?.held.find((h) => h.at > flight.readAt);
    if (unread) this.wake(owner, unread.cause);
  }

  /** Watches the kinds of `entries` (primed before this resolves). */
  async track(entries: InventoryEntry[]): Promise<void> {
    const wanted = new Map(entries.map((e) => [`${apiVersionKind(e)}|${parseObjectId(e.id).namespace}`, e]));
    await Promise.all([...wanted.values()].map((e) => this.informerFor(apiVersionKind(e), parseObjectId(e.id).namespace)));
  }

  /**
   * Starts watching the kinds of objects about to be applied, so the engine
   * can read what they are now from the cache instead of a GET each. A kind
   * that cannot be watched yet (its CRD is in the same set) is skipped: the
   * engine GETs those. The kinds are held (kept watched) until the returned
   * function is called, at the end of the reconcile that applies them.
   * `defaultNamespace`: what objects of namespaced kinds that name no
   * namespace will get (as render gives it), so they are watched where they
   * will be (their namespace may be watched on its own: `ownNamespace`).
   */
  async prime(objects: KubeObject[], defaultNamespace?: string): Promise<() => void> {
    const kinds = [...new Set(objects.map(kindKey))];
    const namespaces = [...new Map(objects.map((o) => [`${o.apiVersion}|${o.kind}|${o.metadata.namespace ?? ''}`, o])).values()];
    for (const k of kinds) this.holds.set(k, (this.holds.get(k) ?? 0) + 1);
    let held = true;
    const release = (): void => {
      if (!held) return;
      held = false;
      for (const k of kinds) {
        const n = (this.holds.get(k) ?? 1) - 1;
        if (n > 0) this.holds.set(k, n);
        else this.holds.delete(k);
      }
    };
    // A kind not served (yet) fails its lookup here as its watch would: skipped either way.
    await Promise.all(namespaces.map((o) => this.namespaceOf(o, defaultNamespace).then((ns) => this.informerFor(kindKey(o), ns)).catch(() => undefined)));
    return release;
  }

  /** The namespace `obj` is applied in: its own, else `defaultNamespace` if its kind is namespaced (discovery, which the informer needs anyway). */
  private async namespaceOf(obj: KubeObject, defaultNamespace: string | undefined): Promise<string> {
    if (obj.metadata.namespace || !defaultNamespace) return obj.metadata.namespace ?? '';
    return (await this.cache.discovery.resolve(obj.apiVersion, obj.kind)).namespaced ? defaultNamespace : '';
  }

  /**
   * What the cache knows of an object about to be applied: `known` once the
   * kind is watched; then `object` is the object if any sync owns it, and
   * undefined when it does not exist or carries no owner labels (so nobody
   * else's: it is created, or adopted).
   */
  lookup(obj: KubeObject): LiveLookup {
    const { namespace, name = '' } = obj.metadata;
    const kind = kindKey(obj);
    const informer = this.primed.get(this.perNamespace(kind, namespace ?? '') ? `${kind}|${namespace ?? ''}` : kind);
    if (!informer) return { known: false };
    return { known: true, object: informer.store.get(namespace ? `${namespace}/${name}` : name) };
  }

  /**
   * The health of each entry as the cache has it; `fresher` (what the apply
   * just returned) is used where the watch has not delivered that write yet,
   * and an entry of it is dropped once the cache has it too (or newer): a
   * sync's applied objects are not kept twice.
   */
  async health(
    entries: InventoryEntry[],
    fresher: Map<string, KubeObject> = new Map(),
    owner?: Owner,
  ): Promise<{ id: string; status: HealthStatus; message: string }[]> {
    const flight = owner && this.inFlight.get(ownerKey(owner));
    if (flight) flight.readAt = this.events;
    return Promise.all(
      entries.map(async (e) => {
        const ref = parseObjectId(e.id);
        const informer = await this.informerFor(apiVersionKind(e), ref.namespace);
        const key = ref.namespace ? `${ref.namespace}/${ref.name}` : ref.name;
        const cached = informer.store.get(key);
        const applied = fresher.get(e.id);
        const obj = newer(cached, applied);
        if (applied && obj === cached) fresher.delete(e.id);
        if (applied && obj === applied && applied.metadata.resourceVersion) this.echoes.set(e.id, applied.metadata.resourceVersion);
        else this.echoes.delete(e.id);
        return { id: e.id, ...computeHealth(obj) };
      }),
    );
  }

  /** The informer of a kind: cluster-wide, or (where that is forbidden) of the object's namespace. */
  private informerFor(kind: string, namespace: string): Promise<Informer<KubeObject>> {
    if (namespace && this.perNamespace(kind, namespace)) return this.start(kind, namespace);
    return this.start(kind).catch((err: unknown) => {
      const forbidden = err instanceof ApiError && err.status === 403;
      if (!forbidden || !this.opts.namespacedFallback || !namespace) throw err;
      this.namespacedKinds.add(kind);
      return this.informerFor(kind, namespace);
    });
  }

  /** Whether objects of `kind` in `namespace` are watched in that namespace (rather than cluster-wide). */
  private perNamespace(kind: string, namespace: string): boolean {
    return this.namespacedKinds.has(kind) || (namespace !== '' && namespace === this.opts.ownNamespace);
  }

  /** Starts (once) the informer of a kind, cluster-wide or in one namespace; its id is `apiVersion|kind[|namespace]`. */
  private start(apiVersionAndKind: string, namespace?: string): Promise<Informer<KubeObject>> {
    const id = namespace === undefined ? apiVersionAndKind : `${apiVersionAndKind}|${namespace}`;
    let pending = this.informers.get(id);
    if (!pending) {
      const [apiVersion, kind] = apiVersionAndKind.split('|') as [string, string];
      const created: Promise<Informer<KubeObject>> = this.cache.informer(apiVersion, kind, this.selectorOf(namespace)).then((informer) => {
        if (this.informers.get(id) === created) {
          this.unsubscribers.set(id, informer.onEvent((e) => this.changed(e)));
          this.primed.set(id, informer);
        }
        return informer;
      });
      pending = created;
      this.informers.set(id, created);
      created.catch(() => {
        if (this.informers.get(id) === created) this.informers.delete(id);
      });
    }
    return pending;
  }

  private selectorOf(namespace: string | undefined): InformerSelector {
    return namespace === undefined ? OWNED_OBJECTS : { ...OWNED_OBJECTS, allNamespaces: false, namespace };
  }

  private needed(kind: string): boolean {
    const counts = this.counts;
    if (this.holds.has(kind)) return true;
    if (!counts) return this.holders.some((h) => h.store.countByIndex(INVENTORY_KINDS_INDEX, kind) > 0);
    return this.holders.some((h) => h.store.byIndex(INVENTORY_KINDS_INDEX, kind).some(counts));
  }

  /** Stops every informer of a kind (cluster-wide, or one per namespace). */
  private async stop(kind: string): Promise<void> {
    const ids = [...this.informers.keys()].filter((id) => id === kind || id.startsWith(`${kind}|`));
    this.forgetEchoes(kind);
    await Promise.all(
      ids.map(async (id) => {
        this.informers.delete(id);
        this.primed.delete(id);
        this.unsubscribers.get(id)?.();
        this.unsubscribers.delete(id);
        const [apiVersion = '', k = '', namespace] = id.split('|');
        await this.cache.release(apiVersion, k, this.selectorOf(namespace));
      }),
    );
  }

  /** A kind is no longer watched: echoes of it will not come. */
  private forgetEchoes(apiVersionAndKind: string): void {
    const [apiVersion = '', kind = ''] = apiVersionAndKind.split('|');
    const { group } = splitApiVersion(apiVersion);
    for (const id of this.echoes.keys()) {
      const ref = parseObjectId(id);
      if (ref.kind === kind && ref.group === group) this.echoes.delete(id);
    }
  }

  /** `owner` is gone: what was pending for it is dropped. */
  forgetOwner(owner: Owner): void {
    this.drifts.forgetOwner(ownerKey(owner));
    this.awaitRelease(owner, []);
    void this.crds.await(owner, []);
    void this.namespaces.await(owner, []);
  }

  /**
   * The set of `owner` uses `kinds` that this cluster does not serve
   * (CRDNotInstalled): it is woken the moment a CRD that serves one is
   * Established (see Arrivals); none: it waits for none. Resolves to
   * whether one is served already (discovery has not caught up: try again soon).
   */
  awaitKinds(owner: Owner, kinds: readonly KindKey[]): Promise<boolean> {
    return this.crds.await(owner, kinds.map(kindKey));
  }

  /**
   * The apply of `owner` found `names` missing, the namespaces of some of
   * its objects: it is woken the moment one is created; none: it waits for
   * none. Resolves to whether one exists already (created meanwhile).
   */
  awaitNamespaces(owner: Owner, names: readonly string[]): Promise<boolean> {
    return this.namespaces.await(owner, names);
  }

  /**
   * The apply of `owner` found the objects `ids` owned by another sync (an
   * OwnershipConflict): `owner` is woken the moment one of them is released,
   * deleted or given other owner labels (a sync renamed, or deleted and its
   * objects pruned, hands them over at once). Replaces the owner's earlier
   * claims: each apply tells the conflicts it met, none when it met none.
   */
  awaitRelease(owner: Owner, ids: string[]): void {
    this.claimants.set(owner, ids);
  }

  /** The drifts of `owner` due for correction now, and when the others (backed off) are due. */
  takeDrifts(owner: Owner, intervalMs: number): DueDrifts {
    return this.drifts.take(ownerKey(owner), intervalMs);
  }

  /** Every drift of `owner`, backed off or not: a full apply corrects them all (it applies whatever differs). */
  takeAllDrifts(owner: Owner): Drift[] {
    return this.drifts.takeAll(ownerKey(owner));
  }

  /** The drifts of `owner` waiting, backed off, for their correction (see `takeDrifts`): its objects differ from what it applied. */
  waitingDrifts(owner: Owner): Drift[] {
    return this.drifts.waitingOf(ownerKey(owner));
  }

  /** The drift of object `id` of `owner` waiting, backed off, for its correction (see `takeDrifts`), if one is. */
  driftWaiting(owner: Owner, id: string): Drift | undefined {
    return this.drifts.waiting(ownerKey(owner), id);
  }

  /** The watch brought `obj` at the version health was read from (see `echoes`): the entry is taken. */
  private isEcho(obj: KubeObject): boolean {
    const id = objectId(obj);
    const version = this.echoes.get(id);
    if (version === undefined) return false;
    this.echoes.delete(id);
    return version === obj.metadata.resourceVersion;
  }

  /** The owner of `obj` if this operator reconciles it (see `ownerNamespace`) and it came from here (see `origin`). */
  private ours(obj: KubeObject): Owner | undefined {
    const owner = labelledOwner(obj);
    const only = this.opts.ownerNamespace;
    if (!owner || (only !== undefined && owner.namespace !== only)) return undefined;
    return this.opts.origin === undefined || originOf(obj) === this.opts.origin ? owner : undefined;
  }

  private changed(e: InformerEvent<KubeObject>): void {
    if (this.claimants.size > 0) this.released(e);
    const obj = e.object;
    const owner = this.ours(obj);
    if (e.type === 'deleted') {
      this.unchangedAt.delete(objectId(obj));
      this.echoes.delete(objectId(obj));
      // An owned object deleted is drift too, unless its owner pruned it (then it has left the owner's
      // set, and the reconcile this wakes applies nothing). Its corrections are kept, so that a
      // controller that keeps deleting it is backed off as one that keeps changing a field is.
      if (!owner) this.drifts.forgetObject(objectId(obj));
    }
    const drift = owner ? driftOfEvent(e) : undefined;
    if (drift && owner) this.drifts.flag(ownerKey(owner), drift);
    if (!owner) return;
    const at = ++this.events;
    if (!drift && this.isEcho(obj)) return;
    const cause = drift ? `owned object ${drift.deleted ? 'deleted' : 'drifted'}: ${drift.id}` : `owned object ${e.type}: ${objectId(obj)}`;
    const flight = drift ? undefined : this.inFlight.get(ownerKey(owner));
    if (flight) return void flight.held.push({ at, cause });
    this.wake(owner, cause);
  }

  /** Wakes the owners that wait for an object another sync owned, now that it was deleted or changed owner. */
  private released(e: InformerEvent<KubeObject>): void {
    if (e.type === 'added' || (e.type === 'updated' && holderOf(e.old) === holderOf(e.object))) return;
    const id = objectId(e.object);
    for (const owner of this.claimants.take(id)) this.wake(owner, `owned object released: ${id}`);
  }

  private wake(owner: Owner, cause: string): void {
    for (const fn of this.listeners) fn(owner, cause);
  }
}

/** A reconcile in progress: when it last read health (an `events` count), and the wakes held meanwhile. */
interface InFlight {
  readAt: number;
  held: { at: number; cause: string }[];
}

function driftOfEvent(e: InformerEvent<KubeObject>): Drift | undefined {
  if (e.type === 'deleted') return { id: objectId(e.object), fields: [], managers: [], deleted: true };
  return e.type === 'updated' ? driftOf(e.old, e.object) : undefined;
}

/** inventoryKindsOf per cached object: the store's index and the release check read each object twice. */
const kindsOfObject = new WeakMap<KubeObject, string[]>();

/** The kinds (`apiVersion|kind`) an object's `status.inventory` lists, read defensively from the cache. */
export function inventoryKindsOf(obj: KubeObject): string[] {
  let kinds = kindsOfObject.get(obj);
  if (!kinds) kindsOfObject.set(obj, (kinds = readInventoryKinds(obj)));
  return kinds;
}

function readInventoryKinds(obj: KubeObject): string[] {
  const entries = (obj.status as { inventory?: { entries?: unknown } } | undefined)?.inventory?.entries;
  if (!Array.isArray(entries)) return [];
  const kinds = new Set<string>();
  for (const e of entries as Partial<InventoryEntry>[]) {
    if (typeof e?.id !== 'string' || typeof e.v !== 'string') continue;
    try {
      kinds.add(apiVersionKind(e as InventoryEntry));
    } catch {
      // not an id: nothing to watch for it
    }
  }
  return [...kinds];
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
