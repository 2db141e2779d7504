// What a FleetSync trusts, through a running operator in mgmt over edge-1 and
// edge-2 (issue 43): a ControllerRevision replaced by hand changes nothing a
// held-back cluster receives and `rollout undo` refuses it; a StatefulSet's
// revisions carrying our label are never deleted; a FleetSync past its quota
// writes nothing; a second claim of a cluster's name prunes nothing there.
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { API_VERSION } from '../../src/api/kinds.js';
import { templateRevision } from '../../src/fleet/children.js';
import type { KubeClient } from '../../src/kube/client.js';
import { writesSince, type AuditEvent } from '../support/audit.js';
import { assertCliBuilt, runCli } from '../support/cli.js';
import { clusterClient, closeClients, ensureClusters, kubeconfigPath } from '../support/controlplane.js';
import { installCrds } from '../support/crds.js';
import { eventually } from '../support/eventually.js';
import { useTestNamespace } from '../support/namespace.js';
import { OperatorProcess } from '../support/operator.js';
import { registerCluster as registerInventoryCluster, registerEastAndWest, REMOTESYNCS } from '../support/remote.js';
import { eventOf, find, getSync, readyOf, syncPath, type SyncObject } from '../support/syncs.js';

const HOME = 'mgmt';
const OPERATOR = 'syncprims-operator';
const FLEETSYNCS = 'fleetsyncs';
const REVISIONS = 'controllerrevisions';
let mgmt: KubeClient;
let edge1: KubeClient;
let edge2: KubeClient;
let op: OperatorProcess;
const ns = useTestNamespace(HOME, 'fleettrust');
/** The edges' namespace: a test namespace in edge-1, made alike in edge-2 (deleted at the end). */
const edgeNs = useTestNamespace('edge-1', 'trustedge');

type Fleet = SyncObject & { status?: { phase?: string; currentRevision?: string; updateRevision?: string; failures?: { cluster: string; reason: string; message: string }[] } };
const getFleet = (name: string): Promise<Fleet> => getSync(mgmt, ns(), name, FLEETSYNCS) as Promise<Fleet>;
const revisionsPath = (name = ''): string => `/apis/apps/v1/namespaces/${ns()}/${REVISIONS}${name ? `/${name}` : ''}`;
const cmPath = (name: string): string => `/api/v1/namespaces/${edgeNs()}/configmaps/${name}`;
const valueIn = async (edge: KubeClient, name: string): Promise<string | undefined> => (await find<{ data?: { value?: string } }>(edge, cmPath(name)))?.data?.value;

/** A kubeconfig Secret `secret` claiming the cluster name `cluster`, for `edge`. */
const registerCluster = (cluster: string, edge: string, labels: Record<string, string> = {}, secret?: string): Promise<void> =>
  registerInventoryCluster(mgmt, ns(), cluster, edge, labels, secret);

/** A FleetSync of RemoteSyncs over the clusters `names`, each applying the ConfigMap `cm` with `value` into the edges' namespace. */
function applyFleet(name: string, names: string[], cm: string, value: string, rollout?: Record<string, unknown>): Promise<SyncObject> {
  const template = { spec: { source: { inline: [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: cm }, data: { value } }] }, defaultNamespace: edgeNs() } };
  return mgmt.request<SyncObject>({
    method: 'PATCH',
    path: syncPath(ns(), name, FLEETSYNCS),
    query: { fieldManager: 'test', force: true },
    contentType: 'application/apply-patch+yaml',
    body: { apiVersion: API_VERSION, kind: 'FleetSync', metadata: { name, namespace: ns() }, spec: { kind: 'RemoteSync', clusters: { names }, template, ...(rollout && { rollout }) } },
  });
}

const waitPhase = (name: string, phase: string, timeoutMs = 60_000): Promise<Fleet> =>
  eventually(`${name} ${phase}`, async () => {
    const f = await getFleet(name);
    return f.status?.phase === phase && f.status.observedGeneration === f.metadata.generation ? f : undefined;
  }, timeoutMs);

/** The operator's writes in mgmt, in this file's namespace, to objects whose name starts with `prefix`. */
const writesTo = async (since: Date, prefix: string, resources: string[]): Promise<string[]> =>
  ((await writesSince(HOME, since, OPERATOR)) as AuditEvent[])
    .filter((w) => w.objectRef?.namespace === ns() && resources.includes(w.objectRef.resource ?? '') && (w.objectRef.name ?? '').startsWith(prefix))
    .map((w) => `${w.verb} ${w.objectRef!.resource}/${w.objectRef!.name}${w.objectRef!.subresource ? `/${w.objectRef!.subresource}` : ''}`);

/** The FleetSync's reconciles once none has come for a second (the operator runs at debug level). */
const settled = (name: string): Promise<number> => op.settledReconciles('FleetSync', ns(), name);

beforeAll(async () => {
  assertCliBuilt();
  await ensureClusters([HOME, 'edge-1', 'edge-2']);
  mgmt = await clusterClient(HOME);
  edge1 = await clusterClient('edge-1');
  edge2 = await clusterClient('edge-2');
  await installCrds(HOME);
  await registerEastAndWest(mgmt, ns(), edgeNs());
  op = await OperatorProcess.start(HOME, ['--namespace', ns(), '--cluster-id', 'mgmt-fleet-trust-test', '--log-level', 'debug', '--fleet-max-clusters', '2', '--fleet-max-size', '1']);
}, 120_000);

afterAll(async () => {
  await op?.stop('SIGTERM');
  await edge2?.request({ method: 'DELETE', path: `/api/v1/namespaces/${edgeNs()}` }).catch(() => undefined);
  await closeClients();
});

describe('FleetSync trust', () => {
  test('a held revision replaced by hand: the held-back cluster keeps what it has, the Warning says why, undo refuses it, and it is not deleted', async () => {
    await applyFleet('held', ['east', 'west'], 'held', 'v1');
    const first = await waitPhase('held', 'Complete', 90_000);
    const good = first.status!.currentRevision!;
    const waves = [{ name: 'canary', selector: { matchLabels: { region: 'east' } } }, { name: 'rest', approval: true }];
    await applyFleet('held', ['east', 'west'], 'held', 'v2', { waves });
    await waitPhase('held', 'AwaitingApproval');
    expect([await valueIn(edge1, 'held'), await valueIn(edge2, 'held')]).toEqual(['v2', 'v1']);

    // Planted: the revision west is held at, replaced (its data is immutable) with the same name, owner, labels and number.
    const planted = new Date();
    type Revision = SyncObject & { data: { template: { spec: { source: { inline: { data: { value: string } }[] } } } }; revision: number };
    const revision = await mgmt.request<Revision>({ path: revisionsPath(`held-${good}`) });
    revision.data.template.spec.source.inline[0]!.data.value = 'planted';
    const { name, labels, annotations, ownerReferences } = revision.metadata;
    await mgmt.request({ method: 'DELETE', path: revisionsPath(`held-${good}`) });
    await mgmt.request({ method: 'POST', path: revisionsPath(), body: { ...revision, metadata: { name, labels, annotations, ownerReferences } } });
    // A hand edit of west's child: the operator builds it again, from the held revision.
    await mgmt.request({ method: 'PATCH', path: syncPath(ns(), 'held-west', REMOTESYNCS), contentType: 'application/merge-patch+json', body: { metadata: { annotations: { poked: 'yes' } } } });
    const warning = await eventOf(mgmt, ns(), 'held', 'UntrustedRevision', 'Warning');
    expect(warning.message).toContain(`ControllerRevision held-${good} (its data hashes to`);
    expect(warning.message).toContain(`not to ${good} as its name says: it was changed after the operator wrote it)`);
    await settled('held');
    const west = await getSync(mgmt, ns(), 'held-west', REMOTESYNCS);
    expect(JSON.stringify(west.spec)).not.toContain('planted');
    expect(await valueIn(edge2, 'held')).toBe('v1');
    const undo = await runCli(['rollout', 'undo', 'fleetsync/held', '--kubeconfig', kubeconfigPath(HOME), '-n', ns()], { timeoutMs: 60_000 });
    expect(undo.code).toBe(1);
    expect(undo.stderr).toContain(`revision 1 (ControllerRevision held-${good}) is not this FleetSync's own: its data hashes to`);
    expect((await getFleet('held')).spec).toMatchObject({ template: { spec: { source: { inline: [{ data: { value: 'v2' } }] } } } });

    // Planted with an honest hash, the FleetSync's uid and the highest number: not one the operator recorded.
    const forged = { kind: 'RemoteSync' as const, template: { ...revision.data.template, spec: { ...revision.data.template.spec, source: { inline: [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'held' }, data: { value: 'forged' } }] } } } };
    const digest = templateRevision(forged as unknown as Parameters<typeof templateRevision>[0]);
    await mgmt.request({
      method: 'POST',
      path: revisionsPath(),
      body: { apiVersion: 'apps/v1', kind: 'ControllerRevision', metadata: { name: `held-${digest}`, labels, annotations: { 'syncprims.dev/fleet-revision': digest }, ownerReferences }, data: forged, revision: 99 },
    });
    const history = await runCli(['rollout', 'history', 'fleetsync/held', '--kubeconfig', kubeconfigPath(HOME), '-n', ns()], { timeoutMs: 60_000 });
    expect(history.stdout).toContain(`ignored: ControllerRevision held-${digest} (revision 99): its digest ${digest} is not one the operator recorded`);
    expect(history.stdout).toContain(`ignored: ControllerRevision held-${good} (revision 1): its data hashes to`);
    const forgedUndo = await runCli(['rollout', 'undo', 'fleetsync/held', '--kubeconfig', kubeconfigPath(HOME), '-n', ns()], { timeoutMs: 60_000 });
    expect(forgedUndo.code).toBe(1);
    expect(forgedUndo.stderr).toContain(`revision 99 (ControllerRevision held-${digest}) is not this FleetSync's own`);

    // Approved: west gets the update revision, never the planted one; the planted revision is left where it is.
    const approval = { fleetSync: 'held', revision: (await getFleet('held')).status?.updateRevision, wave: 'rest', approver: 'admin' };
    await mgmt.request({
      method: 'POST',
      path: `/apis/syncprims.dev/v1alpha1/namespaces/${ns()}/rolloutapprovals`,
      body: { apiVersion: 'syncprims.dev/v1alpha1', kind: 'RolloutApproval', metadata: { name: 'held-rest' }, spec: approval },
    });
    await waitPhase('held', 'Complete', 60_000);
    expect(await valueIn(edge2, 'held')).toBe('v2');
    const edge2Writes = ((await writesSince('edge-2', planted, OPERATOR)) as AuditEvent[]).filter((w) => w.objectRef?.resource === 'configmaps' && w.objectRef.namespace === edgeNs());
    expect(edge2Writes.length).toBeGreaterThan(0);
    expect(await find(mgmt, revisionsPath(`held-${good}`))).toMatchObject({ data: { template: { spec: { source: { inline: [{ data: { value: 'planted' } }] } } } } });
    expect((await writesTo(planted, `held-${good}`, [REVISIONS]))).toEqual([]);
  });

  test("a StatefulSet's revisions carrying our label are never deleted nor changed, and are told once", async () => {
    const sts = await mgmt.request<SyncObject>({
      method: 'POST',
      path: `/apis/apps/v1/namespaces/${ns()}/statefulsets`,
      body: {
        apiVersion: 'apps/v1',
        kind: 'StatefulSet',
        metadata: { name: 'db' },
        spec: {
          replicas: 0,
          serviceName: 'db',
          selector: { matchLabels: { app: 'db' } },
          template: { metadata: { labels: { app: 'db', 'syncprims.dev/fleetsync': 'app' } }, spec: { containers: [{ name: 'db', image: 'registry.invalid/db:1' }] } },
        },
      },
    });
    // Its history as a StatefulSet's controller would keep it: more than the 10 a FleetSync keeps.
    for (let n = 1; n <= 11; n++) {
      await mgmt.request({
        method: 'POST',
        path: revisionsPath(),
        body: {
          apiVersion: 'apps/v1',
          kind: 'ControllerRevision',
          metadata: {
            name: `db-rev-${n}`,
            labels: { app: 'db', 'syncprims.dev/fleetsync': 'app' },
            ownerReferences: [{ apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'db', uid: sts.metadata.uid, controller: true }],
          },
          data: { spec: { template: { metadata: { labels: { app: 'db' } } } } },
          revision: n,
        },
      });
    }
    const since = new Date();
    await applyFleet('app', ['east'], 'app', 'v1');
    await waitPhase('app', 'Complete', 90_000);
    await applyFleet('app', ['east'], 'app', 'v2');
    const done = await waitPhase('app', 'Complete', 60_000);
    await eventOf(mgmt, ns(), 'app', 'UntrustedRevision', 'Warning');
    await settled('app');
    const list = await mgmt.request<{ items: { metadata: { name: string }; revision: number }[] }>({ path: revisionsPath(), query: { labelSelector: 'syncprims.dev/fleetsync=app' } });
    const byName = Object.fromEntries(list.items.map((r) => [r.metadata.name, r.revision]));
    for (let n = 1; n <= 11; n++) expect(byName[`db-rev-${n}`]).toBe(n);
    // Its own revisions numbered among themselves: 1 and 2.
    expect(byName[`app-${done.status?.updateRevision}`]).toBe(2);
    expect((await writesTo(since, 'db-rev-', [REVISIONS]))).toEqual([]);
    const told = op.logs.filter((l) => l.name === 'app' && l.namespace === ns() && String(l.msg).startsWith('ControllerRevisions with the FleetSync'));
    expect(told.length).toBe(1);
    expect((told[0]!.revisions as unknown[]).length).toBe(11);
  });

  test('a FleetSync past its quota writes nothing: too many clusters, or too many bytes', async () => {
    await registerCluster('north', 'edge-1');
    const since = new Date();
    await applyFleet('wide', ['east', 'west', 'north'], 'wide', 'v1');
    const wide = await eventually('wide refused', async () => {
      const f = await getFleet('wide');
      return readyOf(f)?.reason === 'QuotaExceeded' ? f : undefined;
    });
    expect(readyOf(wide)).toMatchObject({ status: 'False', message: expect.stringContaining('3 clusters selected, more than the 2 children a FleetSync may have (--fleet-max-clusters') });
    await eventOf(mgmt, ns(), 'wide', 'QuotaExceeded', 'Warning');
    // The rollout says it stands still, and why (rollout status exits 1 with it; no wave to approve).
    expect(wide.status).toMatchObject({ phase: 'Halted', message: expect.stringContaining('past its quota, nothing written: 3 clusters selected') });
    expect((wide.status as { waves?: unknown } | undefined)?.waves).toBeUndefined();

    // 600 KiB of template in a child and its revision: past 1 MiB.
    const big = 'x'.repeat(600 * 1024);
    await applyFleet('heavy', ['east'], 'heavy', big);
    const heavy = await eventually('heavy refused', async () => {
      const f = await getFleet('heavy');
      return readyOf(f)?.reason === 'QuotaExceeded' ? f : undefined;
    });
    expect(readyOf(heavy)?.message).toContain('more than the 1 MiB a FleetSync may take (--fleet-max-size');
    await Promise.all([settled('wide'), settled('heavy')]);
    // No child, no revision (the FleetSyncs' own finalizer and status only).
    expect([...(await writesTo(since, 'wide', [REMOTESYNCS, 'proxysyncs', REVISIONS])), ...(await writesTo(since, 'heavy', [REMOTESYNCS, 'proxysyncs', REVISIONS]))]).toEqual([]);
    expect((await writesTo(since, 'wide', [FLEETSYNCS])).length).toBeGreaterThan(0);
    expect(await valueIn(edge1, 'wide')).toBeUndefined();
  });

  test("a second Secret claiming a cluster's name prunes nothing there: the child is kept, the FleetSync fails saying why, with a Warning; fixed, it is Ready again", async () => {
    await registerCluster('south', 'edge-2');
    await applyFleet('claim', ['south'], 'claim', 'v1');
    await waitPhase('claim', 'Complete', 90_000);
    const child = await getSync(mgmt, ns(), 'claim-south', REMOTESYNCS);
    const since = new Date();
    await registerCluster('south', 'edge-1', {}, 'south-again');
    const failing = await eventually('claim failing', async () => {
      const f = await getFleet('claim');
      return readyOf(f)?.reason === 'ClustersFailing' ? f : undefined;
    });
    expect(failing.status?.failures).toEqual([
      {
        cluster: 'south',
        reason: 'InventoryProblem',
        message: `Secret ${ns()}/south-again: the name south is claimed by Secret ${ns()}/south-kubeconfig too: remove or rename one of them; its child RemoteSync claim-south is kept as it is (not written, not deleted) until the problem is fixed or the cluster leaves the inventory`,
      },
    ]);
    const warning = await eventOf(mgmt, ns(), 'claim', 'InventoryProblem', 'Warning');
    expect(warning.message).toContain('cluster south: Secret');
    await settled('claim');
    expect((await getSync(mgmt, ns(), 'claim-south', REMOTESYNCS)).metadata.uid).toBe(child.metadata.uid);
    expect(await valueIn(edge2, 'claim')).toBe('v1');
    expect(await writesTo(since, 'claim-', [REMOTESYNCS])).toEqual([]);

    await mgmt.request({ method: 'DELETE', path: `/api/v1/namespaces/${ns()}/secrets/south-again` });
    const back = await waitPhase('claim', 'Complete');
    expect(readyOf(back)).toMatchObject({ status: 'True' });
    expect((await getSync(mgmt, ns(), 'claim-south', REMOTESYNCS)).metadata.uid).toBe(child.metadata.uid);
  });
});
