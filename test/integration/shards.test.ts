// Replicas sharing the fleet (`run --shards`, docs/shards.md): three operators over twelve
// clusters (edge-1 and edge-2 as admins, and ServiceAccounts of each as identities of their
// own), with short leases. Each cluster is worked by one replica at a time: the edges' audit
// logs, which tell the processes apart by the instance id in their User-Agent, show no two
// writing as the same identity in the same window, through a kill -9, a replica joining, and
// one paused (SIGSTOP) until the others took its clusters over.
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { clusterShardKey, namespaceShardKey, SHARD_LEASE_LABEL, SHARD_MEMBER_LABEL, SHARD_PIN_LABEL, shardKeyString, shardLeaseName } from '../../src/api/shard-marks.js';
import { OPERATOR_USER_AGENT } from '../../src/cli/run/run.js';
import type { KubeClient } from '../../src/kube/client.js';
import { ownerOf } from '../../src/runtime/rendezvous.js';
import { completedAt, instanceIn, requestsSince, writesSince, type AuditEvent } from '../support/audit.js';
import { clusterClient } from '../support/controlplane.js';
import { installCrds } from '../support/crds.js';
import { eventually } from '../support/eventually.js';
import { useTestNamespace } from '../support/namespace.js';
import { OperatorProcess, SHORT_LEASE } from '../support/operator.js';
import { applyFleetSync, applyRemoteSync, FLEETSYNCS, REMOTESYNCS, kubeconfigOf, serviceAccountKubeconfig } from '../support/remote.js';
import { applySync, getSync, syncPath, waitForReady, type SyncObject } from '../support/syncs.js';

const ns = useTestNamespace('mgmt', 'shards');
const edgeNs = { 'edge-1': useTestNamespace('edge-1', 'shards'), 'edge-2': useTestNamespace('edge-2', 'shards') };
const IDENTITIES_PER_EDGE = 5;
/** Workers per controller (--concurrency); a reconcile has up to 2 x as many applies in flight. */
const CONCURRENCY = 4;
const OBJECTS = 8;

let mgmt: KubeClient;
const started: OperatorProcess[] = [];
/** Cluster name -> [edge, the audit user it writes as]. */
const clusters = new Map<string, { edge: 'edge-1' | 'edge-2'; user: string }>();

interface Replica {
  op: OperatorProcess;
  id: string;
}

interface LeaseObject {
  metadata: { name: string; annotations?: Record<string, string>; labels?: Record<string, string> };
  spec?: { holderIdentity?: string };
}

beforeAll(async () => {
  // This file may be the first on a fresh mgmt (CI's clean clone): the kinds must be served before a replica starts.
  await installCrds('mgmt');
  mgmt = await clusterClient('mgmt');
  for (const edge of ['edge-1', 'edge-2'] as const) {
    const client = await clusterClient(edge);
    await putCluster(`${edge}-admin`, await kubeconfigOf(edge), edge);
    clusters.set(`${edge}-admin`, { edge, user: 'system:admin' });
    for (let i = 0; i < IDENTITIES_PER_EDGE; i++) {
      const name = `${edge}-sa${i}`;
      const kubeconfig = await serviceAccountKubeconfig(client, edge, edgeNs[edge](), name, [{ apiGroups: [''], resources: ['configmaps'], verbs: ['*'] }]);
      await putCluster(name, kubeconfig, edge);
      clusters.set(name, { edge, user: `system:serviceaccount:${edgeNs[edge]()}:${name}` });
    }
  }
}, 120_000);

afterAll(async () => {
  await Promise.all(started.map((op) => op.stop('SIGKILL')));
});

/** A cluster of the namespace's inventory (labelled `fleet: shards`), whose objects go to its edge's test namespace. */
async function putCluster(name: string, kubeconfig: string, edge: 'edge-1' | 'edge-2', labels: Record<string, string> = {}): Promise<void> {
  await mgmt.request({
    method: 'PATCH',
    path: `/api/v1/namespaces/${ns()}/secrets/${name}-kubeconfig`,
    query: { fieldManager: 'test', force: true },
    contentType: 'application/apply-patch+yaml',
    body: {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: `${name}-kubeconfig`, namespace: ns(), labels: { 'syncprims.dev/cluster': name, fleet: 'shards', ...labels }, annotations: { 'values.syncprims.dev/ns': edgeNs[edge]() } },
      data: { value: Buffer.from(kubeconfig).toString('base64') },
    },
  });
}

async function startReplica(): Promise<Replica> {
  const op = await OperatorProcess.start('mgmt', ['--namespace', ns(), '--leader-election-namespace', ns(), '--shards', '--cluster-id', 'shards', '--concurrency', String(CONCURRENCY), '--log-level', 'debug', ...SHORT_LEASE]);
  started.push(op);
  const line = await op.waitForLog('the starting line', (l) => l.msg === 'starting');
  return { op, id: String(line.instance) };
}

async function leases(label: string): Promise<LeaseObject[]> {
  const list = await mgmt.request<{ items: LeaseObject[] }>({ path: `/apis/coordination.k8s.io/v1/namespaces/${ns()}/leases`, query: { labelSelector: label } });
  return list.items;
}

/** Who holds each cluster's key Lease (by cluster name), and the namespace's. */
async function holders(): Promise<{ clusters: Map<string, string>; namespace: string }> {
  const byName = new Map((await leases(SHARD_LEASE_LABEL)).map((l) => [l.metadata.name, l.spec?.holderIdentity ?? '']));
  const of = (name: string): string => byName.get(shardLeaseName(clusterShardKey(ns(), `${name}-kubeconfig`))) ?? '';
  return { clusters: new Map([...clusters.keys()].map((c) => [c, of(c)])), namespace: byName.get(shardLeaseName(namespaceShardKey(ns()))) ?? '' };
}

/** Waits until every key is held by one of `live` (and returns who holds what). */
async function heldBy(live: Replica[], what: string): Promise<Map<string, string>> {
  const ids = new Set(live.map((r) => r.id));
  return eventually(what, async () => {
    const h = await holders();
    return [...h.clusters.values(), h.namespace].every((id) => ids.has(id)) ? h.clusters : undefined;
  }, 60_000, 200);
}

function fleetTemplate(revision: string): Record<string, unknown> {
  const objects = Array.from({ length: OBJECTS }, (_, k) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `${'${cluster_name}'}-${k}` }, data: { revision } }));
  return { spec: { defaultNamespace: '${ns}', source: { inline: objects } } };
}

async function applyFleet(revision: string, rollout: Record<string, unknown> = {}): Promise<void> {
  await applyFleetSync(mgmt, ns(), 'fleet', { kind: 'RemoteSync', clusters: { selector: { matchLabels: { fleet: 'shards' } } }, substitute: {}, rollout, template: fleetTemplate(revision) });
}

/** Every child Ready with `revision` applied (its objects read back from its edge). */
async function fleetDone(revision: string, timeoutMs = 120_000): Promise<void> {
  await eventually(`the fleet Ready at ${revision}`, async () => {
    const fleet = await getSync(mgmt, ns(), 'fleet', FLEETSYNCS);
    const ready = fleet.status?.conditions?.find((c) => c.type === 'Ready');
    return fleet.status?.observedGeneration === fleet.metadata.generation && ready?.status === 'True' ? true : undefined;
  }, timeoutMs, 250);
  for (const [name, { edge }] of clusters) {
    const edgeClient = await clusterClient(edge);
    const cm = await edgeClient.request<{ data?: Record<string, string> }>({ path: `/api/v1/namespaces/${edgeNs[edge]()}/configmaps/${name}-0` });
    expect([name, cm.data?.revision]).toEqual([name, revision]);
  }
}

/** The operators' writes on both edges since `since`, by cluster (identity) and by instance. */
async function edgeWrites(since: Date): Promise<Map<string, AuditEvent[]>> {
  const byCluster = new Map<string, AuditEvent[]>();
  for (const edge of ['edge-1', 'edge-2'] as const) {
    const writes = (await writesSince(edge, since, OPERATOR_USER_AGENT)).filter((w) => w.objectRef?.namespace === edgeNs[edge]());
    for (const [name, c] of clusters) {
      if (c.edge !== edge) continue;
      byCluster.set(name, writes.filter((w) => (w.impersonatedUser?.username ?? w.user.username) === c.user));
    }
  }
  return byCluster;
}

/** For each cluster, the instances that wrote as it took turns: each one's first write was received after the one before it was done. */
function expectTurns(byCluster: Map<string, AuditEvent[]>): void {
  for (const [name, writes] of byCluster) {
    const instances = [...new Set(writes.map(instanceIn))];
    const spans = instances.map((id) => {
      const mine = writes.filter((w) => instanceIn(w) === id);
      return { id, first: Math.min(...mine.map((w) => Date.parse(w.requestReceivedTimestamp))), last: Math.max(...mine.map(completedAt)) };
    });
    spans.sort((a, b) => a.first - b.first);
    for (let k = 1; k < spans.length; k++) expect([name, spans[k]!.first > spans[k - 1]!.last]).toEqual([name, true]);
  }
}

describe('three replicas sharing twelve clusters', () => {
  const replicas: Replica[] = [];
  /** The replica holding the most clusters. */
  const mostClusters = (held: Map<string, string>): Replica => {
    const counts = replicas.map((r) => [...held.values()].filter((id) => id === r.id).length);
    return replicas[counts.indexOf(Math.max(...counts))]!;
  };

  test('each cluster and the namespace held by the replica the hash names; a FleetSync whose children are on several replicas, and dependsOn across replicas, converge', async () => {
    for (let i = 0; i < 3; i++) replicas.push(await startReplica());
    for (const r of replicas) await r.op.waitReady('a replica ready');
    await applyFleet('v1');
    // Held as the hash over the three members names (not merely by someone: the first two may hold everything a moment before they see the third).
    const ids = replicas.map((r) => r.id);
    const clusterKey = (name: string): string => shardKeyString(clusterShardKey(ns(), `${name}-kubeconfig`));
    const held = await eventually('every key held by the replica the hash names', async () => {
      const h = await holders();
      const hashed = [...h.clusters].every(([name, id]) => id === ownerOf(clusterKey(name), ids)) && h.namespace === ownerOf(shardKeyString(namespaceShardKey(ns())), ids);
      return hashed ? h.clusters : undefined;
    }, 60_000, 200);
    expect(new Set(held.values()).size).toBeGreaterThanOrEqual(2);
    await fleetDone('v1');
    expect((await leases(SHARD_MEMBER_LABEL)).map((l) => l.spec?.holderIdentity).sort()).toEqual(replicas.map((r) => r.id).sort());

    // A RemoteSync on a cluster held by another replica than the namespace's Syncs, between two of them.
    const { namespace: nsHolder, clusters: byCluster } = await holders();
    const [other] = [...byCluster].find(([, id]) => id !== nsHolder)!;
    const configMap = (name: string) => ({ inline: [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: ns() }, data: { a: name } }] });
    await applySync(mgmt, ns(), 'top', { dependsOn: [{ kind: 'RemoteSync', name: 'middle' }], source: configMap('top') });
    await applyRemoteSync(mgmt, ns(), 'middle', { kubeConfig: { secretRef: { name: `${other}-kubeconfig` } }, defaultNamespace: edgeNs[clusters.get(other)!.edge](), dependsOn: [{ kind: 'Sync', name: 'base' }], source: { inline: [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'middle' }, data: { a: 'middle' } }] } });
    await applySync(mgmt, ns(), 'base', { source: configMap('base') });
    await waitForReady(mgmt, ns(), 'top', 'True', undefined, 60_000);
    const middle = await getSync(mgmt, ns(), 'middle', REMOTESYNCS);
    expect(middle.status?.conditions?.find((c) => c.type === 'Ready')?.status).toBe('True');

    // A status written over the holder's by someone else (as a paused replica's, flushed when it wakes) is put right by the holder;
    // until then, the replicas' own status writes woke nothing of the kind (each knows its own by resourceVersion).
    const foreign = (l: { msg: unknown; causes?: unknown }): boolean => String(l.msg).startsWith('reconciled') && ((l.causes as string[] | undefined) ?? []).includes('its status was written by another replica');
    expect(replicas.flatMap((r) => r.op.logs.filter(foreign).map((l) => l.name))).toEqual([]);
    const child = `fleet-${other}`;
    const stale = [{ type: 'Ready', status: 'False', reason: 'Stale', message: 'written by another replica', lastTransitionTime: new Date().toISOString() }];
    await mgmt.request({ method: 'PATCH', path: `${syncPath(ns(), child, REMOTESYNCS)}/status`, contentType: 'application/merge-patch+json', body: { status: { conditions: stale } } });
    const holder = replicas.find((r) => r.id === byCluster.get(other))!;
    await holder.op.waitForLog(`a reconcile of ${child} for the status written over`, (l) => foreign(l) && l.name === child);
    await waitForReady(mgmt, ns(), child, 'True', undefined, 30_000, REMOTESYNCS);
  }, 240_000);

  test('kill -9 of the replica holding most clusters, mid-rollout: the others take its clusters within the lease and finish; never two writers as one identity', async () => {
    const since = new Date();
    const before = await holders();
    const victim = mostClusters(before.clusters);
    const itsClusters = [...before.clusters].filter(([, id]) => id === victim.id).map(([name]) => name);
    // Two clusters at a time: when the first writes of v2 land, most of the fleet is still to do.
    await applyFleet('v2', { maxInFlight: 2 });
    await eventually('the rollout under way', async () => ([...(await edgeWrites(since)).values()].flat().length > 0 ? true : undefined), 60_000, 100);
    expect(await victim.op.stop('SIGKILL')).toBeNull();
    const killedAt = Date.now();
    replicas.splice(replicas.indexOf(victim), 1);
    const after = await heldBy(replicas, 'its clusters taken over');
    // The lease (4 s) and a few seconds: bounded here only to catch a hang; bench/shards.ts measures it.
    expect(Date.now() - killedAt).toBeLessThan(30_000);
    for (const [name, id] of before.clusters) if (id !== victim.id) expect([name, after.get(name)]).toEqual([name, id]);
    await fleetDone('v2');
    const writes = await edgeWrites(since);
    expectTurns(writes);
    // The survivors did what the victim left: some of its clusters got v2 from another replica.
    expect(itsClusters.filter((name) => writes.get(name)!.some((w) => instanceIn(w) !== victim.id)).length).toBeGreaterThan(0);
  }, 240_000);

  test('a replica joining takes about a third of the clusters, each from its old holder, and nothing else moves; the move writes nothing that had not changed', async () => {
    const before = (await holders()).clusters;
    const since = new Date();
    const joined = await startReplica();
    replicas.push(joined);
    const moved = await eventually('the newcomer holding its share', async () => {
      const now = await heldBy(replicas, 'every key held');
      const m = [...now].filter(([name, id]) => before.get(name) !== id);
      return m.length > 0 && m.every(([, id]) => id === joined.id) ? m : undefined;
    }, 60_000, 250);
    expect(moved.length).toBeGreaterThanOrEqual(1);
    expect(moved.length).toBeLessThanOrEqual(8);
    const now = (await holders()).clusters;
    for (const [name, id] of now) if (id !== joined.id) expect([name, id]).toEqual([name, before.get(name)]);
    // The newcomer's first reconcile of each cluster it took finds everything applied: no write (primed caches).
    for (const [name] of moved) await joined.op.waitForLog(`a reconcile of fleet-${name}`, (l) => String(l.msg).startsWith('reconciled') && l.name === `fleet-${name}`);
    expect([...(await edgeWrites(since)).values()].flat().map((w) => `${w.verb} ${w.requestURI}`)).toEqual([]);
  }, 120_000);

  test('a replica paused (SIGSTOP) mid-rollout, past its lease: the others finish its clusters; woken, it writes nothing until it has taken clusters again', async () => {
    const before = (await holders()).clusters;
    const paused = mostClusters(before);
    const itsClusters = [...before].filter(([, id]) => id === paused.id).map(([name]) => name);
    const since = new Date();
    await applyFleet('v3', { maxInFlight: 2 });
    await eventually('the paused-to-be replica writing v3', async () => {
      const writes = [...(await edgeWrites(since)).values()].flat();
      return writes.some((w) => instanceIn(w) === paused.id) ? true : undefined;
    }, 60_000, 50);
    paused.op.child.kill('SIGSTOP');
    const pausedAt = Date.now();
    await heldBy(replicas.filter((r) => r !== paused), 'its clusters taken over');
    await fleetDone('v3');
    // Woken, its work goes on for a moment (its timers have not run yet): the fences stop its writes.
    const wokeAt = Date.now();
    paused.op.child.kill('SIGCONT');
    const rejoined = await eventually('it rejoined and took keys again', async () => {
      const line = paused.op.logs.find((l) => l.msg === 'taking shard keys' && Date.parse(String(l.time)) > pausedAt);
      return line ? Date.parse(String(line.time)) : undefined;
    }, 60_000, 200);
    await heldBy(replicas, 'every key held again');
    const edges = await edgeWrites(since);
    const mgmtWrites = (await writesSince('mgmt', since, OPERATOR_USER_AGENT)).filter((w) => w.objectRef?.namespace === ns());
    const its = [...[...edges.values()].flat(), ...mgmtWrites].filter((w) => instanceIn(w) === paused.id);
    // What it had sent before the pause was received within a moment of it. What it had let through the
    // fence but not yet flushed to its socket (a loop turn's worth: the pause falls in the middle of its
    // work) lands when it wakes, as with client-go's leader election: at most what its reconciles in
    // flight had on their way (2 children at a time, each with 2 x --concurrency applies, or a status and
    // an Event; and the FleetSync's own). Nothing else until it began taking keys again.
    const received = (w: AuditEvent): number => Date.parse(w.requestReceivedTimestamp);
    const flushedAtWake = (w: AuditEvent): boolean => received(w) >= wokeAt && received(w) <= wokeAt + 1_000;
    const late = its.filter((w) => received(w) > pausedAt + 500 && received(w) < rejoined);
    process.stdout.write(`shards: the paused replica: ${late.length} writes flushed when it woke, ${late.filter((w) => !flushedAtWake(w)).length} later before it took keys again\n`);
    expect(late.filter((w) => !flushedAtWake(w)).map((w) => `${w.verb} ${w.requestURI}`)).toEqual([]);
    expect(late.length).toBeLessThanOrEqual(2 * 2 * CONCURRENCY + 3);
    // And each write it made to a cluster after the pause came after it had taken that cluster's Lease again (a write of its own, answered).
    const leaseWrites = (await requestsSince('mgmt', new Date(pausedAt), OPERATOR_USER_AGENT)).filter(
      (w) => w.objectRef?.resource === 'leases' && instanceIn(w) === paused.id && ['update', 'create'].includes(w.verb) && (w.responseStatus?.code ?? 0) < 300,
    );
    for (const [name, writes] of edges) {
      const lease = shardLeaseName(clusterShardKey(ns(), `${name}-kubeconfig`));
      const retaken = Math.min(...leaseWrites.filter((w) => w.objectRef?.name === lease).map(completedAt));
      const after = writes.filter((w) => instanceIn(w) === paused.id && received(w) > pausedAt + 500 && !flushedAtWake(w));
      expect([name, after.filter((w) => !(received(w) > retaken)).length]).toEqual([name, 0]);
    }
    // Turns, but for what it flushed when it woke (what a lease-based fence cannot call back).
    expectTurns(new Map([...edges].map(([name, writes]) => [name, writes.filter((w) => !(instanceIn(w) === paused.id && flushedAtWake(w)))])));
    expect(itsClusters.filter((name) => edges.get(name)!.some((w) => instanceIn(w) !== paused.id)).length).toBeGreaterThan(0);
    // A status it flushed when it woke, over its successor's, is put right (controllers/foreign-status.ts).
    await eventually('every child Ready at its generation after the wake', async () => {
      const list = await mgmt.request<{ items: SyncObject[] }>({ path: syncPath(ns(), '', REMOTESYNCS) });
      const children = list.items.filter((c) => c.metadata.name?.startsWith('fleet-'));
      const ready = children.filter((c) => c.status?.observedGeneration === c.metadata.generation && c.status?.conditions?.some((k) => k.type === 'Ready' && k.status === 'True'));
      return children.length === clusters.size && ready.length === children.length ? true : undefined;
    }, 60_000, 250);
  }, 240_000);

  test('a pin on a cluster\'s Secret moves it to the replica it names; a clean stop hands its clusters over at once, and their new holders write nothing', async () => {
    const before = (await holders()).clusters;
    const [name, holder] = [...before][0]!;
    const target = replicas.find((r) => r.id !== holder)!;
    await mgmt.request({
      method: 'PATCH',
      path: `/api/v1/namespaces/${ns()}/secrets/${name}-kubeconfig`,
      contentType: 'application/merge-patch+json',
      body: { metadata: { labels: { [SHARD_PIN_LABEL]: target.id } } },
    });
    await eventually('the pinned cluster moved', async () => ((await holders()).clusters.get(name) === target.id ? true : undefined), 30_000, 200);
    const child = await getSync(mgmt, ns(), `fleet-${name}`, REMOTESYNCS);
    expect(child.status?.conditions?.find((c) => c.type === 'Ready')?.status).toBe('True');
    // A clean stop (a rolling restart's) gives every key up at once and deletes its membership Lease;
    // the replicas that take its clusters write nothing there, nothing having changed.
    const itsClusters = [...(await holders()).clusters].filter(([, id]) => id === target.id).map(([c]) => c);
    const stoppedAt = new Date();
    await target.op.stop('SIGTERM');
    replicas.splice(replicas.indexOf(target), 1);
    const after = await heldBy(replicas, 'the stopped replica\'s keys taken');
    expect((await leases(SHARD_MEMBER_LABEL)).map((l) => l.spec?.holderIdentity)).not.toContain(target.id);
    for (const c of itsClusters) {
      const by = replicas.find((r) => r.id === after.get(c))!;
      await by.op.waitForLog(`a reconcile of fleet-${c} after the stop`, (l) => String(l.msg).startsWith('reconciled') && l.name === `fleet-${c}` && Date.parse(String(l.time)) > stoppedAt.getTime());
    }
    expect([...(await edgeWrites(stoppedAt)).values()].flat().map((w) => `${w.verb} ${w.requestURI}`)).toEqual([]);
    const list = await mgmt.request<{ items: SyncObject[] }>({ path: syncPath(ns(), '', REMOTESYNCS) });
    expect(list.items.length).toBe(clusters.size + 1);
  }, 120_000);
});
