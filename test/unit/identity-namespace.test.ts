// The namespace a kubeconfig's identity most likely works in, read from the
// kubeconfig alone (src/clusters/identity-namespace.ts): a ServiceAccount
// token's namespace; nothing for any other user.
import { describe, expect, test } from '@jest/globals';
import { stringify } from 'yaml';
import { serviceAccountNamespaceOf } from '../../src/clusters/identity-namespace.js';
import { KubeConfig } from '../../src/kube/kubeconfig.js';

const part = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64url');
/** A token shaped as a JWT (not signed: only its claims are read). */
const jwt = (claims: Record<string, unknown>): string => `${part({ alg: 'RS256', kid: 'k' })}.${part(claims)}.c2lnbmF0dXJl`;

function kubeconfig(user: Record<string, unknown>, contextNamespace?: string): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromString(
    stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'c', cluster: { server: 'https://127.0.0.1:6443' } }],
      users: [{ name: 'u', user }],
      contexts: [{ name: 'c', context: { cluster: 'c', user: 'u', ...(contextNamespace ? { namespace: contextNamespace } : {}) } }],
      'current-context': 'c',
    }),
  );
  return kc;
}

describe('serviceAccountNamespaceOf', () => {
  test("a ServiceAccount's token (bound or legacy): its namespace, from the sub claim", () => {
    const bound = jwt({ sub: 'system:serviceaccount:fleet-7:syncer', 'kubernetes.io': { namespace: 'fleet-7' } });
    expect(serviceAccountNamespaceOf(kubeconfig({ token: bound }))).toBe('fleet-7');
    const legacy = jwt({ iss: 'kubernetes/serviceaccount', sub: 'system:serviceaccount:team-a:deployer' });
    expect(serviceAccountNamespaceOf(kubeconfig({ token: legacy }))).toBe('team-a');
  });

  test('a user that impersonates (as:) acts as the one it impersonates: a ServiceAccount there gives its namespace, anyone else none', () => {
    const token = jwt({ sub: 'system:serviceaccount:fleet-7:syncer' });
    expect(serviceAccountNamespaceOf(kubeconfig({ token, as: 'system:serviceaccount:team-b:deployer' }))).toBe('team-b');
    expect(serviceAccountNamespaceOf(kubeconfig({ token, as: 'alice' }))).toBeUndefined();
  });

  test('any other user: none (a person, a certificate, an opaque token, a context namespace, a claim that is not a namespace)', () => {
    expect(serviceAccountNamespaceOf(kubeconfig({ token: jwt({ sub: 'alice@example.com' }) }))).toBeUndefined();
    expect(serviceAccountNamespaceOf(kubeconfig({ 'client-certificate-data': 'Y2VydA==', 'client-key-data': 'a2V5' }, 'team-a'))).toBeUndefined();
    expect(serviceAccountNamespaceOf(kubeconfig({ token: 'abcdef.0123456789abcdef' }))).toBeUndefined();
    expect(serviceAccountNamespaceOf(kubeconfig({ token: 'not.a-jwt.at all' }))).toBeUndefined();
    expect(serviceAccountNamespaceOf(kubeconfig({ token: jwt({ sub: 'system:serviceaccount:Not_A_Namespace:x' }) }))).toBeUndefined();
    expect(serviceAccountNamespaceOf(kubeconfig({ token: jwt({ sub: 'system:serviceaccount:a:b:c' }) }))).toBeUndefined();
    expect(serviceAccountNamespaceOf(kubeconfig({ username: 'admin', password: 'secret' }))).toBeUndefined();
  });
});
