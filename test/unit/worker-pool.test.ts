import { afterEach, describe, expect, jest, test } from '@jest/globals';
import { runWorkers } from '../../src/runtime/worker-pool.js';
import { WorkQueue } from '../../src/runtime/workqueue.js';

// A guard against hangs only (a broken queue tends to leave a get() waiting forever).
jest.setTimeout(10_000);

/** Lets pending promise callbacks run. */
const flush = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

async function until(what: string, check: () => boolean): Promise<void> {
  for (let i = 0; i < 1_000; i++) {
    if (check()) return;
    await flush();
  }
  throw new Error(`never happened: ${what}`);
}

/** A promise the test resolves by hand. */
function gate(): { promise: Promise<void>; open: () => void } {
  let open = (): void => {};
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { promise, open };
}

const queues: WorkQueue[] = [];
function newQueue(): WorkQueue {
  const q = new WorkQueue({ jitter: 0 });
  queues.push(q);
  return q;
}

afterEach(() => {
  for (const q of queues.splice(0)) q.shutDown();
});

describe('runWorkers', () => {
  test('runs at most `concurrency` handlers at once', async () => {
    const q = newQueue();
    const gates = new Map<string, ReturnType<typeof gate>>();
    const started: string[] = [];
    let running = 0;
    let maxRunning = 0;
    const keys = Array.from({ length: 10 }, (_, i) => `ns/k${i}`);
    for (const key of keys) {
      gates.set(key, gate());
      q.add(key);
    }
    const workers = runWorkers(q, 3, async (key) => {
      started.push(key);
      running++;
      maxRunning = Math.max(maxRunning, running);
      await gates.get(key)?.promise;
      running--;
    });
    await until('three handlers started', () => started.length === 3);
    await flush();
    expect(started).toEqual(keys.slice(0, 3));
    expect(q.len()).toBe(7);
    gates.get('ns/k1')?.open();
    await until('a fourth handler started', () => started.length === 4);
    await flush();
    expect(started.length).toBe(4);
    expect(running).toBe(3);
    for (const g of gates.values()) g.open();
    await until('all handled', () => started.length === 10 && running === 0);
    await q.shutDownWithDrain();
    await workers;
    expect(maxRunning).toBe(3);
    expect(started.sort()).toEqual([...keys].sort());
  });

  test('never runs the same key twice at once, and runs a re-added key again', async () => {
    const q = newQueue();
    const inFlight = new Set<string>();
    const runs = new Map<string, number>();
    let overlaps = 0;
    const workers = runWorkers(q, 4, async (key) => {
      if (inFlight.has(key)) overlaps++;
      inFlight.add(key);
      runs.set(key, (runs.get(key) ?? 0) + 1);
      // Changes arrive while the key is in flight: they collapse into one more run.
      if (key === 'hot' && (runs.get(key) ?? 0) < 5) {
        q.add('hot');
        q.add('hot');
      }
      await flush();
      await flush();
      inFlight.delete(key);
    });
    q.add('hot');
    q.add('cold');
    for (let i = 0; i < 20; i++) {
      q.add('hot');
      await flush();
    }
    await until('hot ran five times and went quiet', () => (runs.get('hot') ?? 0) >= 5 && inFlight.size === 0 && q.len() === 0);
    await q.shutDownWithDrain();
    await workers;
    expect(overlaps).toBe(0);
    expect(runs.get('cold')).toBe(1);
    expect(runs.get('hot')).toBeGreaterThanOrEqual(5);
    // no more runs than the 20 outside adds plus the 4 re-adds from inside could cause, plus the first
    expect(runs.get('hot')).toBeLessThanOrEqual(25);
  });

  test('reports handler errors, marks the key done and keeps working', async () => {
    const q = newQueue();
    const errors: Array<[string, string]> = [];
    const handled: string[] = [];
    const workers = runWorkers(
      q,
      2,
      async (key) => {
        handled.push(key);
        if (key === 'rejects') throw new Error('boom');
        if (key === 'throws-non-error') throw 'plain string';
      },
      undefined,
      { onError: (err, key) => errors.push([key, err instanceof Error ? err.message : String(err)]) },
    );
    q.add('rejects');
    q.add('throws-non-error');
    q.add('fine');
    await until('three handled', () => handled.length === 3);
    q.add('rejects');
    await until('failed key handled again', () => handled.length === 4);
    await q.shutDownWithDrain();
    await workers;
    expect(errors).toEqual([
      ['rejects', 'boom'],
      ['throws-non-error', 'plain string'],
      ['rejects', 'boom'],
    ]);
  });

  test('a throwing onError does not stop the workers', async () => {
    const q = newQueue();
    const handled: string[] = [];
    const original = console.error;
    const logged: unknown[] = [];
    console.error = (...args: unknown[]) => void logged.push(args);
    try {
      const workers = runWorkers(
        q,
        1,
        async (key) => {
          handled.push(key);
          throw new Error(`bad ${key}`);
        },
        undefined,
        {
          onError: () => {
            throw new Error('onError failed');
          },
        },
      );
      q.add('a');
      q.add('b');
      await until('both handled', () => handled.length === 2);
      q.shutDown();
      await workers;
    } finally {
      console.error = original;
    }
    expect(handled).toEqual(['a', 'b']);
    expect(logged.length).toBe(2);
  });

  test('an abort stops taking keys, lets in-flight work finish and leaves the queue running', async () => {
    const q = newQueue();
    const ac = new AbortController();
    const slow = gate();
    const handled: string[] = [];
    let sawSignal: AbortSignal | undefined;
    const workers = runWorkers(
      q,
      2,
      async (key, signal) => {
        sawSignal = signal;
        handled.push(key);
        await slow.promise;
      },
      ac.signal,
    );
    q.add('a');
    await until('a started', () => handled.length === 1);
    ac.abort();
    let stopped = false;
    void workers.then(() => (stopped = true));
    await flush();
    expect(stopped).toBe(false);
    slow.open();
    await workers;
    expect(sawSignal).toBe(ac.signal);
    expect(q.shuttingDown).toBe(false);
    q.add('b');
    expect(q.len()).toBe(1);
    expect(await q.get()).toBe('b');
    expect(handled).toEqual(['a']);
  });

  test('shutDown ends idle workers', async () => {
    const q = newQueue();
    // Counts the workers' calls to get(): each idle worker waits in one, and none asks again once told the queue is done.
    let gets = 0;
    const source = { get: (signal?: AbortSignal) => (gets++, q.get(signal)), done: (key: string) => q.done(key) };
    let handled = 0;
    let ended = false;
    void runWorkers(source, 3, async () => void handled++).then(() => (ended = true));
    await until('three workers waiting', () => gets === 3);
    await flush();
    expect(ended).toBe(false);
    q.shutDown();
    await until('the workers ended', () => ended);
    expect(gets).toBe(3);
    expect(handled).toBe(0);
  });

  test('rejects a concurrency that is not a positive integer', async () => {
    const q = newQueue();
    await expect(runWorkers(q, 0, async () => {})).rejects.toThrow(RangeError);
    await expect(runWorkers(q, 1.5, async () => {})).rejects.toThrow(RangeError);
  });
});
