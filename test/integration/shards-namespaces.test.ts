// Lane: own clusters (test/support/lanes-runner.js: it runs beside the shared-cluster files).
// Local Syncs shared by namespace (`run --shards`, docs/shards.md): two replicas watching the whole
// of a cluster of this file's own. Each namespace goes to the replica rendezvous hashing names,
// its Syncs are reconciled there and nowhere else, and dependsOn across namespaces held by
// different replicas converges (readiness is read from every replica's full cache).
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { namespaceShardKey, SHARD_LEASE_LABEL, shardKeyString, shardLeaseName } from '../../src/api/shard-marks.js';
import type { KubeClient } from '../../src/kube/client.js';
import { ownerOf } from '../../src/runtime/rendezvous.js';
import { closeClients, clusterClient, ensureClusters } from '../support/controlplane.js';
import { installCrds } from '../support/crds.js';
import { eventually } from '../support/eventually.js';
import { useTestNamespace } from '../support/namespace.js';
import { OperatorProcess, SHORT_LEASE } from '../support/operator.js';
import { applySync, waitForReady } from '../support/syncs.js';

const CLUSTER = 'shards-ns';
const NAMESPACES = 10;

const leaseNs = useTestNamespace(CLUSTER, 'shard-leases');
const namespaces = Array.from({ length: NAMESPACES }, (_, i) => useTestNamespace(CLUSTER, `shard-ns${i}`));
let client: KubeClient;
const started: OperatorProcess[] = [];

beforeAll(async () => {
  await ensureClusters([CLUSTER]);
  client = await clusterClient(CLUSTER);
  await installCrds(CLUSTER);
}, 120_000);

afterAll(async () => {
  await Promise.all(started.map((op) => op.stop('SIGKILL')));
  await closeClients();
});

async function startReplica(): Promise<{ op: OperatorProcess; id: string }> {
  const op = await OperatorProcess.start(CLUSTER, ['--shards', '--leader-election-namespace', leaseNs(), '--allow-cross-namespace-refs', '--log-level', 'debug', ...SHORT_LEASE]);
  started.push(op);
  const line = await op.waitForLog('the starting line', (l) => l.msg === 'starting');
  return { op, id: String(line.instance) };
}

const configMap = (namespace: string, name: string) => ({ inline: [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace }, data: { a: name } }] });

describe('local Syncs shared by namespace', () => {
  test('each namespace on the replica the hash names, its Syncs reconciled there only; dependsOn across replicas converges', async () => {
    const replicas = [await startReplica(), await startReplica()];
    const ids = replicas.map((r) => r.id);
    // Both members before any Sync exists (else the first would take every namespace, then hand half over).
    for (const r of replicas) await r.op.waitForLog('joined the shards', (l) => l.msg === 'joined the shards');
    await eventually('each replica counting both', async () => ((await Promise.all(replicas.map((r) => r.op.metric('syncprims_shard_members')))).every((n) => n === 2) ? true : undefined), 30_000, 200);
    // Each namespace's Sync depends on the one of the namespace before it: a chain through both replicas.
    const names = namespaces.map((ns) => ns());
    for (const [i, namespace] of names.entries()) {
      const dependsOn = i === 0 ? [] : [{ kind: 'Sync', name: 'chain', namespace: names[i - 1] }];
      await applySync(client, namespace, 'chain', { dependsOn, source: configMap(namespace, 'chain') });
    }
    for (const namespace of names) await waitForReady(client, namespace, 'chain', 'True', undefined, 90_000);

    const list = await client.request<{ items: { metadata: { name: string }; spec?: { holderIdentity?: string } }[] }>({
      path: `/apis/coordination.k8s.io/v1/namespaces/${leaseNs()}/leases`,
      query: { labelSelector: `${SHARD_LEASE_LABEL}=namespace` },
    });
    const holderOf = new Map(list.items.map((l) => [l.metadata.name, l.spec?.holderIdentity ?? '']));
    const holders = names.map((namespace) => holderOf.get(shardLeaseName(namespaceShardKey(namespace))));
    // Every namespace held by the replica rendezvous hashing over the two names.
    expect(holders).toEqual(names.map((namespace) => ownerOf(shardKeyString(namespaceShardKey(namespace)), ids)));
    // Ten namespaces over two replicas: both hold some (all on one has a chance of 1 in 512), so the chain crosses.
    expect(new Set(holders).size).toBe(2);

    // Reconciled by its holder only: the other replica's log has no reconcile of it.
    await eventually('the reconciles logged', async () => (replicas.every((r) => r.op.logs.some((l) => l.msg === 'reconciled')) ? true : undefined), 30_000);
    for (const [i, namespace] of names.entries()) {
      const by = replicas.map((r) => r.op.logs.filter((l) => l.msg === 'reconciled' && l.kind === 'Sync' && l.namespace === namespace).length);
      const held = ids.indexOf(holders[i]!);
      expect([namespace, by[held]! > 0, by[1 - held]]).toEqual([namespace, true, 0]);
    }
  }, 180_000);
});
