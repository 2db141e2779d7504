// The cluster inventory of each namespace (API.md, "Clusters"): kubeconfig
// Secrets labelled `syncprims.dev/cluster`, Cluster API Clusters, and
// SIG-Multicluster ClusterProfiles where their CRD is served, followed live
// from the operator's shared cache. FleetSync selects from it.
import { CLUSTER_LABEL } from '../api/marks.js';
import { CRDS } from '../apply/arrivals.js';
import type { Discovery } from '../kube/discovery.js';
import type { KubeObject } from '../kube/resources.js';
import type { ClusterCache, InformerSelector } from '../runtime/cache.js';
import type { Informer, InformerEvent } from '../runtime/informer.js';
import type { Logger } from '../runtime/logger.js';
import {
  CLUSTER_API_VERSIONS,
  CLUSTER_PROFILE_VERSIONS,
  clusterApiCluster,
  clusterProfileCluster,
  projectClusterProfile,
  projectInventoryMetadata,
  secretCluster,
  withConflicts,
} from './inventory-sources.js';
import type { InventoryCluster } from './inventory-types.js';
import { matchesSelector, type LabelSelector } from './label-selector.js';

export type { ClusterSource, InventoryCluster } from './inventory-types.js';
export { matchesSelector, type LabelSelector } from './label-selector.js';

/** Pure: the clusters a FleetSync selects (by selector and/or names; both given: a cluster must match both), sorted by name; those with a problem are left out. */
export function selectClusters(clusters: InventoryCluster[], sel: { selector?: LabelSelector; names?: string[] }): InventoryCluster[] {
  return matching(clusters, sel).filter((c) => !c.problem);
}

/**
 * Pure: the clusters the selection matches that have a problem (a name
 * claimed twice, a ClusterProfile without usable credentials), one per name
 * (its first claim, whose problem names the others), sorted by name. Their
 * children are kept as they are, not written nor deleted, until the problem
 * is fixed or the cluster leaves the inventory.
 */
export function troubledClusters(clusters: InventoryCluster[], sel: { selector?: LabelSelector; names?: string[] }): InventoryCluster[] {
  const seen = new Set<string>();
  return matching(clusters, sel).filter((c) => c.problem && !seen.has(c.name) && seen.add(c.name));
}

/** Pure: whether the selection names `cluster` (its problem aside: a FleetSync keeps the child of a troubled cluster it selects). */
export function selectsCluster(cluster: InventoryCluster, sel: { selector?: LabelSelector; names?: string[] }): boolean {
  return matching([cluster], sel).length > 0;
}

function matching(clusters: InventoryCluster[], sel: { selector?: LabelSelector; names?: string[] }): InventoryCluster[] {
  const names = sel.names ? new Set(sel.names) : undefined;
  return clusters
    .filter((c) => !names || names.has(c.name))
    .filter((c) => !sel.selector || matchesSelector(c.labels, sel.selector))
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/** What the inventory needs of the cache (the operator's `m.cache`). */
export type InventoryCache = Pick<ClusterCache, 'informer' | 'release'>;

export interface ClusterInventoryOptions {
  cache: InventoryCache;
  /** The cache's discovery: told to forget a group when its CRD arrives. */
  discovery: Pick<Discovery, 'invalidate'>;
  logger: Logger;
  /** `--namespace`: only this namespace's clusters (default: all namespaces). */
  namespace?: string;
}

/** One source's watch: which version of its kind is watched, and how its objects become clusters. */
interface Source {
  what: string;
  /** The versions that serve the kind, preferred first; the first served one is watched. */
  versions: string[];
  kind: string;
  selector: InformerSelector;
  toCluster(obj: KubeObject): InventoryCluster;
  /** Always watched (the kind is built in). */
  builtIn?: boolean;
  watched?: { apiVersion: string; informer: Informer<KubeObject>; unsubscribe: () => void };
}

const NAMESPACE_INDEX = 'syncprims.dev/inventory-namespace';
const CRD_API = 'apiextensions.k8s.io/v1';
const CRD_KIND = 'CustomResourceDefinition';
/** How soon a served kind that could not be watched is tried again: doubling from the first, up to the last. */
const RETRY_MS = { initial: 2_000, max: 60_000 };

/** The live inventory, from the operator's shared cache, of all namespaces (or `--namespace`). */
export class ClusterInventory {
  private readonly sources: Source[];
  private readonly crdSelector: InformerSelector;
  private readonly lists = new Map<string, { clusters: InventoryCluster[]; json: string; byName: Map<string, InventoryCluster> }>();
  private readonly listeners = new Set<(namespace: string) => void>();
  private readonly log: Logger;
  private crds: Informer<KubeObject> | undefined;
  private unsubscribeCrds: (() => void) | undefined;
  /** Changes of the watched sources, one at a time. */
  private changing: Promise<void> = Promise.resolve();
  private stopped = false;
  private retry: NodeJS.Timeout | undefined;
  private retryMs = RETRY_MS.initial;
  /** What servedNow found (where CRDs cannot be watched). */
  private lastServed: Set<string> | undefined;

  constructor(private readonly opts: ClusterInventoryOptions) {
    this.log = opts.logger.child({ component: 'cluster-inventory' });
    const namespace = opts.namespace;
    this.sources = [
      {
        what: 'kubeconfig Secrets',
        versions: ['v1'],
        kind: 'Secret',
        builtIn: true,
        selector: { namespace, labelSelector: CLUSTER_LABEL, metadataOnly: true, project: { name: 'inventory-secret', fn: projectInventoryMetadata('Secret', 'v1') } },
        toCluster: secretCluster,
      },
      {
        what: 'Cluster API Clusters',
        versions: CLUSTER_API_VERSIONS,
        kind: 'Cluster',
        selector: { namespace, metadataOnly: true, project: { name: 'inventory-cluster', fn: projectInventoryMetadata('Cluster', CLUSTER_API_VERSIONS[0]!) } },
        toCluster: clusterApiCluster,
      },
      {
        what: 'ClusterProfiles',
        versions: CLUSTER_PROFILE_VERSIONS,
        kind: 'ClusterProfile',
        selector: { namespace, project: { name: 'inventory-cluster-profile', fn: projectClusterProfile } },
        toCluster: clusterProfileCluster,
      },
    ];
    // A watch of CRDs of its own: the arrivals' one is released when nobody waits on it.
    this.crdSelector = { project: { ...CRDS.selector.project!, name: 'served-kinds/cluster-inventory' } };
  }

  /** Primed before it resolves; a kind not served (Cluster API, ClusterProfile) is skipped, and picked up when its CRD becomes Established. */
  async start(): Promise<void> {
    try {
      this.crds = await this.opts.cache.informer(CRD_API, CRD_KIND, this.crdSelector);
      this.unsubscribeCrds = this.crds.onEvent(() => void this.follow());
    } catch (err) {
      this.log.warn({ err: String(err) }, 'cannot watch CRDs: Cluster API Clusters and ClusterProfiles are looked for once, now');
    }
    if (!this.crds) this.lastServed = await this.servedNow();
    await this.follow(this.lastServed);
  }

  /** The namespace's clusters, sorted by name (those of one name by the object that defines each), with their problems. */
  list(namespace: string): InventoryCluster[] {
    return this.memo(namespace).clusters;
  }

  /** The cluster of that name (the first claim of a name in conflict, with its problem). */
  get(namespace: string, name: string): InventoryCluster | undefined {
    return this.memo(namespace).byName.get(name);
  }

  private memo(namespace: string): { clusters: InventoryCluster[]; json: string; byName: Map<string, InventoryCluster> } {
    let memo = this.lists.get(namespace);
    if (!memo) {
      const clusters = this.compute(namespace);
      const byName = new Map<string, InventoryCluster>();
      for (const c of clusters) if (!byName.has(c.name)) byName.set(c.name, c);
      memo = { clusters, json: JSON.stringify(clusters), byName };
      this.lists.set(namespace, memo);
    }
    return memo;
  }

  /** `fn(namespace)` when a cluster of that namespace joined, left, or changed labels/values/ref/problem. Returns the way to stop. */
  onChange(fn: (namespace: string) => void): () => void {
    this.listeners.add(fn);
    return () => void this.listeners.delete(fn);
  }

  /** Which kinds are watched now, `apiVersion|Kind` (for tests and logs). */
  watchedKinds(): string[] {
    return this.sources.filter((s) => s.watched).map((s) => `${s.watched!.apiVersion}|${s.kind}`);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.retry);
    this.unsubscribeCrds?.();
    await this.changing;
    for (const s of this.sources) s.watched?.unsubscribe();
  }

  private compute(namespace: string): InventoryCluster[] {
    const found = this.sources.flatMap((s) => (s.watched ? s.watched.informer.store.byIndex(NAMESPACE_INDEX, namespace).map(s.toCluster) : []));
    return withConflicts(found);
  }

  /** Starts and stops the watches of the sources as their CRDs come and go (`served`: `group/version|Kind`, else read from the CRD watch). */
  private follow(served?: Set<string>): Promise<void> {
    const next = this.changing.then(async () => {
      if (this.stopped) return;
      const now = served ?? new Set((this.crds?.store.list() ?? []).flatMap((crd) => CRDS.keysOf(crd)));
      for (const s of this.sources) await this.place(s, s.builtIn ? s.versions[0] : s.versions.find((v) => now.has(`${v}|${s.kind}`)));
    });
    this.changing = next.catch((err: unknown) => this.log.warn({ err: String(err) }, 'cluster inventory: a watch could not change'));
    return next;
  }

  /** Watches `s` in `apiVersion` (none: stops watching it), telling the namespaces whose clusters came or went. */
  private async place(s: Source, apiVersion: string | undefined): Promise<void> {
    if (s.watched?.apiVersion === apiVersion) return;
    const before = s.watched;
    if (before) {
      s.watched = undefined;
      before.unsubscribe();
      await this.opts.cache.release(before.apiVersion, s.kind, s.selector).catch(() => undefined);
      this.log.info({ kind: `${before.apiVersion}|${s.kind}` }, `cluster inventory: ${s.what} no longer served, not watched`);
      this.changed(namespacesOf(before.informer));
    }
    if (!apiVersion) return;
    this.opts.discovery.invalidate(apiVersion);
    let informer: Informer<KubeObject>;
    try {
      informer = await this.opts.cache.informer(apiVersion, s.kind, s.selector);
    } catch (err) {
      if (s.builtIn) throw err;
      // Its CRD was just Established and discovery may not list it yet; or the operator may not list the kind.
      this.log.warn({ kind: `${apiVersion}|${s.kind}`, err: String(err) }, `cluster inventory: cannot watch ${s.what} yet; tried again`);
      this.retryLater();
      return;
    }
    if (!informer.store.hasIndex(NAMESPACE_INDEX)) informer.store.addIndex(NAMESPACE_INDEX, (o) => [o.metadata.namespace ?? '']);
    const unsubscribe = informer.onEvent((e) => this.onEvent(e));
    s.watched = { apiVersion, informer, unsubscribe };
    this.retryMs = RETRY_MS.initial;
    if (!s.builtIn) this.log.info({ kind: `${apiVersion}|${s.kind}` }, `cluster inventory: watching ${s.what}`);
    this.changed(namespacesOf(informer));
  }

  /** Where the CRD watch cannot be had: which optional kinds are served, asked of discovery once. */
  private retryLater(): void {
    if (this.retry || this.stopped) return;
    this.retry = setTimeout(() => {
      this.retry = undefined;
      void this.follow(this.crds ? undefined : this.lastServed);
    }, this.retryMs).unref();
    // A kind the operator may not list (403) is not asked for every 2 s for ever.
    this.retryMs = Math.min(this.retryMs * 2, RETRY_MS.max);
  }

  private async servedNow(): Promise<Set<string>> {
    const served = new Set<string>();
    for (const s of this.sources.filter((x) => !x.builtIn)) {
      for (const v of s.versions) {
        try {
          this.opts.discovery.invalidate(v);
          await this.opts.cache.informer(v, s.kind, s.selector);
          served.add(`${v}|${s.kind}`);
          break;
        } catch {
          // Not served (or not allowed): skipped.
        }
      }
    }
    return served;
  }

  private onEvent(e: InformerEvent<KubeObject>): void {
    const namespaces = new Set([e.object.metadata.namespace ?? '']);
    if (e.old) namespaces.add(e.old.metadata.namespace ?? '');
    this.changed(namespaces);
  }

  /** Recomputes the namespaces' lists and tells the listeners of those that changed. */
  private changed(namespaces: Iterable<string>): void {
    for (const namespace of namespaces) {
      const before = this.lists.get(namespace)?.json;
      this.lists.delete(namespace);
      const after = this.list(namespace);
      if (before === this.lists.get(namespace)?.json || (before === undefined && after.length === 0)) continue;
      for (const fn of this.listeners) {
        try {
          fn(namespace);
        } catch (err) {
          this.log.warn({ namespace, err: String(err) }, 'cluster inventory: a listener failed');
        }
      }
    }
  }
}

function namespacesOf(informer: Informer<KubeObject>): Set<string> {
  return new Set(informer.store.list().map((o) => o.metadata.namespace ?? ''));
}
