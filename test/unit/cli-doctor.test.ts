// `syncprims doctor`'s pure parts: the findings from syncs and Leases, their order, and the report.
import { describe, expect, test } from '@jest/globals';
import {
  cycleFindings,
  forbiddenDependencies,
  missingCrds,
  missingDependencies,
  sortFindings,
  stuckFinalizers,
  unreachableClusters,
  type Finding,
} from '../../src/cli/doctor/doctor-findings.js';
import { operatorFindings, operatorLeases, watched, whyNotWatched } from '../../src/cli/doctor/doctor-operator.js';
import { doctorReport } from '../../src/cli/doctor/doctor-print.js';
import { judgeRemote } from '../../src/cli/doctor/doctor-remote.js';
import type { NodeLookup } from '../../src/views/graph-read.js';
import { SyncSet } from '../../src/views/sync-set.js';
import { PLAIN, styleFor, stripEscapes } from '../../src/cli/terminal.js';
import type { SyncNode } from '../../src/deps/refs.js';
import type { KubeObject } from '../../src/kube/resources.js';
import type { Lease } from '../../src/runtime/lease-lock.js';

const NOW = Date.parse('2030-01-01T12:00:00Z');
const ago = (ms: number): string => new Date(NOW - ms).toISOString().replace(/\.\d+Z$/, 'Z');
const MIN = 60_000;

function sync(kind: string, name: string, opts: { ready?: [string, string, string?]; spec?: Record<string, unknown>; deletedAgo?: number; finalizers?: string[]; pending?: unknown[] } = {}): KubeObject {
  const [status, reason, message] = opts.ready ?? ['True', 'Succeeded'];
  return {
    apiVersion: 'syncprims.dev/v1alpha1',
    kind,
    metadata: {
      name,
      namespace: 'apps',
      ...(opts.deletedAgo === undefined ? {} : { deletionTimestamp: ago(opts.deletedAgo) }),
      finalizers: opts.finalizers ?? ['syncprims.dev/finalizer'],
    },
    spec: opts.spec ?? {},
    status: {
      conditions: [{ type: 'Ready', status, reason, message: message ?? '', lastTransitionTime: ago(2 * MIN) }],
      pendingDependencies: opts.pending,
    },
  };
}

describe('stuck finalizers', () => {
  const gone = sync('RemoteSync', 'gone', { deletedAgo: 10 * MIN, ready: ['False', 'ClusterUnreachable', 'cluster apps/dead is unreachable: connect ECONNREFUSED'] });
  const fresh = sync('Sync', 'fresh', { deletedAgo: MIN, ready: ['False', 'PruneFailed', 'forbidden'] });
  const released = sync('Sync', 'released', { deletedAgo: 10 * MIN, finalizers: ['other.example/finalizer'] });

  test('only those deleted longer ago than the threshold and held by our finalizer; why, and since when', () => {
    const found = stuckFinalizers([gone, fresh, released, sync('Sync', 'alive')], { now: NOW, stuckAfterMs: 5 * MIN, operatorRuns: () => true });
    expect(found).toEqual([
      {
        problem: 'StuckFinalizer',
        severity: 'error',
        namespace: 'apps',
        object: 'RemoteSync/gone',
        message: 'deleted 10m ago, still held by its finalizer syncprims.dev/finalizer: ClusterUnreachable: cluster apps/dead is unreachable: connect ECONNREFUSED',
        action: `bring its cluster back (it then cleans up there and goes), or let it go without cleaning up: kubectl patch remotesyncs/gone -n apps --type=merge -p '{"metadata":{"finalizers":null}}'`,
        since: ago(10 * MIN),
      },
    ]);
    expect(stuckFinalizers([fresh], { now: NOW, stuckAfterMs: 0, operatorRuns: () => true })[0]?.action).toMatch(/^fix what its Ready condition says/);
  });

  test('with no operator running, that is what to fix', () => {
    const [found] = stuckFinalizers([gone], { now: NOW, stuckAfterMs: 5 * MIN, operatorRuns: () => false });
    expect(found?.action).toBe('start the operator: only it removes the finalizer (after cleaning up)');
  });
});

describe('unreachable clusters and missing CRDs', () => {
  test('one finding per cluster, since the earliest of its syncs, naming them all', () => {
    const a = sync('RemoteSync', 'a', { ready: ['False', 'ClusterUnreachable', 'first'], spec: { kubeConfig: { secretRef: { name: 'dead' } } } });
    const b = sync('ProxySync', 'b', { ready: ['False', 'ClusterUnreachable', 'second'], spec: { kubeConfig: { secretRef: { name: 'dead' } } } });
    (b.status as { conditions: { lastTransitionTime: string }[] }).conditions[0]!.lastTransitionTime = ago(30 * MIN);
    const c = sync('RemoteSync', 'c', { ready: ['False', 'ClusterUnreachable', 'third'], spec: { clusterRef: { name: 'edge' } } });
    const fine = sync('RemoteSync', 'fine', { spec: { kubeConfig: { secretRef: { name: 'dead' } } } });
    const found = unreachableClusters([a, b, c, fine], NOW);
    expect(found.map((f) => [f.object, f.message, f.since])).toEqual([
      ['Secret/dead', `unreachable since ${ago(30 * MIN)} (30m ago): second; used by ProxySync/b, RemoteSync/a`, ago(30 * MIN)],
      ['Cluster/edge', `unreachable since ${ago(2 * MIN)} (2m ago): third; used by RemoteSync/c`, ago(2 * MIN)],
    ]);
    expect(found[1]?.action).toContain('Secret edge-kubeconfig');
  });

  test('CRDNotInstalled: for a ProxySync the syncprims CRDs, else the kinds it applies', () => {
    const found = missingCrds([
      sync('ProxySync', 'p', { ready: ['False', 'CRDNotInstalled', 'cluster x does not serve syncprims.dev/v1alpha1 Syncs'] }),
      sync('RemoteSync', 'r', { ready: ['False', 'CRDNotInstalled', 'Widget/apps/w: no such kind'] }),
      sync('Sync', 's'),
    ]);
    expect(found.map((f) => [f.object, f.message])).toEqual([
      ['ProxySync/p', 'cluster x does not serve syncprims.dev/v1alpha1 Syncs'],
      ['RemoteSync/r', 'Widget/apps/w: no such kind'],
    ]);
    expect(found[0]?.action).toContain('install the syncprims CRDs and an operator in its cluster');
    expect(found[1]?.action).toContain('in its cluster');
  });
});

describe('dependencies', () => {
  const set = new SyncSet([
    sync('Sync', 'b', { spec: { dependsOn: [{ name: 'a' }] } }),
    sync('Sync', 'a', { spec: { dependsOn: [{ name: 'b' }] } }),
    sync('Sync', 'lonely', { spec: { dependsOn: [{ name: 'nope' }, { kind: 'ProxySync', name: 'far', namespace: 'infra' }, { name: 'a' }] } }),
  ]);
  const lookup = (n: SyncNode): NodeLookup => {
    const o = set.get(n);
    if (o) return { found: true, object: o };
    return n.namespace === 'infra' ? { found: false, missing: false, why: 'forbidden' } : { found: false, missing: true };
  };

  test('a cycle: its path, from the node that sorts first', () => {
    expect(cycleFindings(set.cycles)).toEqual([
      {
        problem: 'DependencyCycle',
        severity: 'error',
        namespace: 'apps',
        object: 'Sync/a',
        message: 'dependency cycle: Sync/a -> Sync/b -> Sync/a',
        action: 'remove one of these dependsOn entries: no sync of a cycle ever becomes Ready',
      },
    ]);
  });

  test('a dependency that does not exist is a problem; one that cannot be read, a warning', () => {
    expect(missingDependencies(set.edges, lookup).map((f) => [f.problem, f.severity, f.object, f.message])).toEqual([
      ['MissingDependency', 'error', 'Sync/lonely', 'depends on Sync/nope, which does not exist'],
      ['CannotCheck', 'warning', 'Sync/lonely', 'its dependency ProxySync/infra/far could not be read: forbidden'],
    ]);
  });

  test('a dependency refused across namespaces', () => {
    const o = sync('Sync', 'x', { ready: ['False', 'DependencyNotReady'], pending: [{ kind: 'Sync', name: 'y', namespace: 'other', reason: 'Forbidden' }, { kind: 'Sync', name: 'z', reason: 'NotReady' }] });
    expect(forbiddenDependencies([o]).map((f) => f.message)).toEqual(['depends on Sync/other/y in another namespace, which the operator refuses']);
  });
});

describe('the operator, from its Leases', () => {
  const lease = (name: string, holder: string, renewedAgo: number, seconds: number, watches: string): Lease => ({
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    metadata: { name, namespace: 'ops', labels: { 'syncprims.dev/operator-lease': 'true', 'syncprims.dev/watch-namespace': watches } },
    spec: { holderIdentity: holder, renewTime: new Date(NOW - renewedAgo).toISOString(), leaseDurationSeconds: seconds },
  });

  test('live while held and renewed within its duration; an empty watch label means all namespaces', () => {
    const leases = operatorLeases([lease('a', 'op-a', 5_000, 15, 'apps'), lease('b', 'op-b', 20_000, 15, ''), lease('c', '', 1_000, 1, 'apps')], NOW);
    expect(leases.map((l) => [l.lease, l.live, l.watches])).toEqual([
      ['ops/a', true, 'apps'],
      ['ops/b', false, undefined],
      ['ops/c', false, 'apps'],
    ]);
    expect(watched(leases, 'apps')).toBe(true);
    expect(watched(leases, 'web')).toBe(false);
    expect(watched(operatorLeases([lease('b', 'op-b', 1_000, 15, '')], NOW), 'web')).toBe(true);
  });

  test('a namespace with syncs and no live operator watching it; the last one seen says since when', () => {
    const lapsed = { ok: true as const, leases: operatorLeases([lease('a', 'op-a', 3 * MIN, 15, 'apps')], NOW) };
    expect(operatorFindings(lapsed, ['apps'], NOW)).toEqual([
      {
        problem: 'OperatorNotRunning',
        severity: 'error',
        namespace: 'apps',
        object: '-',
        message: `no operator is running: the last, Lease ops/a of op-a, was renewed last at ${new Date(NOW - 3 * MIN).toISOString()} (3m ago) and has lapsed`,
        action: 'start the operator (syncprims run, or its Deployment) watching this namespace or all: until one runs, nothing here is reconciled and no finalizer is removed',
      },
    ]);
    const released = operatorLeases([lease('a', '', 10_000, 1, 'apps'), lease('w', 'op-w', 1_000, 15, 'web'), lease('x', 'op-x', 1_000, 15, 'x')], NOW);
    expect(whyNotWatched(released, 'apps', NOW)).toMatch(
      /^no running operator watches namespace apps: the last, Lease ops\/a, was released at .+ \(10s ago\): a clean stop; running: op-w watching web, op-x watching x$/,
    );
    expect(whyNotWatched([], 'apps', NOW)).toBe('no operator is running: no operator Lease (labelled syncprims.dev/operator-lease=true) watches it');
    const other = { ok: true as const, leases: operatorLeases([lease('w', 'op-w', 1_000, 15, 'web')], NOW) };
    expect(operatorFindings(other, ['apps', 'web'], NOW).map((f) => f.message)).toEqual([
      'no running operator watches namespace apps: no operator Lease (labelled syncprims.dev/operator-lease=true) watches it; running: op-w watching web',
    ]);
    expect(operatorFindings(other, [], NOW)).toEqual([]);
  });

  test('Leases that cannot be listed: a warning', () => {
    const [found] = operatorFindings({ ok: false, message: 'leases is forbidden' }, ['apps'], NOW);
    expect(found).toMatchObject({ problem: 'CannotCheck', severity: 'warning' });
  });
});

describe('the operator in the cluster of a ProxySync', () => {
  const proxy = { ...sync('ProxySync', 'p', { ready: ['Unknown', 'Progressing'] }), spec: { template: { metadata: { namespace: 'far' } } } } as KubeObject;
  const seen = (leases: Lease[]) => ({ ok: true as const, server: 'https://edge', read: { ok: true as const, leases: operatorLeases(leases, NOW) } });
  const lease: Lease = {
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    metadata: { name: 'syncprims-operator', namespace: 'far', labels: { 'syncprims.dev/watch-namespace': 'far' } },
    spec: { holderIdentity: 'edge-op', renewTime: new Date(NOW - 1_000).toISOString(), leaseDurationSeconds: 15 },
  };

  test('none watching the namespace of its Sync (its template\'s): a problem', () => {
    expect(judgeRemote(proxy, seen([]), NOW)).toEqual([
      {
        problem: 'OperatorNotRunning',
        severity: 'error',
        namespace: 'apps',
        object: 'ProxySync/p',
        message: 'no operator in its cluster (https://edge) watches namespace far, so its Sync far/p there is never reconciled: no operator Lease (labelled syncprims.dev/operator-lease=true) watches it',
        action: 'start the operator in that cluster, watching namespace far or all',
      },
    ]);
    expect(judgeRemote(proxy, seen([lease]), NOW)).toEqual([]);
  });

  test('a cluster that could not be looked into, or whose Leases cannot be listed: a warning; nothing to look at: nothing', () => {
    expect(judgeRemote(proxy, { ok: false, message: 'unreachable: https://edge: connect ECONNREFUSED' }, NOW)).toEqual([
      expect.objectContaining({ problem: 'CannotCheck', severity: 'warning', message: 'could not look for an operator in its cluster: unreachable: https://edge: connect ECONNREFUSED' }),
    ]);
    const refused = judgeRemote(proxy, { ok: true, server: 'https://edge', read: { ok: false, message: 'leases is forbidden' } }, NOW);
    expect(refused).toEqual([expect.objectContaining({ problem: 'CannotCheck', severity: 'warning' })]);
    expect(refused[0]?.action).toContain('syncprims doctor --kubeconfig <its kubeconfig> -n far');
    expect(judgeRemote(proxy, undefined, NOW)).toEqual([]);
  });
});

describe('the report', () => {
  const findings: Finding[] = sortFindings([
    { problem: 'DependencyCycle', severity: 'error', namespace: 'apps', object: 'Sync/a', message: 'dependency cycle: Sync/a -> Sync/b -> Sync/a', action: 'remove one' },
    { problem: 'CannotCheck', severity: 'warning', namespace: 'apps', object: 'ProxySync/p', message: 'could not look', action: 'see' },
    { problem: 'OperatorNotRunning', severity: 'error', namespace: 'apps', object: '-', message: 'no operator is running', action: 'start it' },
  ]);

  test('sorted by problem: the operator first, warnings last; fields always in the same order', () => {
    expect(findings.map((f) => f.problem)).toEqual(['OperatorNotRunning', 'DependencyCycle', 'CannotCheck']);
    const [shuffled] = sortFindings([{ namespace: 'apps', object: '-', since: 'then', action: 'a', message: 'm', severity: 'error', problem: 'StuckFinalizer' }]);
    expect(Object.keys(shuffled!)).toEqual(['problem', 'severity', 'namespace', 'object', 'message', 'action', 'since']);
  });

  test('a table, a NAMESPACE column with -A, colour only when asked for', () => {
    const table = doctorReport(findings, { format: 'table', allNamespaces: false, style: PLAIN, checked: '' });
    expect(table.split('\n')[0]).toBe('PROBLEM              OBJECT        FINDING                                        WHAT TO DO');
    expect(table.split('\n')[1]).toBe('OperatorNotRunning   -             no operator is running                         start it');
    const all = doctorReport(findings, { format: 'table', allNamespaces: true, style: PLAIN, checked: '' });
    expect(all.split('\n')[0]?.split(/ {3,}/)).toEqual(['PROBLEM', 'NAMESPACE', 'OBJECT', 'FINDING', 'WHAT TO DO']);
    const coloured = doctorReport(findings, { format: 'table', allNamespaces: false, style: styleFor({ isTTY: true }, {}), checked: '' });
    expect(coloured).toContain('\x1b[31mOperatorNotRunning\x1b[39m');
    expect(coloured).toContain('\x1b[33mCannotCheck\x1b[39m');
    expect(stripEscapes(coloured)).toBe(table);
  });

  test('nothing found: one line; yaml and json: the findings', () => {
    expect(doctorReport([], { format: 'table', allNamespaces: false, style: PLAIN, checked: '3 syncs in namespace apps' })).toBe('No problems found (3 syncs in namespace apps).\n');
    expect(JSON.parse(doctorReport(findings, { format: 'json', allNamespaces: false, style: PLAIN, checked: '' }))).toEqual({ findings });
    expect(doctorReport([], { format: 'yaml', allNamespaces: false, style: PLAIN, checked: '' })).toBe('findings: []\n');
  });
});
