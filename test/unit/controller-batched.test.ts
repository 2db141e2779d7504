// Controller.enqueueBatched (runtime/controller.ts): news that only needs counting again (a
// FleetSync's child changed, say) is taken at once by an idle key, and a burst within `delayMs` of
// the key's last reconcile is one reconcile, at the end of that window, listing every cause.
import { afterEach, beforeEach, describe, expect, jest, test } from '@jest/globals';
import { pino } from 'pino';
import type { KubeClient } from '../../src/kube/client.js';
import type { KubeObject } from '../../src/kube/resources.js';
import { Controller } from '../../src/runtime/controller.js';
import { Informer } from '../../src/runtime/informer.js';
import { WorkQueue } from '../../src/runtime/workqueue.js';

const KEY = 'ns/fleet';
const WINDOW_MS = 1_000;

/** A controller over one object (an informer never started, its store filled by hand) and the causes of each reconcile, from its `reconciled` lines. */
function harness(): { controller: Controller; runs: string[][]; informer: Informer } {
  const informer = new Informer({ client: { name: 'unit' } as KubeClient, resource: { group: 'syncprims.dev', version: 'v1alpha1', resource: 'fleetsyncs', kind: 'FleetSync', namespaced: true } });
  informer.store.upsert({ apiVersion: 'syncprims.dev/v1alpha1', kind: 'FleetSync', metadata: { namespace: 'ns', name: 'fleet' } } as KubeObject);
  const runs: string[][] = [];
  const logger = pino({ level: 'debug' }, {
    write: (line: string) => {
      const l = JSON.parse(line) as { msg: string; causes?: string[] };
      if (l.msg === 'reconciled') runs.push(l.causes ?? []);
    },
  });
  const controller = new Controller({
    name: 'fleetsync',
    kind: 'FleetSync',
    informer,
    reconciler: { reconcile: async () => ({}) },
    concurrency: 1,
    logger,
    queue: new WorkQueue({ jitter: 0 }),
  });
  return { controller, runs, informer };
}

describe('Controller.enqueueBatched', () => {
  let h: ReturnType<typeof harness>;
  beforeEach(() => {
    jest.useFakeTimers();
    h = harness();
  });
  afterEach(async () => {
    await h.controller.stop(0).catch(() => undefined);
    h.controller.queue.shutDown();
    jest.useRealTimers();
  });

  /** Starts the workers and lets them take the key every object gets at start. */
  async function started(): Promise<void> {
    h.controller.start();
    await jest.advanceTimersByTimeAsync(0);
    expect(h.runs).toEqual([['start']]);
  }

  test('a key never batched before is reconciled at once', async () => {
    await started();
    h.controller.enqueueBatched(KEY, WINDOW_MS, 'child changed: a');
    await jest.advanceTimersByTimeAsync(0);
    expect(h.runs).toEqual([['start'], ['child changed: a']]);
  });

  test('a burst within the window of the last reconcile is one reconcile at its end, with every cause', async () => {
    await started();
    h.controller.enqueueBatched(KEY, WINDOW_MS, 'child changed: a');
    await jest.advanceTimersByTimeAsync(0);
    expect(h.runs).toHaveLength(2);
    for (const c of ['b', 'c', 'd']) {
      await jest.advanceTimersByTimeAsync(100);
      h.controller.enqueueBatched(KEY, WINDOW_MS, `child changed: ${c}`);
    }
    // 300 ms after that reconcile began: none more until its window has passed.
    await jest.advanceTimersByTimeAsync(WINDOW_MS - 300 - 1);
    expect(h.runs).toHaveLength(2);
    await jest.advanceTimersByTimeAsync(1);
    expect(h.runs.slice(1)).toEqual([['child changed: a'], ['child changed: b', 'child changed: c', 'child changed: d']]);
    // Idle past its window: the next news is taken at once.
    await jest.advanceTimersByTimeAsync(WINDOW_MS);
    h.controller.enqueueBatched(KEY, WINDOW_MS, 'child changed: e');
    await jest.advanceTimersByTimeAsync(0);
    expect(h.runs.slice(3)).toEqual([['child changed: e']]);
  });

  test('a plain enqueue is not held by the window; a deleted object is not batched any more', async () => {
    await started();
    h.controller.enqueueBatched(KEY, WINDOW_MS, 'child changed: a');
    await jest.advanceTimersByTimeAsync(0);
    h.controller.enqueue(KEY, 'updated FleetSync');
    await jest.advanceTimersByTimeAsync(0);
    expect(h.runs.slice(1)).toEqual([['child changed: a'], ['updated FleetSync']]);
    // Gone from the cache: its last start is forgotten once a reconcile has seen it gone, so news is taken at once.
    h.informer.store.delete(KEY);
    h.controller.enqueue(KEY, 'deleted FleetSync');
    await jest.advanceTimersByTimeAsync(0);
    h.controller.enqueueBatched(KEY, WINDOW_MS, 'child changed: b');
    await jest.advanceTimersByTimeAsync(0);
    expect(h.runs.slice(3)).toEqual([['deleted FleetSync'], ['child changed: b']]);
  });
});
