import { OwnedObjects } from '../apply/owned-objects.js';
import type { AddressPolicy } from '../kube/address-policy.js';
import { KubeClient } from '../kube/client.js';
import type { KubeConfig } from '../kube/kubeconfig.js';
import type { SharedTransports } from '../kube/shared-transports.js';
import { Discovery, type DiscoveryCache } from '../kube/discovery.js';
import { ApiError, NotKubernetesError } from '../kube/errors.js';
import { ClusterCache, type CacheTuning } from '../runtime/cache.js';
import type { Logger } from '../runtime/logger.js';
import type { OperatorMetrics } from '../runtime/metrics.js';
import { serviceAccountNamespaceOf } from './identity-namespace.js';
import { IdentityReachability, Reachability } from './reachability.js';
import type { ShareAdmission, WorkerShares } from './worker-shares.js';

/** The deadline of a request to a remote cluster (headers and body): a cluster slower than this is as good as unreachable. */
const REMOTE_REQUEST_TIMEOUT_MS = 15_000;
/** The probe's deadline, unless the request deadline is shorter. */
const PROBE_TIMEOUT_MS = 5_000;
/** A remote server that takes longer than this to accept a TLS connection is unreachable. */
const CONNECT_TIMEOUT_MS = 5_000;
/** HTTP/2 connections to one server, at most, shared by every identity there. */
const SHARED_HTTP2_SESSIONS = 64;

export interface RemoteClusterOptions {
  /** How the cluster is named in logs and metrics (`namespace/secret`). */
  name: string;
  /** The managing cluster itself, where pull clusters' assignments are kept (clusters/registry.ts). */
  home?: boolean;
  kubeConfig: KubeConfig;
  userAgent: string;
  /** The managing cluster client's write fence (leader election): writes here are fenced as there. */
  writeFence?: () => boolean;
  /** `--cluster-id`: the origin label every object we apply there carries. */
  origin: string;
  /** `--namespace`: only the owners there are woken by their objects' changes (see OwnedObjects). */
  ownerNamespace?: string;
  /** At most this many reconciles work on the cluster at once (the rest wait in the queue, holding no worker). */
  maxReconciles: number;
  /** The workers shared by servers and namespaces (worker-shares.ts), and this cluster's server (its location hash). */
  shares: { shares: WorkerShares; server: string };
  /** `--remote-request-timeout`: the deadline of each request, headers and body (default 15 s). */
  requestTimeoutMs?: number;
  /** Client-side rate limit of its requests (`--qps`, `--burst`). */
  rateLimit?: { qps: number; burst: number };
  /** What is known of the server's reachability, shared with the other identities on it (its own is kept apart: IdentityReachability). */
  serverReachability?: Reachability;
  /** What the server serves (discovery), shared with the other identities on it. */
  discovery?: DiscoveryCache;
  /** Connections shared with the other clusters' clients of the same server and TLS settings. */
  transports?: SharedTransports;
  /** Addresses its connections may never go to (`--source-deny-cidrs`). */
  addressPolicy?: AddressPolicy;
  logger: Logger;
  metrics?: OperatorMetrics;
  tuning?: CacheTuning;
}

/**
 * One remote cluster, shared by every RemoteSync whose kubeconfig names it:
 * its own client (and connections), discovery, informer cache and
 * owned-object informers (selected by the owner labels: ours are those of our origin), and
 * what is known of its reachability: its own, and its server's (IdentityReachability).
 */
export class RemoteCluster {
  readonly discovery: Discovery;
  readonly cache: ClusterCache;
  readonly owned: OwnedObjects;
  /** This identity's, with its server's (shared by every identity there: an outage no identity could avoid). */
  readonly reachability: IdentityReachability;
  /** RemoteSyncs (home keys) that use this cluster. */
  readonly users = new Set<string>();
  private reconciles = 0;
  private readonly untrack: () => void;
  private readonly unsubscribers: (() => void)[] = [];

  private constructor(
    readonly client: KubeClient,
    private readonly opts: RemoteClusterOptions,
  ) {
    this.reachability = new IdentityReachability(new Reachability(), opts.serverReachability ?? new Reachability());
    this.discovery = new Discovery(client, undefined, opts.discovery);
    this.cache = new ClusterCache(client, this.discovery, { logger: opts.logger, metrics: opts.metrics, tuning: opts.tuning });
    // An identity with namespaced RBAC (a tenant's) cannot list cluster-wide: its objects are watched per namespace.
    // A ServiceAccount's objects in its own namespace are watched there from the first (identity-namespace.ts).
    this.owned = new OwnedObjects(this.cache, {
      origin: opts.origin,
      namespacedFallback: true,
      ownNamespace: serviceAccountNamespaceOf(opts.kubeConfig),
      ownerNamespace: opts.ownerNamespace,
    });
    this.untrack = opts.metrics?.trackClient(client, opts.logger) ?? (() => undefined);
    client.observe((r) => {
      opts.metrics?.clusterRequests.inc({ cluster: client.name, method: r.method, code: String(r.status ?? 'none') });
      if (opts.logger.isLevelEnabled('trace')) {
        opts.logger.trace({ cluster: client.name, method: r.method, path: r.url.pathname, query: r.url.search, status: r.status }, 'request');
      }
      if (r.aborted) return; // the caller gave up: that says nothing of the cluster
      if (r.status !== undefined && r.error === undefined) this.reachability.answered();
      // An answer whose body passed a bound (ResponseLimitError) is no answer: its error names the cluster and the bound.
      else if (r.status !== undefined) this.reachability.failed(`${r.method} ${r.url.pathname}: ${r.error ?? 'no complete answer'}`);
      else this.reachability.failed(`no answer from ${client.server.origin}: ${r.error ?? 'no response'}`);
    });
    // The gauge follows this identity's reachability (its server's outages included).
    opts.metrics?.clusterReachable.set({ cluster: client.name }, this.reachability.reachable ? 1 : 0);
    this.unsubscribers.push(this.reachability.onChange((up) => opts.metrics?.clusterReachable.set({ cluster: client.name }, up ? 1 : 0)));
  }

  static async create(opts: RemoteClusterOptions): Promise<RemoteCluster> {
    const client = await KubeClient.create(opts.name, opts.kubeConfig, opts.userAgent, {
      rateLimit: opts.rateLimit,
      shared: opts.transports,
      timeoutMs: opts.requestTimeoutMs ?? REMOTE_REQUEST_TIMEOUT_MS,
      connectTimeoutMs: CONNECT_TIMEOUT_MS,
      writeFence: opts.writeFence,
      fenceLeases: opts.writeFence !== undefined,
      addressPolicy: opts.addressPolicy,
      // Shared by many identities, each with its own watches: room for more streams than one client needs.
      http2MaxSessions: opts.transports ? SHARED_HTTP2_SESSIONS : undefined,
    });
    return new RemoteCluster(client, opts);
  }

  /** Whether this is the managing cluster itself (pull clusters' assignments): see RemoteClusterOptions.home. */
  get home(): boolean {
    return this.opts.home === true;
  }

  get name(): string {
    return this.opts.name;
  }

  /**
   * A reconcile of `pool` (its controller) for a sync of `namespace` may
   * start work here unless as many already do on this cluster, or its
   * server or namespace holds its share of the workers (worker-shares.ts);
   * then `key` (the sync's) is woken when a worker is given back.
   */
  tryEnter(pool: string, namespace: string, key?: string): ShareAdmission {
    if (this.reconciles >= this.opts.maxReconciles) return { ok: false, group: `cluster ${this.name}` };
    const { shares } = this.opts;
    const entered = shares.shares.tryEnter({ pool, groups: [`server ${shares.server}`, `namespace ${namespace}`], key }, () => {
      this.reconciles--;
      this.gauge();
    });
    if (entered.ok) {
      this.reconciles++;
      this.gauge();
    }
    return entered;
  }

  /**
   * Asks the cluster for its version with a short deadline, as this
   * identity: is it there at all? An API error (401, 403, ...) is an answer:
   * the reconcile goes on and meets it (and says it) in its own requests.
   */
  async probe(): Promise<void> {
    try {
      const version = await this.client.request<{ gitVersion?: unknown } | undefined>({ path: '/version', timeoutMs: Math.min(PROBE_TIMEOUT_MS, this.opts.requestTimeoutMs ?? REMOTE_REQUEST_TIMEOUT_MS) });
      // JSON of another shape is a server of another kind: not an answer (else the probe would wake its syncs in a loop).
      if (typeof version?.gitVersion !== 'string') {
        throw new NotKubernetesError('GET /version', this.client.name, 'without a gitVersion');
      }
      this.reachability.answered();
    } catch (err) {
      if (err instanceof ApiError) return this.reachability.answered();
      this.reachability.probeFailed(err instanceof Error ? err.message : String(err));
      throw err;
    }
  }

  /** Calls `fn` when the cluster stops answering, and again when it answers after an outage (until the cluster is closed). */
  onReachabilityChange(fn: (reachable: boolean) => void): void {
    this.unsubscribers.push(this.reachability.onChange(fn));
  }

  /** Stops its watches and closes its connections. */
  async close(): Promise<void> {
    for (const off of this.unsubscribers.splice(0)) off();
    this.reachability.close();
    await this.cache.stop();
    this.untrack();
    this.client.close();
    this.opts.metrics?.clusterReconciles.remove({ cluster: this.name });
    this.opts.metrics?.clusterReachable.remove({ cluster: this.name });
  }

  private gauge(): void {
    this.opts.metrics?.clusterReconciles.set({ cluster: this.name }, this.reconciles);
  }
}
