// Cluster values and per-cluster templates through the CLI as a user runs it,
// with a running operator in mgmt: `cluster add --value` registers edge-1
// (the canary, with values) and edge-2 (its region missing); FleetSync `shop`
// (RemoteSync children, `substitute` and an override for the canary) writes
// edge-1's child, which applies a ConfigMap into edge-1; `build fleetsync/shop
// --cluster edge-1` prints that child's spec exactly; `get clusters`, `tree`
// and `doctor` name edge-2's missing value and FleetSync `broken`'s override.
import { beforeAll, describe, expect, test } from '@jest/globals';
import { load } from 'js-yaml';
import { API_VERSION } from '../../src/api/kinds.js';
import type { KubeClient } from '../../src/kube/client.js';
import type { KubeObject } from '../../src/kube/resources.js';
import type { Finding } from '../../src/cli/doctor/doctor-findings.js';
import type { Tree } from '../../src/views/tree-model.js';
import { assertCliBuilt, runCli, tableCells } from '../support/cli.js';
import { clusterClient, ensureClusters, kubeconfigPath } from '../support/controlplane.js';
import { eventually } from '../support/eventually.js';
import { useOperatedNamespace } from '../support/operated-namespace.js';
import { useRemoteNamespace } from '../support/remote-namespace.js';
import { find, syncPath } from '../support/syncs.js';

const HOME = 'mgmt';
const MGMT = kubeconfigPath(HOME);
const EDGE1 = kubeconfigPath('edge-1');
const EDGE2 = kubeconfigPath('edge-2');
let mgmt: KubeClient;
let edge1: KubeClient;
const ns = useOperatedNamespace(HOME, 'cli-fvals', (o) => ({ client: mgmt } = o));
// The RemoteSync child applies into the namespace of the same name in edge-1.
useRemoteNamespace('edge-1', ns, { ready: (client) => (edge1 = client) });

const cli = (...args: string[]) => runCli([...args, '--kubeconfig', MGMT, '-n', ns()]);
const add = (name: string, ...args: string[]) => runCli(['cluster', 'add', name, '--mgmt-kubeconfig', MGMT, '-n', ns(), ...args]);
const secretOf = (cluster: string) => find<KubeObject>(mgmt, `/api/v1/namespaces/${ns()}/secrets/${cluster}-kubeconfig`);
const valueAnnotations = (obj: KubeObject | undefined) => Object.fromEntries(Object.entries(obj?.metadata.annotations ?? {}).filter(([k]) => k.startsWith('values.syncprims.dev/')));

const shopSpec = () => ({
  clusters: { selector: { matchLabels: { role: 'edge' } } },
  kind: 'RemoteSync',
  substitute: {},
  overrides: [
    {
      clusters: { selector: { matchLabels: { ring: 'canary' } } },
      patches: [
        { op: 'add', path: '/metadata/labels/canary', value: 'yes' },
        { op: 'add', path: '/spec/source/inline/0/data/canary', value: 'yes' },
      ],
    },
  ],
  template: {
    metadata: { labels: { app: 'shop' } },
    spec: {
      defaultNamespace: ns(),
      source: { inline: [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'shop' }, data: { region: '${region}', cluster: '${cluster_name}', tier: '${tier:=small}' } }] },
    },
  },
});

/** Selects edge-1 only; its override's path is not in the template. */
const brokenSpec = () => ({
  clusters: { names: ['edge-1'] },
  kind: 'RemoteSync',
  overrides: [{ clusters: { names: ['edge-1'] }, patches: [{ op: 'replace', path: '/spec/source/inline/0/data/missing', value: 'x' }] }],
  template: { spec: { defaultNamespace: ns(), source: { inline: [] } } },
});

function applyFleetSync(name: string, spec: Record<string, unknown>): Promise<unknown> {
  return mgmt.request({
    method: 'PATCH',
    path: syncPath(ns(), name, 'fleetsyncs'),
    query: { fieldManager: 'test', force: true },
    contentType: 'application/apply-patch+yaml',
    body: { apiVersion: API_VERSION, kind: 'FleetSync', metadata: { name, namespace: ns() }, spec },
  });
}

beforeAll(async () => {
  assertCliBuilt();
  await ensureClusters([HOME, 'edge-1', 'edge-2']);
  mgmt ??= await clusterClient(HOME);
}, 60_000);

describe('cluster add --value', () => {
  test('sets the value annotations; a new run replaces them (one set by kubectl annotate too); a bad key is refused, nothing written', async () => {
    const first = await add('edge-1', '--kubeconfig', EDGE1, '--label', 'role=edge', '--label', 'ring=canary', '--value', 'region=eu-west', '--value', 'cloud.zone=b');
    expect({ code: first.code, stderr: first.stderr }).toEqual({ code: 0, stderr: '' });
    expect(first.stdout).toContain('values ${region}, ${cloud_zone}');
    expect(valueAnnotations(await secretOf('edge-1'))).toEqual({ 'values.syncprims.dev/region': 'eu-west', 'values.syncprims.dev/cloud.zone': 'b' });

    // Another writer's value annotation, as kubectl annotate sets it.
    await mgmt.request({
      method: 'PATCH',
      path: `/api/v1/namespaces/${ns()}/secrets/edge-1-kubeconfig`,
      query: { fieldManager: 'kubectl-annotate' },
      contentType: 'application/merge-patch+json',
      body: { metadata: { annotations: { 'values.syncprims.dev/stray': 'x', 'example.com/other': 'kept' } } },
    });
    const again = await add('edge-1', '--kubeconfig', EDGE1, '--label', 'role=edge', '--label', 'ring=canary', '--value', 'region=eu-west', '--value', 'tier=');
    expect(again.code).toBe(0);
    const secret = await secretOf('edge-1');
    expect(valueAnnotations(secret)).toEqual({ 'values.syncprims.dev/region': 'eu-west', 'values.syncprims.dev/tier': '' });
    expect(secret?.metadata.annotations?.['example.com/other']).toBe('kept');

    const bad = await add('edge-3', '--kubeconfig', EDGE1, '--value', 'my zone=b');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("--value my zone=b: my zone is not a valid key: want at most 63 letters, digits, '-', '_' or '.'");
    expect(await secretOf('edge-3')).toBeUndefined();

    // edge-2 has no region; `lab` is not an edge (no FleetSync selects it).
    expect((await add('edge-2', '--kubeconfig', EDGE2, '--label', 'role=edge')).code).toBe(0);
    // A value may be any string: one that would retitle the terminal is stored as given, and shown without its escapes.
    expect((await add('lab', '--kubeconfig', EDGE1, '--label', 'role=lab', '--value', 'region=nowhere', '--value', 'note=a\x1b]0;owned\x07b\nc')).code).toBe(0);
    expect(valueAnnotations(await secretOf('lab'))['values.syncprims.dev/note']).toBe('a\x1b]0;owned\x07b\nc');
  }, 60_000);

  test('get clusters -o wide shows the values (cluster_name left out); -o json has them all', async () => {
    const wide = tableCells((await cli('get', 'clusters', '-o', 'wide')).stdout);
    expect(wide[0]).toEqual(['NAME', 'SOURCE', 'MODE', 'REACHABLE', 'LAST-SEEN', 'SHARD', 'SELECTED-BY', 'LABELS', 'VALUES', 'OBJECT', 'SERVER', 'PROBLEM']);
    const row = (name: string) => wide.find((r) => r[0] === name);
    expect(row('edge-1')?.[8]).toBe('region=eu-west,tier=');
    expect(row('edge-2')?.[8]).toBe('-');
    expect(row('lab')?.[8]).toBe('note=ab c,region=nowhere');
    const json = JSON.parse((await cli('get', 'clusters', '-o', 'json')).stdout) as { clusters: { name: string; values: Record<string, string> }[] };
    expect(json.clusters.find((c) => c.name === 'edge-1')?.values).toEqual({ region: 'eu-west', tier: '', cluster_name: 'edge-1' });
  }, 60_000);
});

describe('build fleetsync/NAME --cluster C', () => {
  let live: KubeObject;

  beforeAll(async () => {
    await applyFleetSync('shop', shopSpec());
    await applyFleetSync('broken', brokenSpec());
    // The operator's child for edge-1, and the ConfigMap it applied there (edge-1's values and the canary's override in).
    const cm = await eventually('the ConfigMap shop in edge-1', () => find<KubeObject & { data?: Record<string, string> }>(edge1, `/api/v1/namespaces/${ns()}/configmaps/shop`), 90_000);
    expect(cm.data).toEqual({ region: 'eu-west', cluster: 'edge-1', tier: '', canary: 'yes' });
    live = (await find<KubeObject>(mgmt, syncPath(ns(), 'shop-edge-1', 'remotesyncs')))!;
  }, 120_000);

  test("prints the child the operator wrote: the same spec, labels, revision and values digest", async () => {
    const { code, stdout, stderr } = await cli('build', 'fleetsync/shop', '--cluster', 'edge-1', '-o', 'json');
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    const built = JSON.parse(stdout) as KubeObject;
    expect(built.kind).toBe('RemoteSync');
    expect(built.metadata.name).toBe('shop-edge-1');
    expect(built.spec).toEqual(live.spec);
    expect(built.metadata.labels).toEqual(live.metadata.labels);
    expect(live.metadata.labels?.canary).toBe('yes');
    const { 'syncprims.dev/fleet-admitted-at': admitted, ...annotations } = live.metadata.annotations ?? {};
    expect(admitted).toBeDefined();
    expect(built.metadata.annotations).toEqual(annotations);
    expect(built.metadata.ownerReferences).toEqual(live.metadata.ownerReferences);

    // The YAML says which child, revision, overrides and values, and is the same object.
    const yaml = await cli('build', 'fsy/shop', '--cluster', 'edge-1');
    expect(yaml.code).toBe(0);
    expect(yaml.stdout.split('\n')[0]).toMatch(new RegExp(`^# RemoteSync ${ns()}/shop-edge-1: FleetSync shop's child for cluster edge-1, revision [0-9a-f]{16} \\(overrides 0; values cluster_name, region, tier\\)`));
    expect(load(yaml.stdout)).toEqual(built);
  }, 60_000);

  test('a cluster whose template cannot be made: exit 1 naming the variable, or the override and its path', async () => {
    const missing = await cli('build', 'fleetsync/shop', '--cluster', 'edge-2');
    expect(missing.code).toBe(1);
    expect(missing.stdout).toBe('');
    expect(missing.stderr).toContain(`FleetSync ${ns()}/shop: cluster edge-2 gets no child (SubstitutionFailed): no value for region (at spec.source.inline[0].data.region)`);
    const override = await cli('build', 'fleetsync/broken', '--cluster', 'edge-1');
    expect(override.code).toBe(1);
    expect(override.stderr).toContain('(OverrideFailed): overrides[0].patches[0] (replace /spec/source/inline/0/data/missing)');
  }, 60_000);

  test('a cluster not in the inventory, or not selected, is said so; --cluster wants a FleetSync', async () => {
    const absent = await cli('build', 'fleetsync/shop', '--cluster', 'nope');
    expect(absent.code).toBe(1);
    expect(absent.stderr).toContain(`cluster nope is not in the inventory of namespace ${ns()} (its clusters: edge-1, edge-2, lab;`);
    const lab = await cli('build', 'fleetsync/shop', '--cluster', 'lab');
    expect(lab.code).toBe(1);
    expect(lab.stderr).toContain(`FleetSync ${ns()}/shop does not select cluster lab (its spec.clusters: {"selector":{"matchLabels":{"role":"edge"}}}; the cluster's labels: role=lab`);
    const noFleet = await cli('build', 'fleetsync/none', '--cluster', 'edge-1');
    expect(noFleet.code).toBe(1);
    expect(noFleet.stderr).toContain(`FleetSync ${ns()}/none not found`);
    const noCluster = await cli('build', 'fleetsync/shop');
    expect(noCluster.code).toBe(2);
    expect(noCluster.stderr).toContain('--cluster NAME');
  }, 60_000);
});

describe('get clusters, tree and doctor name what cannot be made', () => {
  test("get clusters: edge-2's missing value, edge-1's override of broken, in PROBLEM and -o json", async () => {
    const rows = tableCells((await cli('get', 'clusters')).stdout);
    const problem = (name: string) => rows.find((r) => r[0] === name)?.at(-1) ?? '';
    expect(problem('edge-2')).toContain('fleetsync/shop: SubstitutionFailed: no value for region');
    expect(problem('edge-1')).toContain('fleetsync/broken: OverrideFailed: overrides[0].patches[0] (replace /spec/source/inline/0/data/missing)');
    expect(problem('lab')).toBe('-');
    const json = JSON.parse((await cli('get', 'clusters', '-o', 'json')).stdout) as { clusters: { name: string; unmade: { fleetSync: string; reason: string }[] }[] };
    expect(json.clusters.find((c) => c.name === 'edge-2')?.unmade.map((u) => [u.fleetSync, u.reason])).toEqual([['shop', 'SubstitutionFailed']]);
  }, 60_000);

  test('tree fleetsync/shop: edge-2 has no child, and why', async () => {
    const { code, stdout } = await cli('tree', 'fleetsync/shop');
    expect(code).toBe(0);
    expect(stdout).toMatch(/edge-1 {2}RemoteSync\/shop-edge-1/);
    expect(stdout).toContain('edge-2  no child: its template cannot be made');
    expect(stdout).toContain('SubstitutionFailed: no value for region (at spec.source.inline[0].data.region)');
    const json = JSON.parse((await cli('tree', 'fleetsync/shop', '-o', 'json')).stdout) as Tree;
    expect(json.unmade?.map((u) => [u.cluster, u.reason])).toEqual([['edge-2', 'SubstitutionFailed']]);
  }, 60_000);

  test('doctor: one finding per FleetSync and cluster, with what to do', async () => {
    const { code, stdout } = await cli('doctor', '-o', 'json');
    expect(code).toBe(1);
    const findings = (JSON.parse(stdout) as { findings: Finding[] }).findings.filter((f) => f.problem === 'SubstitutionFailed' || f.problem === 'OverrideFailed');
    expect(findings.map((f) => [f.problem, f.object, f.message.split(':')[0]])).toEqual([
      ['OverrideFailed', 'FleetSync/broken', 'cluster edge-1'],
      ['SubstitutionFailed', 'FleetSync/shop', 'cluster edge-2'],
    ]);
    expect(findings[1]!.action).toContain(`syncprims cluster add edge-2 --kubeconfig FILE --value NAME=VALUE -n ${ns()}`);
  }, 60_000);
});
