import { NotLeadingError } from '../kube/client.js';
import { ApiError, TransportError } from '../kube/errors.js';
import type { KubeObject } from '../kube/resources.js';
import type { EventRecorder } from './events.js';
import type { Informer, InformerEvent } from './informer.js';
import { silentLogger, type Logger } from './logger.js';
import type { OperatorMetrics } from './metrics.js';
import { objectKey, splitKey } from './store.js';
import { runWorkers } from './worker-pool.js';
import { WorkQueue } from './workqueue.js';

/** What a reconcile asks of the loop: nothing, or to run again after a while. */
export interface ReconcileResult {
  requeueAfterMs?: number;
  /**
   * The attempt failed in a way a retry can fix (the server was overloaded or
   * erred), and said so in the status: run again after the key's backoff, at
   * least `minDelayMs` (a Retry-After). The backoff grows until a reconcile
   * succeeds.
   */
  retry?: { minDelayMs: number };
}

/** An error that retrying cannot fix (a bad spec): not retried until the object changes. */
export class TerminalError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'TerminalError';
  }
}

export interface Reconciler {
  /** Level-triggered: given a key (`namespace/name`), make the world match the object's spec. */
  reconcile(key: string, log: Logger): Promise<ReconcileResult | void>;
}

export interface ControllerOptions<T extends KubeObject> {
  /** `sync`, `remotesync` or `proxysync`: the label of its metrics and logs. */
  name: string;
  kind: string;
  informer: Informer<T>;
  reconciler: Reconciler;
  concurrency: number;
  metrics?: OperatorMetrics;
  logger?: Logger;
  /** Where a reconcile that failed in a way its status could not say is told, as a Warning Event on the object. */
  events?: EventRecorder;
  queue?: WorkQueue;
  /**
   * The controller's own finalizer: a change of the finalizer list needs a
   * reconcile only when it takes this one away (to put it back). Without it,
   * any change of the list does. Its addition (by the reconcile itself, whose
   * patch's echo lands while it runs) queues nothing.
   */
  finalizer?: string;
  /** Called after each reconcile of a key, whatever its outcome, once the queue has marked it done. */
  afterReconcile?: (key: string) => void;
  /** With --shards: only the objects whose shard key this replica holds are reconciled here, each within its key. */
  sharding?: WorkSharding;
}

/** How a controller shares its objects with other replicas (runtime/shards.ts). */
export interface WorkSharding {
  /** The shard key (shardKeyString) an object belongs to. */
  keyOf(obj: KubeObject): string;
  /** Whether this replica may work `key` now. */
  works(key: string): boolean;
  /** Runs a reconcile as work of `key` (its requests are fenced by the key's Lease). */
  within<R>(key: string, fn: () => Promise<R>): Promise<R>;
}

/**
 * One controller: events of its primary informer become keys in its queue;
 * `concurrency` workers reconcile them. Errors are retried with per-key
 * backoff (a 429's Retry-After at least), terminal errors are not.
 */
export class Controller<T extends KubeObject = KubeObject> {
  readonly queue: WorkQueue;
  private readonly log: Logger;
  private firstReconcile = true;
  private workers: Promise<void> | undefined;
  private readonly stopWorkers = new AbortController();
  /** Why each queued key was queued, since its last reconcile began (logged with it). */
  private readonly causes = new Map<string, Set<string>>();
  /** When each key that was ever enqueued batched last started a reconcile (ms). */
  private readonly lastStarted = new Map<string, number>();

  constructor(private readonly opts: ControllerOptions<T>) {
    this.queue = opts.queue ?? new WorkQueue({ metrics: opts.metrics?.queue(opts.name) });
    this.log = (opts.logger ?? silentLogger).child({ controller: opts.name });
    // Once the key is done, so it counts as pending only if it was queued again meanwhile.
    if (opts.afterReconcile) this.queue.onDone(opts.afterReconcile);
    opts.informer.onEvent((e) => {
      if (needsReconcile(e, opts.finalizer)) this.enqueue(objectKey(e.object), `${e.type} ${this.opts.kind}`);
    });
  }

  get name(): string {
    return this.opts.name;
  }

  /**
   * Reconcile this key soon (e.g. a watched dependency changed). `cause`
   * says why; the `reconciled` debug line lists the causes of each run (a
   * run with none was brought by a timer: a requeue or a retry).
   */
  enqueue(key: string, cause = 'enqueued'): void {
    if (this.queue.shuttingDown) return;
    let causes = this.causes.get(key);
    if (!causes) this.causes.set(key, (causes = new Set()));
    if (causes.size < 8) causes.add(cause);
    this.queue.add(key);
  }

  /**
   * Reconcile this key within `delayMs` (now when it is idle and was not
   * reconciled for that long: one change is seen at once, a burst is taken
   * together). For news that only needs counting again.
   */
  enqueueBatched(key: string, delayMs: number, cause = 'enqueued'): void {
    if (this.queue.shuttingDown) return;
    if (!this.lastStarted.has(key)) this.lastStarted.set(key, -Infinity);
    const wait = this.lastStarted.get(key)! + delayMs - Date.now();
    if (wait <= 0) {
      this.enqueue(key, cause);
      return;
    }
    let causes = this.causes.get(key);
    if (!causes) this.causes.set(key, (causes = new Set()));
    if (causes.size < 8) causes.add(cause);
    this.queue.addAfter(key, wait);
  }

  /** Whether `key` is queued or being reconciled. */
  isPending(key: string): boolean {
    return this.queue.has(key);
  }

  /** Starts the workers; every object already in the cache is queued once. */
  start(): void {
    if (this.workers) return;
    for (const key of this.opts.informer.store.keys()) this.enqueue(key, 'start');
    this.workers = runWorkers(this.queue, this.opts.concurrency, (key) => this.process(key), this.stopWorkers.signal, {
      onError: (err, key) => this.log.error({ err: String(err), key }, 'worker failed'),
    });
  }

  /** Stops taking work, lets in-flight reconciles finish (up to `graceMs`). */
  async stop(graceMs = 30_000): Promise<void> {
    this.stopWorkers.abort();
    this.queue.shutDown();
    if (!this.workers) return;
    const timeout = new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), graceMs).unref());
    if ((await Promise.race([this.workers.then(() => 'done' as const), timeout])) === 'timeout') {
      this.log.warn({ graceMs }, 'in-flight reconciles did not finish in time');
    }
  }

  private async process(key: string): Promise<void> {
    const shardKey = this.shardKeyOf(key);
    if (shardKey === null) {
      // Another replica's (or nobody's yet): dropped; taking its key queues it again here.
      this.causes.delete(key);
      this.queue.forget(key);
      return;
    }
    const { namespace, name } = splitKey(key);
    const log = this.log.child({ kind: this.opts.kind, namespace, name });
    if (this.firstReconcile) {
      this.firstReconcile = false;
      const cached = this.opts.informer.store.size;
      this.opts.metrics?.firstReconcileCacheObjects.set({ controller: this.name }, cached);
      log.info({ cached }, 'first reconcile: objects of this kind in the cache');
    }
    const causes = [...(this.causes.get(key) ?? ['requeue or retry'])];
    this.causes.delete(key);
    if (this.lastStarted.has(key)) this.lastStarted.set(key, Date.now());
    const end = this.opts.metrics?.reconcileTime.startTimer({ controller: this.name });
    const started = performance.now();
    try {
      const reconcile = () => this.opts.reconciler.reconcile(key, log);
      const result = shardKey === undefined ? await reconcile() : await this.opts.sharding!.within(shardKey, reconcile);
      if (result?.retry) {
        this.queue.addRateLimited(key, result.retry.minDelayMs);
        this.count('retry');
        log.debug({ ms: Math.round(performance.now() - started), retries: this.queue.numRequeues(key), causes }, 'reconciled; retrying with backoff');
        return;
      }
      this.queue.forget(key);
      if (result?.requeueAfterMs !== undefined) {
        this.queue.addAfter(key, result.requeueAfterMs);
        this.count('requeue_after');
      } else {
        this.count('success');
      }
      log.debug({ ms: Math.round(performance.now() - started), requeueAfterMs: result?.requeueAfterMs, causes }, 'reconciled');
    } catch (err) {
      this.handleError(key, err, log);
    } finally {
      end?.();
      // An object gone is not batched any more.
      if (!this.opts.informer.store.get(key)) this.lastStarted.delete(key);
    }
  }

  /** The shard key to reconcile `key` within; undefined: not sharded (or the object is gone); null: not this replica's now. */
  private shardKeyOf(key: string): string | undefined | null {
    const sharding = this.opts.sharding;
    const obj = sharding && this.opts.informer.store.get(key);
    if (!sharding || !obj) return undefined;
    const shardKey = sharding.keyOf(obj);
    return sharding.works(shardKey) ? shardKey : null;
  }

  private handleError(key: string, err: unknown, log: Logger): void {
    this.opts.metrics?.reconcileErrors.inc({ controller: this.name });
    this.count('error');
    const message = err instanceof Error ? err.message : String(err);
    if (err instanceof TerminalError) {
      this.queue.forget(key);
      log.error({ err: message }, 'reconcile failed; not retried until the object changes');
      this.tell(key, `reconcile failed: ${message}; not retried until the object changes`);
      return;
    }
    const retryAfterMs = err instanceof ApiError && err.retryAfterSeconds !== undefined ? err.retryAfterSeconds * 1000 : 0;
    this.queue.addRateLimited(key, retryAfterMs);
    const passing = err instanceof ApiError && (err.conflict || err.tooManyRequests);
    log[passing ? 'debug' : 'warn']({ err: message, retries: this.queue.numRequeues(key) }, 'reconcile failed; retrying');
    // A conflict or a 429 passes by itself; a cluster that does not answer (or a lost lease) would not take the Event either.
    if (!passing && !(err instanceof TransportError) && !(err instanceof NotLeadingError)) this.tell(key, `reconcile failed: ${message}; retried with backoff`);
  }

  /**
   * A Warning Event on the object: what failed before the status could say it
   * (its own write refused, say) is seen beside it, not only in the log. The
   * recorder sends the same message once per 10 minutes.
   */
  private tell(key: string, message: string): void {
    const obj = this.opts.informer.store.get(key);
    if (obj && this.opts.events) void this.opts.events.record(obj, 'Warning', 'ReconcileFailed', message);
  }

  private count(result: string): void {
    this.opts.metrics?.reconcileTotal.inc({ controller: this.name, result });
  }
}

/**
 * Spec, metadata and deletion changes need a reconcile; a change of status
 * alone (our own write, usually) does not, nor one of the finalizers that
 * leaves `finalizer` in place (see ControllerOptions.finalizer).
 */
export function needsReconcile(e: InformerEvent<KubeObject>, finalizer?: string): boolean {
  if (e.type !== 'updated' || !e.old) return true;
  const a = e.old.metadata;
  const b = e.object.metadata;
  return (
    a.generation !== b.generation ||
    a.deletionTimestamp !== b.deletionTimestamp ||
    JSON.stringify(a.annotations ?? {}) !== JSON.stringify(b.annotations ?? {}) ||
    JSON.stringify(a.labels ?? {}) !== JSON.stringify(b.labels ?? {}) ||
    finalizersNeedReconcile(a.finalizers ?? [], b.finalizers ?? [], finalizer)
  );
}

function finalizersNeedReconcile(before: string[], after: string[], finalizer: string | undefined): boolean {
  if (finalizer === undefined) return JSON.stringify(before) !== JSON.stringify(after);
  return before.includes(finalizer) && !after.includes(finalizer);
}
