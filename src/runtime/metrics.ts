import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { KubeClient } from '../kube/client.js';
import type { SharedTransports } from '../kube/shared-transports.js';
import type { ConnectionStats } from '../kube/transport.js';
import type { Logger } from './logger.js';
import type { QueueMetrics } from './workqueue.js';

/**
 * The operator's metrics. Names follow controller-runtime, so existing
 * dashboards work; our own live under `syncprims_`.
 */
export class OperatorMetrics {
  readonly registry = new Registry();

  readonly reconcileTotal = new Counter({
    name: 'controller_runtime_reconcile_total',
    help: 'Total number of reconciliations per controller',
    labelNames: ['controller', 'result'] as const,
    registers: [this.registry],
  });
  readonly reconcileErrors = new Counter({
    name: 'controller_runtime_reconcile_errors_total',
    help: 'Total number of reconciliation errors per controller',
    labelNames: ['controller'] as const,
    registers: [this.registry],
  });
  readonly reconcileTime = new Histogram({
    name: 'controller_runtime_reconcile_time_seconds',
    help: 'Length of time per reconciliation per controller',
    labelNames: ['controller'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
    registers: [this.registry],
  });
  readonly queueDepth = new Gauge({
    name: 'workqueue_depth',
    help: 'Current depth of workqueue',
    labelNames: ['name'] as const,
    registers: [this.registry],
  });
  readonly queueAdds = new Counter({
    name: 'workqueue_adds_total',
    help: 'Total number of adds handled by workqueue',
    labelNames: ['name'] as const,
    registers: [this.registry],
  });
  readonly queueLatency = new Histogram({
    name: 'workqueue_queue_duration_seconds',
    help: 'How long in seconds an item stays in workqueue before being requested',
    labelNames: ['name'] as const,
    buckets: [0.001, 0.01, 0.1, 0.5, 1, 5, 10, 60, 300],
    registers: [this.registry],
  });
  readonly workDuration = new Histogram({
    name: 'workqueue_work_duration_seconds',
    help: 'How long in seconds processing an item from workqueue takes',
    labelNames: ['name'] as const,
    buckets: [0.001, 0.01, 0.1, 0.5, 1, 5, 10, 60, 300],
    registers: [this.registry],
  });
  readonly queueRetries = new Counter({
    name: 'workqueue_retries_total',
    help: 'Total number of retries handled by workqueue',
    labelNames: ['name'] as const,
    registers: [this.registry],
  });
  readonly cacheObjects = new Gauge({
    name: 'syncprims_cache_objects',
    help: 'Objects held by the informer cache, per cluster and resource',
    labelNames: ['cluster', 'resource'] as const,
    registers: [this.registry],
  });
  readonly cachePrimeSeconds = new Gauge({
    name: 'syncprims_cache_prime_seconds',
    help: 'How long the informer took to hold the whole initial set, per cluster and resource',
    labelNames: ['cluster', 'resource', 'protocol'] as const,
    registers: [this.registry],
  });
  readonly firstReconcileCacheObjects = new Gauge({
    name: 'syncprims_first_reconcile_cache_objects',
    help: 'Objects of its kind in the cache when a controller ran its first reconcile',
    labelNames: ['controller'] as const,
    registers: [this.registry],
  });
  readonly dependencyWaitSeconds = new Histogram({
    name: 'syncprims_dependency_wait_seconds',
    help: 'How long a sync waited for its dependencies, from the first unmet check to the check that found them met',
    labelNames: ['controller'] as const,
    buckets: [0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600],
    registers: [this.registry],
  });
  readonly dependencyWakes = new Counter({
    name: 'syncprims_dependency_wakes_total',
    help: 'Reconciles queued because a dependency changed (its readiness, generation or existence)',
    labelNames: ['controller'] as const,
    registers: [this.registry],
  });
  readonly watchRestarts = new Counter({
    name: 'syncprims_watch_restarts_total',
    help: 'Watches restarted, per cluster, resource and reason (ended, error, silent, gone)',
    labelNames: ['cluster', 'resource', 'reason'] as const,
    registers: [this.registry],
  });
  readonly watches = new Gauge({
    name: 'syncprims_watches',
    help: 'Watch streams open, per cluster and resource',
    labelNames: ['cluster', 'resource'] as const,
    registers: [this.registry],
  });
  readonly referenceWakes = new Counter({
    name: 'syncprims_reference_wakes_total',
    help: 'Reconciles queued because an object that a sync references (a source ConfigMap, Secret or Flux object) changed',
    labelNames: ['controller', 'kind'] as const,
    registers: [this.registry],
  });
  readonly clusterRequests = new Counter({
    name: 'syncprims_cluster_requests_total',
    help: 'Requests sent to each cluster, by method and status code',
    labelNames: ['cluster', 'method', 'code'] as const,
    registers: [this.registry],
  });
  readonly clusterReconciles = new Gauge({
    name: 'syncprims_cluster_reconciles_in_flight',
    help: 'Reconciles working on each remote cluster now: the workers it holds',
    labelNames: ['cluster'] as const,
    registers: [this.registry],
  });
  readonly clusterReachable = new Gauge({
    name: 'syncprims_cluster_reachable',
    help: '1 while a remote cluster answers, 0 once a request to it got no answer (until one does)',
    labelNames: ['cluster'] as const,
    registers: [this.registry],
  });
  /** The clients whose connections `syncprims_connections` reports. */
  private readonly clients = new Set<KubeClient>();
  /** Connections shared by clients: reported per server, not per client. */
  private readonly pools = new Set<SharedTransports>();
  readonly connections = new Gauge({
    name: 'syncprims_connections',
    help: 'Open TCP connections to each cluster, by protocol (h2, or http/1.1 where the server does not negotiate h2)',
    labelNames: ['cluster', 'protocol'] as const,
    registers: [this.registry],
    collect: () => this.collectConnections(),
  });
  readonly streams = new Gauge({
    name: 'syncprims_client_streams',
    help: 'Requests and watches in flight to each cluster; queued: waiting for a connection or stream',
    labelNames: ['cluster', 'state'] as const,
    registers: [this.registry],
  });
  readonly rateLimitWait = new Gauge({
    name: 'syncprims_client_rate_limit_wait_seconds',
    help: 'Seconds requests to each remote cluster have waited for its client-side rate limit (--qps, --burst), in all',
    labelNames: ['cluster'] as const,
    registers: [this.registry],
  });
  readonly leader = new Gauge({
    name: 'syncprims_leader',
    help: '1 while this process holds the leader lease',
    registers: [this.registry],
  });
  readonly shardMember = new Gauge({
    name: 'syncprims_shard_member',
    help: 'With --shards: 1 while this replica renews its membership Lease in time',
    registers: [this.registry],
  });
  readonly shardMembers = new Gauge({
    name: 'syncprims_shard_members',
    help: 'With --shards: the live replicas this replica counts (itself included)',
    registers: [this.registry],
  });
  readonly shardKeysHeld = new Gauge({
    name: 'syncprims_shard_keys_held',
    help: 'With --shards: the shard keys this replica holds, by kind (cluster: a remote cluster; namespace: its local syncs)',
    labelNames: ['kind'] as const,
    registers: [this.registry],
  });
  readonly shardHandovers = new Counter({
    name: 'syncprims_shard_handovers_total',
    help: 'With --shards: shard keys this replica took (acquired) or gave up (released)',
    labelNames: ['direction'] as const,
    registers: [this.registry],
  });

  constructor(opts: { processMetrics?: boolean } = {}) {
    if (opts.processMetrics ?? true) collectDefaultMetrics({ register: this.registry });
  }

  /**
   * Reports a client's connections and streams, and logs a warning when its
   * requests have to wait for a connection (a saturated pool). Returns the
   * way to stop (when the client is closed).
   */
  trackClient(client: KubeClient, log: Logger): () => void {
    this.clients.add(client);
    const off = client.onSaturated((d) =>
      log.warn({ cluster: client.name, ...d }, 'connection pool saturated: requests wait for a connection or stream'),
    );
    return () => {
      off();
      this.clients.delete(client);
      this.connections.remove({ cluster: client.name, protocol: client.connectionStats().protocol ?? 'none' });
      for (const state of ['in-flight', 'queued']) this.streams.remove({ cluster: client.name, state });
      this.rateLimitWait.remove({ cluster: client.name });
    };
  }

  /** Reports the connections of `pool` under `cluster="<server host>"` (its clients' own figures would count them many times). */
  trackSharedTransports(pool: SharedTransports): () => void {
    this.pools.add(pool);
    return () => void this.pools.delete(pool);
  }

  private collectConnections(): void {
    this.connections.reset();
    this.streams.reset();
    const report = (cluster: string, s: ConnectionStats): void => {
      this.connections.set({ cluster, protocol: s.protocol ?? 'none' }, s.connections);
      this.streams.set({ cluster, state: 'in-flight' }, s.streams);
      this.streams.set({ cluster, state: 'queued' }, s.queued);
    };
    for (const c of this.clients) {
      if (!c.sharesConnections) report(c.name, c.connectionStats());
      if (c.throttledMilliseconds > 0) this.rateLimitWait.set({ cluster: c.name }, c.throttledMilliseconds / 1000);
    }
    for (const pool of this.pools) for (const [server, s] of pool.stats()) report(server, s);
  }

  /** The queue's metric hooks, labelled with its name. */
  queue(name: string): QueueMetrics {
    return {
      depth: (n: number) => this.queueDepth.set({ name }, n),
      add: () => this.queueAdds.inc({ name }),
      queueLatency: (s: number) => this.queueLatency.observe({ name }, s),
      workDuration: (s: number) => this.workDuration.observe({ name }, s),
      retry: () => this.queueRetries.inc({ name }),
    };
  }
}
