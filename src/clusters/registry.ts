import { createHash } from 'node:crypto';
import { Reason } from '../api/conditions.js';
import type { KubeClient } from '../kube/client.js';
import { DiscoveryCache } from '../kube/discovery.js';
import type { KubeConfig } from '../kube/kubeconfig.js';
import { impersonationOf } from '../kube/kubeconfig-impersonation.js';
import { SharedTransports } from '../kube/shared-transports.js';
import type { CacheTuning } from '../runtime/cache.js';
import type { Logger } from '../runtime/logger.js';
import type { OperatorMetrics } from '../runtime/metrics.js';
import type { ReferencedObject, ReferencedObjects } from '../runtime/referenced-objects.js';
import { describeRef, readKey } from '../source/kube-refs.js';
import { checkedKubeconfig, KubeconfigError, type KubeconfigPolicy } from './kubeconfig.js';
import { pullTargetOf, type PullTarget } from './pull-target.js';
import { Reachability, type ReachabilitySnapshot } from './reachability.js';
import { RemoteCluster } from './remote-cluster.js';
import { shareLimits, WorkerShares } from './worker-shares.js';

/** The Secret and key holding a cluster's kubeconfig, and the spec field that names it (for messages). */
export interface ClusterSecretRef {
  namespace: string;
  name: string;
  key: string;
  field: string;
}

/**
 * A cluster for a RemoteSync, or why there is none (a wait: the Secret's change wakes it). For a pull
 * cluster (its Secret registers it and holds no credential), `cluster` is the managing cluster itself,
 * where its assignments are kept (`pull`): it is never dialled.
 */
export type ClusterLookup = { ok: true; cluster: RemoteCluster; pull?: PullTarget } | { ok: false; reason: Reason; message: string };

export interface ClusterRegistryOptions {
  /** The managing cluster, where the Secrets live. */
  home: KubeClient;
  references: Pick<ReferencedObjects, 'ensureWatched' | 'cached'>;
  policy: KubeconfigPolicy;
  origin: string;
  /** `--namespace`: only RemoteSyncs and ProxySyncs there are reconciled here (see OwnedObjects). */
  ownerNamespace?: string;
  userAgent: string;
  maxReconcilesPerCluster: number;
  /** Each controller's workers (`--concurrency`): a server or a namespace holds at most its share (worker-shares.ts). */
  workers?: number;
  /** `--remote-request-timeout`: the deadline of each request to a remote cluster, headers and body. */
  requestTimeoutMs?: number;
  /** A sync of `kind` turned away by the shares of the workers may go now: queue it. */
  onShareFreed?: (kind: string, key: string) => void;
  /** `--qps` / `--burst` of each remote cluster. */
  rateLimit?: { qps: number; burst: number };
  logger: Logger;
  metrics?: OperatorMetrics;
  tuning?: CacheTuning;
  /** The write fence of the remote clusters (--shards: the work's cluster Lease held); the managing cluster's by default. */
  remoteWriteFence?: () => boolean;
  /** A new cluster was opened (its owned-object informers may wake RemoteSyncs). */
  onOpen?: (cluster: RemoteCluster) => void;
}

/** How many clusters prepare() opens at once (each a Secret read from the managing cluster). */
const PREPARE_CONCURRENCY = 4;

interface Parsed {
  kubeConfig: KubeConfig;
  /** Hash of where the cluster is (server, CA, TLS name) and of who we are there (credentials). */
  location: string;
  identity: string;
  /** The managing cluster itself (pull clusters' assignments): no address policy (it is ours), named so. */
  home?: boolean;
}

/**
 * What the identities on one server share, and how many clusters (identities)
 * are open there: its discovery, and its outages that no identity could
 * avoid (connection refused: failureScopeOf); each identity's own failures
 * are its own (RemoteCluster.reachability).
 */
interface Server {
  reachability: Reachability;
  discovery: DiscoveryCache;
  clusters: number;
}

interface Use {
  secret: string;
  resourceVersion: string;
  cluster: RemoteCluster;
  pull?: PullTarget;
}

/**
 * The remote clusters that RemoteSyncs name, by the content of their
 * kubeconfig Secrets: one client, cache and set of watches per distinct
 * cluster and identity (a hash of server, CA and credentials), shared by
 * every RemoteSync naming it. A Secret is read (GET) only when its
 * resourceVersion changes, as the metadata watch of Secrets tells. When only
 * the credentials rotate, the cluster keeps its watches and swaps them in
 * place; a cluster that no RemoteSync uses any more is closed.
 */
export class ClusterRegistry {
  private readonly byIdentity = new Map<string, Promise<RemoteCluster>>();
  private readonly uses = new Map<string, Use>();
  private readonly identities = new Map<RemoteCluster, string>();
  /** Identities on the same server, with the same TLS settings (tokens), share connections. */
  private readonly transports = new SharedTransports();
  /** ...and identities on the same server (location: URL, CA, TLS name) share what is known of it: its discovery, and its outages as a server. */
  private readonly servers = new Map<string, Server>();
  private readonly untrackTransports: () => void;
  /** The workers, shared fairly by servers and namespaces. */
  private readonly shares: WorkerShares;
  private readonly reachabilityListeners = new Set<() => void>();
  /** Lookups in flight, by user, Secret and its version. */
  private readonly lookups = new Map<string, Promise<ClusterLookup>>();
  /** Clusters to open ahead (prepare()), and how many are being opened. */
  private readonly preparing: (() => Promise<void>)[] = [];
  private prepares = 0;
  private closed = false;
  private readonly log: Logger;

  constructor(private readonly opts: ClusterRegistryOptions) {
    this.log = opts.logger.child({ component: 'clusters' });
    this.shares = new WorkerShares(shareLimits(opts.workers ?? opts.maxReconcilesPerCluster * 2), (kind, key) => opts.onShareFreed?.(kind, key));
    this.untrackTransports = opts.metrics?.trackSharedTransports(this.transports) ?? (() => undefined);
  }

  /** The cluster `user` (a RemoteSync's key) reaches through `ref`. */
  async clusterFor(user: string, ref: ClusterSecretRef): Promise<ClusterLookup> {
    const secretRef = secretOf(ref);
    await this.opts.references.ensureWatched([secretRef]);
    const secret = `${ref.namespace}/${ref.name}/${ref.key}`;
    const resourceVersion = this.opts.references.cached(secretRef)?.metadata.resourceVersion;
    if (resourceVersion === undefined) {
      return { ok: false, reason: Reason.ClusterUnreachable, message: `${describeRef({ ...secretRef })} not found: create it, or fix ${ref.field}` };
    }
    const use = this.uses.get(user);
    if (use?.secret === secret && use.resourceVersion === resourceVersion) return { ok: true, cluster: use.cluster, ...(use.pull && { pull: use.pull }) };
    // The same Secret version asked for again meanwhile (prepare() and the reconcile): one read, one answer.
    const key = `${user}|${secret}|${resourceVersion}`;
    let lookup = this.lookups.get(key);
    if (!lookup) {
      lookup = this.lookUp(user, use, ref, { secret, resourceVersion });
      this.lookups.set(key, lookup);
      void lookup.catch(() => undefined).finally(() => this.lookups.delete(key));
    }
    return lookup;
  }

  /**
   * Opens ahead the cluster of a sync that is not reconciled yet (created,
   * or met at start): its kubeconfig Secret read and checked and its client
   * made while the sync waits in the queue, so that its first reconcile does
   * not wait for them. Nothing is sent to the cluster (connections open with
   * the first request, in a reconcile, admitted as always). At most
   * PREPARE_CONCURRENCY at once, in the order asked; what fails is left to
   * the reconcile, which asks again and reports it.
   */
  prepare(user: string, ref: ClusterSecretRef): void {
    if (this.closed || this.uses.has(user)) return;
    const open = (): Promise<void> => this.clusterFor(user, ref).then(ignore, ignore); // the reconcile asks again, and reports
    this.preparing.push(open);
    this.nextPrepare();
  }

  private nextPrepare(): void {
    while (this.prepares < PREPARE_CONCURRENCY && !this.closed) {
      const next = this.preparing.shift();
      if (!next) return;
      this.prepares++;
      void next().finally(() => {
        this.prepares--;
        this.nextPrepare();
      });
    }
  }

  private async lookUp(user: string, use: Use | undefined, ref: ClusterSecretRef, version: { secret: string; resourceVersion: string }): Promise<ClusterLookup> {
    const pull = pullTargetOf(this.opts.references.cached(secretOf(ref)), ref);
    if (pull) {
      // Nothing is read of its Secret (it holds no credential): its assignments are kept here, at home.
      const cluster = await this.attach(user, use, { kubeConfig: this.opts.home.kubeConfig, ...keysOf(this.opts.home.kubeConfig), home: true }, ref);
      this.uses.set(user, { ...version, cluster, pull });
      return { ok: true, cluster, pull };
    }
    const parsed = await this.parse(ref, secretOf(ref));
    if ('reason' in parsed) return { ok: false, ...parsed };
    const cluster = await this.attach(user, use, parsed, ref);
    this.uses.set(user, { ...version, cluster });
    return { ok: true, cluster };
  }

  /** The pull cluster `user` used last (to delete its assignment on deletion), if the last one was. */
  lastPullOf(user: string): PullTarget | undefined {
    return this.uses.get(user)?.pull;
  }

  /** What the Secret `ref` names holds (as the metadata watch of Secrets knows): a kubeconfig, nothing (gone), or a pull registration (no credential). */
  async credentialOf(ref: ClusterSecretRef): Promise<'kubeconfig' | 'gone' | 'pull'> {
    const secretRef = secretOf(ref);
    await this.opts.references.ensureWatched([secretRef]);
    const secret = this.opts.references.cached(secretRef);
    if (!secret) return 'gone';
    return pullTargetOf(secret, ref) ? 'pull' : 'kubeconfig';
  }

  /** The cluster `user` used last, even if its Secret is gone (to prune on deletion). */
  lastClusterOf(user: string): RemoteCluster | undefined {
    return this.uses.get(user)?.cluster;
  }

  /** What is known now of the reachability of the cluster `user` last reached for (undefined: none yet). */
  reachabilityOf(user: string): ReachabilitySnapshot | undefined {
    return this.uses.get(user)?.cluster.reachability.snapshot();
  }

  /** Calls `fn` whenever a cluster stops or starts answering. Returns the way to stop. */
  onReachabilityChange(fn: () => void): () => void {
    this.reachabilityListeners.add(fn);
    return () => void this.reachabilityListeners.delete(fn);
  }

  /** `user` needs no cluster any more (it was deleted). */
  async release(user: string): Promise<void> {
    const use = this.uses.get(user);
    if (!use) return;
    this.uses.delete(user);
    await this.detach(user, use.cluster);
  }

  /** Every open cluster (for metrics and tests). */
  get clusters(): RemoteCluster[] {
    return [...this.identities.keys()];
  }

  async close(): Promise<void> {
    this.closed = true;
    this.preparing.splice(0);
    await Promise.all(this.clusters.map((c) => c.close()));
    this.untrackTransports();
    this.byIdentity.clear();
    this.identities.clear();
    this.uses.clear();
  }

  private async parse(ref: ClusterSecretRef, secretRef: ReferencedObject): Promise<Parsed | { reason: Reason; message: string }> {
    let text: string;
    try {
      // Read by the operator (the platform team's identity), never as a sync's account, and only in the sync's namespace.
      text = (await readKey({ client: this.opts.home }, secretRef, ref.key, ref.field)).toString('utf8');
    } catch (err) {
      return { reason: Reason.ClusterUnreachable, message: err instanceof Error ? err.message : String(err) };
    }
    try {
      const kubeConfig = checkedKubeconfig(text, `${describeRef(secretRef)} key ${ref.key}`, this.opts.policy, ref.namespace);
      return { kubeConfig, ...keysOf(kubeConfig) };
    } catch (err) {
      if (err instanceof KubeconfigError) return { reason: Reason.InvalidKubeconfig, message: err.message };
      throw err;
    }
  }

  /** Shares a cluster of the same identity, rotates `use`'s cluster in place, or opens a new one. */
  private async attach(user: string, use: Use | undefined, parsed: Parsed, ref: ClusterSecretRef): Promise<RemoteCluster> {
    const previous = use?.cluster;
    const shared = this.byIdentity.get(parsed.identity);
    if (!shared && previous && this.onlyUsersOf(previous, use.secret) && keysOf(previous.client.kubeConfig).location === parsed.location) {
      // Only the credentials changed, and nobody else holds the old ones: keep the watches, swap them in place.
      this.byIdentity.delete(this.identities.get(previous) ?? '');
      this.byIdentity.set(parsed.identity, Promise.resolve(previous));
      this.identities.set(previous, parsed.identity);
      await previous.client.useKubeConfig(parsed.kubeConfig);
      // Its own outage was the old credentials' (the server's stays: it is no credential's).
      previous.reachability.own.forget();
      this.log.info({ cluster: previous.name }, 'credentials rotated: swapped in place');
      return previous;
    }
    const cluster = await (shared ?? this.open(parsed, ref));
    cluster.users.add(user);
    if (previous && previous !== cluster) await this.detach(user, previous);
    return cluster;
  }

  private open(parsed: Parsed, ref: ClusterSecretRef): Promise<RemoteCluster> {
    const shared = this.servers.get(parsed.location) ?? this.newServer();
    shared.clusters++;
    this.servers.set(parsed.location, shared);
    const opening = RemoteCluster.create({
      serverReachability: shared.reachability,
      discovery: shared.discovery,
      name: parsed.home ? 'the managing cluster' : `${ref.namespace}/${ref.name}`,
      home: parsed.home,
      kubeConfig: parsed.kubeConfig,
      userAgent: this.opts.userAgent,
      // Read at each write: the fence is set once the manager runs for leadership.
      writeFence: this.opts.remoteWriteFence ?? (() => this.opts.home.writeFence?.() ?? true),
      origin: this.opts.origin,
      ownerNamespace: this.opts.ownerNamespace,
      maxReconciles: this.opts.maxReconcilesPerCluster,
      shares: { shares: this.shares, server: parsed.location },
      requestTimeoutMs: this.opts.requestTimeoutMs,
      rateLimit: this.opts.rateLimit,
      transports: this.transports,
      addressPolicy: parsed.home ? undefined : this.opts.policy.addressPolicy,
      logger: this.opts.logger,
      metrics: this.opts.metrics,
      tuning: this.opts.tuning,
    }).then((cluster) => {
      this.identities.set(cluster, parsed.identity);
      cluster.onReachabilityChange(() => {
        for (const fn of this.reachabilityListeners) fn();
      });
      this.log.info({ cluster: cluster.name, server: cluster.client.server.origin }, 'cluster opened');
      this.opts.onOpen?.(cluster);
      return cluster;
    });
    this.byIdentity.set(parsed.identity, opening);
    opening.catch(() => {
      this.byIdentity.delete(parsed.identity);
      this.releaseServer(parsed.location);
    });
    return opening;
  }

  private newServer(): Server {
    return { reachability: new Reachability(), discovery: new DiscoveryCache(), clusters: 0 };
  }

  private releaseServer(location: string): void {
    const shared = this.servers.get(location);
    if (shared && --shared.clusters <= 0) this.servers.delete(location);
  }

  /** Whether every user of `cluster` reaches it through the Secret `secret`. */
  private onlyUsersOf(cluster: RemoteCluster, secret: string): boolean {
    return [...cluster.users].every((u) => this.uses.get(u)?.secret === secret);
  }

  private async detach(user: string, cluster: RemoteCluster): Promise<void> {
    cluster.users.delete(user);
    if (cluster.users.size > 0) return;
    const identity = this.identities.get(cluster);
    if (identity !== undefined) this.byIdentity.delete(identity);
    this.identities.delete(cluster);
    this.releaseServer(keysOf(cluster.client.kubeConfig).location);
    await cluster.close();
    this.log.info({ cluster: cluster.name }, 'no RemoteSync uses this cluster any more: closed');
  }
}

const ignore = (): void => undefined;

function secretOf(ref: ClusterSecretRef): ReferencedObject {
  return { apiVersion: 'v1', kind: 'Secret', namespace: ref.namespace, name: ref.name };
}

/** Hashes of where a kubeconfig's current cluster is, and of who it is there (whom it impersonates included). */
function keysOf(kc: KubeConfig): { location: string; identity: string } {
  const c = kc.getCurrentCluster();
  const u = kc.getCurrentUser();
  const location = hash([c?.server, c?.caData, c?.tlsServerName, c?.skipTLSVerify, c?.proxyUrl]);
  const identity = hash([location, u?.token, u?.certData, u?.keyData, u?.username, u?.password, u?.exec, u?.authProvider, impersonationOf(u)]);
  return { location, identity };
}

function hash(parts: unknown[]): string {
  return createHash('sha256').update(JSON.stringify(parts)).digest('hex');
}
