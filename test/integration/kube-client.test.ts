// The kube adapter against a real API server, and against servers that
// misbehave (a black hole that never answers, a watch that goes silent).
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import net from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';
import { KubeClient } from '../../src/kube/client.js';
import { Discovery, UnknownKindError } from '../../src/kube/discovery.js';
import { serverSideApply } from '../../src/kube/apply.js';
import { TransportError } from '../../src/kube/errors.js';
import { clusterApi, closeClients } from '../support/controlplane.js';
import { eventually } from '../support/eventually.js';

afterAll(closeClients);

describe('discovery', () => {
  let client: KubeClient;
  beforeAll(async () => {
    ({ client } = await clusterApi('mgmt'));
  });

  test('maps kinds to resources and scope', async () => {
    const d = new Discovery(client);
    await expect(d.resolve('v1', 'ConfigMap')).resolves.toEqual({
      group: '',
      version: 'v1',
      kind: 'ConfigMap',
      resource: 'configmaps',
      namespaced: true,
    });
    await expect(d.resolve('rbac.authorization.k8s.io/v1', 'ClusterRole')).resolves.toMatchObject({
      resource: 'clusterroles',
      namespaced: false,
    });
  });

  test('names an unknown kind and finds a CRD that arrives after the first lookup', async () => {
    const d = new Discovery(client);
    const group = `late${Date.now()}.test.syncprims.dev`;
    const missing = await d.resolve(`${group}/v1`, 'Gadget').catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(UnknownKindError);
    expect((missing as Error).message).toContain(`Gadget in ${group}/v1 (is its CRD installed?)`);
    await serverSideApply(
      client,
      d,
      {
        apiVersion: 'apiextensions.k8s.io/v1',
        kind: 'CustomResourceDefinition',
        metadata: { name: `gadgets.${group}` },
        spec: {
          group,
          scope: 'Cluster',
          names: { plural: 'gadgets', singular: 'gadget', kind: 'Gadget' },
          versions: [
            { name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object' } } },
          ],
        },
      },
      { fieldManager: 'syncprims' },
    );
    try {
      const found = await eventually('discovery to serve Gadget', () => d.resolve(`${group}/v1`, 'Gadget'));
      expect(found).toMatchObject({ resource: 'gadgets', namespaced: false });
    } finally {
      await client.request({
        method: 'DELETE',
        path: `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/gadgets.${group}`,
      });
    }
  });
});

describe('timeouts', () => {
  let blackHole: net.Server;
  let silent: KubeClient;
  const sockets: net.Socket[] = [];

  beforeAll(async () => {
    // Accepts connections and never answers: a hung server or a half-open link.
    blackHole = net.createServer((s) => void sockets.push(s));
    await new Promise<void>((r) => blackHole.listen(0, '127.0.0.1', r));
    const port = (blackHole.address() as net.AddressInfo).port;
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: 'hole', server: `http://127.0.0.1:${port}`, skipTLSVerify: true }],
      users: [{ name: 'u', token: 't' }],
      contexts: [{ name: 'hole', cluster: 'hole', user: 'u' }],
      currentContext: 'hole',
    });
    silent = await KubeClient.create('hole', kc);
  });

  afterAll(async () => {
    silent.close();
    for (const s of sockets) s.destroy();
    await new Promise((r) => blackHole.close(r));
  });

  test('a request that gets no answer fails with a TransportError at its deadline', async () => {
    const err = await silent.request({ path: '/api', timeoutMs: 300 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TransportError);
    expect((err as Error).message).toBe('GET /api: no answer within 300 ms');
  });

  test('a watch stream that goes silent is destroyed after its idle timeout', async () => {
    const { client } = await clusterApi('mgmt');
    // A watch on a name that never changes sends nothing after the initial list.
    const res = await client.stream({
      path: '/api/v1/namespaces/default/configmaps',
      query: { watch: 1, fieldSelector: 'metadata.name=never-there', resourceVersion: '0' },
      idleTimeoutMs: 300,
    });
    const err = await new Promise<Error>((resolve) => {
      res.on('error', resolve);
      res.resume();
    });
    expect(err).toBeInstanceOf(TransportError);
    expect(err.message).toContain('no data for 300 ms');
  });
});
