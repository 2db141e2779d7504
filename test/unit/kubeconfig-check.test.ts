// Kubeconfigs from Secrets: what is refused before any use, and why.
import { describe, expect, test } from '@jest/globals';
import { stringify } from 'yaml';
import type https from 'node:https';
import { checkedKubeconfig, KubeconfigError } from '../../src/clusters/kubeconfig.js';
import { AddressPolicy } from '../../src/kube/address-policy.js';

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

function refusal(text: string, policy = {}, namespace?: string): string {
  try {
    checkedKubeconfig(text, ORIGIN, policy, namespace);
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
      `${ORIGIN}: user "admin" runs a command to get its credentials (exec): refused, since a tenant's kubeconfig must not run anything on the operator's machine; use a token or a client certificate, or run the operator with --allow-kubeconfig-exec=<namespace>`,
    );
    expect(refusal(kubeconfig({}, { 'auth-provider': { name: 'gcp' } }))).toContain('uses an auth-provider plugin (auth-provider): refused');
    expect(checkedKubeconfig(exec, ORIGIN, { allowExec: true }).getCurrentUser()?.exec).toMatchObject({ command: 'touch' });
  });

  test('--allow-kubeconfig-exec with a list of namespaces: exec only from Secrets of those namespaces, the refusal naming the flag and the namespace', () => {
    const exec = kubeconfig({}, { token: undefined, exec: { apiVersion: 'client.authentication.k8s.io/v1', command: 'touch', args: ['/tmp/pwned'] } });
    const policy = { allowExec: ['team-a', 'team-c'] };
    expect(checkedKubeconfig(exec, ORIGIN, policy, 'team-a').getCurrentUser()?.exec).toMatchObject({ command: 'touch' });
    expect(refusal(exec, policy, 'team-b')).toBe(
      `${ORIGIN}: user "admin" runs a command to get its credentials (exec): refused in namespace team-b, which --allow-kubeconfig-exec=team-a,team-c does not name (since a tenant's kubeconfig must not run anything on the operator's machine; use a token or a client certificate, or add team-b to --allow-kubeconfig-exec)`,
    );
    expect(refusal(kubeconfig({}, { 'auth-provider': { name: 'gcp' } }), policy, 'team-b')).toContain('(auth-provider): refused in namespace team-b');
    // Not knowing the namespace (the CLI), a list allows nothing; true allows every namespace.
    expect(refusal(exec, policy)).toContain('refused');
    expect(checkedKubeconfig(exec, ORIGIN, { allowExec: true }, 'team-b').getCurrentUser()?.exec).toMatchObject({ command: 'touch', args: ['/tmp/pwned'] });
    expect(refusal(exec, { allowExec: [] }, 'team-a')).toContain('refused in namespace team-a');
  });

  test("a user's impersonation (as, as-groups, as-uid, as-user-extra) is kept, and sent with every request", async () => {
    const kc = checkedKubeconfig(kubeconfig({}, { as: 'ann', 'as-groups': ['team-a'], 'as-uid': 'u-1', 'as-user-extra': { reason: ['deploy'] } }), ORIGIN);
    const opts: https.RequestOptions = {};
    await kc.applyHeaders(opts);
    expect(opts.headers).toEqual({
      Authorization: `Bearer ${TOKEN}`,
      'Impersonate-User': 'ann',
      'Impersonate-Group': ['team-a'],
      'Impersonate-Uid': 'u-1',
      'Impersonate-Extra-reason': ['deploy'],
    });
  });

  test('impersonation that cannot be sent as asked is refused, saying so (never dropped)', () => {
    expect(refusal(kubeconfig({}, { 'as-groups': ['system:masters'] }))).toBe(
      `${ORIGIN}: user "admin" sets as-groups without as (the user to impersonate): Kubernetes refuses groups, a uid or extras without a user; set as, or remove them`,
    );
    expect(refusal(kubeconfig({}, { as: 'ann', 'as-groups': [1] }))).toBe(`${ORIGIN}: user "admin".as-groups must be a list of strings`);
    expect(refusal(kubeconfig({}, { as: 'ann\nImpersonate-Group: system:masters' }))).toContain('must be printable ASCII (each is sent as an HTTP header)');
    expect(refusal(kubeconfig({}, { as: 'ann', 'as-user-extra': ['x'] }))).toContain('as-user-extra must map keys to lists of strings');
  });

  test('a server at an unspecified address is checked as the loopback it reaches', () => {
    const policy = { addressPolicy: AddressPolicy.parse('127.0.0.0/8') };
    for (const server of ['https://0.0.0.0:6443', 'https://0:6443', 'https://0x0:6443', 'https://[::]:6443']) {
      expect(refusal(kubeconfig({ server }), policy)).toContain('the address is unspecified, so a connection to it reaches this host (127.0.0.1), which is in 127.0.0.0/8');
    }
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
