// Who holds what under `run --shards`, as `get clusters` (SHARD) reads it from the Leases of the
// operator's namespace (views/shard-holders.ts, views/shard-read.ts): pure, Leases in.
import { describe, expect, test } from '@jest/globals';
import { clusterShardKey, memberLeaseName, namespaceShardKey, shardLeaseName, type ShardKey } from '../../src/api/shard-marks.js';
import { secretCluster, clusterApiCluster, clusterProfileCluster } from '../../src/clusters/inventory-sources.js';
import { ApiError } from '../../src/kube/errors.js';
import type { Lease } from '../../src/runtime/lease-lock.js';
import { CLOCK_SKEW_MS, heldByHolder, holdingOf, isSharded, memberOf, shardCell, shardStateOf } from '../../src/views/shard-holders.js';
import { KEY_LEASE_PREFIXES } from '../../src/api/shard-marks.js';
import { clusterHolding, inventoryShardKey, readShards } from '../../src/views/shard-read.js';
import { keyLeaseAt, memberLeaseAt, microTime, type MemberOptions } from '../support/shard-leases.js';

const NOW = Date.parse('2030-01-01T12:00:00Z');
/** A time `ms` before NOW as a Lease holds it (a MicroTime). */
const ago = (ms: number): string => microTime(NOW - ms);
const NS = 'syncprims-system';
const memberLease = (member: string, renewedAgoMs: number, opts: MemberOptions = {}): Lease => memberLeaseAt(NS, member, NOW - renewedAgoMs, opts);
const keyLease = (key: ShardKey, holder: string, takenAgoMs: number, opts: { labelled?: boolean } = {}): Lease => keyLeaseAt(NS, key, holder, NOW - takenAgoMs, opts);

const edge1 = clusterShardKey('team', 'edge-1-kubeconfig');
const edge2 = clusterShardKey('team', 'edge-2-kubeconfig');
const edge3 = clusterShardKey('team', 'edge-3-kubeconfig');
const edge4 = clusterShardKey('team', 'edge-4-kubeconfig');
const teamNs = namespaceShardKey('team');

describe('membership', () => {
  test('live while renewTime + leaseDurationSeconds (+ the clock skew allowed) is ahead of now; a released holder is not live', () => {
    expect(memberOf(memberLease('a', 2_000), NOW)).toEqual({
      name: 'a',
      lease: 'syncprims-member-a',
      renewTime: ago(2_000),
      durationSeconds: 15,
      expiresAt: new Date(NOW + 13_000).toISOString(),
      live: true,
    });
    // Lapsed, but within the skew allowed: still live.
    expect(memberOf(memberLease('a', 15_000 + CLOCK_SKEW_MS - 1), NOW).live).toBe(true);
    expect(memberOf(memberLease('a', 15_000 + CLOCK_SKEW_MS), NOW).live).toBe(false);
    expect(memberOf(memberLease('a', 40_000, { seconds: 60 }), NOW).live).toBe(true);
    expect(memberOf(memberLease('a', 1_000, { holder: '' }), NOW)).toMatchObject({ name: 'a', live: false });
    const noRenew = memberLease('a', 0);
    delete noRenew.spec!.renewTime;
    expect(memberOf(noRenew, NOW)).toMatchObject({ live: false });
    expect(memberOf(noRenew, NOW).expiresAt).toBeUndefined();
  });

  test('members are the Leases labelled shard-member; the key Leases are found by name, labelled or not; other Leases are neither', () => {
    const other: Lease = { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: 'syncprims-leader', namespace: NS }, spec: { holderIdentity: 'x' } };
    const unlabelledMember = { ...memberLease('z', 0), metadata: { name: memberLeaseName('z'), namespace: NS } };
    const state = shardStateOf(NS, [memberLease('b', 0), memberLease('a', 0), other, unlabelledMember, keyLease(edge1, 'a', 0), keyLease(teamNs, 'b', 0, { labelled: false })], NOW);
    expect(state.members.map((m) => m.name)).toEqual(['a', 'b']);
    expect([...state.keys.keys()].sort()).toEqual([shardLeaseName(edge1), shardLeaseName(teamNs)].sort());
    expect(state.keys.get(shardLeaseName(teamNs))).toMatchObject({ kind: 'namespace', key: 'team', holder: 'b' });
    expect(isSharded(state)).toBe(true);
    expect(isSharded(shardStateOf(NS, [other, keyLease(edge1, 'a', 0)], NOW))).toBe(false);
  });

  test('the name prefixes are those shard-marks.ts gives', () => {
    expect(shardLeaseName(edge1).startsWith(KEY_LEASE_PREFIXES.cluster)).toBe(true);
    expect(shardLeaseName(teamNs).startsWith(KEY_LEASE_PREFIXES.namespace)).toBe(true);
  });
});

describe('who holds a key', () => {
  const state = shardStateOf(
    NS,
    [
      memberLease('a', 1_000),
      memberLease('stale', 10 * 60_000),
      keyLease(edge1, 'a', 60_000),
      keyLease(edge2, 'stale', 60_000),
      keyLease(edge3, 'gone', 60_000),
      keyLease(edge4, '', 60_000),
      keyLease(teamNs, 'a', 60_000),
    ],
    NOW,
  );

  test('a live holder; else (none), saying why: no Lease, released, holder lapsed, holder gone', () => {
    expect(holdingOf(state, edge1)).toEqual({ state: 'held', holder: 'a', lease: shardLeaseName(edge1) });
    expect(holdingOf(state, teamNs)).toEqual({ state: 'held', holder: 'a', lease: shardLeaseName(teamNs) });
    expect(holdingOf(state, edge2)).toEqual({
      state: 'none',
      lease: shardLeaseName(edge2),
      holder: 'stale',
      why: `its holder stale is not live: its membership Lease was last renewed at ${ago(10 * 60_000)} (lease 15s)`,
    });
    expect(holdingOf(state, edge3)).toEqual({ state: 'none', lease: shardLeaseName(edge3), holder: 'gone', why: 'its holder gone is not live: its membership Lease syncprims-member-gone is gone' });
    expect(holdingOf(state, edge4)).toEqual({ state: 'none', lease: shardLeaseName(edge4), why: `its Lease ${NS}/${shardLeaseName(edge4)} is released (no holder)` });
    const missing = clusterShardKey('team', 'edge-9-kubeconfig');
    expect(holdingOf(state, missing)).toEqual({ state: 'none', lease: shardLeaseName(missing), why: `its Lease ${NS}/${shardLeaseName(missing)} does not exist` });
    // The same cluster name in another namespace is another key.
    expect(holdingOf(state, clusterShardKey('other', 'edge-1-kubeconfig')).state).toBe('none');
  });

  test('not sharded (no membership Lease): nobody needs to hold anything, whatever key Leases are left', () => {
    expect(holdingOf(shardStateOf(NS, [keyLease(edge1, 'a', 0)], NOW), edge1)).toEqual({ state: 'unsharded' });
  });

  test('the cells: -, ?, the holder, (none)', () => {
    expect(shardCell({ state: 'unsharded' })).toBe('-');
    expect(shardCell({ state: 'unknown', message: 'forbidden' })).toBe('?');
    expect(shardCell(holdingOf(state, edge1))).toBe('a');
    expect(['(none)', '(none)', '(none)']).toEqual([edge2, edge3, edge4].map((k) => shardCell(holdingOf(state, k))));
  });

  test('what each holder holds, by kind; a released Lease counts for nobody', () => {
    expect(Object.fromEntries(heldByHolder(state))).toEqual({ a: { clusters: 1, namespaces: 1 }, stale: { clusters: 1, namespaces: 0 }, gone: { clusters: 1, namespaces: 0 } });
  });
});

describe('the key of an inventory cluster', () => {
  const meta = (name: string, labels: Record<string, string> = {}) => ({ name, namespace: 'team', labels });

  test("a Secret's: that Secret (a pull cluster's registration too); a Cluster's: <name>-kubeconfig; a ClusterProfile's: the Secret its provider names", () => {
    expect(inventoryShardKey(secretCluster({ apiVersion: 'v1', kind: 'Secret', metadata: meta('creds-1', { 'syncprims.dev/cluster': 'edge-1' }) }))).toEqual(clusterShardKey('team', 'creds-1'));
    const pull = secretCluster({ apiVersion: 'v1', kind: 'Secret', metadata: meta('edge-7-kubeconfig', { 'syncprims.dev/cluster': 'edge-7', 'syncprims.dev/cluster-mode': 'pull' }) });
    expect(inventoryShardKey(pull)).toEqual(clusterShardKey('team', 'edge-7-kubeconfig'));
    expect(inventoryShardKey(clusterApiCluster({ apiVersion: 'cluster.x-k8s.io/v1beta1', kind: 'Cluster', metadata: meta('edge-2') }))).toEqual(clusterShardKey('team', 'edge-2-kubeconfig'));
    const profile = clusterProfileCluster({
      apiVersion: 'multicluster.x-k8s.io/v1alpha1',
      kind: 'ClusterProfile',
      metadata: meta('edge-3'),
      status: { accessProviders: [{ name: 'p', cluster: { extensions: [{ name: 'client.authentication.k8s.io/exec', extension: { name: 'edge-3-creds', key: 'config' } }] } }] },
    });
    expect(inventoryShardKey(profile)).toEqual(clusterShardKey('team', 'edge-3-creds'));
    // Without usable credentials: where a clusterRef to it leads.
    const troubled = clusterProfileCluster({ apiVersion: 'multicluster.x-k8s.io/v1alpha1', kind: 'ClusterProfile', metadata: meta('edge-4'), status: {} });
    expect(troubled.problem).toBeDefined();
    expect(inventoryShardKey(troubled)).toEqual(clusterShardKey('team', 'edge-4-kubeconfig'));
  });

  test('a refused read is unknown (?); a read one is judged', () => {
    const cluster = clusterApiCluster({ apiVersion: 'cluster.x-k8s.io/v1beta1', kind: 'Cluster', metadata: meta('edge-1') });
    const refused = clusterHolding({ ok: false, namespace: NS, message: 'leases is forbidden' }, cluster);
    expect(refused).toEqual({ state: 'unknown', message: `listing Leases in namespace ${NS} is refused (leases is forbidden)` });
    const read = { ok: true as const, state: shardStateOf(NS, [memberLease('a', 0), keyLease(edge1, 'a', 0)], NOW) };
    expect(clusterHolding(read, cluster)).toEqual({ state: 'held', holder: 'a', lease: shardLeaseName(edge1) });
  });
});

describe('reading', () => {
  const client = (answer: () => unknown) => {
    const asked: unknown[] = [];
    return {
      name: 'mgmt-test',
      asked,
      request: <T>(opts: unknown): Promise<T> => {
        asked.push(opts);
        return Promise.resolve().then(() => answer() as T);
      },
    };
  };

  test('one LIST of the namespace\'s Leases', async () => {
    const c = client(() => ({ items: [memberLease('a', 0), keyLease(edge1, 'a', 0)] }));
    const read = await readShards(c, NS, NOW);
    expect(c.asked).toEqual([{ path: `/apis/coordination.k8s.io/v1/namespaces/${NS}/leases` }]);
    expect(read.ok && read.state.members.map((m) => m.name)).toEqual(['a']);
  });

  test('401 and 403 are an answer; anything else is thrown', async () => {
    const forbidden = client(() => {
      throw new ApiError(403, 'Forbidden', 'GET /apis/...: leases.coordination.k8s.io is forbidden: User "u" cannot list resource "leases"');
    });
    expect(await readShards(forbidden, NS, NOW)).toEqual({ ok: false, namespace: NS, message: 'leases.coordination.k8s.io is forbidden: User "u" cannot list resource "leases"' });
    const failing = client(() => {
      throw new ApiError(500, 'InternalError', 'boom');
    });
    await expect(readShards(failing, NS, NOW)).rejects.toThrow('boom');
  });
});
