// Lane: own clusters (test/support/lanes-runner.js: it runs beside the shared-cluster files).
// The cluster inventory (clusters/inventory.ts) on a real API server, a
// cluster of this file's own (`inventory`): the Cluster API and ClusterProfile
// CRDs it installs are seen by no other test.
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { ClusterInventory, selectClusters, type InventoryCluster } from '../../src/clusters/inventory.js';
import type { KubeClient } from '../../src/kube/client.js';
import { Discovery } from '../../src/kube/discovery.js';
import { ApiError } from '../../src/kube/errors.js';
import { ClusterCache } from '../../src/runtime/cache.js';
import { silentLogger } from '../../src/runtime/logger.js';
import { clusterApiClusterPath, installClusterApiCrd } from '../support/cluster-api.js';
import { clusterClient, closeClients, ensureClusters } from '../support/controlplane.js';
import { schemalessCrd } from '../support/crds.js';
import { eventually } from '../support/eventually.js';
import { useTestNamespace } from '../support/namespace.js';

const CLUSTER = 'inventory';
const PROFILE_CRD = 'clusterprofiles.multicluster.x-k8s.io';
const CRD_PATH = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';

let client: KubeClient;
let cache: ClusterCache;
let inventory: ClusterInventory;
const told: string[] = [];
const ns = useTestNamespace(CLUSTER, 'inv');

beforeAll(async () => {
  await ensureClusters([CLUSTER]);
  client = await clusterClient(CLUSTER);
  await removeProfileCrd();
  await installClusterApiCrd(client);
  cache = new ClusterCache(client, new Discovery(client));
  inventory = new ClusterInventory({ cache, discovery: cache.discovery, logger: silentLogger });
  await inventory.start();
  inventory.onChange((namespace) => told.push(namespace));
}, 120_000);

afterAll(async () => {
  await inventory?.stop();
  await cache?.stop();
  await removeProfileCrd().catch(() => undefined);
  await closeClients();
});

describe('the inventory of a namespace', () => {
  test('kubeconfig Secrets labelled in and out: the list changes and onChange tells the namespace; their data is not cached', async () => {
    await putSecret('a-kubeconfig', { 'syncprims.dev/cluster': 'a', env: 'prod' });
    await putSecret('b-kubeconfig', { env: 'prod' });
    const a = await clustersBecome(['a']);
    expect(a[0]).toMatchObject({ source: 'Secret', labels: { env: 'prod' }, ref: { kubeConfig: { secretRef: { name: 'a-kubeconfig', key: 'value' } } } });
    expect(told).toContain(ns());

    told.length = 0;
    await labelSecret('b-kubeconfig', { 'syncprims.dev/cluster': 'b' });
    await clustersBecome(['a', 'b']);
    expect(told).toContain(ns());
    expect(selectClusters(inventory.list(ns()), { selector: { matchLabels: { env: 'prod' } } }).map((c) => c.name)).toEqual(['a', 'b']);

    told.length = 0;
    await labelSecret('a-kubeconfig', { 'syncprims.dev/cluster': null });
    await clustersBecome(['b']);
    expect(told).toContain(ns());
    expect(inventory.get(ns(), 'a')).toBeUndefined();

    // Watched as metadata only: no Secret's content sits in the cache.
    const cached = (await cache.dump()).filter((d) => d.informer.startsWith('v1|Secret|')).flatMap((d) => d.objects);
    expect(cached.length).toBeGreaterThan(0);
    expect(JSON.stringify(cached)).not.toContain('c2VjcmV0');
    expect(cached.every((o) => o.data === undefined)).toBe(true);
  }, 60_000);

  test('a Cluster API Cluster is a cluster named by clusterRef; one name from two sources is a conflict', async () => {
    await client.request({
      method: 'POST',
      path: `/apis/cluster.x-k8s.io/v1beta1/namespaces/${ns()}/clusters`,
      body: { apiVersion: 'cluster.x-k8s.io/v1beta1', kind: 'Cluster', metadata: { name: 'capi-1', labels: { env: 'dev' } } },
    });
    const [, capi] = await clustersBecome(['b', 'capi-1']);
    expect(capi).toMatchObject({ source: 'Cluster', labels: { env: 'dev' }, ref: { clusterRef: { name: 'capi-1' } } });
    expect(capi!.problem).toBeUndefined();

    await putSecret('capi-1-kubeconfig', { 'syncprims.dev/cluster': 'capi-1' });
    const both = await eventually('the conflict', async () => {
      const found = inventory.list(ns()).filter((c) => c.name === 'capi-1');
      return found.length === 2 && found.every((c) => c.problem) ? found : undefined;
    });
    expect(both.find((c) => c.source === 'Cluster')!.problem).toContain(`Secret ${ns()}/capi-1-kubeconfig`);
    expect(both.find((c) => c.source === 'Secret')!.problem).toContain(`Cluster API Cluster ${ns()}/capi-1`);
    expect(selectClusters(inventory.list(ns()), {}).map((c) => c.name)).toEqual(['b']);

    await client.request({ method: 'DELETE', path: clusterApiClusterPath(ns(), 'capi-1') });
    const alone = await eventually('the conflict gone with the Cluster', async () => {
      const c = inventory.get(ns(), 'capi-1');
      return c && !c.problem ? c : undefined;
    });
    expect(alone.source).toBe('Secret');
  }, 60_000);

  test('the ClusterProfile CRD installed later is picked up without restart; a profile without usable credentials says what is missing', async () => {
    expect(inventory.watchedKinds().some((k) => k.endsWith('|ClusterProfile'))).toBe(false);
    await client.request({ method: 'POST', path: CRD_PATH, body: profileCrd() });
    await eventually('ClusterProfiles watched', async () => (inventory.watchedKinds().includes('multicluster.x-k8s.io/v1alpha1|ClusterProfile') ? true : undefined), 30_000);

    await createProfile('edge-p', { env: 'prod' }, [
      { name: 'kubeconfig-secretreader', cluster: { server: 'https://127.0.0.1:1', extensions: [{ name: 'client.authentication.k8s.io/exec', extension: { name: 'edge-p-kc', key: 'config' } }] } },
    ]);
    await createProfile('exec-only', { env: 'prod' }, [{ name: 'open-cluster-management', cluster: { server: 'https://127.0.0.1:1' } }]);
    const listed = await clustersBecome(['b', 'capi-1', 'edge-p', 'exec-only']);
    expect(listed[2]).toMatchObject({ source: 'ClusterProfile', labels: { env: 'prod' }, ref: { kubeConfig: { secretRef: { name: 'edge-p-kc', key: 'config' } } } });
    expect(listed[3]!.problem).toMatch(/no access provider names a kubeconfig Secret/);
    expect(selectClusters(inventory.list(ns()), { selector: { matchLabels: { env: 'prod' } } }).map((c) => c.name)).toEqual(['b', 'edge-p']);
  }, 60_000);
});

async function clustersBecome(names: string[]): Promise<InventoryCluster[]> {
  return eventually(`the clusters ${names.join(', ')}`, async () => {
    const list = inventory.list(ns());
    return JSON.stringify(list.map((c) => c.name)) === JSON.stringify(names) ? list : undefined;
  }, 30_000);
}

async function putSecret(name: string, labels: Record<string, string>): Promise<void> {
  await client.request({
    method: 'POST',
    path: `/api/v1/namespaces/${ns()}/secrets`,
    body: { apiVersion: 'v1', kind: 'Secret', metadata: { name, labels }, data: { value: 'c2VjcmV0' } },
  });
}

async function labelSecret(name: string, labels: Record<string, string | null>): Promise<void> {
  await client.request({
    method: 'PATCH',
    path: `/api/v1/namespaces/${ns()}/secrets/${name}`,
    contentType: 'application/merge-patch+json',
    body: { metadata: { labels } },
  });
}

async function createProfile(name: string, labels: Record<string, string>, accessProviders: unknown[]): Promise<void> {
  await client.request({
    method: 'POST',
    path: `/apis/multicluster.x-k8s.io/v1alpha1/namespaces/${ns()}/clusterprofiles`,
    body: { apiVersion: 'multicluster.x-k8s.io/v1alpha1', kind: 'ClusterProfile', metadata: { name, labels }, spec: {}, status: { accessProviders } },
  });
}

/** The ClusterProfile CRD, without its schema (and with no status subresource, so a create sets the status), serving v1alpha1. */
function profileCrd() {
  const crd = schemalessCrd('multicluster.x-k8s.io', 'ClusterProfile', 'clusterprofiles');
  return { ...crd, spec: { ...crd.spec, versions: crd.spec.versions.map((v) => ({ ...v, name: 'v1alpha1' })) } };
}

/** A run before may have left the CRD: the inventory must start without it. */
async function removeProfileCrd(): Promise<void> {
  await client.request({ method: 'DELETE', path: `${CRD_PATH}/${PROFILE_CRD}` }).catch((err: unknown) => {
    if (!(err instanceof ApiError && err.notFound)) throw err;
  });
  await eventually('the ClusterProfile CRD gone', async () => {
    try {
      await client.request({ path: `${CRD_PATH}/${PROFILE_CRD}` });
      return undefined;
    } catch (err) {
      if (err instanceof ApiError && err.notFound) return true;
      throw err;
    }
  });
}
