// Many identities on one API server, as a fleet of tenants is: what a new
// cluster's first reconcile asks of the server. Its discovery is shared by the
// identities of that server (DiscoveryCache, keyed by server and CA in the
// cluster registry: one identity's answer is every identity's, one identity's
// failure is its own), a ServiceAccount's objects in its own namespace are
// watched there from the first, not refused cluster-wide first, and the
// cluster of a RemoteSync waiting in the queue is opened meanwhile.
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { KubeClient } from '../../src/kube/client.js';
import { loadKubeConfigFile } from '../../src/kube/config.js';
import { Discovery, DiscoveryCache } from '../../src/kube/discovery.js';
import { ApiError } from '../../src/kube/errors.js';
import { clusterClient, kubeconfigPath } from '../support/controlplane.js';
import { eventually } from '../support/eventually.js';
import { useTestNamespace } from '../support/namespace.js';
import { useOperatedNamespace } from '../support/operated-namespace.js';
import type { LogLine, OperatorProcess } from '../support/operator.js';
import { applyRemoteSync, putKubeconfigSecret, serviceAccountKubeconfig, waitForRemoteReady } from '../support/remote.js';

let op: OperatorProcess;
let mgmt: KubeClient;
let edge1: KubeClient;
// Trace: every request the operator sends is a log line (cluster, method, path, status).
const ns = useOperatedNamespace('mgmt', 'rids', (o) => ({ client: mgmt, op } = o), ['--log-level', 'trace', '--cluster-id', 'rids']);
const edgeNs = useTestNamespace('edge-1', 'rids');
const IDENTITIES = ['tenant-a', 'tenant-b', 'tenant-c', 'tenant-d'];

beforeAll(async () => {
  edge1 = await clusterClient('edge-1');
}, 60_000);

const requestsOf = (cluster: string): LogLine[] => op.logs.filter((l) => l.msg === 'request' && l.cluster === cluster);

describe('identities of one API server', () => {
  test('namespaced ServiceAccounts: one discovery request for all of them, and each one\'s first watch in its namespace (no 403)', async () => {
    // Each a ServiceAccount of the edge namespace, allowed ConfigMaps there only: an identity (and a cluster) of its own.
    for (const name of IDENTITIES) {
      const kubeconfig = await serviceAccountKubeconfig(edge1, 'edge-1', edgeNs(), name, [{ apiGroups: [''], resources: ['configmaps'], verbs: ['*'] }]);
      await putKubeconfigSecret(mgmt, ns(), `${name}-kubeconfig`, kubeconfig);
    }
    await Promise.all(
      IDENTITIES.map((name) =>
        applyRemoteSync(mgmt, ns(), name, {
          kubeConfig: { secretRef: { name: `${name}-kubeconfig` } },
          defaultNamespace: edgeNs(),
          source: { inline: [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { owner: name } }] },
        }),
      ),
    );
    for (const name of IDENTITIES) await waitForRemoteReady(mgmt, ns(), name, 'True', 'Succeeded');

    const clusters = IDENTITIES.map((name) => `${ns()}/${name}-kubeconfig`);
    const requests = clusters.flatMap(requestsOf);
    expect(new Set(requests.map((r) => r.cluster))).toEqual(new Set(clusters));
    // Discovery of what edge-1 serves (core/v1 for ConfigMaps) was asked once, by whichever identity came first.
    expect(requests.filter((r) => r.path === '/api/v1')).toHaveLength(1);
    // Nothing refused: no cluster-wide watch tried first.
    expect(requests.filter((r) => r.status === 403)).toEqual([]);
    for (const cluster of clusters) {
      const watches = requestsOf(cluster).filter((r) => String(r.query).includes('watch=1'));
      expect(watches.map((w) => w.path)).toEqual([`/api/v1/namespaces/${edgeNs()}/configmaps`]);
    }
  });

  test('a new RemoteSync\'s cluster is opened while it waits (here for a dependency): its Secret read, nothing sent to the cluster', async () => {
    const kubeconfig = await serviceAccountKubeconfig(edge1, 'edge-1', edgeNs(), 'waiter', [{ apiGroups: [''], resources: ['configmaps'], verbs: ['*'] }]);
    await putKubeconfigSecret(mgmt, ns(), 'waiter-kubeconfig', kubeconfig);
    await applyRemoteSync(mgmt, ns(), 'waiter', {
      kubeConfig: { secretRef: { name: 'waiter-kubeconfig' } },
      dependsOn: [{ name: 'not-yet' }],
      defaultNamespace: edgeNs(),
      source: { inline: [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'waiter' }, data: { owner: 'waiter' } }] },
    });
    await waitForRemoteReady(mgmt, ns(), 'waiter', 'False', 'DependencyNotReady');
    // Opened without a reconcile getting that far: the one reading the Secret is the one opening it ahead.
    const cluster = `${ns()}/waiter-kubeconfig`;
    await eventually('its cluster opened', async () => (op.logs.some((l) => l.msg === 'cluster opened' && l.cluster === cluster) ? true : undefined));
    expect(requestsOf(cluster)).toEqual([]);
  });
});

const paths = (client: KubeClient): string[] => {
  const seen: string[] = [];
  client.observe((r) => seen.push(`${r.url.pathname} ${r.status ?? 'none'}`));
  return seen;
};

describe('discovery shared by the identities of one server', () => {
  let admin: KubeClient;
  let revoked: KubeClient;
  beforeAll(async () => {
    admin = await clusterClient('edge-1');
    // The same server and CA, a token the server does not know: every request of it is 401.
    const kc = loadKubeConfigFile(kubeconfigPath('edge-1'));
    const user = kc.getCurrentUser()!;
    Object.assign(user, { certData: undefined, keyData: undefined, token: 'not-a-token-this-server-knows' });
    revoked = await KubeClient.create('revoked', kc);
  });
  afterAll(() => revoked.close());

  test("a failure is not shared (the other identity asks again itself, and gets the server's answer); an answer is (a third identity sends nothing)", async () => {
    const shared = new DiscoveryCache();
    const adminRequests = paths(admin);
    const revokedRequests = paths(revoked);

    // The revoked identity asks first; the admin joins its request while it is in flight, fails with it, and asks again.
    const [refused, resolved] = await Promise.all([
      new Discovery(revoked, undefined, shared).resolve('v1', 'ConfigMap').catch((e: unknown) => e),
      new Discovery(admin, undefined, shared).resolve('v1', 'ConfigMap'),
    ]);
    expect(refused).toBeInstanceOf(ApiError);
    expect((refused as ApiError).status).toBe(401);
    expect(resolved).toMatchObject({ resource: 'configmaps', namespaced: true });
    expect(revokedRequests).toEqual(['/api/v1 401']);
    expect(adminRequests).toEqual(['/api/v1 200']);

    // A third identity of the server finds the admin's answer: no request.
    const third = await KubeClient.create('third', loadKubeConfigFile(kubeconfigPath('edge-1')));
    const thirdRequests = paths(third);
    await expect(new Discovery(third, undefined, shared).resolve('v1', 'Secret')).resolves.toMatchObject({ resource: 'secrets' });
    expect(thirdRequests).toEqual([]);
    third.close();
  });
});
