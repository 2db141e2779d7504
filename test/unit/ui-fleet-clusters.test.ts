// The web view's FleetSync panel, its pure part (src/ui/fleet-clusters.ts
// through buildView): per cluster its wave, child, values from the cluster
// inventory, the overrides that select it (index and first patch) and its
// problem as status.failures says; made from the inventory's own readers of
// kubeconfig Secrets, as the operator reads them.
import { describe, expect, test } from '@jest/globals';
import { secretCluster, withConflicts } from '../../src/clusters/inventory-sources.js';
import type { InventoryCluster } from '../../src/clusters/inventory.js';
import type { KubeObject } from '../../src/kube/resources.js';
import { buildView } from '../../src/ui/model.js';

const NS = 'shop';

/** A kubeconfig Secret of the inventory, as the inventory's watch keeps it (metadata only). */
function secret(cluster: string, labels: Record<string, string>, values: Record<string, string>, name = `${cluster}-kubeconfig`): KubeObject {
  const annotations = Object.fromEntries(Object.entries(values).map(([k, v]) => [`values.syncprims.dev/${k}`, v]));
  return { apiVersion: 'v1', kind: 'Secret', metadata: { name, namespace: NS, labels: { 'syncprims.dev/cluster': cluster, ...labels }, annotations } };
}

const inventory: InventoryCluster[] = withConflicts([
  secretCluster(secret('eu-1', { tier: 'canary', geo: 'eu' }, { region: 'eu-west-1', 'note.html': '<img src=x onerror=alert(1)>' })),
  secretCluster(secret('us-1', { tier: 'canary', geo: 'us' }, {})),
  secretCluster(secret('eu-2', { geo: 'eu' }, { region: 'eu-central-1' })),
  secretCluster(secret('ap-1', { geo: 'ap' }, { region: 'ap-south-1' })),
  // Not selected by the FleetSync (no geo).
  secretCluster(secret('lab', {}, { region: 'lab' })),
]);

const failure = { cluster: 'us-1', reason: 'SubstitutionFailed', message: 'no value for region (at metadata.labels.region) and no default: ...; nothing is written to this cluster' };

const fleet: KubeObject = {
  apiVersion: 'syncprims.dev/v1alpha1',
  kind: 'FleetSync',
  metadata: { name: 'storefront', namespace: NS, generation: 1 },
  spec: {
    clusters: { selector: { matchExpressions: [{ key: 'geo', operator: 'Exists' }] } },
    kind: 'RemoteSync',
    substitute: {},
    template: { metadata: { labels: { region: '${region}' } }, spec: { source: { inline: [] } } },
    overrides: [
      { clusters: { selector: { matchLabels: { tier: 'canary' } } }, patches: [{ op: 'add', path: '/metadata/labels/canary', value: 'true' }] },
      { clusters: { names: ['eu-1', 'eu-2'] }, patches: [{ op: 'add', path: '/metadata/labels/eu', value: 'true' }, { op: 'remove', path: '/metadata/labels/region' }] },
    ],
    rollout: { waves: [{ name: 'canary', selector: { matchLabels: { tier: 'canary' } }, maxFailures: 0 }, { name: 'eu', selector: { matchLabels: { geo: 'eu' } } }] },
  },
  status: {
    observedGeneration: 1,
    phase: 'Halted',
    updateRevision: '0123456789abcdef',
    conditions: [{ type: 'Ready', status: 'False', reason: 'RolloutHalted', message: 'halted', lastTransitionTime: '2030-01-01T00:00:00Z' }],
    clusters: { selected: 4, updated: 1, ready: 1, failed: 1, unreachable: 0 },
    waves: [
      { name: 'canary', clusters: 2, updated: 1, ready: 1, failed: 1, unreachable: 0, members: ['eu-1', 'us-1'] },
      { name: 'eu', clusters: 1, updated: 0, ready: 0, failed: 0, unreachable: 0, members: ['eu-2'] },
      { name: 'unmatched', clusters: 1, updated: 0, ready: 0, failed: 0, unreachable: 0, members: ['ap-1'] },
    ],
    failures: [failure],
  },
};

const child: KubeObject = {
  apiVersion: 'syncprims.dev/v1alpha1',
  kind: 'RemoteSync',
  metadata: { name: 'storefront-eu-1', namespace: NS, labels: { 'syncprims.dev/fleetsync': 'storefront', 'syncprims.dev/cluster': 'eu-1' }, resourceVersion: '9' },
  spec: { kubeConfig: { secretRef: { name: 'eu-1-kubeconfig' } } },
  status: { conditions: [{ type: 'Ready', status: 'True', reason: 'Succeeded', message: '', lastTransitionTime: '2030-01-01T00:00:00Z' }] },
};

describe('web view: a FleetSync’s clusters', () => {
  test('each selected cluster in wave order: its wave, child, values, the overrides selecting it, and its problem', () => {
    const [view] = buildView([fleet, child], undefined, undefined, (ns) => (ns === NS ? inventory : [])).fleets;
    expect(view?.valuesKnown).toBe(true);
    expect(view?.clusterRows).toEqual([
      {
        name: 'eu-1',
        wave: 'canary',
        child: 'RemoteSync/shop/storefront-eu-1',
        values: { region: 'eu-west-1', note_html: '<img src=x onerror=alert(1)>', cluster_name: 'eu-1' },
        overrides: [
          { index: 0, first: 'add /metadata/labels/canary', patches: 1 },
          { index: 1, first: 'add /metadata/labels/eu', patches: 2 },
        ],
      },
      { name: 'us-1', wave: 'canary', values: { cluster_name: 'us-1' }, overrides: [{ index: 0, first: 'add /metadata/labels/canary', patches: 1 }], problem: { reason: failure.reason, message: failure.message } },
      { name: 'eu-2', wave: 'eu', values: { region: 'eu-central-1', cluster_name: 'eu-2' }, overrides: [{ index: 1, first: 'add /metadata/labels/eu', patches: 2 }] },
      { name: 'ap-1', wave: 'unmatched', values: { region: 'ap-south-1', cluster_name: 'ap-1' }, overrides: [] },
    ]);
    // The child is also among the FleetSync's children, where the page finds it to select it.
    expect(view?.children.map((c) => [c.key, c.cluster, c.state])).toEqual([['RemoteSync/shop/storefront-eu-1', 'eu-1', 'ready']]);
  });

  test('without the inventory (not read yet) the clusters come from the children, the failures and the waves, with no values', () => {
    const [view] = buildView([fleet, child]).fleets;
    expect(view?.valuesKnown).toBe(false);
    expect(view?.clusterRows.map((r) => [r.name, r.wave, r.values, r.overrides, r.problem?.reason])).toEqual([
      ['eu-1', 'canary', undefined, [], undefined],
      ['us-1', 'canary', undefined, [], 'SubstitutionFailed'],
      ['eu-2', 'eu', undefined, [], undefined],
      ['ap-1', 'unmatched', undefined, [], undefined],
    ]);
  });

  test('a cluster that left the inventory keeps its row while it has a child; a name claimed twice is listed (its first claim); no waves: by name', () => {
    const noWaves = { ...fleet, status: { ...(fleet.status as object), waves: undefined } };
    const claimedTwice = withConflicts([...inventory.filter((c) => c.name !== 'eu-1'), secretCluster(secret('ap-1', { geo: 'ap' }, { region: 'elsewhere' }, 'ap-1-again'))]);
    const rows = buildView([noWaves, child], undefined, undefined, () => claimedTwice).fleets[0]!.clusterRows;
    expect(rows.map((r) => [r.name, r.wave, r.child, r.values?.region])).toEqual([
      ['ap-1', undefined, undefined, 'elsewhere'],
      ['eu-1', undefined, 'RemoteSync/shop/storefront-eu-1', undefined],
      ['eu-2', undefined, undefined, 'eu-central-1'],
      ['us-1', undefined, undefined, undefined],
    ]);
  });
});
