// A sync reads its source as its service account (API.md "The sync spec",
// issue 32): an account that may write ConfigMaps but not read Secrets cannot
// launder a Secret of its namespace into a ConfigMap, nor send a Secret's
// values as HTTP headers, nor have a ProxySync copy a Secret to a cluster of
// its choosing. What the account may read, it still reads.
import { afterAll, describe, expect, test } from '@jest/globals';
import type { KubeClient } from '../../src/kube/client.js';
import { clusterClient } from '../support/controlplane.js';
import { eventually } from '../support/eventually.js';
import { createGitRepository, FLUX_SOURCE_API_VERSION, installGitRepositoryCrd, setArtifact } from '../support/flux.js';
import { useOperatedNamespace } from '../support/operated-namespace.js';
import { bindRole } from '../support/rbac.js';
import { applyProxySync, kubeconfigOf, PROXYSYNCS, putKubeconfigSecret } from '../support/remote.js';
import { applySync, eventsFor, find, readyOf, waitForReady } from '../support/syncs.js';

const CLUSTER = 'mgmt';
const ACCOUNT = 'tenant';
/** An account that may read the one Secret, and nothing else. */
const READER = 'secret-reader';
let client: KubeClient;
const ns = useOperatedNamespace(CLUSTER, 'source-account', (o) => ({ client } = o));

/** A manifest of one ConfigMap, as a source holds it. */
const manifest = (name: string, value: string): string => `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\ndata:\n  value: ${value}\n`;

async function put(kind: 'ConfigMap' | 'Secret', name: string, key: string, text: string): Promise<void> {
  const data = kind === 'Secret' ? { data: { [key]: Buffer.from(text).toString('base64') } } : { data: { [key]: text } };
  await client.request({ method: 'POST', path: `/api/v1/namespaces/${ns()}/${kind === 'Secret' ? 'secrets' : 'configmaps'}`, body: { apiVersion: 'v1', kind, metadata: { name }, ...data } });
}

/** The tenant's account: it may read and write ConfigMaps of its namespace, and nothing of Secrets. */
async function tenantAccount(): Promise<void> {
  await client.request({ method: 'POST', path: `/api/v1/namespaces/${ns()}/serviceaccounts`, body: { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: ACCOUNT } } });
  const rules = [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'] }];
  await bindRole(client, ns(), ACCOUNT, rules, { name: ACCOUNT, namespace: ns() });
}

const refusedRead = (kind: string, name: string): string =>
  `service account ${ns()}/${ACCOUNT} may not get ${kind} ${ns()}/${name} (a sync reads its source as its service account)`;

describe('a sync reads its source as its account', () => {
  afterAll(async () => {
    // The ProxySyncs' namespace in edge-1 (created by them): not the test namespace's to remove.
    const edge = await clusterClient('edge-1');
    await edge.request({ method: 'DELETE', path: `/api/v1/namespaces/${ns()}` }).catch(() => undefined);
  });

  test('a Secret its account may not read is SourceError naming the account, the verb and the Secret; nothing is applied; a ConfigMap it may read applies', async () => {
    await tenantAccount();
    await put('Secret', 'crown-jewels', 'manifests.yaml', manifest('laundered', 'the-secret-value'));
    await put('ConfigMap', 'plain', 'manifests.yaml', manifest('allowed', 'public'));
    await applySync(client, ns(), 'launder', { serviceAccountName: ACCOUNT, defaultNamespace: ns(), source: { secret: { name: 'crown-jewels' } } });
    await applySync(client, ns(), 'allowed', { serviceAccountName: ACCOUNT, defaultNamespace: ns(), source: { configMap: { name: 'plain' } } });

    const refused = await waitForReady(client, ns(), 'launder', 'False', 'SourceError');
    expect(readyOf(refused)?.message).toContain(refusedRead('Secret', 'crown-jewels'));
    expect(readyOf(refused)?.message).toContain(`cannot get resource "secrets"`);
    const event = await eventually('the SourceError Event', async () => (await eventsFor(client, ns(), 'launder')).find((e) => e.reason === 'SourceError'));
    expect(event.message).toContain(refusedRead('Secret', 'crown-jewels'));
    expect(await find(client, `/api/v1/namespaces/${ns()}/configmaps/laundered`)).toBeUndefined();

    await waitForReady(client, ns(), 'allowed', 'True', 'Succeeded');
    expect(await find(client, `/api/v1/namespaces/${ns()}/configmaps/allowed`)).toMatchObject({ data: { value: 'public' } });
  });

  test("an http source's headers and CA Secrets are read as the account too: nothing is fetched", async () => {
    await put('Secret', 'token', 'authorization', 'Bearer the-secret-token');
    await put('Secret', 'ca', 'ca.crt', '-----BEGIN CERTIFICATE-----\n');
    // Nothing listens there, and nothing is sent: the Secret is refused before any connection.
    const url = 'http://127.0.0.1:9/manifests.yaml';
    await applySync(client, ns(), 'headers', { serviceAccountName: ACCOUNT, source: { http: { url, headersSecretRef: { name: 'token' } } } });
    await applySync(client, ns(), 'ca', { serviceAccountName: ACCOUNT, source: { http: { url: 'https://127.0.0.1:9/m.yaml', caSecretRef: { name: 'ca' } } } });
    expect(readyOf(await waitForReady(client, ns(), 'headers', 'False', 'SourceError'))?.message).toContain(refusedRead('Secret', 'token'));
    expect(readyOf(await waitForReady(client, ns(), 'ca', 'False', 'SourceError'))?.message).toContain(refusedRead('Secret', 'ca'));
  });

  test('a Flux source object is read as the account, not taken from the operator\'s watch', async () => {
    await installGitRepositoryCrd(CLUSTER);
    await createGitRepository(CLUSTER, ns(), 'repo');
    // Nothing is fetched: the account may not read the GitRepository, whose artifact the operator's watch has.
    await setArtifact(CLUSTER, ns(), 'repo', { url: 'http://127.0.0.1:9/repo.tar.gz', revision: 'main@sha1:0' });
    await applySync(client, ns(), 'artifact', { serviceAccountName: ACCOUNT, source: { artifact: { apiVersion: FLUX_SOURCE_API_VERSION, kind: 'GitRepository', name: 'repo' } } });
    const refused = await waitForReady(client, ns(), 'artifact', 'False', 'SourceError');
    expect(readyOf(refused)?.message).toContain(refusedRead('GitRepository', 'repo'));
  });

  test('a ProxySync does not copy a Secret its account may not read to the remote cluster; one its account may read, it copies', async () => {
    const edge = await clusterClient('edge-1');
    await putKubeconfigSecret(client, ns(), 'edge-1-kubeconfig', await kubeconfigOf('edge-1'));
    const template = (source: Record<string, unknown>) => ({ metadata: { namespace: ns() }, spec: { serviceAccountName: ACCOUNT, defaultNamespace: ns(), source } });
    await applyProxySync(client, ns(), 'exfiltrate', { clusterRef: { name: 'edge-1' }, template: template({ secret: { name: 'crown-jewels' } }) });
    const refused = await waitForReady(client, ns(), 'exfiltrate', 'False', 'SourceError', 60_000, PROXYSYNCS);
    expect(readyOf(refused)?.message).toContain(`service account ${ns()}/${ACCOUNT} may not get Secret ${ns()}/crown-jewels`);
    expect(await find(edge, `/api/v1/namespaces/${ns()}/secrets/crown-jewels`)).toBeUndefined();
    expect(await find(edge, `/apis/syncprims.dev/v1alpha1/namespaces/${ns()}/syncs/exfiltrate`)).toBeUndefined();

    await applyProxySync(client, ns(), 'readable', { clusterRef: { name: 'edge-1' }, template: template({ configMap: { name: 'plain' } }) });
    const copy = await eventually('the ConfigMap copied to edge-1', () => find<{ data?: Record<string, string> }>(edge, `/api/v1/namespaces/${ns()}/configmaps/plain`));
    expect(copy.data).toEqual({ 'manifests.yaml': manifest('allowed', 'public') });

    // The positive control: the same Secret, for an account that may read it, is copied (copying Secrets works).
    await client.request({ method: 'POST', path: `/api/v1/namespaces/${ns()}/serviceaccounts`, body: { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: READER } } });
    await bindRole(client, ns(), READER, [{ apiGroups: [''], resources: ['secrets'], resourceNames: ['crown-jewels'], verbs: ['get'] }], { name: READER, namespace: ns() });
    const readerTemplate = { metadata: { namespace: ns() }, spec: { serviceAccountName: READER, defaultNamespace: ns(), source: { secret: { name: 'crown-jewels' } } } };
    await applyProxySync(client, ns(), 'permitted', { clusterRef: { name: 'edge-1' }, template: readerTemplate });
    const secret = await eventually('the Secret copied to edge-1 for the account that may read it', () =>
      find<{ data?: Record<string, string> }>(edge, `/api/v1/namespaces/${ns()}/secrets/crown-jewels`),
    );
    expect(Buffer.from(secret.data?.['manifests.yaml'] ?? '', 'base64').toString()).toBe(manifest('laundered', 'the-secret-value'));
  });
});
