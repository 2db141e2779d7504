// Discovery shared by the identities of one API server (DiscoveryCache, as
// the cluster registry keys it by server and CA): one identity's answer is
// every identity's, one identity's failure is its own.
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { KubeClient } from '../../src/kube/client.js';
import { Discovery, DiscoveryCache } from '../../src/kube/discovery.js';
import { ApiError } from '../../src/kube/errors.js';
import { loadKubeConfigFile } from '../../src/kube/config.js';
import { clusterApi, closeClients, kubeconfigPath } from '../support/controlplane.js';

afterAll(closeClients);

const paths = (client: KubeClient): string[] => {
  const seen: string[] = [];
  client.observe((r) => seen.push(`${r.url.pathname} ${r.status ?? 'none'}`));
  return seen;
};

describe('discovery shared by the identities of one server', () => {
  let admin: KubeClient;
  let revoked: KubeClient;
  beforeAll(async () => {
    ({ client: admin } = await clusterApi('edge-1'));
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
