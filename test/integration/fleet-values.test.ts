// FleetSync values and overrides (docs/fleet.md, "Values and overrides") through
// a running operator in mgmt, over three inventory clusters: east (edge-1, the
// canary), west (edge-2) and gamma (edge-2, its own namespace there). Each gets
// its own content from its values; an override selected by label reaches east
// only; a value changed on east changes east only (edge-2's audit log); gamma,
// missing a value, fails alone with nothing written; a halted rollout is not
// bypassed by a value change.
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import type { KubeClient } from '../../src/kube/client.js';
import { writesSince, type AuditEvent } from '../support/audit.js';
import { clusterClient, closeClients, ensureClusters } from '../support/controlplane.js';
import { installCrds } from '../support/crds.js';
import { eventually } from '../support/eventually.js';
import { useTestNamespace } from '../support/namespace.js';
import { OperatorProcess } from '../support/operator.js';
import { REMOTESYNCS, applyFleetSync as applyFleetSyncIn, FLEETSYNCS, registerClusterWithValues } from '../support/remote.js';
import { eventOf, find, getSync, readyOf, syncPath, type SyncObject } from '../support/syncs.js';

const HOME = 'mgmt';
/** The User-Agent of the operator's requests (src/cli/run/run.ts operatorUserAgent). */
const OPERATOR = 'syncprims-operator';
let mgmt: KubeClient;
let edge1: KubeClient;
let edge2: KubeClient;
let op: OperatorProcess;
const ns = useTestNamespace(HOME, 'fvals');
/** The edges' namespace: the same name in edge-1 (a test namespace) and edge-2 (made alike, deleted at the end). */
const edgeNs = useTestNamespace('edge-1', 'fvalsedge');
/** gamma's namespace in edge-2, where nothing may be written while it misses a value. */
const gammaNs = useTestNamespace('edge-2', 'fvalsgamma');

type Fleet = SyncObject & { status?: { phase?: string; currentRevision?: string; clusters?: Record<string, number>; failures?: { cluster: string; reason: string; message: string }[]; message?: string } };
type ConfigMap = { metadata: { labels?: Record<string, string> }; data?: Record<string, string> };
const getFleet = (name: string): Promise<Fleet> => getSync(mgmt, ns(), name, FLEETSYNCS) as Promise<Fleet>;
const cmPath = (namespace: string, name: string): string => `/api/v1/namespaces/${namespace}/configmaps/${name}`;

/** The kubeconfig Secret of `cluster` (of the local cluster `edge`) in the inventory, with its labels and values. */
const register = (cluster: string, edge: string, labels: Record<string, string>, values: Record<string, string>): Promise<void> =>
  registerClusterWithValues(mgmt, ns(), cluster, edge, labels, values);

const east = (region: string) => register('east', 'edge-1', { tier: 'canary' }, { region, namespace: edgeNs() });
const west = (region: string) => register('west', 'edge-2', {}, { region, namespace: edgeNs() });

const applyFleetSync = (name: string, spec: Record<string, unknown>): Promise<SyncObject> => applyFleetSyncIn(mgmt, ns(), name, spec);

/** One ConfigMap `name`, its data from the cluster's values, in the cluster's `namespace` value; `extra` objects beside it. */
const template = (name: string, version: string, extra: unknown[] = []) => ({
  spec: {
    source: {
      inline: [
        { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, labels: { app: name } }, data: { version, region: '${region}', cluster: '${cluster_name}', tier: '${tier:=standard}', literal: '$${region}' } },
        ...extra,
      ],
    },
    defaultNamespace: '${namespace}',
  },
});
const canaryLabel = { clusters: { selector: { matchLabels: { tier: 'canary' } } }, patches: [{ op: 'add', path: '/spec/source/inline/0/metadata/labels/canary', value: 'true' }] };

/** The operator's writes in `edge` since `since` to ConfigMaps (of `namespaces`). */
const configMapWrites = async (edge: string, since: Date, namespaces: string[]): Promise<AuditEvent[]> =>
  (await writesSince(edge, since, OPERATOR)).filter((w) => w.objectRef?.resource === 'configmaps' && namespaces.includes(w.objectRef.namespace ?? ''));
/** The operator's writes in mgmt since `since` to the spec of child `child`. */
const childWrites = async (child: string, since: Date): Promise<AuditEvent[]> =>
  (await writesSince(HOME, since, OPERATOR)).filter((w) => w.objectRef?.resource === REMOTESYNCS && w.objectRef.namespace === ns() && w.objectRef.name === child && w.objectRef.subresource === undefined);
const uris = (events: AuditEvent[]): string[] => events.map((w) => `${w.verb} ${w.requestURI}`);

beforeAll(async () => {
  await ensureClusters([HOME, 'edge-1', 'edge-2']);
  [mgmt, edge1, edge2] = await Promise.all([clusterClient(HOME), clusterClient('edge-1'), clusterClient('edge-2')]);
  await installCrds(HOME);
  await edge2.request({ method: 'POST', path: '/api/v1/namespaces', body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: edgeNs() } } });
  await Promise.all([east('eu-west'), west('us-east'), register('gamma', 'edge-2', {}, { namespace: gammaNs() })]);
  op = await OperatorProcess.start(HOME, ['--namespace', ns(), '--cluster-id', 'mgmt-fleet-values-test']);
}, 120_000);

afterAll(async () => {
  await op?.stop('SIGTERM');
  await edge2?.request({ method: 'DELETE', path: `/api/v1/namespaces/${edgeNs()}` }).catch(() => undefined);
  await closeClients();
});

describe('FleetSync values and overrides', () => {
  test('each cluster its values, the override to the canary only; a value changed on east changes east only; gamma, missing one, fails alone with nothing written', async () => {
    const since = new Date();
    await applyFleetSync('shop', { kind: 'RemoteSync', clusters: { names: ['east', 'west', 'gamma'] }, substitute: {}, overrides: [canaryLabel], template: template('shop', 'v1') });
    const fleet = await eventually('east and west Ready, gamma failing', async () => {
      const f = await getFleet('shop');
      return f.status?.clusters?.ready === 2 && f.status.clusters.failed === 1 ? f : undefined;
    }, 90_000);
    expect(readyOf(fleet)).toMatchObject({ status: 'False', reason: 'ClustersFailing' });
    expect(fleet.status?.failures).toEqual([
      { cluster: 'gamma', reason: 'SubstitutionFailed', message: expect.stringMatching(/^no value for region \(at spec\.source\.inline\[0\]\.data\.region\) and no default/) },
    ]);
    await eventOf(mgmt, ns(), 'shop', 'ClustersFailing', 'Warning');
    expect((await eventOf(mgmt, ns(), 'shop', 'SubstitutionFailed', 'Warning')).message).toMatch(/^cluster gamma: no value for region/);

    const [e, w] = await Promise.all([find<ConfigMap>(edge1, cmPath(edgeNs(), 'shop')), find<ConfigMap>(edge2, cmPath(edgeNs(), 'shop'))]);
    expect(e?.data).toEqual({ version: 'v1', region: 'eu-west', cluster: 'east', tier: 'standard', literal: '${region}' });
    expect(w?.data).toEqual({ version: 'v1', region: 'us-east', cluster: 'west', tier: 'standard', literal: '${region}' });
    expect(e?.metadata.labels).toMatchObject({ app: 'shop', canary: 'true' });
    expect(w?.metadata.labels?.canary).toBeUndefined();
    // Each child records the digest of the values it was given: not the same for the two.
    const [eastChild, westChild] = await Promise.all([getSync(mgmt, ns(), 'shop-east', REMOTESYNCS), getSync(mgmt, ns(), 'shop-west', REMOTESYNCS)]);
    const digestOf = (c: SyncObject) => c.metadata.annotations?.['syncprims.dev/fleet-values'];
    expect([digestOf(eastChild), digestOf(westChild)]).toEqual([expect.stringMatching(/^[0-9a-f]{16}$/), expect.stringMatching(/^[0-9a-f]{16}$/)]);
    expect(digestOf(eastChild)).not.toBe(digestOf(westChild));
    // gamma: no child, and nothing written in its namespace of edge-2 (west's writes there are the positive control).
    expect(await find(mgmt, syncPath(ns(), 'shop-gamma', REMOTESYNCS))).toBeUndefined();
    expect(uris(await configMapWrites('edge-2', since, [gammaNs()]))).toEqual([]);
    expect((await configMapWrites('edge-2', since, [edgeNs()])).length).toBeGreaterThan(0);

    // A value changed on east: east's ConfigMap follows; west's child and edge-2 get no write.
    const changed = new Date();
    await east('eu-north');
    await eventually("east's region", async () => ((await find<ConfigMap>(edge1, cmPath(edgeNs(), 'shop')))?.data?.region === 'eu-north' ? true : undefined), 60_000);
    await eventually('east Ready again', async () => ((await getFleet('shop')).status?.clusters?.ready === 2 ? true : undefined), 60_000);
    expect((await childWrites('shop-east', changed)).length).toBeGreaterThan(0);
    expect((await configMapWrites('edge-1', changed, [edgeNs()])).length).toBeGreaterThan(0);
    expect(uris([...(await childWrites('shop-west', changed)), ...(await configMapWrites('edge-2', changed, [edgeNs(), gammaNs()]))])).toEqual([]);
    expect((await find<ConfigMap>(edge2, cmPath(edgeNs(), 'shop')))?.data?.region).toBe('us-east');

    // gamma given its value: it gets its child and its ConfigMap, and the FleetSync is Ready.
    await register('gamma', 'edge-2', {}, { namespace: gammaNs(), region: 'ap-south' });
    await eventually('shop Ready', async () => (readyOf(await getFleet('shop'))?.status === 'True' ? true : undefined), 90_000);
    expect((await find<ConfigMap>(edge2, cmPath(gammaNs(), 'shop')))?.data).toMatchObject({ region: 'ap-south', cluster: 'gamma' });
  });

  test('an override that does not apply fails the clusters it selects, naming it and its path; the others go on', async () => {
    const bad = { clusters: { names: ['west'] }, patches: [{ op: 'replace', path: '/spec/source/inline/0/data/nothing', value: 'x' }] };
    await applyFleetSync('patched', { kind: 'RemoteSync', clusters: { names: ['east', 'west'] }, substitute: {}, overrides: [canaryLabel, bad], template: template('patched', 'v1') });
    const fleet = await eventually('east Ready, west failing', async () => {
      const f = await getFleet('patched');
      return f.status?.clusters?.ready === 1 && f.status.clusters.failed === 1 ? f : undefined;
    }, 90_000);
    expect(fleet.status?.failures).toEqual([
      { cluster: 'west', reason: 'OverrideFailed', message: 'overrides[1].patches[0] (replace /spec/source/inline/0/data/nothing): the template has no value there; nothing is written to this cluster' },
    ]);
    expect(await find(mgmt, syncPath(ns(), 'patched-west', REMOTESYNCS))).toBeUndefined();
    expect(await find(edge2, cmPath(edgeNs(), 'patched'))).toBeUndefined();
    expect((await find<ConfigMap>(edge1, cmPath(edgeNs(), 'patched')))?.metadata.labels?.canary).toBe('true');
  });

  test('a halted rollout is not bypassed by a value change: the held cluster takes the value at the revision it has', async () => {
    const waves = { waves: [{ name: 'canary', selector: { matchLabels: { tier: 'canary' } } }, { name: 'rest' }] };
    const roll = (version: string, extra: unknown[] = []) =>
      applyFleetSync('roll', { kind: 'RemoteSync', clusters: { names: ['east', 'west'] }, substitute: {}, rollout: waves, template: template('roll', version, extra) });
    await roll('v1');
    const good = await eventually('v1 Complete', async () => {
      const f = await getFleet('roll');
      return f.status?.phase === 'Complete' && f.status.observedGeneration === f.metadata.generation ? f : undefined;
    }, 90_000);
    // Broken: v2 of the ConfigMap, and an object the canary cannot apply (its namespace exists nowhere).
    await roll('v2', [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'roll', namespace: 'fvals-nowhere' }, data: { version: 'v2' } }]);
    const halted = await eventually('Halted', async () => {
      const f = await getFleet('roll');
      return f.status?.phase === 'Halted' && f.status.observedGeneration === f.metadata.generation ? f : undefined;
    }, 90_000);
    expect(halted.status?.message).toContain('wave canary: 1 failing (at most 0): east');
    expect((await find<ConfigMap>(edge1, cmPath(edgeNs(), 'roll')))?.data?.version).toBe('v2');

    // West's value changes while halted: its ConfigMap takes it, at v1 (the broken v2 does not reach it).
    const changed = new Date();
    await west('us-west');
    const held = await eventually("west's region", async () => {
      const cm = await find<ConfigMap>(edge2, cmPath(edgeNs(), 'roll'));
      return cm?.data?.region === 'us-west' ? cm : undefined;
    }, 60_000);
    expect(held.data?.version).toBe('v1');
    const westChild = await getSync(mgmt, ns(), 'roll-west', REMOTESYNCS);
    expect(westChild.metadata.annotations?.['syncprims.dev/fleet-revision']).toBe(good.status?.currentRevision);
    expect((await getFleet('roll')).status?.phase).toBe('Halted');
    // What edge-2 was sent since: the ConfigMap roll in the edges' namespace (the value; shop's too, of the first test, which uses west's region), never the broken object's namespace.
    const sent = await configMapWrites('edge-2', changed, [edgeNs(), 'fvals-nowhere']);
    expect(sent.some((w) => w.objectRef?.namespace === edgeNs() && w.objectRef.name === 'roll')).toBe(true);
    expect(uris(sent.filter((w) => w.objectRef?.namespace === 'fvals-nowhere'))).toEqual([]);
  });

  test('a canary missing a value halts the rollout at its wave: the next wave gets nothing', async () => {
    const waves = { waves: [{ name: 'canary', selector: { matchLabels: { tier: 'canary' } } }, { name: 'rest' }] };
    const zoned = { spec: { ...template('zoned', 'v1').spec, source: { inline: [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'zoned' }, data: { zone: '${zone}' } }] } } };
    await applyFleetSync('zoned', { kind: 'RemoteSync', clusters: { names: ['east', 'west'] }, substitute: {}, rollout: waves, template: zoned });
    const halted = await eventually('Halted', async () => {
      const f = await getFleet('zoned');
      return f.status?.phase === 'Halted' && f.status.observedGeneration === f.metadata.generation ? f : undefined;
    }, 60_000);
    expect(halted.status?.message).toBe('wave canary: 1 failing (at most 0): east');
    // West lacks zone too: it is listed as failing the revision, but its wave never started (the halt is the canary's).
    expect(halted.status?.failures?.map((f) => [f.cluster, f.reason])).toEqual([['east', 'SubstitutionFailed'], ['west', 'SubstitutionFailed']]);
    expect(await find(mgmt, syncPath(ns(), 'zoned-west', REMOTESYNCS))).toBeUndefined();
    expect(await find(mgmt, syncPath(ns(), 'zoned-east', REMOTESYNCS))).toBeUndefined();
  });
});

