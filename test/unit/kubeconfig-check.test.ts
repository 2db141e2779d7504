// Kubeconfigs from Secrets: what is refused before any use, and why.
import { describe, expect, test } from '@jest/globals';
import { stringify } from 'yaml';
import { checkedKubeconfig, KubeconfigError } from '../../src/clusters/kubeconfig.js';

const ORIGIN = 'Secret team/edge-kubeconfig key value';
const TOKEN = 'tok-3f9a-very-secret';

function kubeconfig(cluster: Record<string, unknown> = {}, user: Record<string, unknown> = {}, extra: Record<string, unknown> = {}): string {
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'edge', cluster: { server: 'https://127.0.0.1:6442', 'certificate-authority-data': 'Y2E=', ...cluster } }],
    users: [{ name: 'admin', user: { token: TOKEN, ...user } }],
    contexts: [{ name: 'edge', context: { cluster: 'edge', user: 'admin' } }],
    'current-context': 'edge',
    ...extra,
  });
}

function refusal(text: string, policy = {}): string {
  try {
    checkedKubeconfig(text, ORIGIN, policy);
  } catch (err) {
    expect(err).toBeInstanceOf(KubeconfigError);
    const message = (err as Error).message;
    expect(message.startsWith(`${ORIGIN}: `)).toBe(true);
    expect(message).not.toContain(TOKEN);
    return message;
  }
  throw new Error('not refused');
}

describe('checkedKubeconfig', () => {
  test('an inline token or client certificate is accepted; the result holds only the current context', () => {
    const kc = checkedKubeconfig(kubeconfig(), ORIGIN);
    expect(kc.getCurrentCluster()).toMatchObject({ name: 'edge', server: 'https://127.0.0.1:6442', caData: 'Y2E=', skipTLSVerify: false });
    expect(kc.getCurrentUser()).toMatchObject({ name: 'admin', token: TOKEN });
    const certs = checkedKubeconfig(kubeconfig({}, { token: undefined, 'client-certificate-data': 'Y2VydA==', 'client-key-data': 'a2V5' }), ORIGIN);
    expect(certs.getCurrentUser()).toMatchObject({ certData: 'Y2VydA==', keyData: 'a2V5' });
  });

  test('exec and auth-provider users run nothing unless allowed', () => {
    const exec = kubeconfig({}, { token: undefined, exec: { apiVersion: 'client.authentication.k8s.io/v1', command: 'touch', args: ['/tmp/pwned'] } });
    expect(refusal(exec)).toBe(
      `${ORIGIN}: user "admin" runs a command to get its credentials (exec): refused, since a tenant's kubeconfig must not run anything on the operator's machine; use a token or a client certificate, or run the operator with --allow-kubeconfig-exec`,
    );
    expect(refusal(kubeconfig({}, { 'auth-provider': { name: 'gcp' } }))).toContain('uses an auth-provider plugin (auth-provider): refused');
    expect(checkedKubeconfig(exec, ORIGIN, { allowExec: true }).getCurrentUser()?.exec).toMatchObject({ command: 'touch' });
  });

  test('files on the operator machine are never read, whatever the flags', () => {
    const all = { allowExec: true, allowInsecureTls: true };
    expect(refusal(kubeconfig({}, { tokenFile: '/var/run/secrets/kubernetes.io/serviceaccount/token' }), all)).toBe(
      `${ORIGIN}: user "admin" names a file (tokenFile): refused, since it would be read on the operator's machine; put the content inline (token)`,
    );
    expect(refusal(kubeconfig({}, { 'client-certificate': '/etc/cert.pem' }), all)).toContain('names a file (client-certificate)');
    expect(refusal(kubeconfig({}, { 'client-key': '/etc/key.pem' }), all)).toContain('names a file (client-key)');
    expect(refusal(kubeconfig({ 'certificate-authority': '/etc/ca.pem' }), all)).toContain('cluster "edge" names a file (certificate-authority)');
  });

  test('insecure-skip-tls-verify only with the flag', () => {
    const insecure = kubeconfig({ 'insecure-skip-tls-verify': true, 'certificate-authority-data': undefined });
    expect(refusal(insecure)).toContain('cluster "edge" sets insecure-skip-tls-verify');
    expect(refusal(insecure)).toContain('--allow-insecure-kubeconfig-tls');
    expect(checkedKubeconfig(insecure, ORIGIN, { allowInsecureTls: true }).getCurrentCluster()?.skipTLSVerify).toBe(true);
  });

  test('a plain http:// server only with insecure-skip-tls-verify and the flag (client-node would refuse it at its first request)', () => {
    const plain = kubeconfig({ server: 'http://edge.example:8080' });
    expect(refusal(plain)).toBe(
      `${ORIGIN}: cluster "edge" has a plain http:// server, so its credentials would cross the network unencrypted: refused; use https://, or set insecure-skip-tls-verify and run the operator with --allow-insecure-kubeconfig-tls`,
    );
    expect(refusal(plain, { allowInsecureTls: true })).toContain('plain http:// server');
    const insecure = kubeconfig({ server: 'http://edge.example:8080', 'insecure-skip-tls-verify': true, 'certificate-authority-data': undefined });
    expect(refusal(insecure)).toContain('plain http:// server');
    expect(checkedKubeconfig(insecure, ORIGIN, { allowInsecureTls: true }).getCurrentCluster()?.server).toBe('http://edge.example:8080');
  });

  test('entries the current context does not use are checked too', () => {
    const text = kubeconfig({}, {}, {
      users: [
        { name: 'admin', user: { token: TOKEN } },
        { name: 'other', user: { exec: { command: 'sh' } } },
      ],
    });
    expect(refusal(text)).toContain('user "other" runs a command');
  });

  test('malformed kubeconfigs say what is wrong, and quote nothing of the text', () => {
    expect(refusal(`users: [${TOKEN}`)).toMatch(/^Secret team\/edge-kubeconfig key value: not a kubeconfig: invalid YAML at line \d+, column \d+$/);
    expect(refusal('just text')).toContain('not a kubeconfig');
    expect(refusal(kubeconfig({}, {}, { 'current-context': 'nope' }))).toBe(`${ORIGIN}: current-context "nope" is not among its contexts`);
    expect(refusal(kubeconfig({ server: undefined }))).toContain('cluster "edge" has no server URL');
    expect(refusal(kubeconfig({}, {}, { contexts: [{ name: 'edge', context: { cluster: 'gone', user: 'admin' } }] }))).toContain(
      'context "edge" names cluster "gone", which is not in the kubeconfig',
    );
    expect(refusal(kubeconfig({}, {}, { users: 'x' }))).toBe(`${ORIGIN}: users must be a list`);
  });

  test('a boolean or a number where kubectl wants a string is refused as kubectl refuses it; a credential is not quoted', () => {
    const unquoted = kubeconfig().replace('context:\n      cluster: edge', 'context:\n      namespace: no\n      cluster: edge');
    expect(unquoted).toContain('namespace: no');
    expect(refusal(unquoted)).toBe(
      `${ORIGIN}: contexts[0].context.namespace is the boolean false, not a string (YAML reads an unquoted yes, no, on, off, y or n as a boolean; kubectl refuses it too): quote the value`,
    );
    const numeric = refusal(kubeconfig({}, { token: 987654321 }));
    expect(numeric).toContain('users[0].user.token is a number, not a string');
    expect(numeric).not.toContain('987654321');
    expect(checkedKubeconfig(unquoted.replace('namespace: no', 'namespace: "no"'), ORIGIN).getContextObject('edge')?.namespace).toBe('no');
  });
});
