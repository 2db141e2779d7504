import type { KubeObject } from '../kube/resources.js';
import type { InformerSelector } from '../runtime/cache.js';
import type { Informer, InformerEvent } from '../runtime/informer.js';
import type { Owner } from './engine.js';

/** What Arrivals needs of a cluster's cache. */
export interface ArrivalSource {
  informer(apiVersion: string, kind: string, selector: InformerSelector): Promise<Pick<Informer<KubeObject>, 'store' | 'onEvent'>>;
}

/** A kind whose objects syncs may wait for: how it is watched, and what each of its objects makes available. */
export interface ArrivalKind {
  apiVersion: string;
  kind: string;
  /** How it is watched: keeping no more of each object than `keysOf` reads. */
  selector: InformerSelector;
  /** What an object, as stored, makes available now (none while it is not ready for use). */
  keysOf(stored: KubeObject): string[];
  /** The cause of a wake, naming the object that came. */
  cause(stored: KubeObject): string;
}

/**
 * Of each CRD, only the kinds it serves (`group/version|Kind`): none until it
 * is Established (the API server serves and lists a CRD's kinds only then),
 * and only its versions marked served. CRDs are large (kube-prometheus's run
 * to hundreds of KB each) and nothing else of them is read here.
 */
export const CRDS: ArrivalKind = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  selector: {
    project: {
      name: 'served-kinds',
      listPageSize: 50,
      fn: (crd) => ({ apiVersion: crd.apiVersion, kind: crd.kind, metadata: { name: crd.metadata.name, uid: crd.metadata.uid, resourceVersion: crd.metadata.resourceVersion }, served: servedKindsOf(crd) }),
    },
  },
  keysOf: (stored) => (Array.isArray(stored.served) ? (stored.served as string[]) : []),
  cause: (stored) => `CRD established: ${stored.metadata.name ?? ''}`,
};

/** Namespaces, by name, while they are not being deleted (metadata only). */
export const NAMESPACES: ArrivalKind = {
  apiVersion: 'v1',
  kind: 'Namespace',
  selector: { metadataOnly: true },
  keysOf: (stored) => (stored.metadata.deletionTimestamp || !stored.metadata.name ? [] : [stored.metadata.name]),
  cause: (stored) => `namespace created: ${stored.metadata.name ?? ''}`,
};

/**
 * Syncs that failed for want of something another party creates (the CRD
 * of a kind not served yet, a namespace) wait for it on one watch of its
 * kind per cluster, started the first time a sync waits there, which wakes
 * each the moment what it waits for arrives, whoever creates it (another
 * sync with no `dependsOn` between them, Helm, a person), instead of at its
 * retry (min(interval, 30 s)). Where the kind cannot be watched the retry is
 * all there is.
 */
export class Arrivals {
  /** Key -> the owners (by key) waiting for it. */
  private readonly waiting = new Map<string, Map<string, Owner>>();
  /** The other side of `waiting`: owner key -> the keys it waits for. */
  private readonly byOwner = new Map<string, string[]>();
  private informer: Promise<Pick<Informer<KubeObject>, 'store' | 'onEvent'> | undefined> | undefined;

  constructor(
    private readonly cache: ArrivalSource,
    private readonly what: ArrivalKind,
    private readonly wake: (owner: Owner, cause: string) => void,
  ) {}

  /**
   * `owner` waits for `keys` (replacing what it waited for before; none: it
   * waits for nothing). Resolves, once the watch is primed, to whether one
   * of them is there already (it came meanwhile; for a CRD, discovery has
   * not caught up with it yet): then the caller tries again soon.
   */
  async await(owner: Owner, keys: readonly string[]): Promise<boolean> {
    const key = ownerKey(owner);
    this.drop(key);
    if (keys.length === 0) return false;
    const wanted = [...new Set(keys)];
    this.byOwner.set(key, wanted);
    for (const k of wanted) {
      let owners = this.waiting.get(k);
      if (!owners) this.waiting.set(k, (owners = new Map()));
      owners.set(key, owner);
    }
    const informer = await this.watch();
    if (!informer) return false;
    const there = new Set(informer.store.list().flatMap((o) => this.what.keysOf(o)));
    return wanted.some((k) => there.has(k));
  }

  /** Keys some owner waits for (for tests). */
  waitedFor(): string[] {
    return [...this.waiting.keys()].sort();
  }

  /** An object changed: the owners waiting for a key it now makes available, and did not before, are woken (once). */
  changed(e: InformerEvent<KubeObject>): void {
    if (e.type === 'deleted' || this.waiting.size === 0) return;
    const before = new Set(e.type === 'updated' && e.old ? this.what.keysOf(e.old) : []);
    for (const k of this.what.keysOf(e.object)) {
      const owners = before.has(k) ? undefined : this.waiting.get(k);
      if (!owners) continue;
      for (const [key, owner] of owners) {
        // Its reconcile tries again and says what it still waits for.
        this.drop(key);
        this.wake(owner, this.what.cause(e.object));
      }
    }
  }

  private drop(key: string): void {
    for (const k of this.byOwner.get(key) ?? []) {
      const owners = this.waiting.get(k);
      owners?.delete(key);
      if (owners?.size === 0) this.waiting.delete(k);
    }
    this.byOwner.delete(key);
  }

  /** The watch, started once; undefined (tried again next time) where it cannot start. */
  private watch(): Promise<Pick<Informer<KubeObject>, 'store' | 'onEvent'> | undefined> {
    if (!this.informer) {
      const started = this.cache.informer(this.what.apiVersion, this.what.kind, this.what.selector).then(
        (informer) => {
          informer.onEvent((e) => this.changed(e));
          return informer;
        },
        () => {
          if (this.informer === started) this.informer = undefined;
          return undefined;
        },
      );
      this.informer = started;
    }
    return this.informer;
  }
}

/** The kinds a CRD serves, as `group/version|Kind` (see CRDS). */
export function servedKindsOf(crd: KubeObject): string[] {
  const spec = crd.spec as { group?: string; names?: { kind?: string }; versions?: { name?: string; served?: boolean }[] } | undefined;
  const conditions = (crd.status as { conditions?: { type?: string; status?: string }[] } | undefined)?.conditions;
  const established = conditions?.some((c) => c.type === 'Established' && c.status === 'True') ?? false;
  if (!established || !spec?.group || !spec.names?.kind) return [];
  return (spec.versions ?? []).filter((v) => v.name && v.served !== false).map((v) => `${spec.group}/${v.name}|${spec.names!.kind}`);
}

/** The key a kind is awaited by (see CRDS). */
export function kindKey(k: { apiVersion: string; kind: string }): string {
  return `${k.apiVersion}|${k.kind}`;
}

function ownerKey(owner: Owner): string {
  return `${owner.kind}/${owner.namespace}/${owner.name}`;
}
