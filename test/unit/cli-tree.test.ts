// `syncprims tree`'s pure parts: the dependency trees from a SyncSet (cycles,
// missing syncs, syncs met twice), the state of a sync, and the text drawn.
import { describe, expect, test } from '@jest/globals';
import { SyncSet } from '../../src/views/sync-set.js';
import { PLAIN, stripEscapes, styleFor } from '../../src/cli/terminal.js';
import { relatedTree } from '../../src/cli/tree/tree-deps.js';
import { syncState, type Tree } from '../../src/views/tree-model.js';
import { drawTree, renderTree, stateText } from '../../src/cli/tree/tree-render.js';
import type { KubeObject } from '../../src/kube/resources.js';

const NS = 'apps';

function sync(name: string, opts: { kind?: string; dependsOn?: Record<string, unknown>[]; ready?: 'True' | 'False' | 'Unknown'; reason?: string; message?: string } = {}): KubeObject {
  const ready = opts.ready ?? 'True';
  return {
    apiVersion: 'syncprims.dev/v1alpha1',
    kind: opts.kind ?? 'Sync',
    metadata: { name, namespace: NS, generation: 1 },
    spec: { dependsOn: opts.dependsOn ?? [] },
    status: {
      observedGeneration: 1,
      lastAttemptedRevision: 'sha256:aaaaaaaaaaaaaaaaaaaa',
      lastAppliedRevision: 'sha256:aaaaaaaaaaaaaaaaaaaa',
      conditions: [{ type: 'Ready', status: ready, reason: opts.reason ?? (ready === 'True' ? 'Succeeded' : 'DependencyNotReady'), message: opts.message ?? 'm' }],
    },
  };
}

const node = (name: string, kind: 'Sync' | 'RemoteSync' | 'ProxySync' = 'Sync') => ({ kind, namespace: NS, name });

describe('relatedTree', () => {
  test('dependencies recursively, sorted by kind then name, with the unmet reason of each edge', () => {
    const set = new SyncSet([
      sync('app', { dependsOn: [{ name: 'db' }, { kind: 'RemoteSync', name: 'edge', requiredStatus: 'InProgress' }] }),
      sync('db', { dependsOn: [{ name: 'base' }], ready: 'False', reason: 'HealthCheckFailed' }),
      sync('base'),
      sync('edge', { kind: 'RemoteSync' }),
    ]);
    const deps = relatedTree(set, node('app'), 'dependsOn');
    expect(deps.map((d) => [d.kind, d.name, d.requiredStatus, d.unmet, d.ready])).toEqual([
      ['Sync', 'db', 'Current', 'NotReady', 'False'],
      ['RemoteSync', 'edge', 'InProgress', undefined, 'True'],
    ]);
    expect(deps[0]?.dependsOn?.map((d) => d.name)).toEqual(['base']);
    expect(deps[1]?.dependsOn).toBeUndefined();
    expect(relatedTree(set, node('base'), 'dependents')).toEqual([
      expect.objectContaining({ name: 'db', dependents: [expect.objectContaining({ name: 'app', unmet: 'NotReady' })] }),
    ]);
  });

  test('a missing dependency, a cycle closed, and a sync met twice shown once with its edges', () => {
    const set = new SyncSet([
      sync('a', { dependsOn: [{ name: 'b' }, { name: 'c' }, { name: 'ghost' }] }),
      sync('b', { dependsOn: [{ name: 'a' }, { name: 'shared' }] }),
      sync('c', { dependsOn: [{ name: 'shared' }] }),
      sync('shared', { dependsOn: [{ name: 'leaf' }] }),
      sync('leaf'),
    ]);
    const deps = relatedTree(set, node('a'), 'dependsOn');
    const b = deps.find((d) => d.name === 'b')!;
    const c = deps.find((d) => d.name === 'c')!;
    expect(deps.find((d) => d.name === 'ghost')).toEqual({ kind: 'Sync', namespace: NS, name: 'ghost', requiredStatus: 'Current', unmet: 'NotFound', missing: true });
    expect(b.dependsOn?.find((d) => d.name === 'a')).toMatchObject({ cycle: true });
    expect(b.dependsOn?.find((d) => d.name === 'shared')?.dependsOn?.map((d) => d.name)).toEqual(['leaf']);
    expect(c.dependsOn).toEqual([expect.objectContaining({ name: 'shared', shownAbove: true })]);
    expect(c.dependsOn?.[0]?.dependsOn).toBeUndefined();
  });
});

describe('syncState', () => {
  test('Ready, reason, message, revision and pending dependencies (namespace only outside its own)', () => {
    const obj = sync('app', { ready: 'False', reason: 'DependencyNotReady', message: 'waiting' });
    (obj.status as Record<string, unknown>).pendingDependencies = [
      { kind: 'Sync', name: 'db', reason: 'NotReady' },
      { kind: 'ProxySync', name: 'edge', namespace: 'fleet', reason: 'Progressing' },
    ];
    expect(syncState(obj)).toEqual({
      kind: 'Sync',
      namespace: NS,
      name: 'app',
      ready: 'False',
      reason: 'DependencyNotReady',
      message: 'waiting',
      revision: 'sha256:aaaaaaaaaaaaaaaaaaaa',
      pending: ['Sync/db (NotReady)', 'ProxySync/fleet/edge (Progressing)'],
    });
    expect(syncState({ apiVersion: 'syncprims.dev/v1alpha1', kind: 'Sync', metadata: { name: 'new', namespace: NS } })).toEqual({ kind: 'Sync', namespace: NS, name: 'new' });
  });
});

describe('the text', () => {
  test('drawTree: box-drawing prefixes as deep as the tree', () => {
    const lines = drawTree({ text: 'root', children: [{ text: 'a', children: [{ text: 'a1' }, { text: 'a2', children: [{ text: 'x' }] }] }, { text: 'b', children: [{ text: 'b1' }] }] }, PLAIN);
    expect(lines).toEqual(['root', '├── a', '│   ├── a1', '│   └── a2', '│       └── x', '└── b', '    └── b1']);
  });

  test('stateText: a short revision; the message only when not Ready', () => {
    expect(stateText({ ready: 'True', reason: 'Succeeded', message: 'applied', revision: 'sha256:0123456789abcdef0123' }, PLAIN)).toBe('Ready=True  Succeeded  sha256:0123456789ab');
    expect(stateText({ ready: 'False', reason: 'SourceError', message: 'ConfigMap x\nnot found' }, PLAIN)).toBe('Ready=False  SourceError — ConfigMap x not found');
    expect(stateText({}, PLAIN)).toBe('no status yet');
  });

  const tree: Tree = {
    kind: 'RemoteSync',
    namespace: NS,
    name: 'edge',
    server: 'https://mgmt:6443',
    ready: 'False',
    reason: 'DependencyCycle',
    message: 'cycle',
    cycle: ['RemoteSync/apps/edge', 'Sync/other/b', 'RemoteSync/apps/edge'],
    dependsOn: [
      { kind: 'Sync', namespace: 'other', name: 'b', requiredStatus: 'InProgress', unmet: 'Cycle', ready: 'False', reason: 'DependencyCycle', dependsOn: [{ kind: 'RemoteSync', namespace: NS, name: 'edge', requiredStatus: 'Current', cycle: true, ready: 'False', reason: 'DependencyCycle' }] },
      { kind: 'Sync', namespace: NS, name: 'ghost', requiredStatus: 'Current', unmet: 'NotFound', missing: true },
    ],
    dependents: [],
    cluster: { server: 'https://edge:6443', kubeconfig: 'Secret apps/edge key value' },
    objects: [
      { apiVersion: 'v1', kind: 'Namespace', name: 'web', status: 'Current', message: 'Namespace web: current' },
      { apiVersion: 'apps/v1', kind: 'Deployment', namespace: 'web', name: 'web', status: 'InProgress', message: 'Deployment web: 0 of 2 replicas created' },
      {
        apiVersion: 'syncprims.dev/v1alpha1',
        kind: 'ProxySync',
        namespace: 'web',
        name: 'inner',
        status: 'InProgress',
        message: '',
        sync: { kind: 'ProxySync', namespace: 'web', name: 'inner', ready: 'False', reason: 'ClusterUnreachable', message: 'down', pending: ['Sync/x (NotReady)'], cluster: { problem: 'missing', message: 'Secret web/far not found' }, objects: [] },
      },
    ],
  };

  test('renderTree: the root, its cycle, its dependencies, and its objects in its cluster, nested syncs followed', () => {
    expect(renderTree(tree, PLAIN)).toEqual([
      'RemoteSync/apps/edge  Ready=False  DependencyCycle — cycle',
      '├── cycle: RemoteSync/edge → Sync/other/b → RemoteSync/edge',
      '├── depends on',
      '│   ├── Sync/other/b  Ready=False  DependencyCycle  (requiredStatus InProgress)  (unmet: Cycle)',
      '│   │   └── RemoteSync/edge  Ready=False  DependencyCycle  ↺ cycle',
      '│   └── Sync/ghost  not found',
      '└── applied in cluster https://edge:6443 (Secret apps/edge key value)',
      '    ├── Namespace/web  Current',
      '    ├── Deployment/web/web  InProgress — 0 of 2 replicas created',
      '    └── ProxySync/web/inner  Ready=False  ClusterUnreachable — down',
      '        ├── waiting for Sync/x (NotReady)',
      '        └── cluster: missing: Secret web/far not found',
    ]);
  });

  test('colour only when the style has it', () => {
    const coloured = renderTree(tree, styleFor({ isTTY: true }, {}));
    expect(coloured.join('\n')).toContain('\x1b[31mReady=False\x1b[39m');
    expect(coloured.map(stripEscapes)).toEqual(renderTree(tree, PLAIN));
  });

  test('a Sync with nothing applied', () => {
    const empty: Tree = { kind: 'Sync', namespace: NS, name: 'new', server: 's', dependsOn: [], dependents: [], objects: [] };
    expect(renderTree(empty, PLAIN)).toEqual(['Sync/apps/new  no status yet', '└── applied: no objects']);
  });
});
