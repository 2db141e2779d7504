// `syncprims graph`'s pure parts: the model (states, sorted nodes and edges,
// cycle edges) and its Mermaid and DOT text.
import { describe, expect, test } from '@jest/globals';
import { graphModel, stateOf, type GraphModel } from '../../src/views/graph-model.js';
import type { NodeLookup } from '../../src/views/graph-read.js';
import { toDot, toMermaid } from '../../src/cli/graph/graph-render.js';
import { SyncSet } from '../../src/views/sync-set.js';
import { nodeKey, type SyncNode } from '../../src/deps/refs.js';
import type { KubeObject } from '../../src/kube/resources.js';

const NS = 'apps';

function sync(name: string, ready: 'True' | 'False' | 'Unknown' | undefined, dependsOn: Record<string, unknown>[] = [], kind = 'Sync', namespace = NS): KubeObject {
  return {
    apiVersion: 'syncprims.dev/v1alpha1',
    kind,
    metadata: { name, namespace, generation: 1 },
    spec: { dependsOn },
    status: ready ? { conditions: [{ type: 'Ready', status: ready, reason: 'R', message: '', lastTransitionTime: '2030-01-01T00:00:00Z' }] } : {},
  };
}

/** The model of `objects` read in namespace `apps` (`all`: read in every namespace). */
function modelOf(objects: KubeObject[], opts: { all?: boolean; outside?: Record<string, NodeLookup> } = {}): GraphModel {
  const namespace = opts.all ? undefined : NS;
  const outside = opts.outside ?? {};
  const set = new SyncSet(objects);
  const lookup = (n: SyncNode): NodeLookup => {
    const o = set.get(n);
    return o ? { found: true, object: o } : (outside[nodeKey(n)] ?? { found: false, missing: true });
  };
  return graphModel({ objects: set.objects, edges: set.edges, cycles: set.cycles, namespace, lookup });
}

// Given in an order that is not the drawn one: the model sorts.
const objects = [
  sync('web', 'Unknown', [{ name: 'db' }, { kind: 'ProxySync', name: 'edge', requiredStatus: 'InProgress' }, { name: 'nope' }]),
  sync('b', 'False', [{ name: 'a' }]),
  sync('a', 'False', [{ name: 'b' }]),
  sync('edge', 'True', [], 'ProxySync'),
  sync('db', 'True'),
];

describe('graphModel', () => {
  test('nodes sorted by namespace, kind and name, each with its state; a missing dependency is a node of its own', () => {
    const model = modelOf(objects);
    expect(model.title).toBe('namespace apps');
    expect(model.nodes.map((n) => [n.label, n.state])).toEqual([
      ['Sync/a', 'failed'],
      ['Sync/b', 'failed'],
      ['Sync/db', 'ready'],
      ['Sync/nope', 'missing'],
      ['Sync/web', 'progressing'],
      ['ProxySync/edge', 'ready'],
    ]);
  });

  test('edges sorted, InProgress labelled, only the edges of a cycle marked', () => {
    const model = modelOf(objects);
    const label = new Map(model.nodes.map((n) => [n.key, n.label]));
    expect(model.edges.map((e) => [label.get(e.from), label.get(e.to), e.label, e.cycle])).toEqual([
      ['Sync/a', 'Sync/b', undefined, true],
      ['Sync/b', 'Sync/a', undefined, true],
      ['Sync/web', 'Sync/db', undefined, false],
      ['Sync/web', 'Sync/nope', undefined, false],
      ['Sync/web', 'ProxySync/edge', 'InProgress', false],
    ]);
    expect(model.cycles).toEqual([['Sync/a', 'Sync/b', 'Sync/a']]);
  });

  test('an edge into a cycle is not on it; every edge of a larger strongly connected part is', () => {
    const model = modelOf([sync('x', 'True', [{ name: 'y' }]), sync('y', 'True', [{ name: 'z' }, { name: 'w' }]), sync('z', 'True', [{ name: 'y' }, { name: 'w' }]), sync('w', 'True', [{ name: 'y' }])]);
    const label = new Map(model.nodes.map((n) => [n.key, n.label]));
    expect(Object.fromEntries(model.edges.map((e) => [`${label.get(e.from)}->${label.get(e.to)}`, e.cycle]))).toEqual({
      'Sync/x->Sync/y': false,
      'Sync/y->Sync/z': true,
      'Sync/y->Sync/w': true,
      'Sync/z->Sync/y': true,
      'Sync/z->Sync/w': true,
      'Sync/w->Sync/y': true,
    });
  });

  test('a cycle is told from the node that sorts first, whichever it was found from', () => {
    const ring = [sync('c', 'False', [{ name: 'a' }]), sync('b', 'False', [{ name: 'c' }]), sync('a', 'False', [{ name: 'b' }])];
    expect(modelOf(ring).cycles).toEqual([['Sync/a', 'Sync/b', 'Sync/c', 'Sync/a']]);
    expect(modelOf([...ring].reverse()).cycles).toEqual([['Sync/a', 'Sync/b', 'Sync/c', 'Sync/a']]);
  });

  test('a sync depending on itself is a cycle', () => {
    const model = modelOf([sync('self', 'False', [{ name: 'self' }])]);
    expect(model.edges).toEqual([expect.objectContaining({ cycle: true })]);
    expect(model.cycles).toEqual([['Sync/self', 'Sync/self']]);
  });

  test('a dependency in another namespace is labelled with it; one that could not be read is unknown', () => {
    const model = modelOf([sync('app', 'True', [{ name: 'shared', namespace: 'infra' }, { name: 'secret', namespace: 'locked' }])], {
      outside: {
        'Sync/infra/shared': { found: true, object: sync('shared', 'True', [], 'Sync', 'infra') },
        'Sync/locked/secret': { found: false, missing: false, why: 'forbidden' },
      },
    });
    expect(model.nodes.map((n) => [n.label, n.state])).toEqual([
      ['Sync/app', 'ready'],
      ['Sync/infra/shared', 'ready'],
      ['Sync/locked/secret', 'unknown'],
    ]);
  });

  test('all namespaces: every label names its namespace', () => {
    const model = modelOf([sync('a', 'True', [], 'Sync', 'one'), sync('a', 'True', [{ name: 'a', namespace: 'one' }], 'Sync', 'two')], { all: true });
    expect(model.title).toBe('all namespaces');
    expect(model.nodes.map((n) => n.label)).toEqual(['Sync/one/a', 'Sync/two/a']);
  });

  test('stateOf: no Ready condition yet is progressing', () => {
    expect(stateOf(sync('new', undefined))).toBe('progressing');
  });
});

describe('Mermaid and DOT', () => {
  const model = modelOf(objects);

  test('Mermaid: a flowchart, the cycle in a comment and its links red, a missing node dashed and reached by a dotted arrow', () => {
    const text = toMermaid(model);
    const lines = text.trimEnd().split('\n');
    expect(lines[0]).toBe('flowchart LR');
    expect(lines).toContain('%% cycle: Sync/a -> Sync/b -> Sync/a');
    expect(lines).toContain('  n0["Sync/a"]:::failed');
    expect(lines).toContain('  n3["Sync/nope (not found)"]:::missing');
    expect(lines).toContain('  n5["ProxySync/edge"]:::ready');
    const links = lines.filter((l) => /^ {2}n\d+ (-->|-\.->)/.test(l));
    expect(links).toEqual(['  n0 --> n1', '  n1 --> n0', '  n4 --> n2', '  n4 -.-> n3', '  n4 -->|InProgress| n5']);
    expect(lines).toContain('  linkStyle 0,1 stroke:#d32f2f,stroke-width:2px,color:#d32f2f');
    expect(lines.filter((l) => l.startsWith('  classDef ')).map((l) => l.split(' ')[3])).toEqual(['ready', 'failed', 'progressing', 'missing']);
    expect(lines.find((l) => l.startsWith('  classDef missing'))).toContain('stroke-dasharray:5 5');
    expect(toMermaid(modelOf([...objects].reverse()))).toBe(text);
  });

  test('DOT: a digraph, nodes by key with their labels and colours, cycle edges red, the missing one dashed', () => {
    const text = toDot(model);
    const lines = text.trimEnd().split('\n');
    expect(lines[0]).toBe('// syncprims dependency graph of namespace apps: an arrow points from a sync to a sync it depends on');
    expect(lines).toContain('// cycle: Sync/a -> Sync/b -> Sync/a');
    expect(lines).toContain('digraph syncprims {');
    expect(lines.at(-1)).toBe('}');
    expect(lines).toContain('  "Sync/apps/a" [label="Sync/a", fillcolor="#f8d7da", color="#c62828", fontcolor="#8e0000"];');
    expect(lines).toContain('  "Sync/apps/nope" [label="Sync/nope (not found)", style="rounded,dashed,filled", fillcolor="#ffffff", color="#757575", fontcolor="#616161"];');
    expect(lines).toContain('  "Sync/apps/a" -> "Sync/apps/b" [color="#d32f2f", fontcolor="#d32f2f", penwidth=2];');
    expect(lines).toContain('  "Sync/apps/web" -> "Sync/apps/nope" [style=dashed];');
    expect(lines).toContain('  "Sync/apps/web" -> "ProxySync/apps/edge" [label="InProgress"];');
    expect(lines).toContain('  "Sync/apps/web" -> "Sync/apps/db";');
  });

  test('no syncs: still a valid diagram, that says so', () => {
    const empty = modelOf([]);
    expect(toMermaid(empty)).toContain('%% no syncs');
    expect(toDot(empty).trimEnd().split('\n').slice(-4)).toEqual(['digraph syncprims {', '  rankdir=LR;', '  node [shape=box, style="rounded,filled", fontname="Helvetica"];', '}']);
  });
});
