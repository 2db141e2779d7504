import type { KubeObject } from '../kube/resources.js';
import type { ClusterCache, InformerSelector } from './cache.js';
import type { Informer, InformerEvent } from './informer.js';
import { silentLogger, type Logger } from './logger.js';
import { objectKey } from './store.js';

/** An object that a referrer reads but does not own (a source ConfigMap, a kubeconfig Secret...). */
export interface ReferencedObject {
  apiVersion: string;
  kind: string;
  namespace: string;
  name: string;
}

/** The store index from a referenced object (`apiVersion|kind|namespace|name`) to its referrers. */
export const REFERENCES_INDEX = 'syncprims.dev/references';
/** The store index from a referenced kind (`apiVersion|kind`) to its referrers. */
export const REFERENCED_KINDS_INDEX = 'syncprims.dev/referenced-kinds';

/** One kind of referrer: its primed informer, and what its objects reference. */
export interface Referrer {
  /** The name `wake` is given back, e.g. `Sync`. */
  kind: string;
  informer: Pick<Informer<KubeObject>, 'store' | 'onEvent'>;
  /** What an object references, read from the cached object (so: defensively). */
  referencesOf: (obj: KubeObject) => ReferencedObject[];
}

export interface ReferencedObjectsOptions {
  cache: ClusterCache;
  referrers: Referrer[];
  /** A referenced object was created, changed or deleted: reconcile one of its referrers. */
  wake: (referrerKind: string, referrerKey: string, changed: KubeObject) => void;
  logger?: Logger;
}

/**
 * Referenced objects are cached as metadata only, in the cache's namespace
 * scope: a ConfigMap's or Secret's content is read when it is used, never
 * kept. Flux source objects (group `source.toolkit.fluxcd.io`: GitRepository,
 * OCIRepository, Bucket, HelmChart, ExternalArtifact) are cached whole: they
 * are small and hold no secret, and their `status.artifact` is all a sync
 * reads of them, from the very cache whose event woke it (no GET per sync:
 * 1,000 Syncs of one artifact do not read it 1,000 times). Any other kind
 * named as an artifact stays metadata only, read with a GET.
 */
const METADATA: InformerSelector = { metadataOnly: true };
const WHOLE: InformerSelector = {};
const FLUX_SOURCE_GROUP = 'source.toolkit.fluxcd.io/';

function selectorOf(apiVersion: string): InformerSelector {
  return apiVersion.startsWith(FLUX_SOURCE_GROUP) ? WHOLE : METADATA;
}

interface KindWatch {
  informer: Promise<Informer<KubeObject>>;
  /** Set once primed. */
  primed?: Informer<KubeObject>;
  unsubscribe?: () => void;
}

/**
 * The objects that syncs reference but do not own, followed through one
 * index and one metadata-only watch per kind (never one watch per object:
 * `docs/adr/0002-referenced-objects.md`). The index (referenced object ->
 * referrers) lives in the referrers' informer stores, so it is derived from
 * the cached specs and needs no bookkeeping of its own. A kind is watched
 * from the first time a referrer needs it until no referrer references it;
 * an event wakes only the referrers of the object that changed. ConfigMaps'
 * and Secrets' contents are not cached: a referrer reads them (GET) when it
 * is woken; Flux source objects are cached whole (see selectorOf).
 */
export class ReferencedObjects {
  private readonly watches = new Map<string, KindWatch>();
  private readonly log: Logger;

  constructor(private readonly opts: ReferencedObjectsOptions) {
    this.log = (opts.logger ?? silentLogger).child({ component: 'referenced-objects', cluster: opts.cache.name });
    for (const r of opts.referrers) {
      const store = r.informer.store;
      if (!store.hasIndex(REFERENCES_INDEX)) store.addIndex(REFERENCES_INDEX, (obj) => unique(r.referencesOf(obj).map(referenceKey)));
      if (!store.hasIndex(REFERENCED_KINDS_INDEX)) store.addIndex(REFERENCED_KINDS_INDEX, (obj) => unique(r.referencesOf(obj).map(kindKey)));
      r.informer.onEvent((e) => this.onReferrerEvent(r, e));
    }
  }

  /**
   * Watches every kind referenced by the objects in the cache now, primed
   * before this resolves (for startup, before any reconcile). A kind that
   * cannot be watched (its CRD is missing) is logged, and tried again by
   * the next `ensureWatched` that needs it.
   */
  async start(): Promise<void> {
    const kinds = new Map<string, ReferencedObject>();
    for (const r of this.opts.referrers) {
      for (const obj of r.informer.store.list()) for (const ref of r.referencesOf(obj)) kinds.set(kindKey(ref), ref);
    }
    await Promise.all(
      [...kinds].map(([key, ref]) =>
        this.watchKind(key, ref).catch((err: unknown) => this.log.warn({ kind: key, err: String(err) }, 'cannot watch a referenced kind yet')),
      ),
    );
  }

  /**
   * Resolves once the kinds of `refs` are watched and primed, so that any
   * change after this (a creation too) wakes the referrer. Call it before
   * reading the objects. Throws when a kind cannot be watched.
   */
  async ensureWatched(refs: ReferencedObject[]): Promise<void> {
    await Promise.all(refs.map((ref) => this.watchKind(kindKey(ref), ref)));
  }

  /**
   * The cached metadata of a referenced object (name, uid, resourceVersion,
   * labels; the whole object for a Flux source kind): undefined when it does
   * not exist, or its kind is not watched yet.
   */
  cached(ref: ReferencedObject): KubeObject | undefined {
    const store = this.watches.get(kindKey(ref))?.primed?.store;
    return store?.get(ref.namespace ? `${ref.namespace}/${ref.name}` : ref.name);
  }

  /** The watched kinds, `apiVersion|kind` (for tests and the debug dump). */
  watchedKinds(): string[] {
    return [...this.watches.keys()].sort();
  }

  private watchKind(key: string, ref: ReferencedObject): Promise<Informer<KubeObject>> {
    const existing = this.watches.get(key);
    if (existing) return existing.informer;
    const watch: KindWatch = {
      informer: this.opts.cache.informer(ref.apiVersion, ref.kind, selectorOf(ref.apiVersion)).then((informer) => {
        if (this.watches.get(key) === watch) {
          watch.unsubscribe = informer.onEvent((e) => this.onReferencedEvent(key, e));
          watch.primed = informer;
        }
        return informer;
      }),
    };
    this.watches.set(key, watch);
    watch.informer.then(
      () => this.log.info({ kind: key }, 'watching a referenced kind'),
      () => {
        if (this.watches.get(key) === watch) this.watches.delete(key);
      },
    );
    return watch.informer;
  }

  private onReferencedEvent(kind: string, e: InformerEvent<KubeObject>): void {
    const { namespace = '', name = '' } = e.object.metadata;
    const ref = `${kind}|${namespace}|${name}`;
    for (const r of this.opts.referrers) {
      for (const referrer of r.informer.store.byIndex(REFERENCES_INDEX, ref)) this.opts.wake(r.kind, objectKey(referrer), e.object);
    }
  }

  /** A referrer changed or went: the kinds it referenced before may be referenced by nobody now. */
  private onReferrerEvent(r: Referrer, e: InformerEvent<KubeObject>): void {
    const before = e.type === 'deleted' ? e.object : e.old;
    if (!before) return;
    for (const kind of unique(r.referencesOf(before).map(kindKey))) {
      if (!this.referenced(kind)) void this.stopKind(kind);
    }
  }

  private referenced(kind: string): boolean {
    return this.opts.referrers.some((r) => r.informer.store.countByIndex(REFERENCED_KINDS_INDEX, kind) > 0);
  }

  private async stopKind(key: string): Promise<void> {
    const watch = this.watches.get(key);
    if (!watch) return;
    this.watches.delete(key);
    watch.unsubscribe?.();
    const [apiVersion = '', kind = ''] = key.split('|');
    await this.opts.cache.release(apiVersion, kind, selectorOf(apiVersion));
    this.log.info({ kind: key }, 'no sync references this kind any more: its watch ended');
  }
}

/** `apiVersion|kind`: the key of a referenced kind's watch. */
export function kindKey(ref: Pick<ReferencedObject, 'apiVersion' | 'kind'>): string {
  return `${ref.apiVersion}|${ref.kind}`;
}

/** `apiVersion|kind|namespace|name`: the key of a referenced object in the index. */
export function referenceKey(ref: ReferencedObject): string {
  return `${kindKey(ref)}|${ref.namespace}|${ref.name}`;
}

function unique(values: string[]): string[] {
  return [...new Set(values)];
}
