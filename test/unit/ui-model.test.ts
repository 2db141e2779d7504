// The web view's pure parts: the layout (dependencies on the left) and the
// view made from cached syncs (states, cycles, clusters, the not-ready list).
import { describe, expect, test } from '@jest/globals';
import type { KubeObject } from '../../src/kube/resources.js';
import { layoutColumns } from '../../src/ui/layout.js';
import { buildView } from '../../src/ui/model.js';

interface Cond {
  status: 'True' | 'False' | 'Unknown';
  reason: string;
  message?: string;
  at?: string;
}

function sync(name: string, ready: Cond | undefined, spec: Record<string, unknown> = {}, kind = 'Sync', namespace = 'apps'): KubeObject {
  const conditions = ready ? [{ type: 'Ready', status: ready.status, reason: ready.reason, message: ready.message ?? '', lastTransitionTime: ready.at ?? '2030-01-01T00:00:00Z' }] : [];
  return { apiVersion: 'syncprims.dev/v1alpha1', kind, metadata: { name, namespace, generation: 1, resourceVersion: '7' }, spec, status: { observedGeneration: 1, lastAppliedRevision: 'r1', lastAttemptedRevision: 'r1', conditions } };
}

const READY: Cond = { status: 'True', reason: 'Succeeded' };

describe('layoutColumns', () => {
  test('a chain goes left to right, one column per link; a diamond joins in the deepest column', () => {
    const edges = [
      { from: 'c', to: 'b', cycle: false },
      { from: 'b', to: 'a', cycle: false },
      { from: 'd', to: 'a', cycle: false },
      { from: 'e', to: 'c', cycle: false },
      { from: 'e', to: 'd', cycle: false },
    ];
    const at = layoutColumns(['a', 'b', 'c', 'd', 'e'], edges);
    expect(Object.fromEntries([...at].map(([k, p]) => [k, [p.col, p.row]]))).toEqual({ a: [0, 0], b: [1, 0], c: [2, 0], d: [1, 1], e: [3, 0] });
  });

  test('the edges of a cycle are left out of the layering; a long chain does not overflow the stack', () => {
    const at = layoutColumns(['x', 'y', 'z'], [
      { from: 'x', to: 'y', cycle: true },
      { from: 'y', to: 'x', cycle: true },
      { from: 'z', to: 'x', cycle: false },
    ]);
    expect([at.get('x')!.col, at.get('y')!.col, at.get('z')!.col]).toEqual([0, 0, 1]);
    const keys = Array.from({ length: 20_000 }, (_, i) => `n${i}`);
    const chain = keys.slice(1).map((k, i) => ({ from: k, to: keys[i]!, cycle: false }));
    expect(layoutColumns(keys, chain).get('n19999')!.col).toBe(19_999);
  });
});

describe('buildView', () => {
  const objects = [
    sync('db', READY),
    sync('web', { status: 'False', reason: 'DependencyNotReady', message: 'waits', at: '2030-01-01T00:01:00Z' }, { dependsOn: [{ name: 'db' }, { name: 'cache' }] }),
    sync('cache', { status: 'Unknown', reason: 'Progressing' }, { suspend: true }),
    sync('a', { status: 'False', reason: 'DependencyCycle', at: '2029-12-31T00:00:00Z' }, { dependsOn: [{ name: 'b' }] }),
    sync('b', { status: 'False', reason: 'DependencyCycle' }, { dependsOn: [{ name: 'a' }] }),
    sync('lost', undefined, { dependsOn: [{ name: 'nowhere' }] }),
    sync('far', { status: 'False', reason: 'ClusterUnreachable', message: 'cluster x is unreachable: connect ECONNREFUSED (last reached 2030-01-01T00:00:00.000Z)' }, { kubeConfig: { secretRef: { name: 'edge-kc' } } }, 'RemoteSync'),
    sync('near', READY, { clusterRef: { name: 'edge-2' } }, 'ProxySync'),
    sync('other', READY, {}, 'Sync', 'ops'),
  ];
  const view = buildView(objects);

  test('one graph per namespace, nodes coloured by state: waiting on dependencies, suspended, failed, missing', () => {
    expect(view.namespaces.map((n) => n.namespace)).toEqual(['apps', 'ops']);
    const apps = view.namespaces[0]!;
    const state = Object.fromEntries(apps.nodes.map((n) => [n.label, n.state]));
    expect(state).toEqual({
      'Sync/a': 'failed',
      'Sync/b': 'failed',
      'Sync/cache': 'suspended',
      'Sync/db': 'ready',
      'Sync/lost': 'progressing',
      'Sync/nowhere': 'missing',
      'Sync/web': 'waiting',
      'RemoteSync/far': 'failed',
      'ProxySync/near': 'ready',
    });
    const web = apps.nodes.find((n) => n.name === 'web')!;
    expect(web.col).toBeGreaterThan(apps.nodes.find((n) => n.name === 'db')!.col);
    expect(apps.edges.filter((e) => e.from === 'Sync/apps/web').map((e) => [e.to, e.unmet ?? 'met'])).toEqual([
      ['Sync/apps/cache', 'Progressing'],
      ['Sync/apps/db', 'met'],
    ]);
    expect(apps.cycles).toEqual([['Sync/a', 'Sync/b', 'Sync/a']]);
    expect(apps.edges.filter((e) => e.cycle).length).toBe(2);
  });

  test('a dependency in a namespace the operator does not watch is unknown, not missing', () => {
    const v = buildView([sync('x', READY, { dependsOn: [{ name: 'y', namespace: 'elsewhere' }] }, 'Sync', 'mine')], 'mine');
    expect(v.namespaces[0]!.nodes.map((n) => [n.label, n.state])).toEqual([
      ['Sync/elsewhere/y', 'unknown'],
      ['Sync/x', 'ready'],
    ]);
  });

  test('clusters: reachability and when last reached, from what their syncs said', () => {
    expect(view.clusters).toEqual([
      {
        key: 'apps/edge-2',
        namespace: 'apps',
        name: 'edge-2',
        reachable: true,
        syncs: [{ key: 'ProxySync/apps/near', kind: 'ProxySync', name: 'near', state: 'ready' }],
      },
      {
        key: 'apps/edge-kc',
        namespace: 'apps',
        name: 'edge-kc',
        reachable: false,
        lastReached: '2030-01-01T00:00:00.000Z',
        since: '2030-01-01T00:00:00Z',
        message: 'cluster x is unreachable: connect ECONNREFUSED (last reached 2030-01-01T00:00:00.000Z)',
        syncs: [{ key: 'RemoteSync/apps/far', kind: 'RemoteSync', name: 'far', state: 'failed' }],
      },
    ]);
  });

  test("clusters: the operator's live reachability wins over what the syncs last said", () => {
    const live = (user: string) =>
      ({
        'RemoteSync/apps/far': { reachable: true, lastReached: '2031-01-01T00:00:00.000Z' },
        'ProxySync/apps/near': { reachable: false, lastReached: '2031-02-01T00:00:00.000Z', error: 'no answer from https://127.0.0.1:1: connect ECONNREFUSED' },
      })[user];
    const clusters = buildView(objects, undefined, live).clusters;
    expect(clusters.map(({ key, reachable, lastReached, message }) => ({ key, reachable, lastReached, message }))).toEqual([
      { key: 'apps/edge-2', reachable: false, lastReached: '2031-02-01T00:00:00.000Z', message: 'no answer from https://127.0.0.1:1: connect ECONNREFUSED' },
      { key: 'apps/edge-kc', reachable: true, lastReached: '2031-01-01T00:00:00.000Z', message: undefined },
    ]);
    // A cluster that never answered says so.
    const never = buildView(objects, undefined, (u) => (u === 'ProxySync/apps/near' ? { reachable: false, error: 'x' } : undefined)).clusters[0];
    expect(never?.lastReached).toBe('never');
    // A connection not asked anything yet is no word on the cluster: what the syncs said stands.
    const untried = buildView(objects, undefined, () => ({ reachable: true })).clusters;
    expect(untried.map((c) => c.reachable)).toEqual(buildView(objects).clusters.map((c) => c.reachable));
    expect(untried.find((c) => c.key === 'apps/edge-kc')?.reachable).toBe(false);
  });

  test('not ready: everything not Ready across namespaces, with the reason, oldest first', () => {
    expect(view.notReady.map((i) => [i.key, i.state, i.reason ?? '-'])).toEqual([
      ['Sync/apps/a', 'failed', 'DependencyCycle'],
      ['RemoteSync/apps/far', 'failed', 'ClusterUnreachable'],
      ['Sync/apps/b', 'failed', 'DependencyCycle'],
      ['Sync/apps/cache', 'suspended', 'Progressing'],
      ['Sync/apps/web', 'waiting', 'DependencyNotReady'],
      ['Sync/apps/lost', 'progressing', '-'],
    ]);
  });
});
