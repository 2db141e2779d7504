import { describe, expect, test } from '@jest/globals';
import { cycleThrough } from '../../src/deps/cycle.js';
import { DependencyGraph } from '../../src/deps/graph.js';
import { readinessFingerprint, unmetReason } from '../../src/deps/readiness.js';
import { dependenciesOf, displayNode, nodeKey, parseNodeKey } from '../../src/deps/refs.js';
import type { KubeObject } from '../../src/kube/resources.js';
import type { InformerEvent, InformerHandler } from '../../src/runtime/informer.js';
import { ObjectStore } from '../../src/runtime/store.js';
import type { SyncKind } from '../../src/api/kinds.js';

type Fields = Record<string, unknown>;

function ready(status: 'True' | 'False' | 'Unknown', reason = 'Succeeded', observedGeneration = 1): Fields {
  return { type: 'Ready', status, reason, message: '', observedGeneration, lastTransitionTime: '2026-01-01T00:00:00Z' };
}

function sync(name: string, opts: { dependsOn?: Fields[]; status?: Fields; generation?: number; kind?: SyncKind; meta?: Fields } = {}): KubeObject {
  return {
    apiVersion: 'syncprims.dev/v1alpha1',
    kind: opts.kind ?? 'Sync',
    metadata: { name, namespace: 'team-a', generation: opts.generation ?? 1, resourceVersion: '10', ...opts.meta },
    spec: { source: { inline: [] }, ...(opts.dependsOn ? { dependsOn: opts.dependsOn } : {}) },
    ...(opts.status ? { status: opts.status } : {}),
  };
}

const applied = (rev: string, cond = ready('True')): Fields => ({
  observedGeneration: 1,
  lastAttemptedRevision: rev,
  lastAppliedRevision: rev,
  conditions: [cond],
});

describe('dependenciesOf', () => {
  test('fills in kind, namespace and requiredStatus, skips nameless entries and drops duplicates', () => {
    const deps = dependenciesOf(
      sync('d', {
        dependsOn: [{ name: 'a' }, { kind: 'RemoteSync', name: 'b', requiredStatus: 'InProgress' }, { name: '' }, { name: 'a' }, { name: 'c', namespace: 'infra' }],
      }),
    );
    expect(deps).toEqual([
      { kind: 'Sync', name: 'a', namespace: 'team-a', requiredStatus: 'Current' },
      { kind: 'RemoteSync', name: 'b', namespace: 'team-a', requiredStatus: 'InProgress' },
      { kind: 'Sync', name: 'c', namespace: 'infra', requiredStatus: 'Current' },
    ]);
  });

  test('an object without dependsOn has none', () => {
    expect(dependenciesOf(sync('a'))).toEqual([]);
  });

  test('node keys round-trip, and display names show the namespace only when it differs', () => {
    const n = { kind: 'ProxySync' as const, namespace: 'infra', name: 'edge' };
    expect(parseNodeKey(nodeKey(n))).toEqual(n);
    expect(displayNode(n, 'infra')).toBe('ProxySync/edge');
    expect(displayNode(n, 'team-a')).toBe('ProxySync/infra/edge');
    expect(() => parseNodeKey('Deployment/a/b')).toThrow(/not a node key/);
  });
});

describe('unmetReason (API.md readiness rules)', () => {
  test('missing: NotFound', () => {
    expect(unmetReason(undefined, 'Current')).toBe('NotFound');
  });

  test('a generation not yet reconciled: NotObserved, even when Ready from before', () => {
    expect(unmetReason(sync('a', { generation: 2, status: applied('r1') }), 'Current')).toBe('NotObserved');
    expect(unmetReason(sync('a', { generation: 2, status: applied('r1') }), 'InProgress')).toBe('NotObserved');
    expect(unmetReason(sync('a'), 'Current')).toBe('NotObserved');
  });

  test('a Ready condition of an older generation: NotObserved', () => {
    const status = { ...applied('r1', ready('True', 'Succeeded', 1)), observedGeneration: 2 };
    expect(unmetReason(sync('a', { generation: 2, status }), 'Current')).toBe('NotObserved');
  });

  test('a new revision being applied: Progressing, its old Ready does not count', () => {
    const status = { ...applied('r1'), lastAttemptedRevision: 'r2' };
    expect(unmetReason(sync('a', { status }), 'Current')).toBe('Progressing');
    expect(unmetReason(sync('a', { status }), 'InProgress')).toBe('Progressing');
  });

  test('a new revision that failed to apply: NotReady', () => {
    const status = { ...applied('r1', ready('False', 'ApplyFailed')), lastAttemptedRevision: 'r2' };
    expect(unmetReason(sync('a', { status }), 'InProgress')).toBe('NotReady');
  });

  test('never applied: Progressing while trying, NotReady once failed or before any attempt', () => {
    expect(unmetReason(sync('a', { status: { observedGeneration: 1, lastAttemptedRevision: 'r1' } }), 'Current')).toBe('Progressing');
    expect(unmetReason(sync('a', { status: { observedGeneration: 1, conditions: [ready('False', 'SourceError')] } }), 'Current')).toBe('NotReady');
    expect(unmetReason(sync('a', { status: { observedGeneration: 1 } }), 'InProgress')).toBe('NotReady');
  });

  test('Current wants Ready=True; InProgress only the revision applied', () => {
    const waiting = applied('r1', ready('Unknown', 'Progressing'));
    expect(unmetReason(sync('a', { status: waiting }), 'Current')).toBe('Progressing');
    expect(unmetReason(sync('a', { status: waiting }), 'InProgress')).toBeUndefined();
    const unhealthy = applied('r1', ready('False', 'HealthCheckFailed'));
    expect(unmetReason(sync('a', { status: unhealthy }), 'Current')).toBe('NotReady');
    expect(unmetReason(sync('a', { status: unhealthy }), 'InProgress')).toBeUndefined();
    expect(unmetReason(sync('a', { status: applied('r1') }), 'Current')).toBeUndefined();
  });

  test('a suspended dependency is judged by its last status', () => {
    expect(unmetReason(sync('a', { status: applied('r1', ready('True', 'Suspended')) }), 'Current')).toBeUndefined();
    expect(unmetReason(sync('a', { status: applied('r1', ready('False', 'Suspended')) }), 'Current')).toBe('NotReady');
  });

  test('being deleted: NotReady', () => {
    expect(unmetReason(sync('a', { status: applied('r1'), meta: { deletionTimestamp: '2026-01-01T00:00:00Z' } }), 'Current')).toBe('NotReady');
  });

  test('the fingerprint ignores messages and summaries, and sees revisions, generations and Ready', () => {
    const a = sync('a', { status: applied('r1') });
    const sameButMessage = sync('a', { status: { ...applied('r1'), summary: { total: 3 } } });
    expect(readinessFingerprint(sameButMessage)).toBe(readinessFingerprint(a));
    expect(readinessFingerprint(sync('a', { status: { ...applied('r1'), lastAttemptedRevision: 'r2' } }))).not.toBe(readinessFingerprint(a));
    expect(readinessFingerprint(sync('a', { status: applied('r1', ready('False', 'ApplyFailed')) }))).not.toBe(readinessFingerprint(a));
    expect(readinessFingerprint(sync('a', { generation: 2, status: applied('r1') }))).not.toBe(readinessFingerprint(a));
  });
});

describe('cycleThrough', () => {
  const graph = (edges: Record<string, string[]>) => (n: string) => edges[n] ?? [];

  test('finds no cycle in a chain or a diamond', () => {
    expect(cycleThrough('d', graph({ d: ['b', 'c'], b: ['a'], c: ['a'] }))).toBeUndefined();
  });

  test('returns the whole path of a 2-cycle and a 3-cycle, starting and ending at the node', () => {
    expect(cycleThrough('a', graph({ a: ['b'], b: ['a'] }))).toEqual(['a', 'b', 'a']);
    expect(cycleThrough('b', graph({ a: ['b'], b: ['c'], c: ['a'] }))).toEqual(['b', 'c', 'a', 'b']);
  });

  test('a self-dependency is a cycle of one', () => {
    expect(cycleThrough('a', graph({ a: ['a'] }))).toEqual(['a', 'a']);
  });

  test('a node that only depends on a cycle is not on it', () => {
    expect(cycleThrough('x', graph({ x: ['a'], a: ['b'], b: ['a'] }))).toBeUndefined();
  });

  test('the shortest cycle through the node is reported', () => {
    expect(cycleThrough('a', graph({ a: ['b', 'c'], b: ['d'], d: ['a'], c: ['a'] }))).toEqual(['a', 'c', 'a']);
  });
});

/** The store and events of an informer, fed by hand (the graph's logic, without a cluster). */
class FakeInformer {
  readonly store = new ObjectStore<KubeObject>();
  private readonly handlers = new Set<InformerHandler<KubeObject>>();
  onEvent(h: InformerHandler<KubeObject>): () => void {
    this.handlers.add(h);
    return () => this.handlers.delete(h);
  }
  put(obj: KubeObject): void {
    const old = this.store.upsert(obj);
    this.emit(old ? { type: 'updated', object: obj, old } : { type: 'added', object: obj });
  }
  remove(obj: KubeObject): void {
    this.store.delete(`${obj.metadata.namespace}/${obj.metadata.name}`);
    this.emit({ type: 'deleted', object: obj });
  }
  private emit(e: InformerEvent<KubeObject>): void {
    for (const h of this.handlers) h(e);
  }
}

function fixture(opts: { allowCrossNamespaceRefs?: boolean; inFlight?: Set<string> } = {}) {
  const informers = { Sync: new FakeInformer(), RemoteSync: new FakeInformer(), ProxySync: new FakeInformer(), FleetSync: new FakeInformer() };
  const woken: string[] = [];
  const graph = new DependencyGraph({
    informers,
    wake: (kind, key) => woken.push(`${kind}/${key}`),
    inFlight: (kind, key) => opts.inFlight?.has(`${kind}/${key}`) ?? false,
    allowCrossNamespaceRefs: opts.allowCrossNamespaceRefs,
  });
  return { informers, woken, graph };
}

describe('DependencyGraph', () => {
  test('waits on unmet dependencies of any kind, with a reason each', () => {
    const { informers, graph } = fixture();
    informers.RemoteSync.put(sync('b', { kind: 'RemoteSync', status: applied('r1', ready('Unknown', 'Progressing')) }));
    const d = sync('d', { dependsOn: [{ name: 'a' }, { kind: 'RemoteSync', name: 'b' }] });
    informers.Sync.put(d);
    expect(graph.verdict('Sync', d)).toEqual({
      state: 'waiting',
      pending: [
        { kind: 'Sync', name: 'a', reason: 'NotFound' },
        { kind: 'RemoteSync', name: 'b', reason: 'Progressing' },
      ],
    });
  });

  test('another namespace is Forbidden unless allowed', () => {
    const ref = { dependsOn: [{ name: 'a', namespace: 'infra' }] };
    const other = { ...sync('a', { status: applied('r1') }), metadata: { name: 'a', namespace: 'infra', generation: 1 } };
    const closed = fixture();
    closed.informers.Sync.put(other);
    expect(closed.graph.verdict('Sync', sync('d', ref))).toEqual({
      state: 'waiting',
      pending: [{ kind: 'Sync', name: 'a', namespace: 'infra', reason: 'Forbidden' }],
    });
    const open = fixture({ allowCrossNamespaceRefs: true });
    open.informers.Sync.put(other);
    expect(open.graph.verdict('Sync', sync('d', ref))).toEqual({ state: 'met' });
  });

  test('a cycle across kinds is reported with its path on each member', () => {
    const { informers, graph } = fixture();
    const a = sync('a', { dependsOn: [{ kind: 'RemoteSync', name: 'b' }] });
    const b = sync('b', { kind: 'RemoteSync', dependsOn: [{ kind: 'ProxySync', name: 'c' }] });
    const c = sync('c', { kind: 'ProxySync', dependsOn: [{ name: 'a' }] });
    informers.Sync.put(a);
    informers.RemoteSync.put(b);
    informers.ProxySync.put(c);
    expect(graph.verdict('Sync', a)).toEqual({
      state: 'cycle',
      path: ['Sync/a', 'RemoteSync/b', 'ProxySync/c', 'Sync/a'],
      pending: [{ kind: 'RemoteSync', name: 'b', reason: 'Cycle' }],
    });
    expect(graph.verdict('ProxySync', c)).toMatchObject({ state: 'cycle', path: ['ProxySync/c', 'Sync/a', 'RemoteSync/b', 'ProxySync/c'] });
  });

  test('a readiness change wakes the dependents at once; a message-only change does not', () => {
    const { informers, woken } = fixture();
    informers.Sync.put(sync('b', { dependsOn: [{ name: 'a' }] }));
    informers.RemoteSync.put(sync('c', { kind: 'RemoteSync', dependsOn: [{ name: 'a' }] }));
    woken.length = 0;
    informers.Sync.put(sync('a', { status: applied('r1', ready('Unknown', 'Progressing')) }));
    expect(woken.sort()).toEqual(['RemoteSync/team-a/c', 'Sync/team-a/b']);
    woken.length = 0;
    informers.Sync.put(sync('a', { status: { ...applied('r1', ready('Unknown', 'Progressing')), summary: { total: 2 } } }));
    expect(woken).toEqual([]);
    informers.Sync.put(sync('a', { status: applied('r1') }));
    expect(woken.sort()).toEqual(['RemoteSync/team-a/c', 'Sync/team-a/b']);
  });

  test('a dependency change of the dependent re-indexes it', () => {
    const { informers, woken } = fixture();
    informers.Sync.put(sync('b', { dependsOn: [{ name: 'a' }] }));
    informers.Sync.put(sync('b', { dependsOn: [{ name: 'x' }], generation: 2 }));
    woken.length = 0;
    informers.Sync.put(sync('a', { status: applied('r1') }));
    expect(woken).toEqual([]);
    informers.Sync.put(sync('x', { status: applied('r1') }));
    expect(woken).toEqual(['Sync/team-a/b']);
  });

  test('a met dependency that is in flight defers, and its end of reconcile wakes the dependent', () => {
    const inFlight = new Set(['Sync/team-a/a']);
    const { informers, graph, woken } = fixture({ inFlight });
    informers.Sync.put(sync('a', { status: applied('r1') }));
    const b = sync('b', { dependsOn: [{ name: 'a' }] });
    informers.Sync.put(b);
    woken.length = 0;
    expect(graph.verdict('Sync', b)).toEqual({ state: 'deferred', on: ['Sync/a'], pending: [] });
    inFlight.clear();
    graph.reconciled('Sync', 'team-a/a');
    expect(woken).toEqual(['Sync/team-a/b']);
    expect(graph.verdict('Sync', b)).toEqual({ state: 'met' });
  });

  test('a dependent deferred itself counts as in flight for its own dependents, until it is woken or gone', () => {
    const inFlight = new Set(['Sync/team-a/a']);
    const { informers, graph, woken } = fixture({ inFlight });
    informers.Sync.put(sync('a', { status: applied('r1') }));
    const b = sync('b', { dependsOn: [{ name: 'a' }] });
    const c = sync('c', { dependsOn: [{ name: 'b' }] });
    informers.Sync.put(b);
    informers.Sync.put(c);
    expect(graph.verdict('Sync', b)).toMatchObject({ state: 'deferred', on: ['Sync/a'] });
    expect(graph.verdict('Sync', c)).toMatchObject({ state: 'deferred', on: ['Sync/b'] });
    woken.length = 0;
    inFlight.clear();
    graph.reconciled('Sync', 'team-a/a');
    expect(woken).toEqual(['Sync/team-a/b']);
    // b was woken: no longer deferring; c, which waits on b's status, now waits for real.
    expect(graph.verdict('Sync', c)).toEqual({ state: 'waiting', pending: [{ kind: 'Sync', name: 'b', reason: 'NotObserved' }] });
    // A deferred dependent that goes away does not keep its dependents deferred.
    inFlight.add('Sync/team-a/a');
    expect(graph.verdict('Sync', b)).toMatchObject({ state: 'deferred' });
    informers.Sync.remove(b);
    expect(graph.verdict('Sync', c)).toEqual({ state: 'waiting', pending: [{ kind: 'Sync', name: 'b', reason: 'NotFound' }] });
  });

  test('deferred dependents are not woken while their dependency is queued again', async () => {
    const inFlight = new Set(['Sync/team-a/a']);
    const { informers, graph, woken } = fixture({ inFlight });
    informers.Sync.put(sync('a', { status: applied('r1') }));
    const b = sync('b', { dependsOn: [{ name: 'a' }] });
    informers.Sync.put(b);
    woken.length = 0;
    expect(graph.verdict('Sync', b)).toMatchObject({ state: 'deferred' });
    graph.reconciled('Sync', 'team-a/a'); // ended, but queued again meanwhile
    expect(woken).toEqual([]);
    inFlight.clear();
    graph.reconciled('Sync', 'team-a/a');
    expect(woken).toEqual(['Sync/team-a/b']);
  });

  test('a readiness change seen mid-reconcile wakes the dependents once, when that reconcile ends', () => {
    const inFlight = new Set(['Sync/team-a/a']);
    const { informers, graph, woken } = fixture({ inFlight });
    informers.Sync.put(sync('b', { dependsOn: [{ name: 'a' }] }));
    informers.Sync.put(sync('c', { dependsOn: [{ name: 'a' }] }));
    informers.Sync.put(sync('a', { status: applied('r1', ready('Unknown', 'Progressing')) }));
    informers.Sync.put(sync('a', { status: applied('r1') }));
    expect(woken).toEqual([]);
    inFlight.clear();
    graph.reconciled('Sync', 'team-a/a');
    expect(woken.sort()).toEqual(['Sync/team-a/b', 'Sync/team-a/c']);
  });

  test('an unmet dependency that is in flight defers too (its status is about to change); one that is not makes it wait', () => {
    const inFlight = new Set(['Sync/team-a/a']);
    const { informers, graph } = fixture({ inFlight });
    informers.Sync.put(sync('a'));
    const b = sync('b', { dependsOn: [{ name: 'a' }] });
    expect(graph.verdict('Sync', b)).toEqual({ state: 'deferred', on: ['Sync/a'], pending: [{ kind: 'Sync', name: 'a', reason: 'NotObserved' }] });
    const c = sync('c', { dependsOn: [{ name: 'a' }, { name: 'missing' }] });
    expect(graph.verdict('Sync', c)).toEqual({
      state: 'waiting',
      pending: [
        { kind: 'Sync', name: 'a', reason: 'NotObserved' },
        { kind: 'Sync', name: 'missing', reason: 'NotFound' },
      ],
    });
  });

  test('a status write not yet in the cache counts as in flight until the cache catches up', async () => {
    const { informers, graph, woken } = fixture();
    informers.Sync.put(sync('a', { status: applied('r1') }));
    const b = sync('b', { dependsOn: [{ name: 'a' }] });
    informers.Sync.put(b);
    graph.noteWrite('Sync', sync('a', { meta: { resourceVersion: '12' } }));
    expect(graph.verdict('Sync', b)).toMatchObject({ state: 'deferred' });
    woken.length = 0;
    informers.Sync.put(sync('a', { status: applied('r1'), meta: { resourceVersion: '12' } }));
    await new Promise((r) => setImmediate(r));
    expect(woken).toEqual(['Sync/team-a/b']);
    expect(graph.verdict('Sync', b)).toEqual({ state: 'met' });
  });

  test('a dependent being deleted holds up its dependency; its deletion wakes the dependency', () => {
    const { informers, graph, woken } = fixture();
    const deleting = { deletionTimestamp: '2026-01-01T00:00:00Z', finalizers: ['syncprims.dev/finalizer'] };
    const a = sync('a', { status: applied('r1'), meta: deleting });
    informers.Sync.put(a);
    const b = sync('b', { dependsOn: [{ name: 'a' }], meta: deleting });
    informers.Sync.put(b);
    informers.Sync.put(sync('c', { dependsOn: [{ name: 'a' }] }));
    expect(graph.dependentsBeingDeleted('Sync', a)).toEqual([{ kind: 'Sync', namespace: 'team-a', name: 'b' }]);
    woken.length = 0;
    informers.Sync.remove(b);
    expect(woken).toContain('Sync/team-a/a');
    expect(graph.dependentsBeingDeleted('Sync', a)).toEqual([]);
  });
});
