// Lane: own clusters (test/support/lanes-runner.js: it runs beside the shared-cluster files).
// A Deployment switched between its two modes of several replicas (`install --replicas N` over an
// install of two electing a leader, and back) rolls its pods: for a while, replicas of both modes
// run. The leader stands aside (gives its Lease back) once a sharded replica is live, sharded
// replicas take no key while a leader holds the leader Lease, and a new leader waits until no
// sharded replica is live (runtime/shard-presence.ts, runtime/shards.ts). The audit log, which
// tells the processes apart by the instance id in their User-Agent, shows that they wrote one
// mode after the other, never side by side.
import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { OPERATOR_USER_AGENT } from '../../src/cli/run/run.js';
import type { KubeClient } from '../../src/kube/client.js';
import { completedAt, instanceIn, writesSince, type AuditEvent } from '../support/audit.js';
import { closeClients, clusterClient, OWN_LANE_CLUSTER } from '../support/controlplane.js';
import { installCrds } from '../support/crds.js';
import { eventually } from '../support/eventually.js';
import { useTestNamespace } from '../support/namespace.js';
import { OperatorProcess, SHORT_LEASE } from '../support/operator.js';
import { createSyncs, syncPath, type SyncObject } from '../support/syncs.js';

const CLUSTER = OWN_LANE_CLUSTER;
const SYNCS = ['s-0', 's-1', 's-2', 's-3', 's-4', 's-5'];

const ns = useTestNamespace(CLUSTER, 'mode-switch');
let client: KubeClient;
const started: OperatorProcess[] = [];

beforeAll(async () => {
  client = await clusterClient(CLUSTER);
  await installCrds(CLUSTER);
});

afterAll(async () => {
  await Promise.all(started.map((op) => op.stop('SIGKILL')));
  await closeClients();
});

async function start(mode: '--leader-elect' | '--shards'): Promise<{ op: OperatorProcess; id: string }> {
  const op = await OperatorProcess.start(CLUSTER, ['--namespace', ns(), mode, '--leader-election-namespace', ns(), ...SHORT_LEASE]);
  started.push(op);
  const line = await op.waitForLog('the starting line', (l) => l.msg === 'starting');
  return { op, id: line.instance as string };
}

const configMap = (name: string, value: string) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: ns() }, data: { value } });

/** Changes `name`'s spec and waits until it is Ready at its new generation: work someone must do. */
async function change(name: string, value: string): Promise<void> {
  const patched = await client.request<SyncObject>({
    method: 'PATCH',
    path: syncPath(ns(), name),
    contentType: 'application/merge-patch+json',
    body: { spec: { source: { inline: [configMap(name, value)] } } },
  });
  await eventually(`${name} Ready at generation ${patched.metadata.generation}`, async () => {
    const s = await client.request<SyncObject>({ path: syncPath(ns(), name) });
    return s.status?.observedGeneration === patched.metadata.generation && s.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ? true : undefined;
  }, 60_000);
}

const receivedAt = (w: AuditEvent): number => Date.parse(w.requestReceivedTimestamp);

test('switched from --leader-elect to --shards and back, replicas of the two modes never write side by side', async () => {
  const since = new Date(Date.now() - 1000);
  await createSyncs(client, ns(), SYNCS, (name) => ({ source: { inline: [configMap(name, 'v1')] } }));
  const leader = await start('--leader-elect');
  await leader.op.waitForLog('leading', (l) => l.msg === 'became leader: starting controllers');
  for (const name of SYNCS) await change(name, 'v2');

  // The rollout to --shards: a sharded replica beside the leader. The leader stands aside (and exits,
  // as on any end of its leadership); the sharded replica takes the namespace's key after that.
  const sharded = await start('--shards');
  const stood = await leader.op.waitForLog('the leader standing aside', (l) => l.msg === 'stopped leading' && /^standing aside: replicas run with --shards \(/.test(String(l.reason)));
  expect(String(stood.reason)).toContain(sharded.id);
  const took = await sharded.op.waitForLog('the key taken', (l) => l.msg === 'took shard keys');
  // The same machine's clock: it waited for the leader to stop (which may be before its first write).
  expect(Date.parse(String(took.time))).toBeGreaterThanOrEqual(Date.parse(String(stood.time)));
  expect(await leader.op.exited).not.toBeNull();
  await change('s-0', 'v3');

  // And back: a replica with --leader-elect stands aside while the sharded one is live, and leads once it has gone.
  const second = await start('--leader-elect');
  const aside = await second.op.waitForLog('the new candidate standing aside', (l) => l.msg === 'standing aside: not taking the lease');
  expect(String(aside.reason)).toContain(sharded.id);
  await change('s-1', 'v3');
  expect(second.op.logs.some((l) => l.msg === 'became leader: starting controllers')).toBe(false);
  await sharded.op.stop('SIGTERM');
  await second.op.waitForLog('leading', (l) => l.msg === 'became leader: starting controllers');
  await change('s-2', 'v3');

  // The three wrote one after the other: each one's first write received after the previous one's last was done.
  const writes = (await writesSince(CLUSTER, since, OPERATOR_USER_AGENT)).filter((w) => w.objectRef?.namespace === ns());
  const order = [leader.id, sharded.id, second.id];
  const by = order.map((id) => writes.filter((w) => instanceIn(w) === id));
  expect(by.map((ws) => ws.length > 0)).toEqual([true, true, true]);
  expect(writes.filter((w) => !order.includes(instanceIn(w)))).toEqual([]);
  for (let k = 1; k < order.length; k++) {
    expect(Math.min(...by[k]!.map(receivedAt))).toBeGreaterThan(Math.max(...by[k - 1]!.map(completedAt)));
  }
  const synced = await client.request<{ items: { metadata: { name: string }; data?: { value?: string } }[] }>({ path: `/api/v1/namespaces/${ns()}/configmaps` });
  expect(Object.fromEntries(synced.items.filter((c) => SYNCS.includes(c.metadata.name)).map((c) => [c.metadata.name, c.data?.value]))).toEqual({
    's-0': 'v3', 's-1': 'v3', 's-2': 'v3', 's-3': 'v2', 's-4': 'v2', 's-5': 'v2',
  });
}, 240_000);
