import { afterEach, describe, expect, jest, test } from '@jest/globals';
import {
  defaultControllerRateLimiter,
  ExponentialBackoffRateLimiter,
  MaxOfRateLimiter,
  TokenBucketRateLimiter,
} from '../../src/runtime/rate-limiter.js';
import { WorkQueue, type Clock, type QueueMetrics, type WorkQueueOptions } from '../../src/runtime/workqueue.js';

/** A clock moved by hand; timers fire in time order as it advances. */
class ManualClock implements Clock {
  private t = 1_000;
  private nextId = 1;
  private readonly timers = new Map<number, { at: number; fn: () => void }>();

  now(): number {
    return this.t;
  }

  setTimeout(fn: () => void, ms: number): unknown {
    // Like Node: a delay beyond 2^31-1 ms overflows and fires after 1 ms.
    if (ms > 2 ** 31 - 1) ms = 1;
    const id = this.nextId++;
    this.timers.set(id, { at: this.t + ms, fn });
    return id;
  }

  clearTimeout(handle: unknown): void {
    this.timers.delete(handle as number);
  }

  get pendingTimers(): number {
    return this.timers.size;
  }

  advance(ms: number): void {
    const end = this.t + ms;
    for (;;) {
      const next = [...this.timers.entries()].filter(([, t]) => t.at <= end).sort(([, a], [, b]) => a.at - b.at)[0];
      if (!next) break;
      this.timers.delete(next[0]);
      this.t = Math.max(this.t, next[1].at);
      next[1].fn();
    }
    this.t = end;
  }
}

// A guard against hangs only (a broken queue tends to leave a get() waiting forever).
jest.setTimeout(10_000);

/** Lets pending promise callbacks run. */
const flush = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

async function isSettled(p: Promise<unknown>): Promise<boolean> {
  let settled = false;
  void p.then(() => (settled = true));
  await flush();
  return settled;
}

const queues: WorkQueue[] = [];
function newQueue(opts: WorkQueueOptions = {}): { q: WorkQueue; clock: ManualClock } {
  const clock = new ManualClock();
  const q = new WorkQueue({ clock, jitter: 0, ...opts });
  queues.push(q);
  return { q, clock };
}

afterEach(() => {
  for (const q of queues.splice(0)) q.shutDown();
});

/** The delay after which a rate-limited add of `key` becomes queued, found by stepping the clock. */
function observedDelay(q: WorkQueue, clock: ManualClock, key: string, minDelayMs?: number): number {
  const before = q.len();
  q.addRateLimited(key, minDelayMs);
  let waited = 0;
  while (q.len() === before) {
    clock.advance(1);
    waited++;
    if (waited > 1_000_000) throw new Error(`${key} never became ready`);
  }
  return waited;
}

describe('WorkQueue: level-triggered keys', () => {
  test('hands out keys in order and ignores adds of a queued key', async () => {
    const { q } = newQueue();
    q.add('ns/a');
    q.add('ns/b');
    q.add('ns/a');
    expect(q.len()).toBe(2);
    expect(await q.get()).toBe('ns/a');
    expect(await q.get()).toBe('ns/b');
    expect(q.len()).toBe(0);
  });

  test('a key added while in flight runs exactly once more, after done', async () => {
    const { q } = newQueue();
    q.add('a');
    expect(await q.get()).toBe('a');
    q.add('a');
    q.add('a');
    expect(q.len()).toBe(0);
    q.add('b');
    expect(await q.get()).toBe('b');
    q.done('b');
    q.done('a');
    expect(q.len()).toBe(1);
    expect(await q.get()).toBe('a');
    q.done('a');
    expect(q.len()).toBe(0);
  });

  test('a waiting get does not receive a key that is still in flight', async () => {
    const { q } = newQueue();
    q.add('a');
    await q.get();
    q.add('a');
    const next = q.get();
    expect(await isSettled(next)).toBe(false);
    q.done('a');
    expect(await next).toBe('a');
  });

  test('waiting gets are served first come, first served', async () => {
    const { q } = newQueue();
    const first = q.get();
    const second = q.get();
    q.add('x');
    q.add('y');
    expect(await first).toBe('x');
    expect(await second).toBe('y');
  });

  test('done of a key that is not in flight changes nothing', async () => {
    const { q } = newQueue();
    q.add('a');
    q.done('a');
    q.done('never');
    expect(q.len()).toBe(1);
    expect(await q.get()).toBe('a');
  });

  test('done listeners hear each key once it is done; has() says whether it was queued again', async () => {
    const { q } = newQueue();
    const heard: [string, boolean][] = [];
    q.onDone((key) => heard.push([key, q.has(key)]));
    q.add('a');
    q.add('b');
    const a = (await q.get())!;
    const b = (await q.get())!;
    expect(q.has(a)).toBe(true);
    q.add(b); // marked dirty while in flight
    q.done(a);
    q.done(b);
    q.done('never');
    expect(heard).toEqual([
      ['a', false],
      ['b', true],
    ]);
  });

  test('an aborted get resolves undefined and never swallows a key', async () => {
    const { q } = newQueue();
    const ac = new AbortController();
    const aborted = q.get(ac.signal);
    ac.abort();
    expect(await aborted).toBeUndefined();
    q.add('a');
    expect(q.len()).toBe(1);
    expect(await q.get(ac.signal)).toBeUndefined();
    expect(await q.get()).toBe('a');
  });
});

describe('WorkQueue: delays', () => {
  test('addAfter queues the key once its delay has passed', () => {
    const { q, clock } = newQueue();
    q.addAfter('a', 100);
    expect(q.len()).toBe(0);
    clock.advance(99);
    expect(q.len()).toBe(0);
    clock.advance(1);
    expect(q.len()).toBe(1);
    expect(clock.pendingTimers).toBe(0);
  });

  test('the earliest pending time wins', async () => {
    const { q, clock } = newQueue();
    q.addAfter('a', 500);
    q.addAfter('a', 100);
    q.addAfter('a', 300);
    clock.advance(100);
    expect(q.len()).toBe(1);
    expect(await q.get()).toBe('a');
    q.done('a');
    clock.advance(1_000);
    expect(q.len()).toBe(0);
  });

  test('delayed keys are released in time order', async () => {
    const { q, clock } = newQueue();
    q.addAfter('late', 30);
    q.addAfter('early', 10);
    q.addAfter('middle', 20);
    clock.advance(30);
    expect([await q.get(), await q.get(), await q.get()]).toEqual(['early', 'middle', 'late']);
  });

  test('a zero or negative delay adds at once', () => {
    const { q, clock } = newQueue();
    q.addAfter('a', 0);
    q.addAfter('b', -5);
    expect(q.len()).toBe(2);
    expect(clock.pendingTimers).toBe(0);
  });

  test('a delay beyond the timer range waits the whole time', () => {
    const { q, clock } = newQueue();
    const long = 2 ** 33;
    q.addAfter('a', long);
    clock.advance(2 ** 31);
    expect(q.len()).toBe(0);
    expect(clock.pendingTimers).toBe(1);
    clock.advance(long - 2 ** 31);
    expect(q.len()).toBe(1);
  });

  test('works with jest fake timers and the default clock', () => {
    jest.useFakeTimers();
    try {
      const q = new WorkQueue({ jitter: 0 });
      q.addAfter('a', 1_000);
      jest.advanceTimersByTime(999);
      expect(q.len()).toBe(0);
      jest.advanceTimersByTime(1);
      expect(q.len()).toBe(1);
      q.addAfter('b', 1_000);
      q.shutDown();
      expect(jest.getTimerCount()).toBe(0);
    } finally {
      jest.useRealTimers();
    }
  });
});

describe('WorkQueue: rate-limited adds', () => {
  /** Takes and finishes every queued key, so the next rate-limited add starts afresh. */
  async function processAll(q: WorkQueue): Promise<void> {
    while (q.len() > 0) q.done((await q.get()) as string);
  }

  test('backs off exponentially from 5 ms per key, up to the cap', async () => {
    const { q, clock } = newQueue({ maxDelayMs: 40 });
    const delays: number[] = [];
    for (let i = 0; i < 6; i++) {
      delays.push(observedDelay(q, clock, 'a'));
      await processAll(q);
    }
    expect(delays).toEqual([5, 10, 20, 40, 40, 40]);
    expect(q.numRequeues('a')).toBe(6);
    expect(q.numRequeues('other')).toBe(0);
  });

  test('forget resets the backoff of one key only', async () => {
    const { q, clock } = newQueue();
    for (const key of ['a', 'a', 'a', 'b']) q.addRateLimited(key);
    expect(q.numRequeues('a')).toBe(3);
    q.forget('a');
    expect(q.numRequeues('a')).toBe(0);
    expect(q.numRequeues('b')).toBe(1);
    clock.advance(1_000);
    await processAll(q);
    expect(observedDelay(q, clock, 'a')).toBe(5);
    expect(observedDelay(q, clock, 'b')).toBe(10);
  });

  test('a minimum delay (Retry-After) is honoured when longer than the backoff', async () => {
    const { q, clock } = newQueue();
    expect(observedDelay(q, clock, 'a', 3_000)).toBe(3_000);
    expect(q.numRequeues('a')).toBe(1);
    for (let i = 0; i < 4; i++) q.addRateLimited('b');
    clock.advance(1_000);
    await processAll(q);
    // the fifth backoff (80 ms) is longer than the 50 ms asked for
    expect(observedDelay(q, clock, 'b', 50)).toBe(80);
  });

  test('the overall token bucket limits many keys together', () => {
    const { q, clock } = newQueue({ qps: 10, burst: 2 });
    q.addRateLimited('a');
    q.addRateLimited('b');
    q.addRateLimited('c');
    clock.advance(5);
    expect(q.len()).toBe(2);
    clock.advance(94);
    expect(q.len()).toBe(2);
    clock.advance(1);
    expect(q.len()).toBe(3);
  });

  test('rejects options out of range', () => {
    expect(() => new WorkQueue({ qps: 0 })).toThrow(RangeError);
    expect(() => new WorkQueue({ burst: 0 })).toThrow(RangeError);
    expect(() => new WorkQueue({ jitter: 2 })).toThrow(RangeError);
    expect(() => new WorkQueue({ baseDelayMs: -1 })).toThrow(RangeError);
    expect(() => new WorkQueue({ baseDelayMs: 10, maxDelayMs: 5 })).toThrow(RangeError);
  });
});

describe('rate limiters', () => {
  test('jitter spreads the backoff within ±10%', () => {
    const low = new ExponentialBackoffRateLimiter({ random: () => 0 });
    const high = new ExponentialBackoffRateLimiter({ random: () => 0.999999 });
    const mid = new ExponentialBackoffRateLimiter({ random: () => 0.5 });
    expect(low.when('k')).toBeCloseTo(4.5, 9);
    expect(low.when('k')).toBeCloseTo(9, 9);
    expect(high.when('k')).toBeCloseTo(5.5, 3);
    expect(mid.when('k')).toBe(5);
  });

  test('jitter applies at the cap too, and real randomness varies', () => {
    const capped = new ExponentialBackoffRateLimiter({ maxDelayMs: 1_000, random: () => 0 });
    for (let i = 0; i < 20; i++) capped.when('k');
    expect(capped.when('k')).toBeCloseTo(900, 6);
    const random = new ExponentialBackoffRateLimiter({ baseDelayMs: 1_000 });
    const samples = Array.from({ length: 50 }, (_, i) => random.when(`k${i}`));
    for (const s of samples) {
      expect(s).toBeGreaterThanOrEqual(900);
      expect(s).toBeLessThanOrEqual(1_100);
    }
    expect(new Set(samples).size).toBeGreaterThan(1);
  });

  test('a huge retry count stays at the cap', () => {
    const limiter = new ExponentialBackoffRateLimiter({ jitter: 0 });
    let last = 0;
    for (let i = 0; i < 2_000; i++) last = limiter.when('k');
    expect(last).toBe(5 * 60_000);
  });

  test('the token bucket borrows against the future and refills at qps up to burst', () => {
    let now = 0;
    const bucket = new TokenBucketRateLimiter({ qps: 10, burst: 2, now: () => now });
    expect([0, 1, 2, 3].map(() => bucket.when('x'))).toEqual([0, 0, 100, 200]);
    now = 10_000;
    expect([0, 1, 2].map(() => bucket.when('x'))).toEqual([0, 0, 100]);
    expect(bucket.numRequeues('x')).toBe(0);
  });

  test('the default limiter is the max of per-key backoff and the bucket', () => {
    let now = 0;
    const limiter = defaultControllerRateLimiter({ qps: 1, burst: 1, jitter: 0 }, () => now);
    expect(limiter.when('a')).toBe(5);
    expect(limiter.when('b')).toBe(1_000);
    now = 5_000;
    expect(limiter.when('a')).toBe(10);
    expect(limiter.numRequeues('a')).toBe(2);
    limiter.forget('a');
    expect(limiter.numRequeues('a')).toBe(0);
    expect(() => new MaxOfRateLimiter()).toThrow(RangeError);
  });
});

describe('WorkQueue: metrics', () => {
  test('reports depth, adds, latencies and retries', async () => {
    const calls: string[] = [];
    const metrics: QueueMetrics = {
      depth: (n) => calls.push(`depth ${n}`),
      add: () => calls.push('add'),
      queueLatency: (s) => calls.push(`latency ${s}`),
      workDuration: (s) => calls.push(`work ${s}`),
      retry: () => calls.push('retry'),
    };
    const { q, clock } = newQueue({ metrics });
    q.add('a');
    q.add('a');
    clock.advance(2_000);
    const key = await q.get();
    clock.advance(3_000);
    expect(q.unfinishedWorkSeconds()).toBe(3);
    expect(q.longestRunningProcessorSeconds()).toBe(3);
    q.done(key as string);
    q.addRateLimited('a');
    expect(calls).toEqual(['add', 'depth 1', 'latency 2', 'depth 0', 'work 3', 'retry']);
    expect(q.unfinishedWorkSeconds()).toBe(0);
  });
});

describe('WorkQueue: shutting down', () => {
  test('shutDown releases waiting gets and clears its timers', async () => {
    const { q, clock } = newQueue();
    const first = q.get();
    const second = q.get();
    q.add('a');
    expect(await first).toBe('a');
    q.addAfter('c', 100);
    q.addRateLimited('d');
    expect(clock.pendingTimers).toBe(1);
    q.shutDown();
    expect(await second).toBeUndefined();
    expect(clock.pendingTimers).toBe(0);
    expect(q.shuttingDown).toBe(true);
    clock.advance(1_000);
    expect(q.len()).toBe(0);
  });

  test('shutDown drops queued keys and ignores later adds', async () => {
    const { q, clock } = newQueue();
    q.add('a');
    q.add('b');
    expect(await q.get()).toBe('a');
    q.add('a');
    q.shutDown();
    expect(q.len()).toBe(0);
    expect(await q.get()).toBeUndefined();
    q.add('e');
    q.addAfter('f', 10);
    q.addRateLimited('g');
    clock.advance(1_000);
    expect(q.len()).toBe(0);
    expect(clock.pendingTimers).toBe(0);
    q.done('a');
    expect(q.len()).toBe(0);
    expect(await q.get()).toBeUndefined();
  });

  test('shutDownWithDrain hands out queued keys and waits for in-flight ones', async () => {
    const { q, clock } = newQueue();
    q.add('inflight');
    expect(await q.get()).toBe('inflight');
    q.add('inflight');
    q.add('a');
    q.addAfter('delayed', 10);
    const drained = q.shutDownWithDrain();
    q.add('late');
    clock.advance(100);
    expect(clock.pendingTimers).toBe(0);
    expect(await q.get()).toBe('a');
    q.done('a');
    expect(await isSettled(drained)).toBe(false);
    const waiting = q.get();
    q.done('inflight');
    expect(await waiting).toBe('inflight');
    expect(await isSettled(drained)).toBe(false);
    const last = q.get();
    q.done('inflight');
    expect(await last).toBeUndefined();
    await drained;
    expect(await q.get()).toBeUndefined();
  });

  test('a drain with nothing in flight resolves at once; repeated calls share it', async () => {
    const { q } = newQueue();
    const drained = q.shutDownWithDrain();
    expect(q.shutDownWithDrain()).toBe(drained);
    await drained;
    expect(await q.get()).toBeUndefined();
  });

  test('shutDown during a drain drops the queue and resolves once in-flight keys are done', async () => {
    const { q } = newQueue();
    q.add('a');
    q.add('b');
    await q.get();
    const drained = q.shutDownWithDrain();
    q.shutDown();
    expect(q.len()).toBe(0);
    expect(await isSettled(drained)).toBe(false);
    q.done('a');
    await drained;
  });
});
