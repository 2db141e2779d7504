// FleetSync in the views' pure parts: its row in `syncprims get`, its tree,
// its node in the graph (its children counted on it, not drawn), the doctor's
// finding, and the web view's list of FleetSyncs.
import { describe, expect, test } from '@jest/globals';
import type { KubeObject } from '../../src/kube/resources.js';
import { nodeKey, type SyncNode } from '../../src/deps/refs.js';
import { rowCells, tableHeader } from '../../src/cli/get/sync-table.js';
import { renderForest, renderTree } from '../../src/cli/tree/tree-render.js';
import { toMermaid } from '../../src/cli/graph/graph-render.js';
import { fleetFindings } from '../../src/cli/doctor/doctor-fleet.js';
import { missingDependencies, unreachableClusters } from '../../src/cli/doctor/doctor-findings.js';
import { PLAIN } from '../../src/cli/terminal.js';
import { parseKindName } from '../../src/cli/kind-name.js';
import { graphModel } from '../../src/views/graph-model.js';
import type { NodeLookup } from '../../src/views/graph-read.js';
import { SyncSet } from '../../src/views/sync-set.js';
import { compareRows, syncRow } from '../../src/views/sync-rows.js';
import type { Forest, Tree } from '../../src/views/tree-model.js';
import { buildView } from '../../src/ui/model.js';

const NS = 'apps';
const NOW = Date.parse('2030-01-02T00:00:00Z');
const REV = '0123456789abcdef';

type Ready = 'True' | 'False' | 'Unknown';

function obj(kind: string, name: string, ready: Ready, extra: { spec?: Record<string, unknown>; status?: Record<string, unknown>; labels?: Record<string, string>; reason?: string; message?: string } = {}): KubeObject {
  const condition = { type: 'Ready', status: ready, reason: extra.reason ?? (ready === 'True' ? 'Succeeded' : 'Progressing'), message: extra.message ?? '', lastTransitionTime: '2030-01-01T00:00:00Z' };
  return {
    apiVersion: 'syncprims.dev/v1alpha1',
    kind,
    metadata: { name, namespace: NS, generation: 1, creationTimestamp: '2030-01-01T00:00:00Z', ...(extra.labels ? { labels: extra.labels } : {}) },
    spec: extra.spec ?? {},
    status: { observedGeneration: 1, conditions: [condition], ...extra.status },
  };
}

/** A child as the FleetSync controller labels it. */
function child(kind: 'ProxySync' | 'RemoteSync', fleet: string, cluster: string, ready: Ready, dependsOn: Record<string, unknown>[] = [], reason?: string): KubeObject {
  const labels = { 'syncprims.dev/fleetsync': fleet, 'syncprims.dev/cluster': cluster };
  return obj(kind, `${fleet}-${cluster}`, ready, { labels, spec: { clusterRef: { name: cluster }, dependsOn }, reason });
}

const install = obj('FleetSync', 'install', 'True', {
  spec: { kind: 'RemoteSync' },
  status: { phase: 'Complete', currentRevision: REV, updateRevision: REV, clusters: { selected: 2, updated: 2, ready: 2, failed: 0, unreachable: 0, progressing: 0 }, readyClusters: '2/2' },
});
const baseline = obj('FleetSync', 'baseline', 'False', {
  spec: { dependsOn: [{ kind: 'FleetSync', name: 'install' }] },
  reason: 'ClustersFailing',
  message: '1/2 clusters Ready; 1 failing: edge-2 (ApplyFailed)',
  status: {
    phase: 'Progressing',
    updateRevision: 'fedcba9876543210',
    clusters: { selected: 2, updated: 2, ready: 1, failed: 1, unreachable: 0, progressing: 0 },
    readyClusters: '1/2',
    failures: [{ cluster: 'edge-2', reason: 'ApplyFailed', message: 'cannot write ProxySync apps/baseline-edge-2:\nforbidden' }],
  },
});
const objects = [
  obj('Sync', 'app', 'Unknown', { spec: { dependsOn: [{ kind: 'FleetSync', name: 'baseline' }] } }),
  baseline,
  install,
  child('RemoteSync', 'install', 'edge-1', 'True'),
  child('RemoteSync', 'install', 'edge-2', 'True'),
  child('ProxySync', 'baseline', 'edge-1', 'True', [{ kind: 'RemoteSync', name: 'install-edge-1' }]),
  child('ProxySync', 'baseline', 'edge-2', 'False', [{ kind: 'RemoteSync', name: 'install-edge-2' }], 'ApplyFailed'),
];

function modelOf(list: KubeObject[]) {
  const set = new SyncSet(list);
  const lookup = (n: SyncNode): NodeLookup => {
    const o = set.get(n);
    return o ? { found: true, object: o } : { found: false, missing: true };
  };
  return graphModel({ objects: set.objects, edges: set.edges, cycles: set.cycles, namespace: NS, lookup });
}

describe('get: a FleetSync row', () => {
  test('its phase where a sync has its reason (with the reason when not Ready), its clusters ready/selected where a sync has its cluster', () => {
    const shape = { allNamespaces: false, style: PLAIN, now: NOW };
    expect(rowCells(syncRow(baseline), shape)).toEqual(['FleetSync', 'baseline', 'False', 'Progressing (ClustersFailing)', '-', '1/2 ready', '-', '24h']);
    expect(rowCells(syncRow(install), shape)).toEqual(['FleetSync', 'install', 'True', 'Complete', REV, '2/2 ready', '-', '24h']);
  });

  test('-o wide: the revision rolled out and the Ready message too', () => {
    expect(tableHeader({ allNamespaces: false, wide: true }).slice(-3)).toEqual(['AGE', 'TARGET-REVISION', 'MESSAGE']);
    const cells = rowCells(syncRow(baseline), { allNamespaces: false, wide: true, style: PLAIN, now: NOW });
    expect(cells.slice(-2)).toEqual(['fedcba9876543210', '1/2 clusters Ready; 1 failing: edge-2 (ApplyFailed)']);
  });

  test('FleetSyncs sort after the other kinds; fsy names the kind', () => {
    const sorted = [...objects].reverse().map(syncRow).sort(compareRows);
    expect(sorted.map((r) => r.kind).join()).toBe('Sync,RemoteSync,RemoteSync,ProxySync,ProxySync,FleetSync,FleetSync');
    expect(sorted.slice(-2).map((r) => r.name)).toEqual(['baseline', 'install']);
    expect(parseKindName('fsy/baseline')).toEqual({ kind: 'FleetSync', name: 'baseline' });
    expect(parseKindName('fleetsyncs')).toEqual({ kind: 'FleetSync' });
    expect(() => parseKindName('fsy/baseline', ['Sync', 'RemoteSync', 'ProxySync'])).toThrow('"fsy/baseline": a FleetSync cannot be used here');
  });
});

describe('graph: a FleetSync and its children', () => {
  test('children are counted on their FleetSync, not drawn; FleetSync edges are marked per cluster; child edges are not repeated', () => {
    const model = modelOf(objects);
    expect(model.nodes).toEqual([
      { key: 'Sync/apps/app', label: 'Sync/app', state: 'progressing' },
      { key: 'FleetSync/apps/baseline', label: 'FleetSync/baseline', state: 'failed', members: { total: 2, ready: 1, failed: 1, progressing: 0 } },
      { key: 'FleetSync/apps/install', label: 'FleetSync/install', state: 'ready', members: { total: 2, ready: 2, failed: 0, progressing: 0 } },
    ]);
    expect(model.edges).toEqual([
      { from: 'Sync/apps/app', to: 'FleetSync/apps/baseline', cycle: false },
      { from: 'FleetSync/apps/baseline', to: 'FleetSync/apps/install', label: 'per cluster', cycle: false },
    ]);
    expect(toMermaid(model)).toContain('["FleetSync/baseline (2 clusters: 1 ready, 1 failed)"]:::failed');
  });

  test('a cycle between two FleetSyncs is said once, though each cluster has its own between their children', () => {
    const a = obj('FleetSync', 'a', 'Unknown', { spec: { dependsOn: [{ kind: 'FleetSync', name: 'b' }] } });
    const b = obj('FleetSync', 'b', 'Unknown', { spec: { dependsOn: [{ kind: 'FleetSync', name: 'a' }] } });
    const kids = ['edge-1', 'edge-2'].flatMap((c) => [
      child('ProxySync', 'a', c, 'Unknown', [{ kind: 'ProxySync', name: `b-${c}` }]),
      child('ProxySync', 'b', c, 'Unknown', [{ kind: 'ProxySync', name: `a-${c}` }]),
    ]);
    const model = modelOf([a, b, ...kids]);
    expect(model.cycles).toEqual([['FleetSync/a', 'FleetSync/b', 'FleetSync/a']]);
    expect(model.nodes.map((n) => n.key)).toEqual(['FleetSync/apps/a', 'FleetSync/apps/b']);
    expect(model.edges.every((e) => e.cycle)).toBe(true);
  });
});

describe('tree: a FleetSync', () => {
  const childTree = (cluster: string, ready: Ready, reason: string) => ({
    clusterName: cluster,
    fleetRevision: REV,
    sync: {
      kind: 'ProxySync' as const,
      namespace: NS,
      name: `baseline-${cluster}`,
      ready,
      reason,
      cluster: { server: 'https://127.0.0.1:6442', kubeconfig: `Secret apps/${cluster}-kubeconfig key value` },
      objects: [{ apiVersion: 'syncprims.dev/v1alpha1', kind: 'Sync', namespace: NS, name: 'baseline', status: 'Current' as const, message: '' }],
    },
  });
  const tree: Tree = {
    kind: 'FleetSync',
    namespace: NS,
    name: 'baseline',
    server: 'https://127.0.0.1:6441',
    ready: 'True',
    reason: 'Succeeded',
    phase: 'Complete',
    clusters: '2/2',
    revision: REV,
    dependsOn: [{ kind: 'FleetSync', namespace: NS, name: 'install', requiredStatus: 'Current', ready: 'True', reason: 'Succeeded' }],
    dependents: [],
    children: [childTree('edge-1', 'True', 'Succeeded'), childTree('edge-2', 'True', 'Succeeded')],
  };

  test('its state and clusters, then one node per cluster: the child and what it has in its cluster', () => {
    expect(renderTree(tree, PLAIN)).toEqual([
      `FleetSync/apps/baseline  Ready=True  Succeeded  Complete  2/2 clusters ready  ${REV}`,
      '├── depends on',
      '│   └── FleetSync/install  Ready=True  Succeeded',
      '└── clusters (2)',
      '    ├── edge-1  ProxySync/baseline-edge-1  Ready=True  Succeeded',
      '    │   └── applied in cluster https://127.0.0.1:6442 (Secret apps/edge-1-kubeconfig key value)',
      '    │       └── Sync/apps/baseline  Current',
      '    └── edge-2  ProxySync/baseline-edge-2  Ready=True  Succeeded',
      '        └── applied in cluster https://127.0.0.1:6442 (Secret apps/edge-2-kubeconfig key value)',
      '            └── Sync/apps/baseline  Current',
    ]);
  });

  test('with no name: each root once, a FleetSync with its children under it', () => {
    const forest: Forest = {
      server: 'https://127.0.0.1:6441',
      namespace: NS,
      roots: [
        { kind: 'Sync', namespace: NS, name: 'app', ready: 'True', reason: 'Succeeded', objects: [] },
        { kind: 'FleetSync', namespace: NS, name: 'baseline', ready: 'True', reason: 'Succeeded', phase: 'Complete', clusters: '1/1', children: [{ clusterName: 'edge-1', sync: { kind: 'RemoteSync', namespace: NS, name: 'baseline-edge-1', ready: 'True', reason: 'Succeeded', notFollowed: 'shown above' } }] },
      ],
    };
    expect(renderForest(forest, PLAIN)).toEqual([
      'Sync/apps/app  Ready=True  Succeeded',
      '└── applied: no objects',
      'FleetSync/apps/baseline  Ready=True  Succeeded  Complete  1/1 clusters ready',
      '└── clusters (1)',
      '    └── edge-1  RemoteSync/baseline-edge-1  Ready=True  Succeeded',
      '        └── not followed: shown above',
    ]);
    expect(renderForest({ ...forest, roots: [] }, PLAIN)).toEqual(['no syncs in namespace apps']);
  });
});

describe('doctor: a FleetSync that is not Ready', () => {
  test('one finding naming its failing clusters from status.failures, and where to look', () => {
    expect(fleetFindings(objects)).toEqual([
      {
        problem: 'FleetSyncNotReady',
        severity: 'error',
        namespace: NS,
        object: 'FleetSync/baseline',
        message: '1/2 clusters Ready; failing: edge-2 (ApplyFailed: cannot write ProxySync apps/baseline-edge-2: forbidden)',
        action: "fix what each failing cluster's child says (syncprims tree fleetsync/baseline -n apps shows them and what they applied); the FleetSync follows its children",
        since: '2030-01-01T00:00:00Z',
      },
    ]);
  });

  test('more failing clusters than it names are counted; unreachable ones said; a suspended one is told to resume', () => {
    const failures = ['a', 'b', 'c', 'd', 'e', 'f', 'g'].map((cluster) => ({ cluster, reason: 'HealthCheckFailed', message: 'x' }));
    const many = obj('FleetSync', 'many', 'False', { reason: 'ClustersFailing', status: { failures, clusters: { selected: 9, updated: 9, ready: 0, failed: 7, unreachable: 2, progressing: 0 } } });
    const [finding] = fleetFindings([many]);
    expect(finding?.message).toBe('0/9 clusters Ready; failing: a (HealthCheckFailed: x), b (HealthCheckFailed: x), c (HealthCheckFailed: x), d (HealthCheckFailed: x), e (HealthCheckFailed: x), and 2 more; 2 unreachable');
    const held = obj('FleetSync', 'held', 'False', { reason: 'Suspended', message: 'suspended' });
    expect(fleetFindings([held])[0]?.action).toContain('syncprims resume fleetsync/held -n apps');
    expect(fleetFindings([install, obj('FleetSync', 'going', 'Unknown')])).toEqual([]);
  });

  test('a FleetSync with unreachable clusters is not also a ClusterUnreachable finding of its own (its children are)', () => {
    const away = obj('FleetSync', 'away', 'False', { reason: 'ClusterUnreachable', message: '0/1 clusters Ready; unreachable: edge-9' });
    expect(unreachableClusters([away], NOW)).toEqual([]);
    expect(fleetFindings([away])[0]?.action).toContain('syncprims get clusters -n apps');
  });
});

describe('doctor: a missing dependency of a FleetSync child', () => {
  test("points at the FleetSyncs' dependsOn and cluster selection, not at the child's own dependsOn", () => {
    const lone = child('ProxySync', 'baseline', 'edge-3', 'False', [{ kind: 'RemoteSync', name: 'install-edge-3' }]);
    const plain = obj('Sync', 'web', 'False', { spec: { dependsOn: [{ name: 'gone' }] } });
    const set = new SyncSet([baseline, lone, plain]);
    const lookup = (n: SyncNode): NodeLookup => {
      const o = set.get(n);
      return o ? { found: true, object: o } : { found: false, missing: true };
    };
    const byObject = new Map(missingDependencies(set.edges, lookup).map((f) => [f.object, f]));
    expect(byObject.get('ProxySync/baseline-edge-3')?.action).toBe(
      "it is FleetSync/baseline's child for cluster edge-3, which waits for the same cluster's child of each FleetSync it depends on: select cluster edge-3 in that FleetSync's spec.clusters, or remove the entry from FleetSync/baseline's dependsOn",
    );
    expect(byObject.get('Sync/web')?.action).toBe('create Sync/gone, or remove it from the dependsOn of Sync/web');
  });
});

describe('web view: FleetSyncs', () => {
  test('listed with their counts, failures and children (selectable); the graph counts the children on the FleetSync', () => {
    const view = buildView(objects);
    expect(view.fleets.map((f) => [f.key, f.state, f.phase, f.readyClusters, f.failures.map((x) => x.cluster)])).toEqual([
      ['FleetSync/apps/baseline', 'failed', 'Progressing', '1/2', ['edge-2']],
      ['FleetSync/apps/install', 'ready', 'Complete', '2/2', []],
    ]);
    expect(view.fleets[0]?.children.map((c) => [c.cluster, c.key, c.state])).toEqual([
      ['edge-1', 'ProxySync/apps/baseline-edge-1', 'ready'],
      ['edge-2', 'ProxySync/apps/baseline-edge-2', 'failed'],
    ]);
    const nodes = view.namespaces[0]!.nodes;
    expect(nodes.map((n) => n.key)).toEqual(['Sync/apps/app', 'FleetSync/apps/baseline', 'FleetSync/apps/install']);
    expect(nodes.find((n) => n.kind === 'FleetSync' && n.name === 'install')?.members).toEqual({ total: 2, ready: 2, failed: 0, progressing: 0 });
    expect(nodeKey({ kind: 'FleetSync', namespace: NS, name: 'x' })).toBe('FleetSync/apps/x');
  });
});
