// The pure parts of cluster values and per-cluster templates in the CLI:
// `cluster add --value`, the VALUES column, `build fleetsync/NAME --cluster`'s
// request and child, the unmade templates `get clusters`, `tree` and `doctor` name.
import { describe, expect, test } from '@jest/globals';
import { fleetBuildRequest, isFleetRef } from '../../src/cli/build/build-fleet-request.js';
import { staleValueAnnotations, valueAnnotations, valuesCell } from '../../src/cli/cluster/value-flags.js';
import { unmadeFindings } from '../../src/cli/doctor/doctor-fleet.js';
import { reportedUnmade } from '../../src/cli/unmade-read.js';
import { PLAIN } from '../../src/cli/terminal.js';
import { renderTree } from '../../src/cli/tree/tree-render.js';
import type { FleetSync } from '../../src/api/objects.js';
import { parseSyncObject } from '../../src/api/validate.js';
import { secretCluster } from '../../src/clusters/inventory-sources.js';
import type { InventoryCluster } from '../../src/clusters/inventory-types.js';
import type { KubeObject } from '../../src/kube/resources.js';
import { fleetChild } from '../../src/views/fleet-child.js';
import { unmadeTemplates } from '../../src/views/fleet-unmade.js';
import type { Tree } from '../../src/views/tree-model.js';

const cluster = (name: string, labels: Record<string, string>, values: Record<string, string> = {}): InventoryCluster =>
  secretCluster({
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: {
      name: `${name}-kubeconfig`,
      namespace: 'fleet',
      labels: { 'syncprims.dev/cluster': name, ...labels },
      annotations: Object.fromEntries(Object.entries(values).map(([k, v]) => [`values.syncprims.dev/${k}`, v])),
    },
  });

const fleetObject = (name: string, spec: Record<string, unknown>): KubeObject => ({ apiVersion: 'syncprims.dev/v1alpha1', kind: 'FleetSync', metadata: { name, namespace: 'fleet', uid: 'u-1' }, spec });

function parsed(obj: KubeObject): FleetSync {
  const p = parseSyncObject('FleetSync', obj);
  if (!p.ok) throw new Error(p.message);
  return p.value;
}

/** A RemoteSync fleet: a ConfigMap whose region is the cluster's, and an override giving the canary a label. */
const shopSpec = {
  clusters: { selector: { matchLabels: { role: 'edge' } } },
  kind: 'RemoteSync',
  substitute: {},
  overrides: [{ clusters: { selector: { matchLabels: { ring: 'canary' } } }, patches: [{ op: 'add', path: '/metadata/labels/canary', value: 'yes' }] }],
  template: {
    metadata: { labels: { app: 'shop' } },
    spec: { source: { inline: [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'shop' }, data: { region: '${region}', where: '${cluster_name}', tier: '${tier:=small}' } }] }, defaultNamespace: 'shop' },
  },
  dependsOn: [{ kind: 'FleetSync', name: 'base' }],
};

describe('cluster add --value', () => {
  test('key=value pairs as the annotations values.syncprims.dev/<key>; key= is the empty string, a value any string', () => {
    expect(valueAnnotations(['region=eu-west', 'cloud.zone=', 'note=a=b c ${x}'])).toEqual({
      'values.syncprims.dev/region': 'eu-west',
      'values.syncprims.dev/cloud.zone': '',
      'values.syncprims.dev/note': 'a=b c ${x}',
    });
    expect(valueAnnotations([])).toEqual({});
  });

  test('a key that is not an annotation name part is refused, saying what a key may be', () => {
    expect(() => valueAnnotations(['region'])).toThrow('--value region: want key=value (key= for the empty string)');
    expect(() => valueAnnotations(['=x'])).toThrow('the key is empty');
    expect(() => valueAnnotations(['my key=x'])).toThrow("my key is not a valid key: want at most 63 letters, digits, '-', '_' or '.'");
    expect(() => valueAnnotations(['-x=1'])).toThrow('beginning and ending with a letter or digit');
    expect(() => valueAnnotations([`${'k'.repeat(64)}=1`])).toThrow('is not a valid key');
    expect(() => valueAnnotations(['example.com/zone=b'])).toThrow("example.com/zone holds a '/'");
  });

  test('cluster_name is the name; a key given twice, or two keys of one value name, are refused', () => {
    expect(() => valueAnnotations(['cluster_name=x'])).toThrow("${cluster_name} is always the cluster's name");
    expect(() => valueAnnotations(['cluster-name=x'])).toThrow("${cluster_name} is always the cluster's name");
    expect(() => valueAnnotations(['a=1', 'a=2'])).toThrow('a is given twice');
    expect(() => valueAnnotations(['cloud.zone=1', 'cloud-zone=2'])).toThrow('--value cloud.zone=… and --value cloud-zone=2: both are the value ${cloud_zone}');
  });

  test('the value annotations a new run does not give are stale; other annotations are not', () => {
    const live = { 'values.syncprims.dev/region': 'eu', 'values.syncprims.dev/old': 'x', 'example.com/keep': 'y' };
    expect(staleValueAnnotations(live, { 'values.syncprims.dev/region': 'us' })).toEqual(['values.syncprims.dev/old']);
    expect(staleValueAnnotations(undefined, {})).toEqual([]);
  });
});

describe('the VALUES column', () => {
  test('k=v by name, cluster_name left out, newlines flattened, long values and the whole cut', () => {
    expect(valuesCell({ cluster_name: 'edge-1', zone: 'b', region: 'eu' })).toBe('region=eu,zone=b');
    expect(valuesCell({ cluster_name: 'edge-1' })).toBe('');
    expect(valuesCell({ note: 'two\nlines' })).toBe('note=two lines');
    const long = valuesCell({ mirror: 'registry.europe-west.example.com/mirror' });
    expect(long).toBe(`mirror=${'registry.europe-west.example.com/mirror'.slice(0, 23)}…`);
    const many = valuesCell(Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`k${String(i).padStart(2, '0')}`, 'value'])));
    expect([...many]).toHaveLength(80);
    expect(many.startsWith('k00=value,k01=value,')).toBe(true);
    expect(many.endsWith('…')).toBe(true);
  });
});

describe('build fleetsync/NAME --cluster C: the request', () => {
  test('the kind in any spelling', () => {
    expect(['fleetsync/shop', 'fsy/shop', 'FleetSync/shop', 'fleetsyncs/shop'].map(isFleetRef)).toEqual([true, true, true, true]);
    expect(['sync/shop', 'shop.yaml', 'manifests/fleetsync.yaml', '/fsy/x'].map(isFleetRef)).toEqual([false, false, false, false]);
  });

  test('needs --cluster; the flags of the other builds are refused by name', () => {
    expect(fleetBuildRequest('fsy/shop', { cluster: 'edge-1' })).toBe('shop');
    expect(() => fleetBuildRequest('fleetsync/shop', {})).toThrow('build fleetsync/shop: name the cluster whose child to print: --cluster NAME');
    expect(() => fleetBuildRequest('app.yaml', { cluster: 'edge-1' })).toThrow('--cluster goes with fleetsync/NAME');
    expect(() => fleetBuildRequest('fleetsync/Shop', { cluster: 'edge-1' })).toThrow('is not a valid object name');
    expect(() => fleetBuildRequest('fleetsync/shop', { cluster: 'edge-1', defaultNamespace: 'x', clusterId: 'y' })).toThrow('--default-namespace, --cluster-id go with a file, --path or --url');
  });
});

describe('fleetChild: the child one cluster gets', () => {
  const fleet = parsed(fleetObject('shop', shopSpec));
  // FleetSync base (of RemoteSyncs) selects every edge; the others are not there.
  const kinds = (ns: string, n: string) => (ns === 'fleet' && n === 'base' ? { kind: 'RemoteSync' as const, clusters: { selector: { matchLabels: { role: 'edge' } } } } : undefined);

  test("the canary's: its override and values in, labelled, owned, its dependency the same cluster's child of base", () => {
    const made = fleetChild(fleet, cluster('edge-1', { role: 'edge', ring: 'canary' }, { region: 'eu-west' }), kinds);
    if (!made.ok) throw new Error(made.message);
    expect(made.overrides).toEqual([0]);
    expect(made.used).toEqual({ region: 'eu-west', cluster_name: 'edge-1', tier: 'small' });
    const { child } = made;
    expect(child.kind).toBe('RemoteSync');
    expect(child.metadata.name).toBe('shop-edge-1');
    expect(child.metadata.labels).toEqual({ app: 'shop', canary: 'yes', 'syncprims.dev/fleetsync': 'shop', 'syncprims.dev/cluster': 'edge-1' });
    expect(child.metadata.annotations?.['syncprims.dev/fleet-revision']).toBe(made.revision);
    expect(child.metadata.annotations?.['syncprims.dev/fleet-values']).toMatch(/^[0-9a-f]{16}$/);
    expect(child.metadata.annotations?.['syncprims.dev/fleet-admitted-at']).toBeUndefined();
    expect(child.metadata.ownerReferences).toEqual([{ apiVersion: 'syncprims.dev/v1alpha1', kind: 'FleetSync', name: 'shop', uid: 'u-1', controller: true }]);
    const spec = child.spec as { kubeConfig: unknown; dependsOn: unknown; source: { inline: { data: unknown }[] } };
    expect(spec.kubeConfig).toEqual({ secretRef: { name: 'edge-1-kubeconfig', key: 'value' } });
    expect(spec.dependsOn).toEqual([{ kind: 'RemoteSync', name: 'base-edge-1', requiredStatus: 'Current' }]);
    expect(spec.source.inline[0]!.data).toEqual({ region: 'eu-west', where: 'edge-1', tier: 'small' });
  });

  test('a cluster that FleetSync base does not select: its child waits for base as a whole; base not there: for a ProxySync that is NotFound', () => {
    const lab = fleetChild(fleet, cluster('lab-1', { role: 'lab', ring: 'canary' }, { region: 'eu-west' }), kinds);
    if (!lab.ok) throw new Error(lab.message);
    expect((lab.child.spec as { dependsOn: unknown }).dependsOn).toEqual([{ kind: 'FleetSync', name: 'base', requiredStatus: 'Current' }]);
    const none = fleetChild(fleet, cluster('edge-1', { role: 'edge', ring: 'canary' }, { region: 'eu-west' }), () => undefined);
    if (!none.ok) throw new Error(none.message);
    expect((none.child.spec as { dependsOn: unknown }).dependsOn).toEqual([{ kind: 'ProxySync', name: 'base-edge-1', requiredStatus: 'Current' }]);
  });

  test('another cluster: no override, its own values and digest', () => {
    const canary = fleetChild(fleet, cluster('edge-1', { role: 'edge', ring: 'canary' }, { region: 'eu-west' }), kinds);
    const other = fleetChild(fleet, cluster('edge-2', { role: 'edge' }, { region: 'us-east', tier: 'big' }), kinds);
    if (!other.ok || !canary.ok) throw new Error('not made');
    expect(other.overrides).toEqual([]);
    expect(other.child.metadata.labels?.canary).toBeUndefined();
    expect((other.child.spec as { source: { inline: { data: unknown }[] } }).source.inline[0]!.data).toEqual({ region: 'us-east', where: 'edge-2', tier: 'big' });
    expect(other.revision).toBe(canary.revision);
    expect(other.child.metadata.annotations?.['syncprims.dev/fleet-values']).not.toBe(canary.child.metadata.annotations?.['syncprims.dev/fleet-values']);
  });

  test('a missing value, or an override whose path is not there: no child, the variable or the override named', () => {
    const missing = fleetChild(fleet, cluster('edge-2', { role: 'edge' }), kinds);
    expect(missing).toMatchObject({ ok: false, reason: 'SubstitutionFailed' });
    expect(!missing.ok && missing.message).toContain('no value for region (at spec.source.inline[0].data.region)');
    const badPath = parsed(fleetObject('shop', { ...shopSpec, overrides: [{ clusters: { names: ['edge-1'] }, patches: [{ op: 'replace', path: '/spec/nothing/here', value: 1 }] }] }));
    const failed = fleetChild(badPath, cluster('edge-1', { role: 'edge' }, { region: 'eu' }), kinds);
    expect(failed).toMatchObject({ ok: false, reason: 'OverrideFailed' });
    expect(!failed.ok && failed.message).toContain('overrides[0].patches[0] (replace /spec/nothing/here)');
  });
});

describe('unmadeTemplates', () => {
  const clusters = [cluster('edge-1', { role: 'edge' }, { region: 'eu' }), cluster('edge-2', { role: 'edge' }), cluster('lab', { role: 'lab' })];

  test('each selected cluster whose template cannot be made, by FleetSync; others, and FleetSyncs without substitute or overrides, not', () => {
    const plain = fleetObject('plain', { clusters: { names: ['edge-2'] }, kind: 'RemoteSync', template: { spec: { source: { inline: [] } } } });
    const found = unmadeTemplates([fleetObject('shop', shopSpec), plain], clusters);
    expect(found.map(({ fleetSync, cluster: c, reason }) => [fleetSync, c, reason])).toEqual([['shop', 'edge-2', 'SubstitutionFailed']]);
    expect(found[0]!.message).toContain('no value for region');
    expect(found[0]!.namespace).toBe('fleet');
  });

  test('a FleetSync whose spec is not valid is left out', () => {
    expect(unmadeTemplates([fleetObject('bad', { ...shopSpec, kind: 'Nope' })], clusters)).toEqual([]);
  });

  test("from the status, when the inventory may not be read: only failures of those reasons", () => {
    const obj = {
      ...fleetObject('shop', shopSpec),
      status: { failures: [{ cluster: 'edge-2', reason: 'SubstitutionFailed', message: 'no value for region' }, { cluster: 'edge-3', reason: 'ApplyFailed', message: 'forbidden' }] },
    };
    expect(reportedUnmade(obj)).toEqual([{ namespace: 'fleet', fleetSync: 'shop', cluster: 'edge-2', reason: 'SubstitutionFailed', message: 'no value for region' }]);
  });
});

describe('tree and doctor name them', () => {
  test('tree: under the cluster with a child, and as a cluster of its own when it has none', () => {
    const child = (c: string) => ({ clusterName: c, sync: { kind: 'RemoteSync' as const, namespace: 'fleet', name: `shop-${c}`, ready: 'True' as const, reason: 'Succeeded', objects: [] } });
    const tree: Tree = {
      kind: 'FleetSync',
      namespace: 'fleet',
      name: 'shop',
      server: 'https://mgmt',
      ready: 'False',
      reason: 'ClustersFailing',
      dependsOn: [],
      dependents: [],
      children: [child('edge-1'), child('edge-3')],
      unmade: [
        { cluster: 'edge-1', reason: 'OverrideFailed', message: 'overrides[0].patches[0] (replace /x): no such path' },
        { cluster: 'edge-2', reason: 'SubstitutionFailed', message: 'no value for region' },
      ],
    };
    expect(renderTree(tree, PLAIN)).toEqual([
      'FleetSync/fleet/shop  Ready=False  ClustersFailing',
      '└── clusters (3)',
      '    ├── edge-1  RemoteSync/shop-edge-1  Ready=True  Succeeded',
      '    │   └── OverrideFailed: overrides[0].patches[0] (replace /x): no such path',
      '    ├── edge-2  no child: its template cannot be made',
      '    │   └── SubstitutionFailed: no value for region',
      '    └── edge-3  RemoteSync/shop-edge-3  Ready=True  Succeeded',
    ]);
  });

  test('doctor: one finding per FleetSync and cluster, with what to do', () => {
    const findings = unmadeFindings([
      { namespace: 'fleet', fleetSync: 'shop', cluster: 'edge-2', reason: 'SubstitutionFailed', message: 'no value for region (at x)' },
      { namespace: 'fleet', fleetSync: 'shop', cluster: 'edge-1', reason: 'OverrideFailed', message: 'overrides[0].patches[0] (replace /x): no such path' },
    ]);
    expect(findings.map((f) => [f.problem, f.severity, f.object, f.message])).toEqual([
      ['SubstitutionFailed', 'error', 'FleetSync/shop', 'cluster edge-2: no value for region (at x)'],
      ['OverrideFailed', 'error', 'FleetSync/shop', 'cluster edge-1: overrides[0].patches[0] (replace /x): no such path'],
    ]);
    expect(findings[0]!.action).toContain('syncprims cluster add edge-2 --kubeconfig FILE --value NAME=VALUE -n fleet');
    expect(findings[0]!.action).toContain('${NAME:=default}');
    expect(findings[1]!.action).toContain('fix the override named in FleetSync shop');
    expect(findings[1]!.action).toContain('syncprims build fleetsync/shop --cluster edge-1 -n fleet');
  });
});
