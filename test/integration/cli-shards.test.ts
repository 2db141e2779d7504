// Lane: own clusters (test/support/lanes-runner.js: it runs beside the shared-cluster files).
// Who holds what under `syncprims run --shards`, as `get clusters` (SHARD) and `doctor` show it
// on the own lane's cluster (docs/shards.md, "Who holds what"). No operator runs: the membership and key Leases are
// made by hand in a namespace of their own, as the replicas write them (test/support/shard-leases.ts),
// and the one live replica's membership Lease is renewed by the test every 2 s, as a replica does.
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { clusterShardKey, memberLeaseName, namespaceShardKey, shardLeaseName, type ShardKey } from '../../src/api/shard-marks.js';
import type { Finding } from '../../src/cli/doctor/doctor-findings.js';
import type { ShardSummary } from '../../src/cli/doctor/doctor-shards.js';
import type { KubeClient } from '../../src/kube/client.js';
import type { Lease } from '../../src/runtime/lease-lock.js';
import type { ShardHolding } from '../../src/views/shard-holders.js';
import { assertCliBuilt, runCli, tableCells, tempDir } from '../support/cli.js';
import { clusterClient, ensureClusters, kubeconfigPath, OWN_LANE_CLUSTER } from '../support/controlplane.js';
import { installCrds } from '../support/crds.js';
import { eventually } from '../support/eventually.js';
import { useTestNamespace } from '../support/namespace.js';
import { applyProxySync, applyRemoteSync, serviceAccountKubeconfig } from '../support/remote.js';
import { keyLeaseAt, memberLeaseAt, microTime } from '../support/shard-leases.js';

/** The Leases here last 6 s, not 15: doctor's grace (two of them) passes within the test. */
const LEASE_SECONDS = 6;
import { applySync } from '../support/syncs.js';

const CLUSTER = OWN_LANE_CLUSTER;
const KUBECONFIG = kubeconfigPath(CLUSTER);
/** The clusters and syncs. */
const ns = useTestNamespace(CLUSTER, 'cli-shards');
/** The operator's namespace: its Leases (--operator-namespace). */
const opNs = useTestNamespace(CLUSTER, 'cli-shards-op');
const dir = tempDir('syncprims-cli-shards-');
let client: KubeClient;
let renewing: NodeJS.Timeout | undefined;
/** When the syncs were made: ShardUnheld waits 2 lease durations (30 s) from then. */
let syncsMadeAt = 0;

const leases = (name = '') => `/apis/coordination.k8s.io/v1/namespaces/${opNs()}/leases${name && `/${name}`}`;
const getClusters = (...args: string[]) => runCli(['get', 'clusters', '--kubeconfig', KUBECONFIG, '-n', ns(), '--operator-namespace', opNs(), ...args]);
const doctor = (...args: string[]) => runCli(['doctor', '--kubeconfig', KUBECONFIG, '-n', ns(), '--operator-namespace', opNs(), ...args]);

/** The SHARD cell of each cluster, by name. */
async function shardCells(run: Promise<{ code: number; stdout: string; stderr: string }> = getClusters()): Promise<Record<string, string>> {
  const { code, stdout, stderr } = await run;
  expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
  const [header, ...rows] = tableCells(stdout);
  const at = header!.indexOf('SHARD');
  expect(at).toBe(5);
  return Object.fromEntries(rows.map((r) => [r[0], r[at]]));
}

async function doctorJson(): Promise<{ code: number; findings: Finding[]; shards?: ShardSummary }> {
  const { code, stdout, stderr } = await doctor('-o', 'json');
  // It exits 1 saying how many problems it found (no operator runs here: OperatorNotRunning at least).
  expect(stderr).toMatch(/^(syncprims: \d+ problems? found\n)?$/);
  return { code, ...(JSON.parse(stdout) as { findings: Finding[]; shards?: ShardSummary }) };
}
const shardProblems = (findings: Finding[]) => findings.filter((f) => f.problem === 'ShardUnheld' || f.problem === 'ReplicaNotRenewing');

/** A kubeconfig Secret in the inventory (no data: nobody dials it here). */
async function clusterSecret(secret: string, cluster: string, labels: Record<string, string> = {}): Promise<void> {
  await client.request({
    method: 'POST',
    path: `/api/v1/namespaces/${ns()}/secrets`,
    body: { apiVersion: 'v1', kind: 'Secret', metadata: { name: secret, labels: { 'syncprims.dev/cluster': cluster, ...labels } } },
  });
}

const createLease = (lease: Lease) => client.request({ method: 'POST', path: leases(), body: lease });
const key = (secret: string): ShardKey => clusterShardKey(ns(), secret);
const MIN = 60_000;

beforeAll(async () => {
  assertCliBuilt();
  await ensureClusters([CLUSTER]);
  client = await clusterClient(CLUSTER);
  await installCrds(CLUSTER);
  await Promise.all([
    clusterSecret('edge-a-kubeconfig', 'edge-a'),
    clusterSecret('edge-b-kubeconfig', 'edge-b'),
    clusterSecret('edge-c-kubeconfig', 'edge-c'),
    clusterSecret('edge-d-kubeconfig', 'edge-d'),
    // A cluster whose Secret is not <name>-kubeconfig: its key is that Secret.
    clusterSecret('creds-e', 'edge-e'),
  ]);
  // What the syncs need: the clusters edge-a to edge-d (edge-d by clusterRef), and the namespace.
  const inline = { source: { inline: [] } };
  await Promise.all([
    applyRemoteSync(client, ns(), 'to-a', { kubeConfig: { secretRef: { name: 'edge-a-kubeconfig' } }, ...inline }),
    applyRemoteSync(client, ns(), 'to-b', { kubeConfig: { secretRef: { name: 'edge-b-kubeconfig' } }, ...inline }),
    applyRemoteSync(client, ns(), 'to-c', { kubeConfig: { secretRef: { name: 'edge-c-kubeconfig' } }, ...inline }),
    applyProxySync(client, ns(), 'to-d', { clusterRef: { name: 'edge-d' }, template: { spec: inline } }),
    applySync(client, ns(), 'local', inline),
  ]);
  syncsMadeAt = Date.now();
});

afterAll(() => clearInterval(renewing));

describe('not sharded (no membership Lease)', () => {
  test('SHARD is - for every cluster; doctor finds nothing of shards and prints no summary', async () => {
    expect(await shardCells()).toEqual({ 'edge-a': '-', 'edge-b': '-', 'edge-c': '-', 'edge-d': '-', 'edge-e': '-' });
    const json = JSON.parse((await getClusters('-o', 'json')).stdout) as { clusters: { name: string; shard: ShardHolding }[] };
    expect(new Set(json.clusters.map((c) => JSON.stringify(c.shard)))).toEqual(new Set([JSON.stringify({ state: 'unsharded' })]));
    const { findings, shards } = await doctorJson();
    expect(shardProblems(findings)).toEqual([]);
    expect(shards).toBeUndefined();
    expect((await doctor()).stdout).not.toContain('Shards (');
  });

  test('a user who may not list Leases in the operator namespace sees ? (and get clusters still works)', async () => {
    const rules = [
      { apiGroups: [''], resources: ['secrets'], verbs: ['get', 'list'] },
      { apiGroups: ['syncprims.dev'], resources: ['fleetsyncs'], verbs: ['list'] },
      { apiGroups: ['cluster.x-k8s.io'], resources: ['clusters'], verbs: ['list'] },
      { apiGroups: ['multicluster.x-k8s.io'], resources: ['clusterprofiles'], verbs: ['list'] },
    ];
    const file = path.join(dir, 'reader.kubeconfig');
    writeFileSync(file, await serviceAccountKubeconfig(client, CLUSTER, ns(), 'reader', rules));
    const run = runCli(['get', 'clusters', '--kubeconfig', file, '-n', ns(), '--operator-namespace', opNs()]);
    expect(await shardCells(run)).toEqual({ 'edge-a': '?', 'edge-b': '?', 'edge-c': '?', 'edge-d': '?', 'edge-e': '?' });
    const json = JSON.parse((await runCli(['get', 'clusters', '--kubeconfig', file, '-n', ns(), '--operator-namespace', opNs(), '-o', 'json'])).stdout) as { clusters: { shard: ShardHolding }[] };
    expect(json.clusters[0]!.shard).toEqual({ state: 'unknown', message: expect.stringMatching(new RegExp(`^listing Leases in namespace ${opNs()} is refused \\(.*forbidden.*\\)$`)) });
  }, 60_000);
});

describe('sharded', () => {
  test('SHARD: the live holder of each cluster, or (none): a holder not renewing, no Lease, a holder gone', async () => {
    const now = Date.now();
    // replica-1: live (renewed here every 2 s); replica-2: stopped renewing 10 minutes ago; replica-gone: no membership Lease.
    await createLease(memberLeaseAt(opNs(), 'replica-1', now, { seconds: LEASE_SECONDS, acquiredAt: now - 10 * MIN }));
    renewing = setInterval(() => {
      void client
        .request({ method: 'PATCH', path: leases(memberLeaseName('replica-1')), contentType: 'application/merge-patch+json', body: { spec: { renewTime: microTime(Date.now()) } } })
        .catch(() => undefined);
    }, 2_000);
    await createLease(memberLeaseAt(opNs(), 'replica-2', now - 10 * MIN, { seconds: LEASE_SECONDS, acquiredAt: now - 60 * MIN }));
    await Promise.all([
      createLease(keyLeaseAt(opNs(), key('edge-a-kubeconfig'), 'replica-1', now - 5 * MIN, { seconds: LEASE_SECONDS })),
      createLease(keyLeaseAt(opNs(), key('edge-b-kubeconfig'), 'replica-2', now - 30 * MIN, { seconds: LEASE_SECONDS })),
      // edge-c: no key Lease.
      createLease(keyLeaseAt(opNs(), key('edge-d-kubeconfig'), 'replica-gone', now - 30 * MIN, { seconds: LEASE_SECONDS })),
      createLease(keyLeaseAt(opNs(), key('creds-e'), 'replica-1', now - 5 * MIN, { seconds: LEASE_SECONDS })),
      createLease(keyLeaseAt(opNs(), namespaceShardKey(ns()), 'replica-1', now - 5 * MIN, { seconds: LEASE_SECONDS })),
    ]);

    expect(await shardCells()).toEqual({ 'edge-a': 'replica-1', 'edge-b': '(none)', 'edge-c': '(none)', 'edge-d': '(none)', 'edge-e': 'replica-1' });
    // The same column with -o wide, and the whole answer with -o json.
    expect(await shardCells(getClusters('-o', 'wide'))).toMatchObject({ 'edge-a': 'replica-1', 'edge-c': '(none)' });
    const json = JSON.parse((await getClusters('-o', 'json')).stdout) as { clusters: { name: string; shard: ShardHolding }[] };
    const shard = Object.fromEntries(json.clusters.map((c) => [c.name, c.shard]));
    expect(shard['edge-a']).toEqual({ state: 'held', holder: 'replica-1', lease: shardLeaseName(key('edge-a-kubeconfig')) });
    expect(shard['edge-b']).toEqual({ state: 'none', lease: shardLeaseName(key('edge-b-kubeconfig')), holder: 'replica-2', why: expect.stringMatching(/^its holder replica-2 is not live: its membership Lease was last renewed at /) });
    expect(shard['edge-c']).toEqual({ state: 'none', lease: shardLeaseName(key('edge-c-kubeconfig')), why: `its Lease ${opNs()}/${shardLeaseName(key('edge-c-kubeconfig'))} does not exist` });
    expect(shard['edge-d']).toEqual({ state: 'none', lease: shardLeaseName(key('edge-d-kubeconfig')), holder: 'replica-gone', why: 'its holder replica-gone is not live: its membership Lease syncprims-member-replica-gone is gone' });

    // Without --operator-namespace, the Leases are looked for in syncprims-system, where there are none here.
    const elsewhere = runCli(['get', 'clusters', '--kubeconfig', KUBECONFIG, '-n', ns()]);
    expect(await shardCells(elsewhere)).toEqual({ 'edge-a': '-', 'edge-b': '-', 'edge-c': '-', 'edge-d': '-', 'edge-e': '-' });
  }, 60_000);

  test('doctor at once: the replica not renewing; a new sync within its grace is not reported; the summary line', async () => {
    // A sync made just now naming a cluster nobody holds: a replica may be taking it.
    await applyRemoteSync(client, ns(), 'to-f', { kubeConfig: { secretRef: { name: 'edge-f-kubeconfig' } }, source: { inline: [] } });
    const { code, findings, shards } = await doctorJson();
    expect(code).toBe(1);
    const renewing = findings.filter((f) => f.problem === 'ReplicaNotRenewing');
    expect(renewing).toEqual([
      {
        problem: 'ReplicaNotRenewing',
        severity: 'error',
        namespace: opNs(),
        object: 'Lease/syncprims-member-replica-2',
        message: expect.stringMatching(new RegExp(`^replica replica-2 holds 1 cluster but has not renewed its membership Lease since \\S+ \\(10m ago\\): it lapses ${LEASE_SECONDS}s after a renewal, and 5s more are allowed for the clocks`)),
        action: expect.stringContaining(`the live replicas (replica-1) should take its keys`),
        since: expect.any(String),
      },
    ]);
    expect(findings.filter((f) => f.problem === 'ShardUnheld' && f.object === 'Secret/edge-f-kubeconfig')).toEqual([]);
    expect(shards).toEqual({
      namespace: opNs(),
      replicas: [
        { name: 'replica-1', live: true, lease: 'syncprims-member-replica-1', renewTime: expect.any(String), clusters: 2, namespaces: 1 },
        { name: 'replica-2', live: false, lease: 'syncprims-member-replica-2', renewTime: expect.any(String), clusters: 1, namespaces: 0 },
        { name: 'replica-gone', live: false, clusters: 1, namespaces: 0 },
      ],
    });
    const table = await doctor();
    expect(table.code).toBe(1);
    expect(table.stdout.trimEnd().split('\n').at(-1)).toBe(
      `Shards (Leases in namespace ${opNs()}): 1 of 2 replicas live: replica-1 holds 2 clusters and 1 namespace; not live: replica-2 holds 1 cluster, replica-gone holds 1 cluster (no membership Lease)`,
    );
    // Gone again (no operator, so no finalizer): it would be reported once its grace is over.
    await client.request({ method: 'DELETE', path: `/apis/syncprims.dev/v1alpha1/namespaces/${ns()}/remotesyncs/to-f` });
  }, 60_000);

  test('doctor past the grace: each cluster syncs need that no live replica holds, with why; not those held, nor the namespace', async () => {
    const found = await eventually(
      'ShardUnheld once 2 lease durations have passed since the syncs were made',
      async () => {
        if (Date.now() < syncsMadeAt + (2 * LEASE_SECONDS + 1) * 1000) return undefined;
        const unheld = (await doctorJson()).findings.filter((f) => f.problem === 'ShardUnheld');
        return unheld.length >= 3 ? unheld : undefined;
      },
      90_000,
      1_000,
    );
    expect(found.map((f) => [f.object, f.message.replace(/: its .*?; nothing reconciles /, ' / ')])).toEqual([
      ['Cluster/edge-d', `cluster ${ns()}/edge-d-kubeconfig is held by no live replica / ProxySync/to-d`],
      ['Secret/edge-b-kubeconfig', `cluster ${ns()}/edge-b-kubeconfig is held by no live replica / RemoteSync/to-b`],
      ['Secret/edge-c-kubeconfig', `cluster ${ns()}/edge-c-kubeconfig is held by no live replica / RemoteSync/to-c`],
    ]);
    expect(found.map((f) => f.message)).toEqual([
      expect.stringContaining('its holder replica-gone is not live: its membership Lease syncprims-member-replica-gone is gone'),
      expect.stringContaining('its holder replica-2 is not live: its membership Lease was last renewed at'),
      expect.stringContaining(`its Lease ${opNs()}/${shardLeaseName(key('edge-c-kubeconfig'))} does not exist`),
    ]);
    for (const f of found) {
      expect(f).toMatchObject({ severity: 'error', namespace: ns() });
      expect(f.action).toContain(`a live replica (replica-1) takes a key nobody holds within seconds: look in their logs for errors writing Leases in namespace ${opNs()}`);
    }
  }, 120_000);

  test('the live replica stops cleanly (its membership Lease deleted): its clusters are held by nobody; with no membership Lease left, not sharded', async () => {
    clearInterval(renewing);
    await client.request({ method: 'DELETE', path: leases(memberLeaseName('replica-1')) });
    expect(await shardCells()).toEqual({ 'edge-a': '(none)', 'edge-b': '(none)', 'edge-c': '(none)', 'edge-d': '(none)', 'edge-e': '(none)' });
    const unheld = (await doctorJson()).findings.filter((f) => f.problem === 'ShardUnheld');
    // No replica is live now: the namespace is unheld too (its Lease changed hands long ago), and the advice is to start one.
    expect(unheld.map((f) => f.object)).toEqual(['Cluster/edge-d', `Namespace/${ns()}`, 'Secret/edge-a-kubeconfig', 'Secret/edge-b-kubeconfig', 'Secret/edge-c-kubeconfig']);
    expect(new Set(unheld.map((f) => f.action))).toEqual(new Set(['start the operator (its Deployment, or syncprims run --shards): no replica is live, so nothing here is reconciled']));
    await client.request({ method: 'DELETE', path: leases(memberLeaseName('replica-2')) });
    expect(await shardCells()).toEqual({ 'edge-a': '-', 'edge-b': '-', 'edge-c': '-', 'edge-d': '-', 'edge-e': '-' });
    expect(shardProblems((await doctorJson()).findings)).toEqual([]);
  }, 60_000);
});
