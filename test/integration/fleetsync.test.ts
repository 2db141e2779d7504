// FleetSync through a running operator in mgmt, over the namespace's cluster
// inventory (kubeconfig Secrets labelled syncprims.dev/cluster for edge-1 and
// edge-2, and a Cluster API Cluster): one child per selected cluster, labelled
// in and out, hand edits of a child put back, dependencies per cluster,
// cycles across FleetSyncs, ProxySync children, and deletion.
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { API_VERSION } from '../../src/api/kinds.js';
import type { KubeClient } from '../../src/kube/client.js';
import { writesSince, type AuditEvent } from '../support/audit.js';
import { clusterApiClusterPath, installClusterApiCrd } from '../support/cluster-api.js';
import { clusterClient, closeClients, ensureClusters } from '../support/controlplane.js';
import { installCrds } from '../support/crds.js';
import { eventually } from '../support/eventually.js';
import { useTestNamespace } from '../support/namespace.js';
import { OperatorProcess } from '../support/operator.js';
import { kubeconfigOf, PROXYSYNCS, putKubeconfigSecret, registerCluster as registerInventoryCluster, registerEastAndWest, REMOTESYNCS, applyFleetSync as applyFleetSyncIn, FLEETSYNCS } from '../support/remote.js';
import { eventOf, find, getSync, readyOf, syncPath, waitForReady, type SyncObject } from '../support/syncs.js';

const HOME = 'mgmt';
/** The User-Agent of the operator's requests (src/cli/run/run.ts operatorUserAgent). */
const OPERATOR = 'syncprims-operator';
let mgmt: KubeClient;
let edge1: KubeClient;
let edge2: KubeClient;
let op: OperatorProcess;
const ns = useTestNamespace(HOME, 'fleet');
/** The edges' namespace: the same name in edge-1 (a test namespace) and edge-2 (made alike, deleted at the end). */
const edgeNs = useTestNamespace('edge-1', 'fleetedge');
/** A namespace that exists in edge-1 only: what applies into it fails in edge-2. Of this run alone, so an earlier run's leftovers there cannot conflict. */
const onlyInEast = useTestNamespace('edge-1', 'fleeteast');

function setServer(kc: Record<string, unknown>, server: string): void {
  for (const c of kc.clusters as { cluster: { server: string } }[]) c.cluster.server = server;
}

/** A kubeconfig Secret registered in the inventory as `cluster`, with labels (relabelled in place when it is there). */
const registerCluster = (cluster: string, edge: string, labels: Record<string, string>): Promise<void> => registerInventoryCluster(mgmt, ns(), cluster, edge, labels);

const applyFleetSync = (name: string, spec: Record<string, unknown>): Promise<SyncObject> => applyFleetSyncIn(mgmt, ns(), name, spec);

/** A template of one ConfigMap, in the edges' namespace unless another is named. */
const configMapTemplate = (name: string, namespace?: string, value = 'v1') => ({
  spec: {
    source: { inline: [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { value } }] },
    defaultNamespace: namespace ?? edgeNs(),
  },
});

const cmPath = (namespace: string, name: string): string => `/api/v1/namespaces/${namespace}/configmaps/${name}`;
type Fleet = SyncObject & { status?: { phase?: string; readyClusters?: string; clusters?: Record<string, number>; failures?: unknown[] } };
const getFleet = (name: string): Promise<Fleet> => getSync(mgmt, ns(), name, FLEETSYNCS) as Promise<Fleet>;
/** A child held on one dependency only, once that dependency exists and is not Ready (before, it is NotFound). */
const heldOn = (child: string, kind: string, name: string): Promise<SyncObject> =>
  eventually(`${child} held on ${kind} ${name}`, async () => {
    const s = await getSync(mgmt, ns(), child, REMOTESYNCS);
    const pending = (s.status as { pendingDependencies?: { kind: string; name: string; reason: string }[] } | undefined)?.pendingDependencies;
    return pending?.length === 1 && pending[0]!.kind === kind && pending[0]!.name === name && /NotReady|Progressing/.test(pending[0]!.reason) ? s : undefined;
  }, 60_000);
const children = async (fleet: string, plural = REMOTESYNCS): Promise<string[]> => {
  const list = await mgmt.request<{ items: SyncObject[] }>({ path: syncPath(ns(), '', plural), query: { labelSelector: `syncprims.dev/fleetsync=${fleet}` } });
  return list.items.map((i) => i.metadata.name!).sort();
};

beforeAll(async () => {
  await ensureClusters([HOME, 'edge-1', 'edge-2']);
  mgmt = await clusterClient(HOME);
  edge1 = await clusterClient('edge-1');
  edge2 = await clusterClient('edge-2');
  // edge-1 serves Syncs: the ProxySync children keep one there.
  await Promise.all([installCrds(HOME), installCrds('edge-1')]);
  await installClusterApiCrd(mgmt);
  await registerEastAndWest(mgmt, ns(), edgeNs(), { east: { env: 'prod' }, west: { env: 'staging' } });
  op = await OperatorProcess.start(HOME, ['--namespace', ns(), '--cluster-id', 'mgmt-fleet-test']);
}, 120_000);

afterAll(async () => {
  await op?.stop('SIGTERM');
  await edge2?.request({ method: 'DELETE', path: `/api/v1/namespaces/${edgeNs()}` }).catch(() => undefined);
  await closeClients();
});

describe('FleetSync', () => {
  test('one RemoteSync per selected cluster; a cluster labelled out loses its child (which prunes), labelled in gets it back; deletion removes every child and its objects', async () => {
    await applyFleetSync('web', {
      kind: 'RemoteSync',
      clusters: { selector: { matchExpressions: [{ key: 'env', operator: 'In', values: ['prod', 'staging'] }] } },
      template: { metadata: { labels: { team: 'web' } }, spec: configMapTemplate('web').spec },
    });
    await waitForReady(mgmt, ns(), 'web', 'True', undefined, 90_000, FLEETSYNCS);
    const fleet = await getFleet('web');
    expect(fleet.status?.phase).toBe('Complete');
    expect(fleet.status?.readyClusters).toBe('2/2');
    expect(fleet.status?.clusters).toEqual({ selected: 2, updated: 2, ready: 2, failed: 0, unreachable: 0, progressing: 0 });
    expect(await children('web')).toEqual(['web-east', 'web-west']);
    const child = await getSync(mgmt, ns(), 'web-east', REMOTESYNCS);
    expect(child.metadata.labels).toMatchObject({ 'syncprims.dev/fleetsync': 'web', 'syncprims.dev/cluster': 'east', team: 'web' });
    expect(child.metadata.ownerReferences).toEqual([expect.objectContaining({ kind: 'FleetSync', name: 'web', uid: fleet.metadata.uid, controller: true })]);
    expect((child.spec as { kubeConfig?: unknown }).kubeConfig).toEqual({ secretRef: { name: 'east-kubeconfig', key: 'value' } });
    expect(await find(edge1, cmPath(edgeNs(), 'web'))).toBeDefined();
    expect(await find(edge2, cmPath(edgeNs(), 'web'))).toBeDefined();

    // Labelled out: west's child goes, and with it (deletionPolicy Delete) its ConfigMap in edge-2.
    await registerCluster('west', 'edge-2', { env: 'dev', region: 'west' });
    await eventually('west left', async () => ((await children('web')).join() === 'web-east' ? true : undefined), 60_000);
    await eventually('web-west gone', async () => ((await find(mgmt, syncPath(ns(), 'web-west', REMOTESYNCS))) ? undefined : true), 60_000);
    expect(await find(edge2, cmPath(edgeNs(), 'web'))).toBeUndefined();
    expect(await find(edge1, cmPath(edgeNs(), 'web'))).toBeDefined();
    const after = await eventually('counted again', async () => {
      const f = await getFleet('web');
      return f.status?.readyClusters === '1/1' ? f : undefined;
    });
    expect(readyOf(after)?.status).toBe('True');

    // Labelled back in: its child returns.
    await registerCluster('west', 'edge-2', { env: 'staging', region: 'west' });
    await eventually('west back', async () => ((await children('web')).join() === 'web-east,web-west' ? true : undefined), 60_000);

    await mgmt.request({ method: 'DELETE', path: syncPath(ns(), 'web', FLEETSYNCS) });
    await eventually('fleet gone', async () => ((await find(mgmt, syncPath(ns(), 'web', FLEETSYNCS))) ? undefined : true), 90_000);
    expect(await children('web')).toEqual([]);
    expect(await find(edge1, cmPath(edgeNs(), 'web'))).toBeUndefined();
    expect(await find(edge2, cmPath(edgeNs(), 'web'))).toBeUndefined();
  });

  test('a hand edit of a child is put back at once, by watch', async () => {
    await applyFleetSync('edited', {
      kind: 'RemoteSync',
      clusters: { names: ['east'] },
      template: configMapTemplate('edited'),
    });
    await waitForReady(mgmt, ns(), 'edited', 'True', undefined, 60_000, FLEETSYNCS);
    const before = await getSync(mgmt, ns(), 'edited-east', REMOTESYNCS);
    expect((before.spec as { interval?: string }).interval).toBe('10m');
    await mgmt.request({
      method: 'PATCH',
      path: syncPath(ns(), 'edited-east', REMOTESYNCS),
      query: { fieldManager: 'kubectl-edit' },
      contentType: 'application/merge-patch+json',
      body: { spec: { interval: '1h' }, metadata: { labels: { 'syncprims.dev/fleetsync': 'someone-else' } } },
    });
    const put = await eventually('put back', async () => {
      const c = await getSync(mgmt, ns(), 'edited-east', REMOTESYNCS);
      const spec = c.spec as { interval?: string };
      return spec.interval === '10m' && c.metadata.labels?.['syncprims.dev/fleetsync'] === 'edited' ? c : undefined;
    }, 30_000);
    expect(Number(put.metadata.generation)).toBeGreaterThan(Number(before.metadata.generation));
  });

  test('dependencies per cluster: a FleetSync entry holds each child on the same cluster\'s child only, or on that FleetSync as a whole where it leaves the cluster out; a Cluster API Cluster is selected too', async () => {
    const since = new Date();
    // A Cluster API cluster `capi` on edge-2 (its kubeconfig Secret unlabelled, <name>-kubeconfig).
    await putKubeconfigSecret(mgmt, ns(), 'capi-kubeconfig', await kubeconfigOf('edge-2'));
    await mgmt.request({
      method: 'POST',
      path: clusterApiClusterPath(ns(), '').replace(/\/$/, ''),
      body: { apiVersion: 'cluster.x-k8s.io/v1beta1', kind: 'Cluster', metadata: { name: 'capi', namespace: ns(), labels: { tier: 'base' } }, spec: {} },
    });
    await registerCluster('east', 'edge-1', { env: 'prod', region: 'east', tier: 'base' });
    // base fails on capi (edge-2): its namespace exists in edge-1 only.
    await applyFleetSync('base', {
      kind: 'RemoteSync',
      clusters: { selector: { matchLabels: { tier: 'base' } } },
      template: configMapTemplate('base', onlyInEast()),
    });
    await applyFleetSync('app', {
      kind: 'RemoteSync',
      clusters: { selector: { matchLabels: { tier: 'base' } } },
      dependsOn: [{ kind: 'FleetSync', name: 'base' }],
      template: configMapTemplate('app'),
    });
    await waitForReady(mgmt, ns(), 'app-east', 'True', undefined, 90_000, REMOTESYNCS);
    // Held on base's child in capi: NotFound until base has made it, then NotReady or Progressing.
    const held = await heldOn('app-capi', 'RemoteSync', 'base-capi');
    expect(readyOf(held)).toMatchObject({ status: 'False', reason: 'DependencyNotReady' });
    expect((held.spec as { clusterRef?: unknown }).clusterRef).toEqual({ name: 'capi' });
    const base = await eventually('base counts capi failing', async () => {
      const f = await getFleet('base');
      return f.status?.clusters?.failed === 1 ? f : undefined;
    }, 60_000);
    expect(readyOf(base)).toMatchObject({ status: 'False', reason: 'ClustersFailing' });
    expect(base.status?.failures).toEqual([expect.objectContaining({ cluster: 'capi', reason: 'ApplyFailed' })]);
    await eventOf(mgmt, ns(), 'base', 'ClustersFailing', 'Warning');
    // The app FleetSync as a whole is not gated by base (per cluster): east Ready, capi progressing.
    await eventually('app counted', async () => {
      const f = await getFleet('app');
      return f.status?.clusters?.ready === 1 && f.status.clusters.progressing === 1 && f.status.clusters.selected === 2 ? f : undefined;
    }, 30_000);
    // What each edge got, from its audit log: edge-1's app ConfigMap written only after its base one was;
    // edge-2 was sent base (refused: its namespace exists in edge-1 only) and never app.
    const configMapWrites = async (edge: string, name: string) =>
      ((await writesSince(edge, since, OPERATOR)) as (AuditEvent & { stageTimestamp: string })[]).filter((w) => w.objectRef?.resource === 'configmaps' && w.objectRef.name === name);
    const [eastBase, eastApp, capiBase, capiApp] = await Promise.all([configMapWrites('edge-1', 'base'), configMapWrites('edge-1', 'app'), configMapWrites('edge-2', 'base'), configMapWrites('edge-2', 'app')]);
    const created = eastBase.find((w) => (w.responseStatus?.code ?? 0) < 300);
    expect({ eastBase: created !== undefined, eastApp: eastApp.length > 0, capiBaseSent: capiBase.length > 0, capiApp: capiApp.map((w) => w.requestURI) }).toEqual({ eastBase: true, eastApp: true, capiBaseSent: true, capiApp: [] });
    expect(eastApp[0]!.requestReceivedTimestamp > created!.stageTimestamp).toBe(true);

    // A FleetSync that leaves the cluster out (as an install FleetSync of RemoteSyncs leaves out a
    // pull cluster) is waited for as a whole: east's child of `later` waits for capi-only, which
    // selects capi alone and fails there; once capi-only selects east too, for its child in east.
    await applyFleetSync('capi-only', { kind: 'RemoteSync', clusters: { names: ['capi'] }, template: configMapTemplate('capi-only') });
    await applyFleetSync('later', { kind: 'RemoteSync', clusters: { names: ['east'] }, dependsOn: [{ kind: 'FleetSync', name: 'capi-only' }], template: configMapTemplate('later') });
    const whole = await heldOn('later-east', 'FleetSync', 'capi-only');
    expect(readyOf(whole)).toMatchObject({ status: 'False', reason: 'DependencyNotReady' });
    expect((whole.spec as { dependsOn?: unknown }).dependsOn).toEqual([{ kind: 'FleetSync', name: 'capi-only', requiredStatus: 'Current' }]);
    await applyFleetSync('capi-only', { kind: 'RemoteSync', clusters: { names: ['capi', 'east'] }, template: configMapTemplate('capi-only') });
    const perCluster = await waitForReady(mgmt, ns(), 'later-east', 'True', undefined, 60_000, REMOTESYNCS);
    expect((perCluster.spec as { dependsOn?: unknown }).dependsOn).toEqual([{ kind: 'RemoteSync', name: 'capi-only-east', requiredStatus: 'Current' }]);
    for (const name of ['app', 'base', 'later', 'capi-only']) await mgmt.request({ method: 'DELETE', path: syncPath(ns(), name, FLEETSYNCS) });
    for (const name of ['base', 'capi-only']) await eventually(`${name} gone`, async () => ((await find(mgmt, syncPath(ns(), name, FLEETSYNCS))) ? undefined : true), 90_000);
  });

  test('suspend is passed to the children, and the FleetSync says Suspended; a reconcile request is echoed', async () => {
    await applyFleetSync('paused', { kind: 'RemoteSync', clusters: { names: ['east'] }, suspend: true, template: configMapTemplate('paused') });
    await waitForReady(mgmt, ns(), 'paused', 'Unknown', 'Suspended', 60_000, FLEETSYNCS);
    const child = await eventually('child', () => find<SyncObject>(mgmt, syncPath(ns(), 'paused-east', REMOTESYNCS)), 30_000);
    expect((child.spec as { suspend?: boolean }).suspend).toBe(true);
    expect(await find(edge1, cmPath(edgeNs(), 'paused'))).toBeUndefined();
    await mgmt.request({
      method: 'PATCH',
      path: syncPath(ns(), 'paused', FLEETSYNCS),
      contentType: 'application/merge-patch+json',
      body: { metadata: { annotations: { 'syncprims.dev/reconcile-requested-at': 'now-1' } } },
    });
    await eventually('echoed', async () => ((await getSync(mgmt, ns(), 'paused', FLEETSYNCS)).status as { lastHandledReconcileAt?: string } | undefined)?.lastHandledReconcileAt === 'now-1' || undefined, 30_000);
  });

  test('a cycle across FleetSyncs is reported with its path', async () => {
    await applyFleetSync('ping', { kind: 'RemoteSync', clusters: { names: ['east'] }, dependsOn: [{ kind: 'FleetSync', name: 'pong' }], template: configMapTemplate('ping') });
    await applyFleetSync('pong', { kind: 'RemoteSync', clusters: { names: ['east'] }, dependsOn: [{ kind: 'FleetSync', name: 'ping' }], template: configMapTemplate('pong') });
    const stalled = await waitForReady(mgmt, ns(), 'ping', 'False', 'DependencyCycle', 60_000, FLEETSYNCS);
    expect(readyOf(stalled)?.message).toContain('FleetSync/ping -> FleetSync/pong -> FleetSync/ping');
  });

  test('ProxySync children: each keeps a Sync, named after the FleetSync, in its cluster', async () => {
    await applyFleetSync('proxied', {
      clusters: { names: ['east'] },
      template: { metadata: { namespace: edgeNs() }, spec: configMapTemplate('proxied').spec },
    });
    expect(await eventually('child', async () => ((await children('proxied', PROXYSYNCS)).length === 1 ? true : undefined), 30_000)).toBe(true);
    const remote = await eventually('remote Sync in edge-1', () => find<SyncObject>(edge1, syncPath(edgeNs(), 'proxied')), 60_000);
    expect(remote.spec).toMatchObject({ source: { inline: [expect.objectContaining({ kind: 'ConfigMap' })] } });
  });
});

describe('FleetSync rollouts', () => {
  type Rolled = Fleet & { status?: { phase?: string; message?: string; updateRevision?: string; currentRevision?: string; waves?: { name: string; soakUntil?: string; members?: string[] }[] } };
  const rolled = (name: string) => getFleet(name) as Promise<Rolled>;
  const revisionOf = async (child: string): Promise<string | undefined> => (await getSync(mgmt, ns(), child, REMOTESYNCS)).metadata.annotations?.['syncprims.dev/fleet-revision'];
  const valueIn = async (edge: KubeClient, name: string): Promise<string | undefined> => (await find<{ data?: { value?: string } }>(edge, cmPath(edgeNs(), name)))?.data?.value;
  const waitPhase = (name: string, phase: string, timeoutMs = 60_000) =>
    eventually(`${name} ${phase}`, async () => {
      const f = await rolled(name);
      return f.status?.phase === phase && f.status.observedGeneration === f.metadata.generation ? f : undefined;
    }, timeoutMs);
  const rollout = (extra: Record<string, unknown> = {}) => ({
    waves: [{ name: 'canary', selector: { matchLabels: { region: 'east' } } }, { name: 'rest' }],
    ...extra,
  });
  /** Revision `value` of the ConfigMap `roll`; `broken` adds an object that cannot be applied (its namespace exists nowhere). */
  const roll = (value: string, extra: Record<string, unknown> = {}, broken = false) => {
    const template = configMapTemplate('roll', undefined, value);
    if (broken) template.spec.source.inline.push({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'roll', namespace: BROKEN_NS }, data: { value } } as never);
    return applyFleetSync('roll', { kind: 'RemoteSync', clusters: { names: ['east', 'west'] }, rollout: rollout(extra), template });
  };

  // From the audit logs (Metadata level: who wrote what, when; no bodies). Timestamps are RFC 3339
  // with microseconds, always six digits: they compare as strings.
  type Timed = AuditEvent & { stageTimestamp: string };
  const BROKEN_NS = 'fleet-nowhere';
  /** The operator's writes to the ConfigMap `name` (in the edges' namespace or the broken one) in `edge`, in time order. */
  const configMapWrites = async (edge: string, name: string, since: Date): Promise<Timed[]> =>
    ((await writesSince(edge, since, OPERATOR)) as Timed[]).filter(
      (w) => w.objectRef?.resource === 'configmaps' && w.objectRef.name === name && [edgeNs(), BROKEN_NS].includes(w.objectRef.namespace ?? ''),
    );
  /** The operator's writes to the child RemoteSync `child` in mgmt: its spec (the FleetSync's), or its status. */
  const childWrites = async (child: string, since: Date, subresource?: 'status'): Promise<Timed[]> =>
    ((await writesSince(HOME, since, OPERATOR)) as Timed[]).filter(
      (w) => w.objectRef?.resource === REMOTESYNCS && w.objectRef.namespace === ns() && w.objectRef.name === child && w.objectRef.subresource === subresource,
    );
  /**
   * That the rest's cluster (edge-2) got nothing of the revision rolled since `since` before the
   * canary (east, edge-1) was Ready with it: edge-1's ConfigMap written, then the child roll-east's
   * status reported, then the child roll-west given the revision, then edge-2's ConfigMap written.
   */
  async function expectCanaryFirst(name: string, since: Date): Promise<void> {
    const east = await configMapWrites('edge-1', name, since);
    const west = await configMapWrites('edge-2', name, since);
    const admitted = await childWrites(`${name}-west`, since);
    expect([east.length > 0, admitted.length > 0, west.length > 0]).toEqual([true, true, true]);
    const applied = east[east.length - 1]!.stageTimestamp;
    const reported = (await childWrites(`${name}-east`, since, 'status')).filter((w) => w.requestReceivedTimestamp > applied && w.stageTimestamp < admitted[0]!.requestReceivedTimestamp);
    expect({ admittedAfterApplied: admitted[0]!.requestReceivedTimestamp > applied, reportedBetween: reported.length > 0 }).toEqual({ admittedAfterApplied: true, reportedBetween: true });
    expect(west[0]!.requestReceivedTimestamp > admitted[0]!.stageTimestamp).toBe(true);
  }

  test('a broken revision halts at the canary and never reaches the rest; fixing forward rolls on; revisions are kept', async () => {
    await roll('v1');
    await waitPhase('roll', 'Complete', 90_000);
    expect([await valueIn(edge1, 'roll'), await valueIn(edge2, 'roll')]).toEqual(['v1', 'v1']);
    const good = (await rolled('roll')).status?.currentRevision;

    // Broken: it changes the ConfigMap both clusters have (v2) and adds one the canary cannot apply (its namespace exists nowhere).
    const broke = new Date();
    await roll('v2', {}, true);
    const halted = await waitPhase('roll', 'Halted');
    expect(readyOf(halted)).toMatchObject({ status: 'False', reason: 'RolloutHalted' });
    expect(halted.status?.message).toContain('wave canary: 1 failing (at most 0): east');
    expect(halted.status?.currentRevision).toBe(good);
    expect(await revisionOf('roll-west')).toBe(good);
    // The canary took the change (its ConfigMap is v2); the rest did not: had the broken revision reached it, it would read v2 too.
    expect([await valueIn(edge1, 'roll'), await valueIn(edge2, 'roll')]).toEqual(['v2', 'v1']);
    await eventOf(mgmt, ns(), 'roll', 'RolloutHalted', 'Warning');

    // Fixing forward: a new revision starts again from the canary and reaches both.
    const fixed = new Date();
    // While halted, nothing at all was written to the rest: not its child, not its cluster.
    const toRest = [...(await childWrites('roll-west', broke)), ...(await configMapWrites('edge-2', 'roll', broke))].filter((w) => w.requestReceivedTimestamp < fixed.toISOString());
    expect(toRest.map((w) => `${w.verb} ${w.requestURI}`)).toEqual([]);
    await roll('v3');
    const done = await waitPhase('roll', 'Complete', 90_000);
    await expectCanaryFirst('roll', fixed);
    expect([await valueIn(edge1, 'roll'), await valueIn(edge2, 'roll')]).toEqual(['v3', 'v3']);
    expect(await revisionOf('roll-west')).toBe(done.status?.currentRevision);
    const revisions = await mgmt.request<{ items: { revision: number }[] }>({ path: `/apis/apps/v1/namespaces/${ns()}/controllerrevisions`, query: { labelSelector: 'syncprims.dev/fleetsync=roll' } });
    expect(revisions.items.map((r) => r.revision).sort()).toEqual([1, 2, 3]);
  });

  test('a cluster joining mid-rollout gets the current revision at once, and the new one when its wave admits it', async () => {
    const spec = (value: string, paused: boolean) => ({
      kind: 'RemoteSync',
      clusters: { selector: { matchLabels: { joins: 'yes' } } },
      rollout: rollout({ paused }),
      template: configMapTemplate('joined', undefined, value),
    });
    await registerCluster('east', 'edge-1', { env: 'prod', region: 'east', tier: 'base', joins: 'yes' });
    await applyFleetSync('joined', spec('v1', false));
    const first = await waitPhase('joined', 'Complete', 60_000);
    await applyFleetSync('joined', spec('v2', true));
    await waitPhase('joined', 'Paused');
    await registerCluster('west', 'edge-2', { env: 'staging', region: 'west', joins: 'yes' });
    await eventually('west given the current revision', async () => ((await valueIn(edge2, 'joined')) === 'v1' ? true : undefined), 60_000);
    expect(await revisionOf('joined-west')).toBe(first.status?.currentRevision);
    expect(await valueIn(edge1, 'joined')).toBe('v1');
    await applyFleetSync('joined', spec('v2', false));
    await waitPhase('joined', 'Complete', 60_000);
    expect([await valueIn(edge1, 'joined'), await valueIn(edge2, 'joined')]).toEqual(['v2', 'v2']);
  });

  test("a wave's gates hold it until the sync they name is Ready, which wakes it", async () => {
    const spec = (value: string) => ({
      kind: 'RemoteSync',
      clusters: { names: ['east', 'west'] },
      rollout: { waves: [{ name: 'canary', selector: { matchLabels: { region: 'east' } } }, { name: 'rest', gates: { dependsOn: [{ kind: 'Sync', name: 'smoke' }] } }] },
      template: configMapTemplate('gated', undefined, value),
    });
    await applyFleetSync('gated', spec('v1'));
    const held = await eventually('held by its gate', async () => {
      const f = await rolled('gated');
      return f.status?.message?.includes('wave rest waits for its gates: Sync/smoke (NotFound)') ? f : undefined;
    }, 60_000);
    expect(held.status?.phase).toBe('Progressing');
    expect(await valueIn(edge2, 'gated')).toBeUndefined();
    await mgmt.request({
      method: 'POST',
      path: syncPath(ns()),
      body: { apiVersion: API_VERSION, kind: 'Sync', metadata: { name: 'smoke', namespace: ns() }, spec: { defaultNamespace: ns(), source: { inline: [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'smoke' }, data: { passed: 'yes' } }] } } },
    });
    await waitPhase('gated', 'Complete', 60_000);
    expect(await valueIn(edge2, 'gated')).toBe('v1');
  });

  test('an unreachable cluster holds its wave (onUnreachable: Wait), not with Skip, and halts it with Fail', async () => {
    await mgmt.request({
      method: 'PATCH',
      path: `/api/v1/namespaces/${ns()}/secrets/dark-kubeconfig`,
      query: { fieldManager: 'test', force: true },
      contentType: 'application/apply-patch+yaml',
      body: {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: 'dark-kubeconfig', namespace: ns(), labels: { 'syncprims.dev/cluster': 'dark', region: 'dark' } },
        // Loopback, a port nothing listens on: refused at once.
        data: { value: Buffer.from(await kubeconfigOf('edge-1', (kc) => setServer(kc, 'https://127.0.0.1:1'))).toString('base64') },
      },
    });
    const spec = (onUnreachable: string, value = 'v1') => ({
      kind: 'RemoteSync',
      clusters: { names: ['dark', 'east'] },
      rollout: { onUnreachable, waves: [{ name: 'canary', selector: { matchLabels: { region: 'dark' } } }, { name: 'rest' }] },
      template: configMapTemplate('dark', undefined, value),
    });
    await applyFleetSync('dark', spec('Wait'));
    const waiting = await eventually('the canary unreachable', async () => {
      const f = await rolled('dark');
      return f.status?.waves?.[0] && (f.status.waves[0] as { unreachable?: number }).unreachable === 1 ? f : undefined;
    }, 60_000);
    expect(waiting.status?.phase).toBe('Progressing');
    expect(await valueIn(edge1, 'dark')).toBeUndefined();
    await applyFleetSync('dark', spec('Skip'));
    const done = await waitPhase('dark', 'Complete', 60_000);
    expect(await valueIn(edge1, 'dark')).toBe('v1');
    expect(readyOf(done)).toMatchObject({ status: 'False', reason: 'ClusterUnreachable' });

    // Fail: the unreachable canary counts against its failure budget, and the rollout halts there.
    const failed = new Date();
    await applyFleetSync('dark', spec('Fail', 'v2'));
    const halted = await waitPhase('dark', 'Halted');
    expect(halted.status?.message).toContain('wave canary: 1 failing (at most 0): dark');
    expect(halted.status?.failures).toEqual([expect.objectContaining({ cluster: 'dark', reason: 'ClusterUnreachable' })]);
    expect(readyOf(halted)).toMatchObject({ status: 'False', reason: 'RolloutHalted' });
    expect(await valueIn(edge1, 'dark')).toBe('v1');
    expect((await configMapWrites('edge-1', 'dark', failed)).map((w) => `${w.verb} ${w.requestURI}`)).toEqual([]);
  });

  test('paused admits nothing; soak holds the next wave; approval holds its wave until given', async () => {
    await roll('v4', { paused: true });
    const paused = await waitPhase('roll', 'Paused');
    expect(await revisionOf('roll-east')).toBe(paused.status?.currentRevision);
    expect(await valueIn(edge1, 'roll')).toBe('v3');

    const soakFrom = new Date();
    await roll('v4', { soak: '10s' });
    const soaking = await waitPhase('roll', 'Soaking');
    const soakUntil = Date.parse(soaking.status?.waves?.[0]?.soakUntil ?? '');
    expect(soakUntil).not.toBeNaN();
    expect(await valueIn(edge1, 'roll')).toBe('v4');
    const [during, readAt] = [await valueIn(edge2, 'roll'), Date.now()];
    await waitPhase('roll', 'Complete', 60_000);
    // What the hold is proven by is the audit log below (edge-2 written only once the soak was over); the read
    // counts only when it fell inside the soak (a busy machine may read after it: then it says nothing).
    if (readAt < soakUntil) expect(during).toBe('v3');
    const west = await configMapWrites('edge-2', 'roll', soakFrom);
    expect(west.length).toBeGreaterThan(0);
    expect(Date.parse(west[0]!.requestReceivedTimestamp)).toBeGreaterThanOrEqual(soakUntil);

    await applyFleetSync('roll', {
      kind: 'RemoteSync',
      clusters: { names: ['east', 'west'] },
      rollout: { waves: [{ name: 'canary', selector: { matchLabels: { region: 'east' } } }, { name: 'rest', approval: true }] },
      template: configMapTemplate('roll', undefined, 'v5'),
    });
    const waiting = await waitPhase('roll', 'AwaitingApproval');
    expect(waiting.status?.message).toContain('wave rest waits for approval');
    expect(await valueIn(edge2, 'roll')).toBe('v4');
    const approval = { fleetSync: 'roll', revision: waiting.status?.updateRevision, wave: 'rest', approver: 'admin' };
    await mgmt.request({
      method: 'POST',
      path: `/apis/syncprims.dev/v1alpha1/namespaces/${ns()}/rolloutapprovals`,
      body: { apiVersion: 'syncprims.dev/v1alpha1', kind: 'RolloutApproval', metadata: { name: 'roll-rest' }, spec: approval },
    });
    await waitPhase('roll', 'Complete', 60_000);
    expect(await valueIn(edge2, 'roll')).toBe('v5');
  });
});
