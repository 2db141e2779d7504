import { describe, expect, jest, test } from '@jest/globals';
import { Arrivals, CRDS, IDLE_WATCH_MS, NAMESPACES, REFUSED_WATCH_MS, servedKindsOf, type ArrivalKind, type ArrivalSource } from '../../src/apply/arrivals.js';
import { kindKey } from '../../src/apply/render.js';
import { ApiError } from '../../src/kube/errors.js';
import type { Owner } from '../../src/apply/engine.js';
import type { KubeObject } from '../../src/kube/resources.js';
import type { InformerSelector } from '../../src/runtime/cache.js';
import type { InformerEvent, InformerHandler } from '../../src/runtime/informer.js';
import { ObjectStore } from '../../src/runtime/store.js';

const crd = (established: boolean, versions: { name: string; served?: boolean }[] = [{ name: 'v1' }], kind = 'Gizmo', group = 'example.com'): KubeObject => ({
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: `gizmos.${group}`, resourceVersion: '1' },
  spec: { group, names: { kind, plural: 'gizmos' }, versions, scope: 'Namespaced' },
  status: { conditions: [{ type: 'NamesAccepted', status: 'True' }, ...(established ? [{ type: 'Established', status: 'True' }] : [])] },
});

/** An informer as the cache would give it: objects projected by the selector, events sent by hand. */
class FakeWatch implements ArrivalSource {
  readonly store = new ObjectStore<KubeObject>();
  private readonly handlers = new Set<InformerHandler<KubeObject>>();
  private project: (o: KubeObject) => KubeObject = (o) => o;
  started = 0;
  released = 0;
  /** The error starting the watch fails with, if any. */
  refuse: Error | undefined;

  async informer(_apiVersion: string, _kind: string, selector: InformerSelector) {
    this.started++;
    if (this.refuse) throw this.refuse;
    if (selector.project) this.project = selector.project.fn;
    return { store: this.store, onEvent: (h: InformerHandler<KubeObject>) => (this.handlers.add(h), () => this.handlers.delete(h)) };
  }

  async release() {
    this.released++;
  }

  /** Handlers listening (those of released watches unsubscribed). */
  get listening(): number {
    return this.handlers.size;
  }

  /** The object as stored before (if any) and now: an event to every handler. */
  send(obj: KubeObject): void {
    const projected = this.project(obj);
    const old = this.store.upsert(projected);
    const e: InformerEvent<KubeObject> = old ? { type: 'updated', object: projected, old } : { type: 'added', object: projected };
    for (const h of this.handlers) h(e);
  }
}

const owner = (name: string): Owner => ({ kind: 'Sync', namespace: 'ns', name });
const gizmo = kindKey({ apiVersion: 'example.com/v1', kind: 'Gizmo' });

function setup(what: ArrivalKind = CRDS) {
  const watch = new FakeWatch();
  const woken: string[] = [];
  const clock = { now: 0 };
  const arrivals = new Arrivals(watch, what, (o, cause) => woken.push(`${o.name}: ${cause}`), () => clock.now);
  return { watch, woken, arrivals, clock };
}

describe('servedKindsOf', () => {
  test('nothing until Established; then each served version', () => {
    expect(servedKindsOf(crd(false))).toEqual([]);
    expect(servedKindsOf(crd(true, [{ name: 'v1' }, { name: 'v1beta1', served: false }, { name: 'v2', served: true }]))).toEqual(['example.com/v1|Gizmo', 'example.com/v2|Gizmo']);
    expect(servedKindsOf({ apiVersion: 'v1', kind: 'ConfigMap', metadata: {} })).toEqual([]);
  });
});

describe('Arrivals of CRDs', () => {
  test('a waiting owner is woken once, when a CRD serving its kind becomes Established', async () => {
    const { watch, woken, arrivals } = setup();
    expect(await arrivals.await(owner('a'), [gizmo])).toBe(false);
    watch.send(crd(false));
    expect(woken).toEqual([]);
    watch.send(crd(true));
    expect(woken).toEqual(['a: CRD established: gizmos.example.com']);
    // Another update of the same CRD (still serving the kind) wakes nobody, nor would it had the owner waited again.
    watch.send({ ...crd(true), metadata: { name: 'gizmos.example.com', resourceVersion: '2' } });
    expect(woken).toHaveLength(1);
    expect(arrivals.waitedFor()).toEqual([]);
  });

  test('only owners of that group, version and kind are woken; a version not served wakes nobody', async () => {
    const { watch, woken, arrivals } = setup();
    await arrivals.await(owner('v2'), ['example.com/v2|Gizmo']);
    await arrivals.await(owner('other'), ['other.example.com/v1|Gizmo']);
    watch.send(crd(true, [{ name: 'v1' }, { name: 'v2', served: false }]));
    expect(woken).toEqual([]);
    watch.send(crd(true, [{ name: 'v1' }, { name: 'v2' }]));
    expect(woken).toEqual(['v2: CRD established: gizmos.example.com']);
    expect(arrivals.waitedFor()).toEqual(['other.example.com/v1|Gizmo']);
  });

  test('waiting again replaces what an owner waited for; none forgets it', async () => {
    const { watch, woken, arrivals } = setup();
    await arrivals.await(owner('a'), [gizmo]);
    await arrivals.await(owner('a'), ['example.com/v1|Widget']);
    await arrivals.await(owner('b'), [gizmo]);
    await arrivals.await(owner('b'), []);
    watch.send(crd(true));
    expect(woken).toEqual([]);
    watch.send(crd(true, [{ name: 'v1' }], 'Widget'));
    expect(woken).toEqual(['a: CRD established: gizmos.example.com']);
  });

  test('a kind already served says so (discovery lags): the caller tries again soon', async () => {
    const { watch, arrivals } = setup();
    await arrivals.await(owner('first'), ['x.example.com/v1|X']);
    watch.send(crd(true));
    expect(await arrivals.await(owner('late'), [gizmo])).toBe(true);
    expect(watch.started).toBe(1);
  });

  test('where the watch fails to start, owners keep their retry and it is tried again next time', async () => {
    const { watch, arrivals } = setup();
    watch.refuse = new Error('connection reset');
    expect(await arrivals.await(owner('a'), [gizmo])).toBe(false);
    watch.refuse = undefined;
    expect(await arrivals.await(owner('a'), [gizmo])).toBe(false);
    expect(watch.started).toBe(2);
  });

  test('where CRDs may not be listed (403), the watch is not asked for again until REFUSED_WATCH_MS have passed', async () => {
    const { watch, arrivals, clock } = setup();
    watch.refuse = new ApiError(403, 'Forbidden', 'customresourcedefinitions is forbidden');
    expect(await arrivals.await(owner('a'), [gizmo])).toBe(false);
    clock.now += REFUSED_WATCH_MS - 1;
    expect(await arrivals.await(owner('b'), [gizmo])).toBe(false);
    expect(watch.started).toBe(1);
    watch.refuse = undefined;
    clock.now += 1;
    expect(await arrivals.await(owner('b'), [gizmo])).toBe(false);
    expect(watch.started).toBe(2);
    expect(arrivals.watching).toBe(true);
  });

  test('a watch nobody waits on is released after IDLE_WATCH_MS; a wait meanwhile keeps it', async () => {
    jest.useFakeTimers();
    try {
      const { watch, woken, arrivals } = setup();
      await arrivals.await(owner('a'), [gizmo]);
      await arrivals.await(owner('a'), []);
      jest.advanceTimersByTime(IDLE_WATCH_MS - 1);
      await arrivals.await(owner('b'), [gizmo]);
      jest.advanceTimersByTime(IDLE_WATCH_MS);
      expect(watch.released).toBe(0);
      // b's wait ends when its CRD comes: nobody waits any more.
      watch.send(crd(true));
      expect(woken).toEqual(['b: CRD established: gizmos.example.com']);
      jest.advanceTimersByTime(IDLE_WATCH_MS);
      await Promise.resolve();
      expect(watch.released).toBe(1);
      expect(watch.listening).toBe(0);
      expect(arrivals.watching).toBe(false);
      // The next wait starts it again.
      await arrivals.await(owner('c'), ['example.com/v1|Widget']);
      expect(watch.started).toBe(2);
      expect(watch.listening).toBe(1);
    } finally {
      jest.useRealTimers();
    }
  });

  test('a release while owners wait does nothing', async () => {
    const { watch, arrivals } = setup();
    await arrivals.await(owner('a'), [gizmo]);
    await arrivals.release();
    expect(watch.released).toBe(0);
    expect(arrivals.watching).toBe(true);
  });

  test('the projection keeps only what it reads of a CRD', async () => {
    const { watch, arrivals } = setup();
    await arrivals.await(owner('a'), [gizmo]);
    watch.send(crd(true));
    expect(watch.store.list()).toEqual([
      { apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata: { name: 'gizmos.example.com', uid: undefined, resourceVersion: '1' }, served: ['example.com/v1|Gizmo'] },
    ]);
  });
});

describe('Arrivals of namespaces', () => {
  const namespace = (name: string, deleting = false): KubeObject => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name, ...(deleting ? { deletionTimestamp: '2026-11-27T00:00:00Z' } : {}) } });

  test('an owner waiting for a namespace is woken when it is created, not by one being deleted', async () => {
    const { watch, woken, arrivals } = setup(NAMESPACES);
    expect(await arrivals.await(owner('a'), ['team-a'])).toBe(false);
    watch.send(namespace('team-b'));
    watch.send(namespace('team-a', true));
    expect(woken).toEqual([]);
    watch.store.delete('team-a');
    watch.send(namespace('team-a'));
    expect(woken).toEqual(['a: namespace created: team-a']);
  });

  test('one that exists already says so: created while the apply failed', async () => {
    const { watch, arrivals } = setup(NAMESPACES);
    await arrivals.await(owner('a'), ['x']);
    watch.send(namespace('team-a'));
    expect(await arrivals.await(owner('b'), ['team-a'])).toBe(true);
  });
});
