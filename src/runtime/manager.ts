import type http from 'node:http';
import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import type { KubeClient } from '../kube/client.js';
import { Discovery } from '../kube/discovery.js';
import { ClusterCache, type CacheTuning } from './cache.js';
import type { Controller } from './controller.js';
import { EventRecorder } from './events.js';
import { boundAddress, closeServer, DEFAULT_DEBUG_ADDR, serveDebug, serveHealth, serveMetrics } from './http-endpoints.js';
import { DEFAULT_LEASE_DURATION_MS, LeaderElector } from './leader-election.js';
import { ShardPresence } from './shard-presence.js';
import { LivenessLease, operatorLeaseLabels } from './liveness-lease.js';
import type { Logger } from './logger.js';
import { OperatorMetrics } from './metrics.js';
import { Shards } from './shards.js';

export interface LeaderElectionOptions {
  namespace: string;
  name: string;
  leaseDurationMs?: number;
  renewDeadlineMs?: number;
  retryPeriodMs?: number;
}

export interface ManagerOptions {
  client: KubeClient;
  logger: Logger;
  /** Watch one namespace; all when undefined. */
  namespace?: string;
  metricsAddr?: string;
  healthAddr?: string;
  /** Serve `/debug/cache` (every cached object, as JSON, Secrets' values redacted) on `debugAddr`. */
  debugEndpoints?: boolean;
  /** Where the debug endpoints listen: a bare port (`8083`, `:8083`) is loopback's; default `127.0.0.1:8083`. */
  debugAddr?: string;
  leaderElection?: LeaderElectionOptions;
  /** `--shards`: replicas share the work by shard key (runtime/shards.ts); `member` is this replica's name. Not with leaderElection. */
  shards?: Omit<LeaderElectionOptions, 'name'> & { member: string; drainMs?: number; leaderLease?: string };
  /** Without leader election: the Lease that says this operator is alive (liveness-lease.ts). */
  liveness?: { namespace: string; name?: string; leaseDurationMs?: number };
  tuning?: CacheTuning;
  metrics?: OperatorMetrics;
}

/** Builds the controllers once the manager's cache, metrics and events exist. */
export type ControllerFactory = (m: Manager) => Promise<Controller>;

/**
 * Owns what the controllers share: the cluster's informer cache, metrics,
 * Events, the health and metrics endpoints and leader election. Caches are
 * primed before any controller starts (on a standby too, so a takeover is
 * fast); `/readyz` turns ready only then. Only the leader runs controllers.
 */
export class Manager {
  readonly metrics: OperatorMetrics;
  readonly cache: ClusterCache;
  readonly events: EventRecorder;
  readonly log: Logger;
  private readonly controllers: Controller[] = [];
  private readonly closers: (() => Promise<void>)[] = [];
  private readonly servers: http.Server[] = [];
  private elector: LeaderElector | undefined;
  /** With `shards`: this replica's share of the work (controllers ask it what to reconcile). */
  readonly shards: Shards | undefined;
  private liveness: LivenessLease | undefined;
  private primed = false;
  private stopping = false;
  private shutdownDone: Promise<void> | undefined;
  private readonly done = new AbortController();
  /** Aborted when shutdown begins. */
  private readonly stopRequested = new AbortController();
  private readonly identity = `${hostname()}-${randomBytes(4).toString('hex')}`;
  /** The ports the endpoints listen on (useful with port 0). */
  ports: { metrics?: number; health?: number; debug?: number } = {};

  constructor(readonly opts: ManagerOptions) {
    this.log = opts.logger;
    this.metrics = opts.metrics ?? new OperatorMetrics();
    this.cache = new ClusterCache(opts.client, new Discovery(opts.client), {
      namespace: opts.namespace,
      logger: opts.logger,
      metrics: this.metrics,
      tuning: opts.tuning,
    });
    this.events = new EventRecorder(opts.client, { log: opts.logger });
    if (opts.shards && opts.leaderElection) throw new Error('sharding and leader election do not go together: each replica works its share');
    this.shards = opts.shards && new Shards({ client: opts.client, cache: this.cache, logger: opts.logger, metrics: this.metrics, watchNamespace: opts.namespace, ...opts.shards });
    this.metrics.trackClient(opts.client, this.log);
    opts.client.observe((r) => {
      this.metrics.clusterRequests.inc({ cluster: opts.client.name, method: r.method, code: String(r.status ?? 'none') });
      if (this.log.isLevelEnabled('trace')) this.log.trace({ method: r.method, path: r.url.pathname, query: r.url.search, status: r.status }, 'request');
    });
  }

  /** Runs `fn` on shutdown, once the controllers have stopped (e.g. close remote clusters). */
  onShutdown(fn: () => Promise<void>): void {
    this.closers.push(fn);
  }

  get client(): KubeClient {
    return this.opts.client;
  }

  /** Serves the endpoints, primes the caches, then runs the controllers (as leader, if elected). */
  async start(factories: ControllerFactory[]): Promise<void> {
    this.startLiveness();
    await this.serveEndpoints();
    for (const make of factories) this.controllers.push(await make(this));
    this.primed = true;
    this.log.info({ controllers: this.controllers.map((c) => c.name) }, 'caches primed');
    if (this.shards) {
      await this.startSharded(this.shards);
      return;
    }
    if (!this.opts.leaderElection) {
      this.startControllers();
      return;
    }
    const le = this.opts.leaderElection;
    const presence = await ShardPresence.start(this.cache, this.client, le.namespace, le.leaseDurationMs ?? DEFAULT_LEASE_DURATION_MS);
    this.elector = this.createElector(le, presence);
    const elector = this.elector;
    this.client.fenceWrites(() => elector.isLeader());
    void this.elector.run(this.done.signal).catch((err: unknown) => this.fatal('leader election failed', err));
  }

  /** Every write of the managing cluster fenced by the shards; the controllers run at once (each works only the keys held). */
  private async startSharded(shards: Shards): Promise<void> {
    this.client.fenceWrites(() => shards.mayWrite());
    const { failed } = await shards.start();
    failed.catch((err: unknown) => this.fatal('shard membership failed', err));
    this.startControllers();
  }

  /** /healthz and /readyz, /metrics, and the debug endpoints when asked for: each where its flag says. */
  private async serveEndpoints(): Promise<void> {
    const addresses: Record<string, string> = {};
    const serve = async (which: 'health' | 'metrics' | 'debug', started: Promise<{ server: http.Server; port: number }>): Promise<void> => {
      const { server, port } = await started;
      this.servers.push(server);
      this.ports[which] = port;
      addresses[which] = boundAddress(server);
    };
    if (this.opts.healthAddr) await serve('health', serveHealth(this.opts.healthAddr, () => this.primed && this.cache.primed && !this.stopping));
    if (this.opts.metricsAddr) await serve('metrics', serveMetrics(this.opts.metricsAddr, this.metrics.registry));
    if (this.opts.debugEndpoints) await serve('debug', serveDebug(this.opts.debugAddr ?? DEFAULT_DEBUG_ADDR, { '/debug/cache': () => this.cache.redactedDump() }));
    if (this.servers.length > 0) this.log.info({ ports: this.ports, addresses }, 'endpoints listening');
  }

  /** Whether shutdown has begun. */
  get shuttingDown(): boolean {
    return this.stopping;
  }

  /** Waits `ms`; resolves false at once if the manager is shutting down (then: give up). */
  async sleep(ms: number): Promise<boolean> {
    try {
      await delay(ms, undefined, { signal: this.stopRequested.signal });
      return true;
    } catch {
      return false;
    }
  }

  /** Resolves when the manager has stopped (after shutdown, or a lost lease). */
  get stopped(): Promise<void> {
    return new Promise((resolve) => {
      if (this.done.signal.aborted) resolve();
      else this.done.signal.addEventListener('abort', () => resolve(), { once: true });
    });
  }

  /**
   * Graceful: stop taking work, finish in-flight reconciles (for up to
   * `graceMs`), release the lease, stop watching. Called again, it returns
   * the shutdown already under way.
   */
  shutdown(graceMs = 30_000): Promise<void> {
    this.shutdownDone ??= this.shutDownOnce(graceMs);
    return this.shutdownDone;
  }

  private async shutDownOnce(graceMs: number): Promise<void> {
    this.stopping = true;
    this.stopRequested.abort();
    this.shards?.stopTaking();
    this.log.info('shutting down: finishing in-flight reconciles');
    await Promise.all(this.controllers.map((c) => c.stop(graceMs)));
    await this.shards?.stop().catch((err: unknown) => this.log.warn({ err: String(err) }, 'leaving the shards failed'));
    await Promise.all(this.closers.map((fn) => fn().catch((err: unknown) => this.log.warn({ err: String(err) }, 'closing failed'))));
    if (this.elector?.isLeader()) await this.elector.release().catch(() => false);
    await this.liveness?.release();
    this.done.abort();
    await this.cache.stop();
    await Promise.all(this.servers.map(closeServer));
    this.log.info('shutdown complete');
  }

  private startControllers(): void {
    for (const c of this.controllers) c.start();
    this.leadingStarted();
  }

  private leadingStarted: () => void = () => undefined;
  /** Settles once this process runs its controllers (at once without leader election; else once it leads): work beside them waits for it. */
  readonly leading: Promise<void> = new Promise((resolve) => (this.leadingStarted = resolve));

  /** Without leader election, the operator's own Lease says that it is alive (with it, the leader Lease does). */
  private startLiveness(): void {
    const live = this.opts.liveness;
    if (this.opts.leaderElection || this.opts.shards || !live || this.liveness) return;
    this.liveness = new LivenessLease({ client: this.opts.client, identity: this.identity, watchNamespace: this.opts.namespace, logger: this.log, ...live });
    this.liveness.start();
  }

  private createElector(le: LeaderElectionOptions, presence: ShardPresence): LeaderElector {
    return new LeaderElector({
      client: this.opts.client,
      namespace: le.namespace,
      name: le.name,
      identity: this.identity,
      labels: operatorLeaseLabels(this.opts.namespace),
      leaseDurationMs: le.leaseDurationMs,
      renewDeadlineMs: le.renewDeadlineMs,
      retryPeriodMs: le.retryPeriodMs,
      logger: this.log,
      onStartedLeading: () => {
        this.metrics.leader.set(1);
        this.log.info({ identity: this.identity }, 'became leader: starting controllers');
        this.startControllers();
      },
      onStoppedLeading: (reason) => {
        this.metrics.leader.set(0);
        if (!this.stopping) void this.fatal(`stopped leading (${reason})`, undefined);
      },
      onNewLeader: (identity) => this.log.info({ leader: identity }, 'leader observed'),
      standAside: (fresh) => presence.standAside(fresh),
    });
  }

  /** Like controller-runtime: a lost lease or broken election ends the process's work. */
  private async fatal(message: string, err: unknown): Promise<void> {
    this.log.error({ err: err === undefined ? undefined : String(err) }, `${message}: stopping`);
    process.exitCode = 1;
    await this.shutdown(5_000);
  }
}
