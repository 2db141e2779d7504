import { describe, expect, test } from '@jest/globals';
import { clusterShardKey, memberLeaseName, namespaceShardKey, shardKeyString, shardLeaseName } from '../../src/api/shard-marks.js';
import { ownerOf, weightOf } from '../../src/runtime/rendezvous.js';
import { ShardMembers } from '../../src/runtime/shard-members.js';
import { pinnedKeyOf, shardKeyOf } from '../../src/controllers/shard-keys.js';

const keys = Array.from({ length: 3000 }, (_, i) => `cluster:team/edge-${i}-kubeconfig`);
const owners = (members: string[]): Map<string, string | undefined> => new Map(keys.map((k) => [k, ownerOf(k, members)]));

describe('rendezvous hashing', () => {
  test('the same answer from the same members, whatever their order', () => {
    const a = owners(['r-a', 'r-b', 'r-c']);
    const b = owners(['r-c', 'r-a', 'r-b']);
    expect([...a]).toEqual([...b]);
    expect(ownerOf('k', [])).toBeUndefined();
  });

  test('keys spread evenly: each of 3 members gets about a third', () => {
    const counts = new Map<string, number>();
    for (const owner of owners(['r-a', 'r-b', 'r-c']).values()) counts.set(owner!, (counts.get(owner!) ?? 0) + 1);
    expect([...counts.keys()].sort()).toEqual(['r-a', 'r-b', 'r-c']);
    for (const n of counts.values()) expect(Math.abs(n - 1000)).toBeLessThan(150);
  });

  test('a member joining takes about 1/N of the keys, each from its old owner, and nothing else moves', () => {
    const before = owners(['r-a', 'r-b']);
    const after = owners(['r-a', 'r-b', 'r-c']);
    const moved = keys.filter((k) => before.get(k) !== after.get(k));
    expect(moved.every((k) => after.get(k) === 'r-c')).toBe(true);
    expect(Math.abs(moved.length - 1000)).toBeLessThan(150);
  });

  test('a member leaving gives away only its own keys', () => {
    const before = owners(['r-a', 'r-b', 'r-c']);
    const after = owners(['r-a', 'r-c']);
    expect(keys.filter((k) => before.get(k) !== after.get(k)).every((k) => before.get(k) === 'r-b')).toBe(true);
  });

  test('a pin wins while the pinned member is live; otherwise the hash decides', () => {
    const key = keys.find((k) => ownerOf(k, ['r-a', 'r-b']) === 'r-a')!;
    expect(ownerOf(key, ['r-a', 'r-b'], 'r-b')).toBe('r-b');
    expect(ownerOf(key, ['r-a', 'r-c'], 'r-b')).toBe(ownerOf(key, ['r-a', 'r-c']));
    expect(weightOf('r-a', key)).toBe(weightOf('r-a', key));
    expect(weightOf('r-a', key)).not.toBe(weightOf('r-b', key));
  });
});

describe('shard names', () => {
  test('a key Lease is named by a hash of its key; a cluster named by clusterRef and by its Secret is one key', () => {
    const key = clusterShardKey('team', 'edge-1-kubeconfig');
    expect(shardKeyString(key)).toBe('cluster:team/edge-1-kubeconfig');
    expect(shardLeaseName(key)).toMatch(/^syncprims-shard-c-[0-9a-f]{24}$/);
    expect(shardLeaseName(namespaceShardKey('team'))).toMatch(/^syncprims-shard-n-[0-9a-f]{24}$/);
    expect(shardLeaseName(key)).not.toBe(shardLeaseName(clusterShardKey('team', 'edge-2-kubeconfig')));
    expect(memberLeaseName('host-1-abc')).toBe('syncprims-member-host-1-abc');
    const byRef = shardKeyOf('RemoteSync', { apiVersion: 'syncprims.dev/v1alpha1', kind: 'RemoteSync', metadata: { namespace: 'team', name: 'a' }, spec: { clusterRef: { name: 'edge-1' } } });
    const bySecret = shardKeyOf('ProxySync', { apiVersion: 'syncprims.dev/v1alpha1', kind: 'ProxySync', metadata: { namespace: 'team', name: 'b' }, spec: { kubeConfig: { secretRef: { name: 'edge-1-kubeconfig' } } } });
    expect(byRef).toEqual(key);
    expect(bySecret).toEqual(key);
    expect(shardKeyOf('Sync', { apiVersion: 'syncprims.dev/v1alpha1', kind: 'Sync', metadata: { namespace: 'team', name: 'c' }, spec: {} })).toEqual(namespaceShardKey('team'));
    expect(shardKeyOf('RemoteSync', { apiVersion: 'syncprims.dev/v1alpha1', kind: 'RemoteSync', metadata: { namespace: 'team', name: 'd' }, spec: {} })).toEqual(namespaceShardKey('team'));
    expect(pinnedKeyOf({ apiVersion: 'v1', kind: 'Secret', metadata: { namespace: 'team', name: 'edge-1-kubeconfig' } })).toBe('cluster:team/edge-1-kubeconfig');
    expect(pinnedKeyOf({ apiVersion: 'cluster.x-k8s.io/v1beta1', kind: 'Cluster', metadata: { namespace: 'team', name: 'edge-1' } })).toBe('cluster:team/edge-1-kubeconfig');
  });
});

describe('membership, by our clock', () => {
  const lease = (holder: string, renewTime: string, seconds = 10) => ({
    apiVersion: 'coordination.k8s.io/v1' as const,
    kind: 'Lease' as const,
    metadata: { name: memberLeaseName(holder) },
    spec: { holderIdentity: holder, renewTime, leaseDurationSeconds: seconds },
  });

  test('a member is live for its lease duration after its record last changed, whatever its timestamps say', () => {
    let now = 0;
    const members = new ShardMembers(15_000, () => now);
    members.observe(lease('r-a', '2001-01-01T00:00:00.000000Z'));
    expect(members.live()).toEqual(['r-a']);
    now = 9_999;
    members.observe(lease('r-a', '2001-01-01T00:00:00.000000Z'));
    expect(members.isLive('r-a')).toBe(true);
    now = 10_000;
    expect(members.isLive('r-a')).toBe(false);
    expect(members.unchanged(lease('r-a', '2001-01-01T00:00:00.000000Z'), 'r-a')).toBe(true);
    members.observe(lease('r-a', '2001-01-01T00:00:02.000000Z'));
    expect(members.isLive('r-a')).toBe(true);
    expect(members.unchanged(lease('r-a', '2001-01-01T00:00:00.000000Z'), 'r-a')).toBe(false);
    expect(members.longGone(10)).toEqual([]);
    now = 10_000 + 100_000;
    expect(members.longGone(10)).toEqual(['r-a']);
    members.forget('r-a');
    expect(members.live()).toEqual([]);
  });

  test('a released or deleted membership counts at once; a Lease without holder is nobody', () => {
    const members = new ShardMembers(15_000, () => 0);
    members.observe({ ...lease('r-b', 't'), spec: { holderIdentity: '' } });
    expect(members.live()).toEqual([]);
    members.observe(lease('r-b', 't'));
    members.forget('r-b');
    expect(members.isLive('r-b')).toBe(false);
  });
});
