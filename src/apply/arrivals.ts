import { ApiError } from '../kube/errors.js';
import type { KubeObject } from '../kube/resources.js';
import type { InformerSelector } from '../runtime/cache.js';
import type { Informer, InformerEvent } from '../runtime/informer.js';
import type { Owner } from './engine.js';
import { Waiters } from './waiters.js';

/**
 * The first retry of a sync whose wait ended while it failed (a namespace
 * created meanwhile; a kind a CRD serves that discovery did not list yet:
 * `await` said it is there), then with backoff.
 */
export const ARRIVED_RETRY_MS = 500;

/** What Arrivals needs of a cluster's cache. */
export interface ArrivalSource {
  informer(apiVersion: string, kind: string, selector: InformerSelector): Promise<Pick<Informer<KubeObject>, 'store' | 'onEvent'>>;
  release(apiVersion: string, kind: string, selector: InformerSelector): Promise<void>;
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

/** How long a watch nobody waits on is kept (a sync that fails again soon finds it primed), then released. */
export const IDLE_WATCH_MS = 5 * 60_000;
/** How long a watch the cluster refused (403: an identity that may not list the kind) is not asked for again. */
export const REFUSED_WATCH_MS = 5 * 60_000;

/**
 * Syncs that failed for want of something another party creates (the CRD
 * of a kind not served yet, a namespace) wait for it on one watch of its
 * kind per cluster, started the first time a sync waits there, which wakes
 * each the moment what it waits for arrives, whoever creates it (another
 * sync with no `dependsOn` between them, Helm, a person), instead of at its
 * retry (min(interval, 30 s)). The watch is released once nobody has waited
 * on it for IDLE_WATCH_MS. Where the kind cannot be watched the retry is all
 * there is (a refusal is not asked again for REFUSED_WATCH_MS).
 */
export class Arrivals {
  private readonly waiting = new Waiters();
  private informer: Promise<Pick<Informer<KubeObject>, 'store' | 'onEvent'> | undefined> | undefined;
  /** Stops hearing the watch's events (set once it is started). */
  private unsubscribe: (() => void) | undefined;
  private idle: NodeJS.Timeout | undefined;
  private refusedUntil = 0;

  constructor(
    private readonly cache: ArrivalSource,
    private readonly what: ArrivalKind,
    private readonly wake: (owner: Owner, cause: string) => void,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * `owner` waits for `keys` (replacing what it waited for before; none: it
   * waits for nothing). Resolves, once the watch is primed, to whether one
   * of them is there already (it came meanwhile; for a CRD, discovery has
   * not caught up with it yet): then the caller tries again soon.
   */
  async await(owner: Owner, keys: readonly string[]): Promise<boolean> {
    this.waiting.set(owner, keys);
    this.releaseWhenIdle();
    if (keys.length === 0) return false;
    const informer = await this.watch();
    if (!informer) return false;
    const there = new Set(informer.store.list().flatMap((o) => this.what.keysOf(o)));
    return keys.some((k) => there.has(k));
  }

  /** Keys some owner waits for (for tests). */
  waitedFor(): string[] {
    return this.waiting.keys();
  }

  /** Whether the watch is started (or starting). */
  get watching(): boolean {
    return this.informer !== undefined;
  }

  /** An object changed: the owners waiting for a key it now makes available, and did not before, are woken (once). */
  changed(e: InformerEvent<KubeObject>): void {
    if (e.type === 'deleted' || this.waiting.size === 0) return;
    const before = new Set(e.type === 'updated' && e.old ? this.what.keysOf(e.old) : []);
    for (const k of this.what.keysOf(e.object)) {
      // Its reconcile tries again and says what it still waits for.
      if (!before.has(k)) for (const owner of this.waiting.take(k)) this.wake(owner, this.what.cause(e.object));
    }
    this.releaseWhenIdle();
  }

  /** The watch, started once; undefined (tried again next time, or after REFUSED_WATCH_MS when refused) where it cannot start. */
  private watch(): Promise<Pick<Informer<KubeObject>, 'store' | 'onEvent'> | undefined> {
    if (!this.informer) {
      if (this.now() < this.refusedUntil) return Promise.resolve(undefined);
      const started = this.cache.informer(this.what.apiVersion, this.what.kind, this.what.selector).then(
        (informer) => {
          const unsubscribe = informer.onEvent((e) => this.changed(e));
          // Released meanwhile: it is not heard any more.
          if (this.informer !== started) unsubscribe();
          else this.unsubscribe = unsubscribe;
          return informer;
        },
        (err: unknown) => {
          if (err instanceof ApiError && err.status === 403) this.refusedUntil = this.now() + REFUSED_WATCH_MS;
          if (this.informer === started) this.informer = undefined;
          return undefined;
        },
      );
      this.informer = started;
    }
    return this.informer;
  }

  /** With nobody waiting, the watch is released after IDLE_WATCH_MS (unless someone waits again first). */
  private releaseWhenIdle(): void {
    if (this.waiting.size > 0 || !this.informer) {
      clearTimeout(this.idle);
      this.idle = undefined;
      return;
    }
    this.idle ??= setTimeout(() => void this.release(), IDLE_WATCH_MS).unref();
  }

  /** Stops the watch (nobody waits on it): the next wait starts it again. */
  async release(): Promise<void> {
    clearTimeout(this.idle);
    this.idle = undefined;
    if (!this.informer || this.waiting.size > 0) return;
    this.informer = undefined;
    this.unsubscribe?.();
    this.unsubscribe = undefined;
    await this.cache.release(this.what.apiVersion, this.what.kind, this.what.selector).catch(() => undefined);
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
