import { describe, expect, test } from '@jest/globals';
import { selectClusters, type InventoryCluster } from '../../src/clusters/inventory.js';
import { clusterValues, valueName } from '../../src/clusters/cluster-values.js';
import { clusterApiCluster, clusterProfileCluster, projectClusterProfile, projectInventoryMetadata, secretCluster, withConflicts } from '../../src/clusters/inventory-sources.js';
import type { KubeObject } from '../../src/kube/resources.js';

const secret = (name: string, cluster: string, labels: Record<string, string> = {}): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Secret',
  metadata: { name, namespace: 'team', labels: { 'syncprims.dev/cluster': cluster, ...labels } },
});
const capi = (name: string, labels: Record<string, string> = {}): KubeObject => ({
  apiVersion: 'cluster.x-k8s.io/v1beta1',
  kind: 'Cluster',
  metadata: { name, namespace: 'team', labels },
});
const profile = (name: string, accessProviders?: unknown[], labels: Record<string, string> = {}): KubeObject => ({
  apiVersion: 'multicluster.x-k8s.io/v1alpha1',
  kind: 'ClusterProfile',
  metadata: { name, namespace: 'team', labels },
  ...(accessProviders && { status: { accessProviders } }),
});
const secretReader = (extension: Record<string, unknown>) => ({
  name: 'kubeconfig-secretreader',
  cluster: { server: 'https://127.0.0.1:6442', 'certificate-authority-data': 'Q0E=', extensions: [{ name: 'client.authentication.k8s.io/exec', extension }] },
});

describe('values', () => {
  const annotated = <T extends KubeObject>(obj: T, annotations: Record<string, string>): T => ({ ...obj, metadata: { ...obj.metadata, annotations } });

  test('each annotation values.syncprims.dev/<key> is the value <key>, every character outside [A-Za-z0-9_] written _; cluster_name is the name', () => {
    const s = annotated(secret('edge-1-kubeconfig', 'edge-1'), {
      'values.syncprims.dev/region': 'eu-west',
      'values.syncprims.dev/zone.name-1': 'b',
      'values.syncprims.dev/': 'no key',
      'example.com/region': 'elsewhere',
    });
    expect(secretCluster(s).values).toEqual({ region: 'eu-west', zone_name_1: 'b', cluster_name: 'edge-1' });
    expect(clusterApiCluster(annotated(capi('edge-2'), { 'values.syncprims.dev/region': 'us' })).values).toEqual({ region: 'us', cluster_name: 'edge-2' });
    expect(valueName('cluster.x-k8s.io/zone')).toBe('cluster_x_k8s_io_zone');
  });

  test('cluster_name cannot be replaced by an annotation; an annotation wins over a ClusterProfile property of the same name', () => {
    expect(clusterValues('edge-1', { 'values.syncprims.dev/cluster_name': 'forged', 'values.syncprims.dev/region': 'set' }, [{ name: 'region', value: 'from-manager' }])).toEqual({
      cluster_name: 'edge-1',
      region: 'set',
    });
  });

  test("a ClusterProfile's status.properties are values (malformed ones left out), and its projection keeps them and the value annotations only", () => {
    const raw = annotated(profile('edge-3', [secretReader({ name: 'edge-3-kc', key: 'config' })]), { 'values.syncprims.dev/tier': 'gold', 'kubectl.kubernetes.io/last-applied-configuration': '{"secret":1}' });
    (raw.status as Record<string, unknown>).properties = [{ name: 'clusterset.k8s.io', value: 'east' }, { name: 'bad' }, 'junk'];
    const projected = projectClusterProfile(raw);
    expect(JSON.stringify(projected)).not.toContain('last-applied');
    expect(clusterProfileCluster(projected).values).toEqual({ clusterset_k8s_io: 'east', tier: 'gold', cluster_name: 'edge-3' });
  });

  test('the metadata the inventory keeps of a Secret: its value annotations, no other (last-applied-configuration holds its data)', () => {
    const partial = { apiVersion: 'meta.k8s.io/v1', kind: 'PartialObjectMetadata', metadata: { name: 'kc', namespace: 'team', uid: 'u', resourceVersion: '7', labels: { a: 'b' }, annotations: { 'values.syncprims.dev/region': 'eu', 'kubectl.kubernetes.io/last-applied-configuration': '{"data":{"value":"c2VjcmV0"}}' } } };
    expect(projectInventoryMetadata('Secret', 'v1')(partial)).toEqual({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'kc', namespace: 'team', uid: 'u', resourceVersion: '7', labels: { a: 'b' }, annotations: { 'values.syncprims.dev/region': 'eu' } },
    });
    expect(projectInventoryMetadata('Secret', 'v1')({ ...partial, metadata: { ...partial.metadata, annotations: {} } }).metadata.annotations).toBeUndefined();
  });
});

describe('the sources', () => {
  test('a labelled Secret: named by the label (or the Secret when empty), its kubeconfig in key value', () => {
    const c = secretCluster(secret('edge-1-kubeconfig', 'edge-1', { env: 'prod' }));
    expect(c).toEqual({
      name: 'edge-1',
      namespace: 'team',
      labels: { 'syncprims.dev/cluster': 'edge-1', env: 'prod' },
      values: { cluster_name: 'edge-1' },
      source: 'Secret',
      definedBy: 'Secret team/edge-1-kubeconfig',
      ref: { kubeConfig: { secretRef: { name: 'edge-1-kubeconfig', key: 'value' } } },
    });
    expect(secretCluster(secret('plain', '')).name).toBe('plain');
  });

  test('a Cluster API Cluster: clusterRef by its name, its labels', () => {
    expect(clusterApiCluster(capi('edge-2', { env: 'dev' }))).toMatchObject({ name: 'edge-2', source: 'Cluster', labels: { env: 'dev' }, ref: { clusterRef: { name: 'edge-2' } } });
  });

  test('a ClusterProfile with a kubeconfig-secretreader provider: the Secret and key it names', () => {
    const c = clusterProfileCluster(profile('edge-3', [{ name: 'gcp' }, secretReader({ name: 'edge-3-kc', key: 'config', namespace: 'team' })], { env: 'prod' }));
    expect(c).toMatchObject({ name: 'edge-3', source: 'ClusterProfile', labels: { env: 'prod' }, ref: { kubeConfig: { secretRef: { name: 'edge-3-kc', key: 'config' } } } });
    expect(c.problem).toBeUndefined();
  });

  test('the projection keeps what the credentials are read from, and no CA nor server', () => {
    const raw = profile('edge-3', [secretReader({ name: 'edge-3-kc', key: 'config' })], { env: 'prod' });
    const projected = projectClusterProfile(raw);
    expect(JSON.stringify(projected)).not.toContain('Q0E=');
    expect(clusterProfileCluster(projected)).toEqual(clusterProfileCluster(raw));
  });

  test('the field credentialProviders of the first releases is read too', () => {
    const old = { ...profile('old'), status: { credentialProviders: [secretReader({ name: 'kc', key: 'value' })] } };
    expect(clusterProfileCluster(old).ref).toEqual({ kubeConfig: { secretRef: { name: 'kc', key: 'value' } } });
  });

  test('a ClusterProfile without usable credentials is listed with a problem saying what is missing', () => {
    expect(clusterProfileCluster(profile('p')).problem).toMatch(/no status.accessProviders yet/);
    const execOnly = clusterProfileCluster(profile('p', [{ name: 'open-cluster-management', cluster: { server: 'https://127.0.0.1:1' } }]));
    expect(execOnly.ref).toEqual({});
    expect(execOnly.problem).toMatch(/no access provider names a kubeconfig Secret of namespace team/);
    expect(execOnly.problem).toMatch(/\(open-cluster-management\) need a credentials plugin run as a command/);
    const noKey = clusterProfileCluster(profile('p', [secretReader({ name: 'kc' })]));
    expect(noKey.problem).toMatch(/with name and key/);
    const elsewhere = clusterProfileCluster(profile('p', [secretReader({ name: 'kc', key: 'value', namespace: 'other' })]));
    expect(elsewhere.problem).toMatch(/names Secret other\/kc, outside the profile's namespace/);
  });
});

describe('conflicts', () => {
  test('one name from two sources: both kept, each with a problem naming the other', () => {
    const out = withConflicts([clusterApiCluster(capi('edge')), secretCluster(secret('edge-kc', 'edge')), secretCluster(secret('a-kc', 'a'))]);
    expect(out.map((c) => [c.name, c.source])).toEqual([
      ['a', 'Secret'],
      ['edge', 'Cluster'],
      ['edge', 'Secret'],
    ]);
    expect(out[0]!.problem).toBeUndefined();
    expect(out[1]!.problem).toBe('the name edge is claimed by Secret team/edge-kc too: remove or rename one of them');
    expect(out[2]!.problem).toBe('the name edge is claimed by Cluster API Cluster team/edge too: remove or rename one of them');
  });

  test('two Secrets with one label value conflict too; a problem of its own is kept after the conflict', () => {
    const out = withConflicts([secretCluster(secret('x', 'dup')), secretCluster(secret('y', 'dup')), clusterProfileCluster(profile('dup'))]);
    expect(out).toHaveLength(3);
    expect(out.find((c) => c.source === 'ClusterProfile')!.problem).toMatch(/^the name dup is claimed by Secret team\/x and Secret team\/y too: .*; it has no status.accessProviders/);
  });
});

describe('selectClusters', () => {
  const clusters: InventoryCluster[] = withConflicts([
    secretCluster(secret('c-kc', 'c', { env: 'prod', region: 'eu' })),
    secretCluster(secret('a-kc', 'a', { env: 'prod', region: 'us' })),
    clusterApiCluster(capi('b', { env: 'dev' })),
    clusterProfileCluster(profile('broken', undefined, { env: 'prod' })),
    clusterApiCluster(capi('dup', { env: 'prod' })),
    secretCluster(secret('dup-kc', 'dup', { env: 'prod' })),
  ]);
  const names = (sel: Parameters<typeof selectClusters>[1]) => selectClusters(clusters, sel).map((c) => c.name);

  test('by selector, sorted by name, leaving out those with a problem', () => {
    expect(names({ selector: { matchLabels: { env: 'prod' } } })).toEqual(['a', 'c']);
    expect(names({ selector: {} })).toEqual(['a', 'b', 'c']);
  });

  test('by names', () => {
    expect(names({ names: ['c', 'b', 'dup', 'nowhere'] })).toEqual(['b', 'c']);
  });

  test('both: a cluster must match both', () => {
    expect(names({ names: ['a', 'b'], selector: { matchExpressions: [{ key: 'region', operator: 'In', values: ['us', 'eu'] }] } })).toEqual(['a']);
  });

  test('neither: every usable cluster', () => {
    expect(names({})).toEqual(['a', 'b', 'c']);
  });

  test('sorted whatever the order given', () => {
    expect(selectClusters([...clusters].reverse(), {}).map((c) => c.name)).toEqual(['a', 'b', 'c']);
  });
});
