// dependsOn across namespaces, with --allow-cross-namespace-refs, through an
// operator that watches every namespace of its own cluster (edge-2, where no
// other test runs an operator).
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import type { KubeClient } from '../../src/kube/client.js';
import { clusterClient, closeClients } from '../support/controlplane.js';
import { installCrds } from '../support/crds.js';
import { eventually } from '../support/eventually.js';
import { useTestNamespace } from '../support/namespace.js';
import { OperatorProcess } from '../support/operator.js';
import { applySync, find, getSync, readyOf, waitForReady } from '../support/syncs.js';

const CLUSTER = 'edge-2';
let client: KubeClient;
let op: OperatorProcess | undefined;
const apps = useTestNamespace(CLUSTER, 'xns-apps');
const infra = useTestNamespace(CLUSTER, 'xns-infra');

beforeAll(async () => {
  client = await clusterClient(CLUSTER);
  await installCrds(CLUSTER);
  op = await OperatorProcess.start(CLUSTER, ['--allow-cross-namespace-refs']);
});
afterAll(async () => {
  await op?.stop('SIGTERM');
  await closeClients();
});

const withConfigMap = (namespace: string, name: string, dependsOn: unknown[] = []) => ({
  source: { inline: [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace } }] },
  ...(dependsOn.length > 0 ? { dependsOn } : {}),
});

describe('--allow-cross-namespace-refs', () => {
  test('a Sync waits for a Sync in another namespace and applies once it is Ready', async () => {
    await applySync(client, apps(), 'web', withConfigMap(apps(), 'web', [{ name: 'database', namespace: infra() }]));
    const waiting = await waitForReady(client, apps(), 'web', 'False', 'DependencyNotReady');
    expect((waiting.status as { pendingDependencies?: unknown }).pendingDependencies).toEqual([
      { kind: 'Sync', name: 'database', namespace: infra(), reason: 'NotFound' },
    ]);
    expect(readyOf(waiting)?.message).toBe(`waiting for Sync/${infra()}/database (NotFound)`);
    await applySync(client, infra(), 'database', withConfigMap(infra(), 'database'));
    await waitForReady(client, apps(), 'web', 'True', 'Succeeded');
    expect(await find(client, `/api/v1/namespaces/${apps()}/configmaps/web`)).toBeDefined();
  });

  test('a cycle across namespaces is reported with the namespaces in its path', async () => {
    await applySync(client, apps(), 'loop', withConfigMap(apps(), 'loop', [{ name: 'loop', namespace: infra() }]));
    await applySync(client, infra(), 'loop', withConfigMap(infra(), 'loop', [{ name: 'loop', namespace: apps() }]));
    const a = await waitForReady(client, apps(), 'loop', 'False', 'DependencyCycle');
    expect(readyOf(a)?.message).toBe(`dependency cycle: Sync/loop -> Sync/${infra()}/loop -> Sync/loop`);
    const b = await eventually('the other member stalled', async () => {
      const s = await getSync(client, infra(), 'loop');
      return readyOf(s)?.reason === 'DependencyCycle' ? s : undefined;
    });
    expect(readyOf(b)?.message).toBe(`dependency cycle: Sync/loop -> Sync/${apps()}/loop -> Sync/loop`);
  });
});
