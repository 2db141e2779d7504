// Pull mode end to end (docs/pull.md): edge-1 registered in mgmt as a pull
// cluster (`syncprims cluster add --pull`: no credential of edge-1 is kept in
// mgmt), its operator started with the join bundle (`run
// --upstream-kubeconfig`), and ProxySyncs in mgmt carried out there through
// its assignments. The managing operator never sends edge-1 a request.
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { assignmentNamespace } from '../../src/clusters/pull-names.js';
import { KubeClient } from '../../src/kube/client.js';
import { loadKubeConfigFile } from '../../src/kube/config.js';
import { ApiError } from '../../src/kube/errors.js';
import { requestsSince, writesSince } from '../support/audit.js';
import { assertCliBuilt, runCli, tempDir } from '../support/cli.js';
import { clusterClient, closeClients, ensureClusters, kubeconfigPath } from '../support/controlplane.js';
import { installCrds } from '../support/crds.js';
import { eventually } from '../support/eventually.js';
import { releaseSyncFinalizers, useTestNamespace } from '../support/namespace.js';
import { OperatorProcess } from '../support/operator.js';
import { applyFleetSync, applyProxySync, applyRemoteSync, FLEETSYNCS, PROXYSYNCS, registerCluster, REMOTESYNCS, useClusterProxy } from '../support/remote.js';
import { eventsFor, find, readyOf, syncPath, waitForReady, type SyncObject } from '../support/syncs.js';

const HOME = 'mgmt';
const EDGE = 'edge-1';
const CLUSTER = 'edge-p';
const CLUSTER_ID = 'mgmt-pull-test';
let mgmt: KubeClient;
let edge: KubeClient;
let hub: OperatorProcess;
let spoke: OperatorProcess | undefined;
let pushSpoke: OperatorProcess;
let started: Date;
const ns = useTestNamespace(HOME, 'pull');
// The pull cluster reaches mgmt through this proxy: down, mgmt is away for it (the hub still reaches mgmt).
const upstreamPath = useClusterProxy(HOME);
const dir = tempDir('syncprims-pull-');
const joinFile = (): string => path.join(dir, `${CLUSTER}.join.yaml`);
const assignments = (): string => assignmentNamespace(ns(), CLUSTER);

const addPull = (name: string, ...args: string[]) =>
  runCli(['cluster', 'add', name, '--pull', '-n', ns(), '--mgmt-kubeconfig', kubeconfigPath(HOME), '--join-file', path.join(dir, `${name}.join.yaml`), ...args]);
// (A Lease of 8 s, not the default 30 s: the offline test waits for it to lapse.)
const startSpoke = async (): Promise<OperatorProcess> =>
  OperatorProcess.start(EDGE, ['--namespace', ns(), '--log-level', 'debug', '--upstream-kubeconfig', joinFile(), '--upstream-lease-duration', '8s']);
const proxyReady = (name: string, status: 'True' | 'False' | 'Unknown', reason?: string, timeoutMs = 60_000): Promise<SyncObject> =>
  waitForReady(mgmt, ns(), name, status, reason, timeoutMs, PROXYSYNCS);
const configMap = (name: string, value = 'v1') => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: ns() }, data: { value } });
const cmPath = (namespace: string, name: string): string => `/api/v1/namespaces/${namespace}/configmaps/${name}`;
type CM = { data?: Record<string, string>; metadata: { labels?: Record<string, string> } };
/** A ConfigMap manifest as a source ConfigMap holds it (under key `value`). */
const manifest = (name: string, value: string): string => `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\ndata:\n  value: ${value}\n`;

/** The fleet's phase and counts and each child's Ready, for a timeout's message. */
async function fleetState(): Promise<string> {
  const f = await find<SyncObject & { status?: { phase?: string; clusters?: Record<string, number> } }>(mgmt, syncPath(ns(), 'fleet', FLEETSYNCS));
  const readyIn = (o: SyncObject | undefined) => (o ? readyOf(o) : 'absent');
  const children = await Promise.all([CLUSTER, 'edge-2'].map(async (c) => [c, readyIn(await find<SyncObject>(mgmt, syncPath(ns(), `fleet-${c}`, PROXYSYNCS)))] as const));
  return JSON.stringify({ phase: f?.status?.phase, clusters: f?.status?.clusters, ready: readyIn(f), children: Object.fromEntries(children) });
}

/** A client of mgmt as the pull cluster's identity: the token of its join bundle. */
async function identityClient(file = joinFile()): Promise<KubeClient> {
  return KubeClient.create('pull-identity', loadKubeConfigFile(file));
}

/** The HTTP status a request gets (200 when it succeeds). */
async function statusOf(client: KubeClient, p: string): Promise<number> {
  try {
    await client.request({ path: p });
    return 200;
  } catch (err) {
    if (err instanceof ApiError) return err.status;
    throw err;
  }
}

beforeAll(async () => {
  assertCliBuilt();
  await ensureClusters([HOME, EDGE, 'edge-2']);
  mgmt = await clusterClient(HOME);
  edge = await clusterClient(EDGE);
  await Promise.all([installCrds(HOME), installCrds(EDGE), installCrds('edge-2')]);
  started = new Date(Date.now() - 1000);
  const added = await addPull(CLUSTER, '--label', 'mode=pulled');
  expect({ code: added.code, stderr: added.stderr }).toEqual({ code: 0, stderr: '' });
  const bundle = readFileSync(joinFile(), 'utf8');
  expect(bundle).toContain(`server: ${mgmt.server.origin}`);
  writeFileSync(joinFile(), bundle.replace(`server: ${mgmt.server.origin}`, `server: https://127.0.0.1:${upstreamPath.proxy().port}`), { mode: 0o600 });
  // edge-2 beside it, a push cluster of the same inventory, with an operator of its own.
  await registerCluster(mgmt, ns(), 'edge-2', 'edge-2', { mode: 'pushed' });
  [hub, spoke, pushSpoke] = await Promise.all([
    OperatorProcess.start(HOME, ['--namespace', ns(), '--log-level', 'debug', '--cluster-id', CLUSTER_ID, '--lost-cluster-grace', '3s']),
    startSpoke(),
    OperatorProcess.start('edge-2', ['--namespace', ns()]),
  ]);
}, 120_000);

afterAll(async () => {
  await Promise.all([hub?.stop('SIGTERM'), spoke?.stop('SIGTERM'), pushSpoke?.stop('SIGTERM')]);
  if (mgmt) {
    await releaseSyncFinalizers(mgmt, assignments());
    await mgmt.request({ method: 'DELETE', path: `/api/v1/namespaces/${assignments()}` }).catch(() => undefined);
    for (const other of ['other-p', 'was-push']) await mgmt.request({ method: 'DELETE', path: `/api/v1/namespaces/${assignmentNamespace(ns(), other)}` }).catch(() => undefined);
  }
  const edge2 = await clusterClient('edge-2').catch(() => undefined);
  if (edge2) {
    await releaseSyncFinalizers(edge2, ns());
    await edge2.request({ method: 'DELETE', path: `/api/v1/namespaces/${ns()}` }).catch(() => undefined);
  }
  if (edge) {
    await releaseSyncFinalizers(edge, ns());
    await edge.request({ method: 'DELETE', path: `/api/v1/namespaces/${ns()}` }).catch(() => undefined);
  }
  await closeClients();
});

describe('a ProxySync on a pull cluster', () => {
  test("is carried out by the cluster's own operator from its assignment, with the same readiness rules; the managing operator never sends edge-1 a request", async () => {
    await mgmt.request({ method: 'POST', path: `/api/v1/namespaces/${ns()}/configmaps`, body: configMap('settings', manifest('colour', 'blue')) });
    await applyProxySync(mgmt, ns(), 'app', {
      clusterRef: { name: CLUSTER },
      template: { spec: { defaultNamespace: ns(), source: { configMap: { name: 'settings' } } } },
    });
    await applyProxySync(mgmt, ns(), 'inline', { clusterRef: { name: CLUSTER }, template: { spec: { source: { inline: [configMap('inline-cm', 'v1')] } } } });
    const ready = await proxyReady('inline', 'True', 'Succeeded');
    const downstream = await find<SyncObject>(edge, syncPath(ns(), 'inline'));
    expect(downstream?.metadata.labels).toMatchObject({ 'syncprims.dev/pull-assignment': 'inline', 'syncprims.dev/owner-kind': 'ProxySync', 'syncprims.dev/origin': CLUSTER_ID });
    expect(ready.status?.lastAppliedRevision).toBe(downstream?.status?.lastAppliedRevision);
    expect((await find<CM>(edge, cmPath(ns(), 'inline-cm')))?.data?.value).toBe('v1');
    // The assignment in mgmt: held by the cluster's finalizer, never reconciled there (no finalizer or status of mgmt's Sync controller).
    const assignment = await find<SyncObject>(mgmt, syncPath(assignments(), 'inline'));
    expect(assignment?.metadata.finalizers).toEqual(['syncprims.dev/pull-agent']);
    expect(assignment?.metadata.annotations?.['syncprims.dev/pull-target']).toBe(`${ns()}/inline`);
    expect(await find(mgmt, cmPath(ns(), 'inline-cm'))).toBeUndefined();

    // A related ConfigMap is copied through the assignments namespace; its change reaches the pull cluster.
    await proxyReady('app', 'True', 'Succeeded');
    expect((await find<CM>(edge, cmPath(ns(), 'settings')))?.data?.value).toBe(manifest('colour', 'blue'));
    expect((await find<CM>(edge, cmPath(ns(), 'colour')))?.data?.value).toBe('blue');
    await mgmt.request({ method: 'PUT', path: cmPath(ns(), 'settings'), body: configMap('settings', manifest('colour', 'green')) });
    await eventually('the changed ConfigMap applied in edge-1', async () => ((await find<CM>(edge, cmPath(ns(), 'colour')))?.data?.value === 'green' ? true : undefined));
    // Its copy there changed by hand is put back by watch (the agent's cache of its copies), as a push ProxySync's is.
    const edited = Date.now();
    await edge.request({ method: 'PUT', path: cmPath(ns(), 'settings'), body: { ...configMap('settings', manifest('colour', 'red')), metadata: { name: 'settings', namespace: ns(), labels: (await find<CM>(edge, cmPath(ns(), 'settings')))?.metadata.labels } } });
    await eventually('the copy put back', async () => ((await find<CM>(edge, cmPath(ns(), 'settings')))?.data?.value === manifest('colour', 'green') ? true : undefined), 30_000);
    await spoke!.waitForCause('Sync', assignments(), 'app', 'updated ConfigMap here', edited);

    // A template change: a new generation of the assignment, applied there, and Ready for it.
    await applyProxySync(mgmt, ns(), 'inline', { clusterRef: { name: CLUSTER }, template: { spec: { source: { inline: [configMap('inline-cm', 'v2')] } } } });
    await eventually('v2 in edge-1', async () => ((await find<CM>(edge, cmPath(ns(), 'inline-cm')))?.data?.value === 'v2' ? true : undefined));
    const again = await eventually('the ProxySync Ready for the new revision', async () => {
      const p = await find<SyncObject>(mgmt, syncPath(ns(), 'inline', PROXYSYNCS));
      const edgeSync = await find<SyncObject>(edge, syncPath(ns(), 'inline'));
      return p && readyOf(p)?.status === 'True' && p.status?.lastAppliedRevision === edgeSync?.status?.lastAppliedRevision && p.status?.lastAppliedRevision !== ready.status?.lastAppliedRevision ? p : undefined;
    });
    expect(readyOf(again)?.observedGeneration).toBe(again.metadata.generation);
    // Nothing was refused on the way: neither a new assignment (its status written at the version its
    // finalizer's patch left) nor a changed one (a conflict of a status write waits for the next event).
    expect(spoke!.logs.filter((l) => l.msg === 'cannot go on').map((l) => l.message)).toEqual([]);

    // The managing operator sent edge-1 nothing; the cluster's operator did the writing there, and the hub in mgmt.
    const hubAgent = String((await hub.waitForLog('the hub starting', (l) => l.msg === 'starting')).userAgent);
    const spokeAgent = String((await spoke!.waitForLog('the spoke starting', (l) => l.msg === 'starting')).userAgent);
    expect(await requestsSince(EDGE, started, hubAgent)).toEqual([]);
    // (The audit log keeps writes only: the clusters it opened say it read nothing there either: only mgmt, for the assignments.)
    const opened = hub.logs.filter((l) => l.msg === 'cluster opened');
    expect(opened.length).toBeGreaterThan(0);
    expect(opened.map((l) => l.server)).toEqual(opened.map(() => mgmt.server.origin));
    expect((await writesSince(EDGE, started, spokeAgent)).length).toBeGreaterThan(0);
    expect((await writesSince(HOME, started, hubAgent)).some((e) => e.objectRef?.namespace === assignments())).toBe(true);
  });

  test("the pull cluster's identity reads its own assignments and nothing of another cluster's or tenant's (403s)", async () => {
    const other = await addPull('other-p');
    expect(other.code).toBe(0);
    const identity = await identityClient();
    try {
      expect(await statusOf(identity, syncPath(assignments()))).toBe(200);
      expect(await statusOf(identity, `/api/v1/namespaces/${assignments()}/secrets`)).toBe(200);
      expect(await statusOf(identity, syncPath(ns()))).toBe(403);
      expect(await statusOf(identity, syncPath(ns(), '', PROXYSYNCS))).toBe(403);
      expect(await statusOf(identity, `/api/v1/namespaces/${ns()}/secrets`)).toBe(403);
      expect(await statusOf(identity, `/api/v1/namespaces/${ns()}/configmaps`)).toBe(403);
      expect(await statusOf(identity, syncPath(assignmentNamespace(ns(), 'other-p')))).toBe(403);
      expect(await statusOf(identity, `/api/v1/namespaces/${assignmentNamespace(ns(), 'other-p')}/secrets`)).toBe(403);
      expect(await statusOf(identity, '/apis/syncprims.dev/v1alpha1/syncs')).toBe(403);
    } finally {
      identity.close();
    }
  });

  test('a RemoteSync cannot name a pull cluster: InvalidSpec saying to use a ProxySync', async () => {
    await applyRemoteSync(mgmt, ns(), 'direct', { clusterRef: { name: CLUSTER }, source: { inline: [] } });
    const refused = await waitForReady(mgmt, ns(), 'direct', 'False', 'InvalidSpec', 60_000, REMOTESYNCS);
    expect(readyOf(refused)?.message).toContain(`cluster ${CLUSTER} is a pull cluster`);
    expect(readyOf(refused)?.message).toContain('use a ProxySync');
  });

  test('a RemoteSync whose cluster was registered again as a pull one is deleted after the grace period (it holds no credential), naming what it left', async () => {
    await registerCluster(mgmt, ns(), 'was-push', EDGE, {});
    // (Its namespace in edge-1, which the pull cluster's Syncs make when the tests run in order.)
    await edge.request({ method: 'POST', path: '/api/v1/namespaces', body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns() } } }).catch((err: unknown) => {
      if (!(err instanceof ApiError && err.status === 409)) throw err;
    });
    await applyRemoteSync(mgmt, ns(), 'was-push', { clusterRef: { name: 'was-push' }, source: { inline: [configMap('was-push-cm')] } });
    await waitForReady(mgmt, ns(), 'was-push', 'True', 'Succeeded', 60_000, REMOTESYNCS);
    // Registered again as a pull cluster (push to pull goes through deleting its Secret), then the RemoteSync deleted.
    await mgmt.request({ method: 'DELETE', path: `/api/v1/namespaces/${ns()}/secrets/was-push-kubeconfig` });
    const again = await addPull('was-push');
    expect({ code: again.code, stderr: again.stderr }).toEqual({ code: 0, stderr: '' });
    await mgmt.request({ method: 'DELETE', path: syncPath(ns(), 'was-push', REMOTESYNCS) });
    await eventually('the RemoteSync gone', async () => ((await find(mgmt, syncPath(ns(), 'was-push', REMOTESYNCS))) ? undefined : true), 60_000);
    const warning = (await eventsFor(mgmt, ns(), 'was-push')).find((e) => e.reason === 'LeftBehind');
    expect(warning?.message).toMatch(new RegExp(`^deleted without cleaning up: its Secret ${ns()}/was-push-kubeconfig registers a pull cluster now \\(no credential\\) and .+; left behind: ConfigMap/${ns()}/was-push-cm$`));
    expect(await find(edge, cmPath(ns(), 'was-push-cm'))).toBeDefined();
  });

  test('a FleetSync rolls out in waves across the pull cluster (the canary) and a push one, with per-cluster values', async () => {
    const before = new Date();
    await applyFleetSync(mgmt, ns(), 'fleet', {
      clusters: { names: [CLUSTER, 'edge-2'] },
      substitute: {},
      rollout: { waves: [{ name: 'canary', selector: { matchLabels: { mode: 'pulled' } } }, { name: 'rest' }] },
      template: { spec: { source: { inline: [configMap('fleet-cm', '${cluster_name}')] } } },
    });
    const complete = await eventually('the FleetSync Complete', async () => {
      const f = await find<SyncObject & { status?: { phase?: string; clusters?: Record<string, number> } }>(mgmt, syncPath(ns(), 'fleet', FLEETSYNCS));
      if (f?.status?.phase === 'Complete') return f;
      throw new Error(`not Complete: ${await fleetState()}`); // (what a timeout names)
    }, 90_000);
    expect(complete.status?.clusters).toMatchObject({ selected: 2, updated: 2, ready: 2, failed: 0, unreachable: 0 });
    expect((await find<CM>(edge, cmPath(ns(), 'fleet-cm')))?.data?.value).toBe(CLUSTER);
    const edge2 = await clusterClient('edge-2');
    expect((await find<CM>(edge2, cmPath(ns(), 'fleet-cm')))?.data?.value).toBe('edge-2');
    // The push wave went only once the pull canary was Ready: edge-2's Sync (named, as each child's, after the FleetSync) was written after edge-1's reported Ready.
    const canary = await find<SyncObject>(edge, syncPath(ns(), 'fleet'));
    expect(canary?.metadata.labels?.['syncprims.dev/pull-assignment']).toBe(`fleet-${CLUSTER}`);
    const canaryReady = Date.parse(String(readyOf(canary!)?.lastTransitionTime));
    const rest = (await writesSince('edge-2', before, 'syncprims')).filter((e) => e.objectRef?.resource === 'syncs' && e.objectRef.namespace === ns() && e.objectRef.name === 'fleet');
    expect(rest.length).toBeGreaterThan(0);
    expect(Math.min(...rest.map((e) => Date.parse(e.requestReceivedTimestamp)))).toBeGreaterThanOrEqual(canaryReady - 1000);
  });

  test('the managing cluster away: the pull cluster keeps converging on what it has, and takes the latest on reconnect, not a history', async () => {
    let before = -1;
    await upstreamPath.proxy().down();
    try {
      // Its own Sync still keeps its objects: a hand edit is put back, with mgmt out of reach.
      await edge.request({ method: 'PUT', path: cmPath(ns(), 'inline-cm'), body: configMap('inline-cm', 'by-hand') });
      await eventually('the hand edit put back', async () => ((await find<CM>(edge, cmPath(ns(), 'inline-cm')))?.data?.value === 'v2' ? true : undefined));
      // Two template changes meanwhile: the assignment moves on in mgmt, the pull cluster cannot see it.
      await applyProxySync(mgmt, ns(), 'inline', { clusterRef: { name: CLUSTER }, template: { spec: { source: { inline: [configMap('inline-cm', 'v3')] } } } });
      await applyProxySync(mgmt, ns(), 'inline', { clusterRef: { name: CLUSTER }, template: { spec: { source: { inline: [configMap('inline-cm', 'v4')] } } } });
      await eventually('the assignment at v4', async () => (JSON.stringify((await find<SyncObject>(mgmt, syncPath(assignments(), 'inline')))?.spec).includes('v4') ? true : undefined));
      await new Promise((r) => setTimeout(r, 2_000));
      expect((await find<CM>(edge, cmPath(ns(), 'inline-cm')))?.data?.value).toBe('v2');
      before = (await find<SyncObject>(edge, syncPath(ns(), 'inline')))?.metadata.generation ?? -1;
    } finally {
      await upstreamPath.proxy().up();
    }
    await eventually('v4 in edge-1', async () => ((await find<CM>(edge, cmPath(ns(), 'inline-cm')))?.data?.value === 'v4' ? true : undefined), 90_000);
    await eventually('the ProxySync Ready for v4', async () => {
      const p = await find<SyncObject>(mgmt, syncPath(ns(), 'inline', PROXYSYNCS));
      const there = await find<SyncObject>(edge, syncPath(ns(), 'inline'));
      return p && readyOf(p)?.status === 'True' && readyOf(p)?.observedGeneration === p.metadata.generation && p.status?.lastAppliedRevision === there?.status?.lastAppliedRevision ? true : undefined;
    }, 60_000);
    // The latest only: edge-1's Sync went from v2's spec to v4's in one step (v3's would have been a generation of its own).
    expect((await find<SyncObject>(edge, syncPath(ns(), 'inline')))?.metadata.generation).toBe(before + 1);
  });

  test('offline is normal: the ProxySync says since when; deleted meanwhile, its Sync and objects there go once the cluster is back', async () => {
    await spoke!.stop('SIGTERM');
    spoke = undefined;
    const offline = await proxyReady('inline', 'False', 'ClusterOffline', 90_000);
    expect(readyOf(offline)?.message).toMatch(new RegExp(`^pull cluster ${CLUSTER} is offline: last seen \\S+ \\(\\d+ s ago\\)`));
    // A FleetSync counts it as unreachable (onUnreachable), not failed.
    await eventually('the fleet counting it unreachable', async () => {
      const f = await find<SyncObject & { status?: { clusters?: Record<string, number> } }>(mgmt, syncPath(ns(), 'fleet', FLEETSYNCS));
      if (f?.status?.clusters?.unreachable === 1 && f.status.clusters.failed === 0) return true;
      throw new Error(`not counted: ${await fleetState()}`);
    });
    // What it applied keeps running there.
    expect((await find<CM>(edge, cmPath(ns(), 'inline-cm')))?.data?.value).toBe('v4');

    await mgmt.request({ method: 'DELETE', path: syncPath(ns(), 'inline', PROXYSYNCS) });
    // Held: the assignment waits for the cluster's operator (its finalizer), and so does the ProxySync.
    await eventually('the assignment being deleted', async () => ((await find<SyncObject>(mgmt, syncPath(assignments(), 'inline')))?.metadata.deletionTimestamp ? true : undefined));
    expect(await find(mgmt, syncPath(ns(), 'inline', PROXYSYNCS))).toBeDefined();
    expect(await find(edge, syncPath(ns(), 'inline'))).toBeDefined();

    const backAt = Date.now() - 1000;
    spoke = await startSpoke();
    await eventually('the ProxySync gone', async () => ((await find(mgmt, syncPath(ns(), 'inline', PROXYSYNCS))) ? undefined : true), 90_000);
    expect(await find(edge, syncPath(ns(), 'inline'))).toBeUndefined();
    expect(await find(edge, cmPath(ns(), 'inline-cm'))).toBeUndefined();
    expect(await find(mgmt, syncPath(assignments(), 'inline'))).toBeUndefined();
    // The other ProxySync is back to Ready with its cluster, woken by the Lease's renewal (not its 10 s retry).
    await proxyReady('app', 'True', 'Succeeded', 90_000);
    await hub.waitForCause('ProxySync', ns(), 'app', `pull cluster ${CLUSTER} online again`, backAt);
  });

  test('revoke: the identity loses every right at once; the ProxySync says so', async () => {
    const identity = await identityClient();
    try {
      expect(await statusOf(identity, syncPath(assignments()))).toBe(200);
      const revoked = await runCli(['cluster', 'revoke', CLUSTER, '-n', ns(), '--mgmt-kubeconfig', kubeconfigPath(HOME)]);
      expect({ code: revoked.code, stderr: revoked.stderr }).toEqual({ code: 0, stderr: '' });
      await eventually('the token refused', async () => ((await statusOf(identity, syncPath(assignments()))) === 401 ? true : undefined), 30_000);
      const said = await proxyReady('app', 'False', 'ClusterRevoked');
      expect(readyOf(said)?.message).toContain(`pull cluster ${CLUSTER}'s identity was revoked at`);
      // The bundle on disk is the one the spoke may have renewed; it is refused as well.
      expect(readFileSync(joinFile(), 'utf8')).toContain('token:');
    } finally {
      identity.close();
    }
  });
});
