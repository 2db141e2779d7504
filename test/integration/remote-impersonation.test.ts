// Whom the operator is in a remote cluster, and whose outage holds whom
// (issue 43, part 5): a kubeconfig's `as:` registered by `syncprims cluster
// add` takes effect (edge-1's audit log shows the impersonated user; a user
// without rights is Forbidden, as kubectl is); a kubeconfig that impersonates
// and a sync that acts as a service account are refused together; and one
// identity's broken credential or failing connections on a server make no
// other identity's RemoteSync there unreachable or wait.
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { checkedKubeconfig } from '../../src/clusters/kubeconfig.js';
import { KubeClient } from '../../src/kube/client.js';
import { Discovery, DiscoveryCache } from '../../src/kube/discovery.js';
import { ApiError } from '../../src/kube/errors.js';
import { requestsSince, type AuditEvent } from '../support/audit.js';
import { assertCliBuilt, runCli, tempDir } from '../support/cli.js';
import { clusterClient, kubeconfigPath } from '../support/controlplane.js';
import { eventually } from '../support/eventually.js';
import { FaultProxy } from '../support/fault-proxy.js';
import { useTestNamespace } from '../support/namespace.js';
import { useOperatedNamespace } from '../support/operated-namespace.js';
import type { OperatorProcess } from '../support/operator.js';
import { bindRole } from '../support/rbac.js';
import { applyRemoteSync, kubeconfigOf, putKubeconfigSecret, waitForRemoteReady } from '../support/remote.js';
import { eventsFor, find, readyOf } from '../support/syncs.js';

let mgmt: KubeClient;
let edge1: KubeClient;
let op: OperatorProcess;
const ns = useOperatedNamespace('mgmt', 'rimp', (o) => ({ client: mgmt, op } = o), ['--cluster-id', 'rimp']);
const edgeNs = useTestNamespace('edge-1', 'rimp');
const dir = tempDir('syncprims-rimp-');

/** The audit record's impersonated user, with the groups the audit log records. */
type Audited = AuditEvent & { impersonatedUser?: { username: string; groups?: string[] } };

const configMap = (name: string, data: Record<string, string> = {}) => ({ inline: [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data }] });

/** edge-1's admin kubeconfig, its user impersonating `as` (and more), written to a file for `cluster add`. */
async function impersonatingKubeconfigFile(name: string, impersonation: Record<string, unknown>): Promise<string> {
  const text = await kubeconfigOf('edge-1', (kc) => {
    const user = (kc.users as { user: Record<string, unknown> }[])[0]!;
    Object.assign(user.user, impersonation);
  });
  const file = path.join(dir, `${name}.kubeconfig`);
  writeFileSync(file, text);
  return file;
}

async function clusterAdd(name: string, file: string): Promise<void> {
  const { code, stderr } = await runCli(['cluster', 'add', name, '--kubeconfig', file, '--mgmt-kubeconfig', kubeconfigPath('mgmt'), '-n', ns()]);
  expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
}

beforeAll(async () => {
  assertCliBuilt();
  edge1 = await clusterClient('edge-1');
});

describe('a kubeconfig that impersonates (as:)', () => {
  let deployer: string;
  beforeAll(() => {
    deployer = `rimp-deployer-${edgeNs()}`;
  });

  test('registered by cluster add, as: and as-groups are kept and honoured: edge-1 audits every request of the sync as the impersonated user', async () => {
    await bindRole(edge1, edgeNs(), 'deployer', [{ apiGroups: [''], resources: ['configmaps'], verbs: ['*'] }], { kind: 'User', name: deployer });
    await clusterAdd('as-deployer', await impersonatingKubeconfigFile('as-deployer', { as: deployer, 'as-groups': ['rimp-deployers'] }));
    const stored = await mgmt.request<{ data: { value: string } }>({ path: `/api/v1/namespaces/${ns()}/secrets/as-deployer-kubeconfig` });
    const storedUser = (parse(Buffer.from(stored.data.value, 'base64').toString('utf8')) as { users: { user: Record<string, unknown> }[] }).users[0]!.user;
    expect(storedUser).toMatchObject({ as: deployer, 'as-groups': ['rimp-deployers'] });

    const since = new Date(Date.now() - 1_000);
    await applyRemoteSync(mgmt, ns(), 'as-deployer', { kubeConfig: { secretRef: { name: 'as-deployer-kubeconfig' } }, defaultNamespace: edgeNs(), source: configMap('as-deployer') });
    await waitForRemoteReady(mgmt, ns(), 'as-deployer', 'True', 'Succeeded');
    expect(await find(edge1, `/api/v1/namespaces/${edgeNs()}/configmaps/as-deployer`)).toMatchObject({ metadata: { name: 'as-deployer', labels: { 'syncprims.dev/owner-name': 'as-deployer' } } });

    // What the operator sent about the sync's ConfigMaps in edge-1 (its watches, its apply): each one as the deployer.
    const sent = (await requestsSince('edge-1', since, 'syncprims-operator')).filter(
      (e) => e.objectRef?.resource === 'configmaps' && (e.objectRef.namespace === edgeNs() || e.requestURI.includes(`/namespaces/${edgeNs()}/`)),
    ) as Audited[];
    expect(sent.filter((e) => e.verb === 'patch').length).toBeGreaterThan(0);
    expect(sent.map((e) => [e.verb, e.impersonatedUser?.username, e.impersonatedUser?.groups?.includes('rimp-deployers')]).filter(([, user, group]) => user !== deployer || !group)).toEqual([]);
  }, 60_000);

  test("as: a user without rights: the sync is refused (Forbidden, naming the user), as kubectl with the same kubeconfig is", async () => {
    const nobody = `rimp-nobody-${edgeNs()}`;
    await clusterAdd('as-nobody', await impersonatingKubeconfigFile('as-nobody', { as: nobody }));
    await applyRemoteSync(mgmt, ns(), 'as-nobody', { kubeConfig: { secretRef: { name: 'as-nobody-kubeconfig' } }, defaultNamespace: edgeNs(), source: configMap('as-nobody') });
    const refused = await waitForRemoteReady(mgmt, ns(), 'as-nobody', 'False');
    expect(readyOf(refused)?.message).toContain(`User "${nobody}" cannot`);
    expect(await find(edge1, `/api/v1/namespaces/${edgeNs()}/configmaps/as-nobody`)).toBeUndefined();

    // A client of the same stored kubeconfig (the CLI's, as kubectl): Forbidden too.
    const stored = await mgmt.request<{ data: { value: string } }>({ path: `/api/v1/namespaces/${ns()}/secrets/as-nobody-kubeconfig` });
    const cli = await KubeClient.create('as-nobody', checkedKubeconfig(Buffer.from(stored.data.value, 'base64').toString('utf8'), 'the stored kubeconfig'));
    const err = await cli.request({ path: `/api/v1/namespaces/${edgeNs()}/configmaps` }).catch((e: unknown) => e);
    cli.close();
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).status).toBe(403);
  }, 60_000);

  test('and a sync that acts as a service account there: refused together (InvalidKubeconfig, an Event), nothing applied', async () => {
    await applyRemoteSync(mgmt, ns(), 'both', {
      kubeConfig: { secretRef: { name: 'as-deployer-kubeconfig' } },
      serviceAccountName: 'deployer',
      defaultNamespace: edgeNs(),
      source: configMap('both'),
    });
    const refused = await waitForRemoteReady(mgmt, ns(), 'both', 'False', 'InvalidKubeconfig');
    expect(readyOf(refused)?.message).toContain(
      `its kubeconfig impersonates user "${deployer}" with groups rimp-deployers (as:), and this sync acts as service account ${ns()}/deployer there (spec.serviceAccountName); a request carries one impersonated identity`,
    );
    await eventually('its Warning Event', async () => (await eventsFor(mgmt, ns(), 'both')).find((e) => e.reason === 'InvalidKubeconfig' && e.type === 'Warning'));
    expect(await find(edge1, `/api/v1/namespaces/${edgeNs()}/configmaps/both`)).toBeUndefined();
  }, 60_000);
});

describe("one identity's failures on a server are its own", () => {
  let proxy: FaultProxy;
  beforeAll(async () => {
    proxy = await FaultProxy.start('edge-1');
  });
  afterAll(async () => proxy?.close());

  const unreachableEvents = async (name: string) => (await eventsFor(mgmt, ns(), name)).filter((e) => e.reason === 'ClusterUnreachable');

  test("a broken credential (401), or connections that fail for one identity only, leave the other identities' RemoteSyncs on that server Ready, never ClusterUnreachable", async () => {
    // Two identities on the same server (the proxy in front of edge-1: one URL, one CA), each its own token.
    // A also has a client certificate (the proxy asks for none): TLS settings of its own, so connections of its own.
    const admin = (parse(await kubeconfigOf('edge-1')) as { users: { user: Record<string, string> }[] }).users[0]!.user;
    const certificate = { 'client-certificate-data': admin['client-certificate-data'], 'client-key-data': admin['client-key-data'] };
    await putKubeconfigSecret(mgmt, ns(), 'tenant-a-kubeconfig', proxy.kubeconfig('edge-1-proxy', { token: 'tenant-a', ...certificate }));
    await putKubeconfigSecret(mgmt, ns(), 'tenant-b-kubeconfig', proxy.kubeconfig('edge-1-proxy', { token: 'tenant-b' }));
    // And on edge-1 itself (the server as-deployer uses): a token it does not know.
    await putKubeconfigSecret(mgmt, ns(), 'revoked-kubeconfig', await kubeconfigOf('edge-1', (kc) => {
      (kc.users as { user: Record<string, unknown> }[])[0]!.user = { token: 'a-token-edge-1-revoked' };
    }));
    // Every connection of tenant A is dropped as soon as it asks anything.
    const broken = proxy.inject({ token: 'tenant-a' }, { kind: 'reset' });
    const spec = (secret: string, name: string) => ({ kubeConfig: { secretRef: { name: secret } }, defaultNamespace: edgeNs(), source: configMap(name) });
    await applyRemoteSync(mgmt, ns(), 'tenant-a', spec('tenant-a-kubeconfig', 'tenant-a'));
    await applyRemoteSync(mgmt, ns(), 'revoked', spec('revoked-kubeconfig', 'revoked'));
    const a = await waitForRemoteReady(mgmt, ns(), 'tenant-a', 'False', 'ClusterUnreachable');
    expect(readyOf(a)?.message).toContain('cluster ' + `${ns()}/tenant-a-kubeconfig is unreachable`);
    const revoked = await waitForRemoteReady(mgmt, ns(), 'revoked', 'False');
    // A 401 is an answer: the credentials are refused, the server is not unreachable.
    expect(readyOf(revoked)?.reason).not.toBe('ClusterUnreachable');
    expect(readyOf(revoked)?.message).toContain('Unauthorized');

    // Meanwhile the other identities of both servers go on: B new, as-deployer changed.
    await applyRemoteSync(mgmt, ns(), 'tenant-b', spec('tenant-b-kubeconfig', 'tenant-b'));
    await applyRemoteSync(mgmt, ns(), 'as-deployer', { kubeConfig: { secretRef: { name: 'as-deployer-kubeconfig' } }, defaultNamespace: edgeNs(), source: configMap('as-deployer', { v: '2' }) });
    await waitForRemoteReady(mgmt, ns(), 'tenant-b', 'True', 'Succeeded');
    await waitForRemoteReady(mgmt, ns(), 'as-deployer', 'True', 'Succeeded');
    // The positive controls: A's own outage was told (an Event) and its connections were cut by the proxy.
    await eventually("tenant-a's ClusterUnreachable Event", async () => ((await unreachableEvents('tenant-a')).length > 0 ? true : undefined));
    expect(proxy.seen({ token: 'tenant-a' }).some((r) => r.fault)).toBe(true);
    // ... and none of it reached B or the deployer.
    expect(await unreachableEvents('tenant-b')).toEqual([]);
    expect(await unreachableEvents('as-deployer')).toEqual([]);

    // A mended: A recovers on its own (its probe, after its backoff).
    broken.remove();
    await waitForRemoteReady(mgmt, ns(), 'tenant-a', 'True', 'Succeeded');
    expect(op.logs.filter((l) => l.msg === 'cluster not usable' && String(l.message).includes('tenant-b-kubeconfig'))).toEqual([]);
  }, 90_000);

  test("another identity's discovery request that hangs is joined a while (JOIN_WAIT_MS), then asked again: not waited out", async () => {
    const discovery = /^\/api\/v1$/;
    const hang = proxy.inject({ token: 'tenant-h', path: discovery }, { kind: 'hang' });
    const clientOf = (token: string) => KubeClient.create(token, checkedKubeconfig(proxy.kubeconfig('edge-1-proxy', { token }), token));
    const [hanging, other] = await Promise.all([clientOf('tenant-h'), clientOf('tenant-d')]);
    try {
      const shared = new DiscoveryCache();
      let hungSettled = false;
      const hung = new Discovery(hanging, undefined, shared).resolve('v1', 'ConfigMap').catch((e: unknown) => e).finally(() => (hungSettled = true));
      await eventually('the hanging request at the proxy', async () => (proxy.seen({ token: 'tenant-h', path: discovery }).length > 0 ? true : undefined));
      await expect(new Discovery(other, undefined, shared).resolve('v1', 'ConfigMap')).resolves.toMatchObject({ resource: 'configmaps' });
      // Answered by its own request while the other identity's still hangs.
      expect(hungSettled).toBe(false);
      expect(proxy.seen({ token: 'tenant-d', path: discovery })).toHaveLength(1);
      hang.remove();
      await hung;
    } finally {
      hang.remove();
      hanging.close();
      other.close();
    }
  }, 30_000);
});
