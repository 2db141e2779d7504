/**
 * The controller work queue: a rate-limited, delaying, de-duplicating queue of
 * keys (`namespace/name`), after client-go's `workqueue` package.
 *
 * Level-triggered: a key is queued at most once; a key added while it is being
 * processed is marked dirty and queued again when `done(key)` is called, so a
 * key never runs twice at once and never misses a change.
 */
import {
  defaultControllerRateLimiter,
  type ControllerRateLimiterOptions,
  type RateLimiter,
} from './rate-limiter.js';

/**
 * Queue metrics, named after controller-runtime's: `workqueue_depth`,
 * `workqueue_adds_total`, `workqueue_queue_duration_seconds`,
 * `workqueue_work_duration_seconds`, `workqueue_retries_total`.
 */
export interface QueueMetrics {
  /** Gauge: keys queued and waiting for a worker. */
  depth(n: number): void;
  /** Counter: keys newly added (an add of a key already queued is not counted). */
  add(): void;
  /** Histogram: how long a key waited in the queue before a worker took it. */
  queueLatency(seconds: number): void;
  /** Histogram: how long a worker held a key (get to done). */
  workDuration(seconds: number): void;
  /** Counter: rate-limited re-adds. */
  retry(): void;
}

const noMetrics: QueueMetrics = {
  depth: () => {},
  add: () => {},
  queueLatency: () => {},
  workDuration: () => {},
  retry: () => {},
};

/** A time source: monotonic milliseconds and one-shot timers. */
export interface Clock {
  now(): number;
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

/** Real time (performance.now and the global timers, so jest fake timers apply). */
export const systemClock: Clock = {
  now: () => performance.now(),
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

export interface WorkQueueOptions extends ControllerRateLimiterOptions {
  clock?: Clock;
  metrics?: QueueMetrics;
  /** Replaces the default controller rate limiter (and its options). */
  rateLimiter?: RateLimiter;
}

/** Node timers overflow (and fire at once) beyond 2^31-1 ms. */
const MAX_TIMER_MS = 2 ** 31 - 1;

type QueueState = 'running' | 'draining' | 'stopped';

interface Getter {
  resolve(key: string | undefined): void;
}

export class WorkQueue {
  private readonly clock: Clock;
  private readonly metrics: QueueMetrics;
  private readonly limiter: RateLimiter;
  private readonly queue = new Fifo<string>();
  /** Keys that need processing: queued, or marked again while in flight. */
  private readonly dirty = new Set<string>();
  /** In-flight keys and when their worker took them. */
  private readonly processing = new Map<string, number>();
  /** When each dirty key was added, for the queue latency. */
  private readonly addedAt = new Map<string, number>();
  private readonly delayed: DelayedKeys;
  private readonly getters = new Fifo<Getter>();
  private state: QueueState = 'running';
  private drained: { promise: Promise<void>; resolve: () => void } | undefined;
  private readonly doneListeners: ((key: string) => void)[] = [];

  constructor(opts: WorkQueueOptions = {}) {
    this.clock = opts.clock ?? systemClock;
    this.metrics = opts.metrics ?? noMetrics;
    this.limiter = opts.rateLimiter ?? defaultControllerRateLimiter(opts, () => this.clock.now());
    this.delayed = new DelayedKeys(this.clock, (key) => this.add(key));
  }

  /** Queues `key` unless it is queued already; marks it dirty if it is in flight. */
  add(key: string): void {
    if (this.state !== 'running' || this.dirty.has(key)) return;
    this.dirty.add(key);
    this.addedAt.set(key, this.clock.now());
    this.metrics.add();
    if (this.processing.has(key)) return;
    this.queue.push(key);
    this.metrics.depth(this.queue.length);
    this.dispatch();
  }

  /** Adds `key` after `delayMs`; if it is already waiting, the earlier time wins. */
  addAfter(key: string, delayMs: number): void {
    if (this.state !== 'running') return;
    if (!(delayMs > 0)) {
      this.add(key);
      return;
    }
    this.delayed.schedule(key, this.clock.now() + delayMs);
  }

  /**
   * Adds `key` after its rate-limited backoff, or after `minDelayMs` if that is
   * longer (for a server's Retry-After).
   */
  addRateLimited(key: string, minDelayMs = 0): void {
    if (this.state !== 'running') return;
    this.metrics.retry();
    this.addAfter(key, Math.max(this.limiter.when(key), minDelayMs));
  }

  /** Resets the backoff of `key` (call it when `key` was processed successfully). */
  forget(key: string): void {
    this.limiter.forget(key);
  }

  numRequeues(key: string): number {
    return this.limiter.numRequeues(key);
  }

  /** Whether `key` is queued or in flight (delayed keys do not count). */
  has(key: string): boolean {
    return this.dirty.has(key) || this.processing.has(key);
  }

  /** Keys queued and waiting for a worker (not in flight, not delayed). */
  len(): number {
    return this.queue.length;
  }

  get shuttingDown(): boolean {
    return this.state !== 'running';
  }

  /**
   * The next key, once one is queued. Resolves undefined once the queue is shut
   * down (after a drain: once nothing is queued or in flight), or when `signal`
   * aborts; a key is never handed to a getter that was aborted.
   */
  get(signal?: AbortSignal): Promise<string | undefined> {
    if (signal?.aborted || this.finished()) return Promise.resolve(undefined);
    if (this.queue.length > 0) return Promise.resolve(this.take());
    return new Promise((resolve) => this.wait(resolve, signal));
  }

  /** Marks `key` processed; if it was added meanwhile, queues it again. */
  done(key: string): void {
    const startedAt = this.processing.get(key);
    if (startedAt === undefined) return;
    this.processing.delete(key);
    this.metrics.workDuration(this.secondsSince(startedAt));
    if (this.dirty.has(key)) {
      this.queue.push(key);
      this.metrics.depth(this.queue.length);
    }
    this.dispatch();
    for (const fn of this.doneListeners) fn(key);
  }

  /** Calls `fn` with each key marked done (queued again or not: see `has`). */
  onDone(fn: (key: string) => void): void {
    this.doneListeners.push(fn);
  }

  /**
   * Stops at once: queued and delayed keys are dropped, adds are ignored, and
   * every get() resolves undefined. In-flight keys may still be marked done.
   */
  shutDown(): void {
    if (this.state === 'stopped') return;
    this.state = 'stopped';
    this.delayed.stop();
    this.queue.clear();
    this.dirty.clear();
    this.addedAt.clear();
    this.metrics.depth(0);
    this.dispatch();
  }

  /**
   * Stops accepting adds (delayed keys are dropped), keeps handing out the keys
   * already queued, and resolves once nothing is queued or in flight. It needs
   * running workers; bound it with a timeout and call shutDown() to give up.
   */
  shutDownWithDrain(): Promise<void> {
    if (this.state === 'running') {
      this.state = 'draining';
      this.delayed.stop();
    }
    if (!this.drained) {
      let resolve = (): void => {};
      const promise = new Promise<void>((r) => (resolve = r));
      this.drained = { promise, resolve };
    }
    this.dispatch();
    return this.drained.promise;
  }

  /** Sum of the time in-flight keys have been held (controller-runtime's unfinished_work_seconds). */
  unfinishedWorkSeconds(): number {
    let total = 0;
    for (const startedAt of this.processing.values()) total += this.secondsSince(startedAt);
    return total;
  }

  /** How long the oldest in-flight key has been held (longest_running_processor_seconds). */
  longestRunningProcessorSeconds(): number {
    let oldest = 0;
    for (const startedAt of this.processing.values()) oldest = Math.max(oldest, this.secondsSince(startedAt));
    return oldest;
  }

  private finished(): boolean {
    if (this.state === 'stopped') return true;
    return this.state === 'draining' && this.queue.length === 0 && this.processing.size === 0;
  }

  /** Moves the head of the queue to in-flight. The queue must not be empty. */
  private take(): string {
    const key = this.queue.shift() as string;
    const now = this.clock.now();
    this.dirty.delete(key);
    this.processing.set(key, now);
    this.metrics.queueLatency(this.secondsSince(this.addedAt.get(key) ?? now));
    this.addedAt.delete(key);
    this.metrics.depth(this.queue.length);
    return key;
  }

  private wait(resolve: (key: string | undefined) => void, signal: AbortSignal | undefined): void {
    if (!signal) {
      this.getters.push({ resolve });
      return;
    }
    const getter: Getter = {
      resolve: (key) => {
        signal.removeEventListener('abort', onAbort);
        resolve(key);
      },
    };
    const onAbort = (): void => {
      this.getters.remove(getter);
      resolve(undefined);
    };
    signal.addEventListener('abort', onAbort, { once: true });
    this.getters.push(getter);
  }

  /** Hands queued keys to waiting getters; releases them all once finished. */
  private dispatch(): void {
    while (this.getters.length > 0 && this.queue.length > 0) {
      (this.getters.shift() as Getter).resolve(this.take());
    }
    if (!this.finished()) return;
    for (let g = this.getters.shift(); g; g = this.getters.shift()) g.resolve(undefined);
    if (this.processing.size === 0) this.drained?.resolve();
  }

  private secondsSince(ms: number): number {
    return Math.max(0, this.clock.now() - ms) / 1000;
  }
}

/** A FIFO with O(1) amortised shift. */
class Fifo<T> {
  private items: (T | undefined)[] = [];
  private head = 0;

  get length(): number {
    return this.items.length - this.head;
  }

  push(item: T): void {
    this.items.push(item);
  }

  shift(): T | undefined {
    if (this.head >= this.items.length) return undefined;
    const item = this.items[this.head];
    this.items[this.head++] = undefined;
    if (this.head > 1024 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    return item;
  }

  remove(item: T): void {
    const i = this.items.indexOf(item, this.head);
    if (i >= 0) this.items.splice(i, 1);
  }

  clear(): void {
    this.items = [];
    this.head = 0;
  }
}

interface DelayedEntry {
  key: string;
  at: number;
  seq: number;
}

/**
 * Keys waiting for a time, with one timer armed for the earliest. A key waits
 * once: scheduling it again keeps the earlier time. Superseded heap entries are
 * left in place and skipped when they surface.
 */
class DelayedKeys {
  private readonly readyAt = new Map<string, number>();
  private readonly heap = new MinHeap<DelayedEntry>((a, b) => a.at - b.at || a.seq - b.seq);
  private seq = 0;
  private timer: unknown;
  private timerAt = Infinity;

  constructor(
    private readonly clock: Clock,
    private readonly onReady: (key: string) => void,
  ) {}

  schedule(key: string, at: number): void {
    const current = this.readyAt.get(key);
    if (current !== undefined && current <= at) return;
    this.readyAt.set(key, at);
    this.heap.push({ key, at, seq: this.seq++ });
    this.arm();
  }

  stop(): void {
    this.disarm();
    this.readyAt.clear();
    this.heap.clear();
  }

  private readonly fire = (): void => {
    this.timer = undefined;
    this.timerAt = Infinity;
    const now = this.clock.now();
    for (let top = this.liveTop(); top && top.at <= now; top = this.liveTop()) {
      this.heap.pop();
      this.readyAt.delete(top.key);
      this.onReady(top.key);
    }
    this.arm();
  };

  /** The earliest entry that is still current, dropping superseded ones. */
  private liveTop(): DelayedEntry | undefined {
    let top = this.heap.peek();
    while (top && this.readyAt.get(top.key) !== top.at) {
      this.heap.pop();
      top = this.heap.peek();
    }
    return top;
  }

  private arm(): void {
    const top = this.liveTop();
    if (!top) return this.disarm();
    if (this.timer !== undefined && this.timerAt <= top.at) return;
    this.disarm();
    this.timerAt = top.at;
    const delay = Math.min(MAX_TIMER_MS, Math.max(0, top.at - this.clock.now()));
    this.timer = this.clock.setTimeout(this.fire, delay);
  }

  private disarm(): void {
    if (this.timer !== undefined) this.clock.clearTimeout(this.timer);
    this.timer = undefined;
    this.timerAt = Infinity;
  }
}

/** A binary min-heap. */
class MinHeap<T> {
  private readonly items: T[] = [];

  constructor(private readonly compare: (a: T, b: T) => number) {}

  peek(): T | undefined {
    return this.items[0];
  }

  push(item: T): void {
    this.items.push(item);
    let i = this.items.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (this.compare(this.at(i), this.at(parent)) >= 0) break;
      this.swap(i, parent);
      i = parent;
    }
  }

  pop(): T | undefined {
    const top = this.items[0];
    const last = this.items.pop();
    if (this.items.length > 0 && last !== undefined) {
      this.items[0] = last;
      this.siftDown(0);
    }
    return top;
  }

  clear(): void {
    this.items.length = 0;
  }

  private siftDown(i: number): void {
    const n = this.items.length;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let min = i;
      if (l < n && this.compare(this.at(l), this.at(min)) < 0) min = l;
      if (r < n && this.compare(this.at(r), this.at(min)) < 0) min = r;
      if (min === i) return;
      this.swap(i, min);
      i = min;
    }
  }

  private at(i: number): T {
    return this.items[i] as T;
  }

  private swap(i: number, j: number): void {
    const a = this.at(i);
    this.items[i] = this.at(j);
    this.items[j] = a;
  }
}
