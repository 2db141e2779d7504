import { describe, expect, test } from '@jest/globals';
import { parseLabels } from '../../src/cli/cluster/cluster-add.js';
import { selectorsOf } from '../../src/cli/cluster/cluster-list.js';
import { clusterApiCluster, secretCluster, withConflicts } from '../../src/clusters/inventory-sources.js';
import type { KubeObject } from '../../src/kube/resources.js';

const fleet = (name: string, clusters: unknown): KubeObject => ({ apiVersion: 'syncprims.dev/v1alpha1', kind: 'FleetSync', metadata: { name, namespace: 'team' }, spec: { clusters } });
const secret = (cluster: string, labels: Record<string, string>): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Secret',
  metadata: { name: `${cluster}-kc`, namespace: 'team', labels: { 'syncprims.dev/cluster': cluster, ...labels } },
});

describe('parseLabels', () => {
  test('key=value pairs, prefixed keys and empty values', () => {
    expect(parseLabels(['env=prod', 'example.com/tier=', 'a=b'])).toEqual({ env: 'prod', 'example.com/tier': '', a: 'b' });
  });

  test('refused as the API server would refuse them, and the cluster label is ours', () => {
    expect(() => parseLabels(['env'])).toThrow('want key=value');
    expect(() => parseLabels(['=x'])).toThrow('want key=value');
    expect(() => parseLabels(['bad key=x'])).toThrow('is not a valid label key');
    expect(() => parseLabels(['Bad_Prefix/k=x'])).toThrow('is not a valid label key');
    expect(() => parseLabels(['env=has space'])).toThrow('is not a valid label value');
    expect(() => parseLabels([`env=${'a'.repeat(64)}`])).toThrow('is not a valid label value');
    expect(() => parseLabels(['syncprims.dev/cluster=x'])).toThrow("is set to the cluster's name");
  });
});

describe('selectorsOf', () => {
  const clusters = withConflicts([
    ...[secret('a', { env: 'prod' }), secret('b', { env: 'dev' }), secret('dup', { env: 'prod' })].map(secretCluster),
    clusterApiCluster({ apiVersion: 'cluster.x-k8s.io/v1beta1', kind: 'Cluster', metadata: { name: 'dup', namespace: 'team' } })]);
  const fleets = [
    fleet('prod', { selector: { matchLabels: { env: 'prod' } } }),
    fleet('named', { names: ['b', 'dup'] }),
    fleet('all', {}),
    { ...fleet('none', undefined), spec: undefined },
  ];
  const of = (name: string) => selectorsOf(clusters.find((c) => c.name === name)!, clusters, fleets);

  test('the FleetSyncs whose spec.clusters select the cluster, sorted', () => {
    expect(of('a')).toEqual(['all', 'none', 'prod']);
    expect(of('b')).toEqual(['all', 'named', 'none']);
  });

  test('a cluster with a problem is selected by none', () => {
    expect(of('dup')).toEqual([]);
  });
});
