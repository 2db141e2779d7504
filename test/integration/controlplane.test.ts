// The local control plane behaves like a real cluster on every default cluster:
// CRUD, watch, server-side apply, CRDs, namespace deletion, garbage collection.
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { KubeClient } from '../../src/kube/client.js';
import { Discovery } from '../../src/kube/discovery.js';
import { serverSideApply } from '../../src/kube/apply.js';
import { ApiError } from '../../src/kube/errors.js';
import { watchEvents, type WatchEvent } from '../../src/kube/watch-stream.js';
import type { KubeObject } from '../../src/kube/resources.js';
import { auditLogText } from '../support/audit-files.js';
import { clusterApi, closeClients, LOCAL } from '../support/controlplane.js';
import { eventually } from '../support/eventually.js';
import { useTestNamespace } from '../support/namespace.js';

interface List<T = KubeObject> {
  metadata: { resourceVersion: string };
  items: T[];
}

const gone = (client: KubeClient, path: string) => async () => {
  try {
    await client.request({ path });
    return undefined;
  } catch (err) {
    if (err instanceof ApiError && err.notFound) return true;
    throw err;
  }
};

afterAll(closeClients);

describe.each(['mgmt', 'edge-1', 'edge-2'])('cluster %s', (cluster) => {
  const ns = useTestNamespace(cluster, 'cp');
  let client: KubeClient;
  let discovery: Discovery;

  beforeAll(async () => {
    ({ client, discovery } = await clusterApi(cluster));
  });

  test('reports Kubernetes v1.36.3', async () => {
    const v = await client.request<{ gitVersion: string; major: string; minor: string }>({ path: '/version' });
    expect(v).toMatchObject({ gitVersion: 'v1.36.3', major: '1', minor: '36' });
  });

  test('creates, reads, lists, updates and deletes a ConfigMap', async () => {
    const path = `/api/v1/namespaces/${ns()}/configmaps`;
    await client.request({
      method: 'POST',
      path,
      body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'crud', labels: { app: 'crud' } }, data: { a: '1' } },
    });
    const read = await client.request<KubeObject & { data: Record<string, string> }>({ path: `${path}/crud` });
    expect(read.data).toEqual({ a: '1' });

    const list = await client.request<List>({ path, query: { labelSelector: 'app=crud' } });
    expect(list.items.map((i) => i.metadata.name)).toEqual(['crud']);

    read.data = { a: '2' };
    const updated = await client.request<KubeObject & { data: Record<string, string> }>({
      method: 'PUT',
      path: `${path}/crud`,
      body: read,
    });
    expect(updated.data).toEqual({ a: '2' });
    // A stale resourceVersion is a conflict, as on any real cluster.
    await expect(client.request({ method: 'PUT', path: `${path}/crud`, body: read })).rejects.toMatchObject({ status: 409 });

    await client.request({ method: 'DELETE', path: `${path}/crud` });
    await expect(client.request({ path: `${path}/crud` })).rejects.toMatchObject({ status: 404, reason: 'NotFound' });
  });

  test('server-side apply creates, keeps fields the client models do not know, and tracks the field manager', async () => {
    const cm = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'applied', namespace: ns(), annotations: { note: 'first' } },
      data: { key: 'value' },
    };
    const created = await serverSideApply(client, discovery, cm, { fieldManager: 'syncprims' });
    expect(created.metadata.managedFields).toEqual(
      expect.arrayContaining([expect.objectContaining({ manager: 'syncprims', operation: 'Apply' })]),
    );
    // Another manager taking a field it does not own is a conflict unless forced.
    const rival = { ...cm, data: { key: 'other' } };
    await expect(serverSideApply(client, discovery, rival, { fieldManager: 'rival' })).rejects.toMatchObject({
      status: 409,
    });
    const forced = await serverSideApply<typeof cm & KubeObject>(client, discovery, rival, {
      fieldManager: 'rival',
      force: true,
    });
    expect(forced.data).toEqual({ key: 'other' });
    // A dry run changes nothing.
    await serverSideApply(client, discovery, { ...cm, data: { key: 'dry' } }, { fieldManager: 'syncprims', dryRun: true, force: true });
    const after = await client.request<typeof cm>({ path: `/api/v1/namespaces/${ns()}/configmaps/applied` });
    expect(after.data).toEqual({ key: 'other' });
  });

  test('creates, labels and deletes a Namespace; deletion completes', async () => {
    const name = `${ns()}-extra`;
    await serverSideApply(
      client,
      discovery,
      { apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels: { purpose: 'test' } } },
      { fieldManager: 'syncprims' },
    );
    await client.request({
      method: 'POST',
      path: `/api/v1/namespaces/${name}/configmaps`,
      body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'inside' } },
    });
    const list = await client.request<List>({ path: '/api/v1/namespaces', query: { labelSelector: 'purpose=test' } });
    expect(list.items.map((i) => i.metadata.name)).toContain(name);
    await client.request({ method: 'DELETE', path: `/api/v1/namespaces/${name}` });
    // The namespace controller empties it and removes its finalizer.
    await eventually(`namespace ${name} to be gone`, gone(client, `/api/v1/namespaces/${name}`));
  });

  test('a watch sees ADDED, MODIFIED and DELETED in order', async () => {
    const path = `/api/v1/namespaces/${ns()}/configmaps`;
    const list = await client.request<List>({ path });
    const res = await client.stream({
      path,
      query: { watch: 1, resourceVersion: list.metadata.resourceVersion, fieldSelector: 'metadata.name=watched' },
      idleTimeoutMs: 30_000,
    });
    const seen: WatchEvent[] = [];
    const reading = (async () => {
      for await (const ev of watchEvents(res)) {
        seen.push(ev);
        if (ev.type === 'DELETED') return;
      }
    })();
    const body = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'watched' }, data: { v: '1' } };
    await client.request({ method: 'POST', path, body });
    await client.request({
      method: 'PATCH',
      path: `${path}/watched`,
      contentType: 'application/merge-patch+json',
      body: { data: { v: '2' } },
    });
    await client.request({ method: 'DELETE', path: `${path}/watched` });
    await reading;
    expect(seen.map((e) => e.type)).toEqual(['ADDED', 'MODIFIED', 'DELETED']);
  });

  test('a CRD becomes Established and serves its custom resources', async () => {
    // A group of this run's own (a CRD is cluster-scoped): neither another run's test nor a CRD left by a run cut short meets it.
    const group = `${ns()}.cp.test.syncprims.dev`;
    const crd = {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: `widgets.${group}` },
      spec: {
        group,
        names: { plural: 'widgets', singular: 'widget', kind: 'Widget', listKind: 'WidgetList' },
        scope: 'Namespaced',
        versions: [
          {
            name: 'v1',
            served: true,
            storage: true,
            schema: {
              openAPIV3Schema: {
                type: 'object',
                properties: { spec: { type: 'object', properties: { size: { type: 'integer', minimum: 1 } } } },
              },
            },
          },
        ],
      },
    };
    await serverSideApply(client, discovery, crd, { fieldManager: 'syncprims', force: true });
    try {
      await eventually('the CRD to be Established', async () => {
        const got = await client.request<{ status?: { conditions?: { type: string; status: string }[] } }>({
          path: `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.${group}`,
        });
        return got.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True') || undefined;
      });
      const widget = { apiVersion: `${group}/v1`, kind: 'Widget', metadata: { name: 'w', namespace: ns() }, spec: { size: 3 } };
      const created = await eventually('the Widget to be accepted', () =>
        serverSideApply(client, discovery, widget, { fieldManager: 'syncprims' }),
      );
      expect(created.spec).toEqual({ size: 3 });
      // The schema is enforced by the real API server.
      await expect(
        serverSideApply(client, discovery, { ...widget, spec: { size: 0 } }, { fieldManager: 'syncprims' }),
      ).rejects.toMatchObject({ status: 422 });
    } finally {
      // Deleted even when an expectation failed (its name is this run's: nothing else would ever remove it).
      await client
        .request({ method: 'DELETE', path: `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.${group}` })
        .catch((err: unknown) => {
          if (!(err instanceof ApiError && err.notFound)) throw err;
        });
    }
  });

  test('deleting an owner removes its dependent (garbage collector)', async () => {
    const path = `/api/v1/namespaces/${ns()}/configmaps`;
    const owner = await client.request<KubeObject>({
      method: 'POST',
      path,
      body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'owner' } },
    });
    await client.request({
      method: 'POST',
      path,
      body: {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: {
          name: 'dependent',
          ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'owner', uid: owner.metadata.uid }],
        },
      },
    });
    await client.request({ method: 'DELETE', path: `${path}/owner` });
    // The collector pauses while it resyncs after CRD changes (other tests add CRDs).
    await eventually('the dependent to be collected', gone(client, `${path}/dependent`), 120_000);
  });

  test('records write requests in its audit log', async () => {
    const since = Date.now();
    const name = `audited-${since}`;
    await client.request({
      method: 'POST',
      path: `/api/v1/namespaces/${ns()}/configmaps`,
      body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name } },
    });
    const entry = await eventually('the audit entry', async () => {
      // (From where the lines of that time begin: a long-lived log is hundreds of MB.)
      const log = auditLogText(`${LOCAL}/${cluster}.audit.log`, since);
      return log
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as { verb: string; user: { username: string }; objectRef?: { name?: string } })
        .find((e) => e.objectRef?.name === name);
    });
    expect(entry).toMatchObject({ verb: 'create', user: { username: 'admin' } });
  });
});
