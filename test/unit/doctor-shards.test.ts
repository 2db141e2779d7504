// `syncprims doctor`'s judgement of the sharding Leases (cli/doctor/doctor-shards.ts), pure:
// Leases and syncs in, findings and the summary out.
import { describe, expect, test } from '@jest/globals';
import { clusterShardKey, namespaceShardKey, shardLeaseName, type ShardKey } from '../../src/api/shard-marks.js';
import { sortFindings } from '../../src/cli/doctor/doctor-findings.js';
import { doctorReport } from '../../src/cli/doctor/doctor-print.js';
import { neededKeys, replicasNotRenewing, shardFindings, shardSummary, summaryLine, unheldKeys } from '../../src/cli/doctor/doctor-shards.js';
import { PLAIN } from '../../src/cli/terminal.js';
import type { KubeObject } from '../../src/kube/resources.js';
import type { Lease } from '../../src/runtime/lease-lock.js';
import { shardStateOf } from '../../src/views/shard-holders.js';
import { keyLeaseAt, memberLeaseAt, microTime, type MemberOptions } from '../support/shard-leases.js';

const NOW = Date.parse('2030-01-01T12:00:00Z');
const SEC = 1_000;
const MIN = 60 * SEC;
const NS = 'syncprims-system';
const ago = (ms: number): string => microTime(NOW - ms);
const member = (name: string, renewedAgoMs: number, opts: MemberOptions = {}): Lease => memberLeaseAt(NS, name, NOW - renewedAgoMs, opts);
const key = (k: ShardKey, holder: string, takenAgoMs: number): Lease => keyLeaseAt(NS, k, holder, NOW - takenAgoMs);
const state = (...leases: Lease[]) => shardStateOf(NS, leases, NOW);

function sync(kind: string, name: string, spec: Record<string, unknown> = {}, createdAgoMs = 60 * MIN, namespace = 'team'): KubeObject {
  return { apiVersion: 'syncprims.dev/v1alpha1', kind, metadata: { name, namespace, creationTimestamp: new Date(NOW - createdAgoMs).toISOString() }, spec };
}
const edge1 = clusterShardKey('team', 'edge-1-kubeconfig');
const edge2 = clusterShardKey('team', 'edge-2-kubeconfig');
const team = namespaceShardKey('team');
const remote = (name: string, secret: string, createdAgoMs?: number) => sync('RemoteSync', name, { kubeConfig: { secretRef: { name: secret } } }, createdAgoMs);

describe('the keys syncs need', () => {
  test("a RemoteSync's or ProxySync's cluster (kubeConfig or clusterRef: one Secret, one key); a namespace for Syncs and FleetSyncs; since the first was made", () => {
    const objects = [
      remote('a', 'edge-1-kubeconfig', 5 * MIN),
      sync('ProxySync', 'p', { clusterRef: { name: 'edge-1' } }, 50 * MIN),
      sync('Sync', 's', {}, 2 * MIN),
      sync('FleetSync', 'f', {}, 3 * MIN),
      sync('RemoteSync', 'nameless', {}),
      sync('Sync', 'other', {}, MIN, 'apps'),
    ];
    expect(neededKeys(objects)).toEqual([
      { key: edge1, namespace: 'team', object: 'Secret/edge-1-kubeconfig', syncs: ['ProxySync/p', 'RemoteSync/a'], since: NOW - 50 * MIN },
      { key: team, namespace: 'team', object: 'Namespace/team', syncs: ['FleetSync/f', 'Sync/s'], since: NOW - 3 * MIN },
      { key: namespaceShardKey('apps'), namespace: 'apps', object: 'Namespace/apps', syncs: ['Sync/other'], since: NOW - MIN },
    ]);
  });
});

describe('ShardUnheld', () => {
  const objects = [remote('a', 'edge-1-kubeconfig'), remote('b', 'edge-2-kubeconfig'), sync('Sync', 's')];

  test('not sharded: nothing, whatever key Leases are left', () => {
    expect(unheldKeys(state(key(edge1, 'gone', 60 * MIN)), objects, NOW)).toEqual([]);
  });

  test('every key held by a live replica: nothing', () => {
    expect(unheldKeys(state(member('a', SEC), key(edge1, 'a', MIN), key(edge2, 'a', MIN), key(team, 'a', MIN)), objects, NOW)).toEqual([]);
  });

  test('a cluster whose holder is gone, a namespace with no Lease: each reported, with why and what to do', () => {
    const found = unheldKeys(state(member('a', SEC), member('b', 2 * SEC), key(edge1, 'gone', 10 * MIN), key(edge2, 'b', MIN)), objects, NOW);
    expect(found).toEqual([
      {
        problem: 'ShardUnheld',
        severity: 'error',
        namespace: 'team',
        object: 'Secret/edge-1-kubeconfig',
        message: 'cluster team/edge-1-kubeconfig is held by no live replica: its holder gone is not live: its membership Lease syncprims-member-gone is gone; nothing reconciles RemoteSync/a',
        action:
          'a live replica (a, b) takes a key nobody holds within seconds: look in their logs for errors writing Leases in namespace syncprims-system (they need get, list, watch, create, update and delete on leases.coordination.k8s.io there); syncprims get clusters -n team --operator-namespace syncprims-system shows who holds each cluster',
        since: new Date(NOW - 10 * MIN).toISOString(),
      },
      {
        problem: 'ShardUnheld',
        severity: 'error',
        namespace: 'team',
        object: 'Namespace/team',
        message: `namespace team (its Syncs and FleetSyncs) is held by no live replica: its Lease syncprims-system/${shardLeaseName(team)} does not exist; nothing reconciles Sync/s`,
        action:
          'a live replica (a, b) takes a key nobody holds within seconds: look in their logs for errors writing Leases in namespace syncprims-system (they need get, list, watch, create, update and delete on leases.coordination.k8s.io there)',
        since: new Date(NOW - 60 * MIN).toISOString(),
      },
    ]);
  });

  test('no live replica: start the operator; a released Lease is held by nobody', () => {
    const found = unheldKeys(state(member('a', 10 * MIN), key(edge1, '', 10 * MIN), key(edge2, 'a', 10 * MIN), key(team, 'a', 10 * MIN)), objects, NOW);
    const lapsed = `its holder a is not live: its membership Lease was last renewed at ${ago(10 * MIN)} (lease 15s)`;
    expect(found.map((f) => [f.object, f.message])).toEqual([
      ['Secret/edge-1-kubeconfig', `cluster team/edge-1-kubeconfig is held by no live replica: its Lease syncprims-system/${shardLeaseName(edge1)} is released (no holder); nothing reconciles RemoteSync/a`],
      ['Secret/edge-2-kubeconfig', `cluster team/edge-2-kubeconfig is held by no live replica: ${lapsed}; nothing reconciles RemoteSync/b`],
      ['Namespace/team', `namespace team (its Syncs and FleetSyncs) is held by no live replica: ${lapsed}; nothing reconciles Sync/s`],
    ]);
    expect(new Set(found.map((f) => f.action))).toEqual(new Set(['start the operator (its Deployment, or syncprims run --shards): no replica is live, so nothing here is reconciled']));
  });

  test('a handover under way is given 2 lease durations: from the sync made, the Lease taken, the holder lapsed, a replica joined', () => {
    const one = [remote('a', 'edge-1-kubeconfig', 60 * MIN)];
    const at = (leases: Lease[], objects = one) => unheldKeys(state(...leases), objects, NOW).length;
    // Made 20 s ago, no Lease yet: waiting; 31 s ago: reported.
    expect(at([member('a', SEC)], [remote('a', 'edge-1-kubeconfig', 20 * SEC)])).toBe(0);
    expect(at([member('a', SEC)], [remote('a', 'edge-1-kubeconfig', 31 * SEC)])).toBe(1);
    // Released 20 s ago.
    expect(at([member('a', SEC), key(edge1, '', 20 * SEC)])).toBe(0);
    expect(at([member('a', SEC), key(edge1, '', 40 * SEC)])).toBe(1);
    // Its holder renewed last 40 s ago (lapsed 25 s ago, 5 s allowed for skew): waiting; renewed 50 s ago: reported.
    expect(at([member('a', SEC), member('old', 40 * SEC), key(edge1, 'old', 60 * MIN)])).toBe(0);
    expect(at([member('a', SEC), member('old', 50 * SEC), key(edge1, 'old', 60 * MIN)])).toBe(1);
    // A replica joined 10 s ago: keys move.
    expect(at([member('a', SEC, { acquiredAt: NOW - 10 * SEC }), key(edge1, 'gone', 60 * MIN)])).toBe(0);
    expect(at([member('a', SEC, { acquiredAt: NOW - 60 * SEC }), key(edge1, 'gone', 60 * MIN)])).toBe(1);
    // Longer leases, longer grace (2 x 60 s from the lapse 40 s ago).
    const long = (name: string, agoMs: number) => member(name, agoMs, { seconds: 60 });
    expect(at([long('a', SEC), long('old', 100 * SEC), key(edge1, 'old', 60 * MIN)])).toBe(0);
    expect(at([long('a', SEC), long('old', 190 * SEC), key(edge1, 'old', 60 * MIN)])).toBe(1);
    // Many syncs: five named, the rest counted.
    const many = Array.from({ length: 7 }, (_, i) => remote(`r${i}`, 'edge-1-kubeconfig'));
    expect(unheldKeys(state(member('a', SEC)), many, NOW)[0]?.message).toMatch(/; nothing reconciles RemoteSync\/r0, RemoteSync\/r1, RemoteSync\/r2, RemoteSync\/r3, RemoteSync\/r4, and 2 more$/);
  });
});

describe('ReplicaNotRenewing', () => {
  test('a replica that holds keys and has not renewed its membership Lease within its duration and the skew allowed', () => {
    const s = state(member('a', SEC), member('stale', 10 * MIN), member('idle', 10 * MIN), member('late', 19 * SEC), key(edge1, 'stale', 60 * MIN), key(edge2, 'stale', 60 * MIN), key(team, 'stale', MIN), key(namespaceShardKey('x'), 'late', MIN));
    expect(replicasNotRenewing(s, NOW)).toEqual([
      {
        problem: 'ReplicaNotRenewing',
        severity: 'error',
        namespace: 'syncprims-system',
        object: 'Lease/syncprims-member-stale',
        message: `replica stale holds 2 clusters and 1 namespace but has not renewed its membership Lease since ${ago(10 * MIN)} (10m ago): it lapses 15s after a renewal, and 5s more are allowed for the clocks of this machine and the replicas`,
        action:
          'if its pod is gone or hung, the live replicas (a, late) should take its keys: if they do not, look in their logs; once it is gone for good, deleting its Lease tells the others at once: kubectl delete lease syncprims-member-stale -n syncprims-system',
        since: ago(10 * MIN),
      },
    ]);
    // With none live.
    expect(replicasNotRenewing(state(member('stale', 10 * MIN), key(edge1, 'stale', MIN)), NOW)[0]?.action).toMatch(/^if its pod is gone or hung, no replica is live: start the operator;/);
  });
});

describe('the summary and the report', () => {
  const s = state(member('b', SEC), member('a', SEC), member('c', 10 * MIN), key(edge1, 'a', MIN), key(edge2, 'a', MIN), key(team, 'b', MIN), key(namespaceShardKey('x'), 'ghost', MIN));

  test('the replicas, live first; what each holds; a holder with no membership Lease', () => {
    expect(shardSummary(s)).toEqual({
      namespace: 'syncprims-system',
      replicas: [
        { name: 'a', live: true, lease: 'syncprims-member-a', renewTime: ago(SEC), clusters: 2, namespaces: 0 },
        { name: 'b', live: true, lease: 'syncprims-member-b', renewTime: ago(SEC), clusters: 0, namespaces: 1 },
        { name: 'c', live: false, lease: 'syncprims-member-c', renewTime: ago(10 * MIN), clusters: 0, namespaces: 0 },
        { name: 'ghost', live: false, clusters: 0, namespaces: 1 },
      ],
    });
    expect(summaryLine(shardSummary(s)!)).toBe(
      'Shards (Leases in namespace syncprims-system): 2 of 3 replicas live: a holds 2 clusters, b holds 1 namespace; not live: c holds nothing, ghost holds 1 namespace (no membership Lease)',
    );
    expect(summaryLine(shardSummary(state(member('a', 10 * MIN)))!)).toBe('Shards (Leases in namespace syncprims-system): 0 of 1 replica live; not live: a holds nothing');
    expect(shardSummary(state(key(edge1, 'a', MIN)))).toBeUndefined();
  });

  test('the report: the line after the findings (or after "No problems found"); shards in JSON and YAML; nothing when not sharded', () => {
    const summary = shardSummary(s)!;
    const opts = { allNamespaces: false, style: PLAIN, checked: '3 syncs in namespace team' };
    const line = `${summaryLine(summary)}\n`;
    expect(doctorReport([], { ...opts, format: 'table', shards: summary })).toBe(`No problems found (3 syncs in namespace team).\n${line}`);
    const findings = replicasNotRenewing(state(member('c', 10 * MIN), key(edge1, 'c', MIN)), NOW);
    const table = doctorReport(findings, { ...opts, format: 'table', shards: summary });
    expect(table.startsWith('PROBLEM')).toBe(true);
    expect(table.endsWith(`\n${line}`)).toBe(true);
    expect(JSON.parse(doctorReport([], { ...opts, format: 'json', shards: summary }))).toEqual({ findings: [], shards: summary });
    expect(doctorReport([], { ...opts, format: 'json' })).toBe('{\n  "findings": []\n}\n');
    expect(doctorReport([], { ...opts, format: 'table' })).toBe('No problems found (3 syncs in namespace team).\n');
  });

  test('in order: after OperatorNotRunning, before StuckFinalizer', () => {
    const f = (problem: 'OperatorNotRunning' | 'ShardUnheld' | 'ReplicaNotRenewing' | 'StuckFinalizer') => ({ problem, severity: 'error' as const, namespace: 'team', object: '-', message: '', action: '' });
    expect(sortFindings([f('StuckFinalizer'), f('ShardUnheld'), f('ReplicaNotRenewing'), f('OperatorNotRunning')]).map((x) => x.problem)).toEqual(['OperatorNotRunning', 'ReplicaNotRenewing', 'ShardUnheld', 'StuckFinalizer']);
  });
});

describe('what was read', () => {
  const objects = [remote('a', 'edge-1-kubeconfig')];

  test('read: both checks; refused: a warning, unless the operator Leases were refused too (said already) or there is nothing to check', () => {
    const read = { ok: true as const, state: state(member('a', SEC), member('stale', 10 * MIN), key(edge1, 'stale', 60 * MIN)) };
    expect(shardFindings(read, objects, NOW).map((f) => f.problem)).toEqual(['ReplicaNotRenewing', 'ShardUnheld']);
    const refused = { ok: false as const, namespace: NS, message: 'leases is forbidden' };
    expect(shardFindings(refused, objects, NOW)).toEqual([
      {
        problem: 'CannotCheck',
        severity: 'warning',
        namespace: '',
        object: '-',
        message: 'cannot tell which replica holds what (run --shards): listing Leases in namespace syncprims-system is refused (leases is forbidden)',
        action: "ask for list on leases.coordination.k8s.io in namespace syncprims-system, or name the operator's namespace with --operator-namespace",
      },
    ]);
    expect(shardFindings(refused, objects, NOW, true)).toEqual([]);
    expect(shardFindings(refused, [], NOW)).toEqual([]);
  });
});
