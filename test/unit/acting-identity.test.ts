// Whom a RemoteSync acts as in its cluster: a kubeconfig that impersonates
// (as:) and a sync that acts as a service account cannot both be honoured in
// one request; refused, saying so, before anything is sent.
import { describe, expect, test } from '@jest/globals';
import { stringify } from 'yaml';
import { actingAccountOf, impersonationConflict } from '../../src/clusters/acting-identity.js';
import { checkedKubeconfig } from '../../src/clusters/kubeconfig.js';
import { KubeClient } from '../../src/kube/client.js';

const kubeconfig = (user: Record<string, unknown>) =>
  checkedKubeconfig(
    stringify({
      clusters: [{ name: 'edge', cluster: { server: 'https://127.0.0.1:6442', 'certificate-authority-data': 'Y2E=' } }],
      users: [{ name: 'u', user: { token: 't', ...user } }],
      contexts: [{ name: 'edge', context: { cluster: 'edge', user: 'u' } }],
      'current-context': 'edge',
    }),
    'Secret team/edge key value',
  );

describe('actingAccountOf', () => {
  test("the sync's own account, else the operator's default, else none", () => {
    expect(actingAccountOf('team', 'deployer', 'default')).toEqual({ namespace: 'team', name: 'deployer', setBy: 'spec.serviceAccountName' });
    expect(actingAccountOf('team', undefined, 'default')).toEqual({ namespace: 'team', name: 'default', setBy: '--default-service-account' });
    expect(actingAccountOf('team', undefined, undefined)).toBeUndefined();
  });
});

describe('impersonationConflict', () => {
  test('as: with a service account to act as is refused, naming both and what to change', () => {
    const message = impersonationConflict('team/edge-kubeconfig', kubeconfig({ as: 'ann', 'as-groups': ['team-a'] }), actingAccountOf('team', undefined, 'default'));
    expect(message).toBe(
      'cluster team/edge-kubeconfig: its kubeconfig impersonates user "ann" with groups team-a (as:), and this sync acts as service account team/default there (--default-service-account); ' +
        'a request carries one impersonated identity, so one of them would be dropped: refused, nothing sent; remove as: from the kubeconfig (its user then impersonates the service account), ' +
        "or apply as the kubeconfig's identity (no spec.serviceAccountName, and no --default-service-account)",
    );
  });

  test('either alone is fine', () => {
    expect(impersonationConflict('c', kubeconfig({ as: 'ann' }), undefined)).toBeUndefined();
    expect(impersonationConflict('c', kubeconfig({}), actingAccountOf('team', 'deployer', undefined))).toBeUndefined();
  });

  test("the client refuses to impersonate over its kubeconfig's as: (nothing sent), and impersonates without one", async () => {
    const client = await KubeClient.create('edge', kubeconfig({ as: 'ann' }));
    expect(() => client.asServiceAccount('team', 'default')).toThrow(
      'edge: its kubeconfig impersonates user "ann" (as:): it cannot act as system:serviceaccount:team:default too (one impersonated identity per request)',
    );
    const plain = await KubeClient.create('edge', kubeconfig({}));
    expect(plain.asServiceAccount('team', 'default').name).toBe('edge as system:serviceaccount:team:default');
  });
});
