import type { KubeObject } from '../kube/resources.js';
import type { InformerSelector } from '../runtime/cache.js';
import type { Informer, InformerEvent } from '../runtime/informer.js';
import type { Owner } from './engine.js';
import type { KindKey } from './render.js';

/** What CrdArrivals needs of a cluster's cache. */
export interface CrdSource {
  informer(apiVersion: string, kind: string, selector: InformerSelector): Promise<Pick<Informer<KubeObject>, 'store' | 'onEvent'>>;
}

/**
 * Of each CRD, only the kinds it serves (`group/version|Kind`, once it is
 * Established): CRDs are large (kube-prometheus's run to hundreds of KB each)
 * and nothing else of them is read here.
 */
const SERVED_KINDS: InformerSelector = {
  project: {
    name: 'served-kinds',
    listPageSize: 50,
    fn: (crd) => ({ apiVersion: crd.apiVersion, kind: crd.kind, metadata: { name: crd.metadata.name, uid: crd.metadata.uid, resourceVersion: crd.metadata.resourceVersion }, served: servedKindsOf(crd) }),
  },
};

/**
 * Syncs that could not render because a kind was not served (CRDNotInstalled)
 * wait for its CRD: one watch of the cluster's CRDs, started the first time
 * a sync waits, wakes each the moment a CRD that serves one of its kinds is
 * Established, whoever applied it (another sync without `dependsOn`, Helm, a
 * person), instead of at its retry (min(interval, 30 s)). A cluster where the
 * operator may not list CRDs keeps the retry alone.
 */
export class CrdArrivals {
  /** `group/version|Kind` -> the owners (by key) waiting for it. */
  private readonly waiting = new Map<string, Map<string, Owner>>();
  /** The other side of `waiting`: owner key -> the kinds it waits for. */
  private readonly byOwner = new Map<string, string[]>();
  private informer: Promise<Pick<Informer<KubeObject>, 'store' | 'onEvent'> | undefined> | undefined;

  constructor(
    private readonly cache: CrdSource,
    private readonly wake: (owner: Owner, cause: string) => void,
    private readonly onWatchRefused: (err: unknown) => void = () => undefined,
  ) {}

  /**
   * `owner` waits for `kinds` (replacing what it waited for before; none:
   * it waits for nothing). Resolves to whether a CRD already serves one of
   * them: then the API server's discovery has not caught up with its
   * Established condition yet, and the caller tries again soon.
   */
  async await(owner: Owner, kinds: readonly KindKey[]): Promise<boolean> {
    const key = ownerKey(owner);
    this.drop(key);
    if (kinds.length === 0) return false;
    const wanted = [...new Set(kinds.map((k) => `${k.apiVersion}|${k.kind}`))];
    this.byOwner.set(key, wanted);
    for (const k of wanted) {
      let owners = this.waiting.get(k);
      if (!owners) this.waiting.set(k, (owners = new Map()));
      owners.set(key, owner);
    }
    const informer = await this.watch();
    if (!informer) return false;
    const served = new Set(informer.store.list().flatMap(servedOf));
    return wanted.some((k) => served.has(k));
  }

  /** Kinds some owner waits for (for tests). */
  waitedFor(): string[] {
    return [...this.waiting.keys()].sort();
  }

  /** A CRD changed: the owners waiting for a kind it now serves, and did not before, are woken (once). */
  changed(e: InformerEvent<KubeObject>): void {
    if (e.type === 'deleted' || this.waiting.size === 0) return;
    const before = new Set(e.type === 'updated' && e.old ? servedOf(e.old) : []);
    for (const kind of servedOf(e.object)) {
      const owners = before.has(kind) ? undefined : this.waiting.get(kind);
      if (!owners) continue;
      for (const [key, owner] of owners) {
        // Its reconcile renders again and says what it still waits for.
        this.drop(key);
        this.wake(owner, `CRD established: ${e.object.metadata.name ?? ''}`);
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

  /** The CRD watch, started once; undefined (tried again next time) where it cannot start. */
  private watch(): Promise<Pick<Informer<KubeObject>, 'store' | 'onEvent'> | undefined> {
    if (!this.informer) {
      const started = this.cache.informer('apiextensions.k8s.io/v1', 'CustomResourceDefinition', SERVED_KINDS).then(
        (informer) => {
          informer.onEvent((e) => this.changed(e));
          return informer;
        },
        (err: unknown) => {
          if (this.informer === started) this.informer = undefined;
          this.onWatchRefused(err);
          return undefined;
        },
      );
      this.informer = started;
    }
    return this.informer;
  }
}

/**
 * The kinds a CRD serves, as `group/version|Kind`: none until it is
 * Established (the API server serves and lists a CRD's kinds only then),
 * and only its versions marked served.
 */
export function servedKindsOf(crd: KubeObject): string[] {
  const spec = crd.spec as { group?: string; names?: { kind?: string }; versions?: { name?: string; served?: boolean }[] } | undefined;
  const conditions = (crd.status as { conditions?: { type?: string; status?: string }[] } | undefined)?.conditions;
  const established = conditions?.some((c) => c.type === 'Established' && c.status === 'True') ?? false;
  if (!established || !spec?.group || !spec.names?.kind) return [];
  return (spec.versions ?? []).filter((v) => v.name && v.served !== false).map((v) => `${spec.group}/${v.name}|${spec.names!.kind}`);
}

/** What the projected copy (SERVED_KINDS) says it serves. */
function servedOf(projected: KubeObject): string[] {
  return Array.isArray(projected.served) ? (projected.served as string[]) : [];
}

function ownerKey(owner: Owner): string {
  return `${owner.kind}/${owner.namespace}/${owner.name}`;
}
