// `syncprims tree` as a user runs it (a real process, stdout a pipe) on a
// chain of syncs of the three kinds reconciled by operators on mgmt and on
// edge-1: Sync base <- RemoteSync edge (into edge-1) <- ProxySync proxy (a
// Sync kept in edge-1, applied there by edge-1's operator) <- Sync app <-
// Sync front; and two RemoteSyncs whose clusters cannot be looked into: one
// whose cluster is down (edge-2 behind a proxy that the test takes down, as
// a stopped API server: its port refuses connections), one whose kubeconfig
// runs a command.
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { existsSync, rmSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import type { KubeClient } from '../../src/kube/client.js';
import type { Tree } from '../../src/views/tree-model.js';
import { assertCliBuilt, runCli, tempDir, unreachableKubeconfig } from '../support/cli.js';
import { clusterClient, kubeconfigPath } from '../support/controlplane.js';
import { useOperatedNamespace } from '../support/operated-namespace.js';
import { useRemoteNamespace } from '../support/remote-namespace.js';
import { applyProxySync, applyRemoteSync, kubeconfigOf, PROXYSYNCS, putKubeconfigSecret, REMOTESYNCS, useClusterProxy } from '../support/remote.js';
import { applySync, find, waitForReady } from '../support/syncs.js';
import { markDeploymentAvailable } from '../support/workloads.js';

const HOME = 'mgmt';
const EDGE = 'edge-1';
/** The cluster taken down (through its proxy) once a RemoteSync has applied to it. */
const DOWN = 'edge-2';
const KUBECONFIG = kubeconfigPath(HOME);
const ESC = '\x1b';
let mgmt: KubeClient;
let edge: KubeClient;
const dir = tempDir('syncprims-cli-tree-');
const marker = path.join(dir, 'exec-ran');
let deadPort = 0;
const down = useClusterProxy(DOWN);
const ns = useOperatedNamespace(HOME, 'cli-tree', (o) => ({ client: mgmt } = o));
useRemoteNamespace(EDGE, ns, { operator: [], ready: (c) => (edge = c) });

const tree = (...args: string[]) => runCli(['tree', '--kubeconfig', KUBECONFIG, '-n', ns(), ...args]);
const treeJson = async (target: string): Promise<Tree> => {
  const res = await tree(target, '-o', 'json');
  expect({ code: res.code, stderr: res.stderr }).toEqual({ code: 0, stderr: '' });
  return JSON.parse(res.stdout) as Tree;
};
const configMap = (name: string) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: ns() }, data: { a: '1' } });
const deployment = () => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'web', namespace: ns() },
  spec: {
    replicas: 1,
    selector: { matchLabels: { app: 'web' } },
    template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'web', image: 'nginx' }] } },
  },
});

beforeAll(async () => {
  assertCliBuilt();
  const edgeKubeconfig = await kubeconfigOf(EDGE);
  await putKubeconfigSecret(mgmt, ns(), 'edge-1-kubeconfig', edgeKubeconfig);
  deadPort = down.proxy().port;
  await putKubeconfigSecret(mgmt, ns(), 'down-kubeconfig', await down.kubeconfig());
  await putKubeconfigSecret(
    mgmt,
    ns(),
    'tenant-kubeconfig',
    await kubeconfigOf(EDGE, (kc) => {
      const users = kc.users as { user: Record<string, unknown> }[];
      users[0]!.user = { exec: { apiVersion: 'client.authentication.k8s.io/v1', command: 'sh', args: ['-c', `touch ${marker}`], interactiveMode: 'Never' } };
    }),
  );
  await applySync(mgmt, ns(), 'base', { source: { inline: [configMap('base-cm')] } });
  await applyRemoteSync(mgmt, ns(), 'edge', { kubeConfig: { secretRef: { name: 'edge-1-kubeconfig' } }, dependsOn: [{ name: 'base' }], source: { inline: [configMap('edge-cm')] } });
  await applyProxySync(mgmt, ns(), 'proxy', {
    clusterRef: { name: EDGE },
    dependsOn: [{ kind: 'RemoteSync', name: 'edge' }],
    template: { spec: { source: { inline: [configMap('proxy-cm')] } } },
  });
  await applySync(mgmt, ns(), 'app', { dependsOn: [{ kind: 'ProxySync', name: 'proxy' }], wait: false, source: { inline: [configMap('app-cm'), deployment()] } });
  await applySync(mgmt, ns(), 'front', { dependsOn: [{ name: 'app' }], source: { inline: [] } });
  await applyRemoteSync(mgmt, ns(), 'down', { kubeConfig: { secretRef: { name: 'down-kubeconfig' } }, source: { inline: [{ ...configMap('down-cm'), metadata: { name: `${ns()}-down-cm`, namespace: 'default' } }] } });
  // (In the namespace default of edge-2, removed after the tests.)
  await applyRemoteSync(mgmt, ns(), 'tenant', { kubeConfig: { secretRef: { name: 'tenant-kubeconfig' } }, source: { inline: [] } });
  await waitForReady(mgmt, ns(), 'front', 'True', 'Succeeded');
  await waitForReady(mgmt, ns(), 'proxy', 'True', 'Succeeded', undefined, PROXYSYNCS);
  await waitForReady(mgmt, ns(), 'down', 'True', 'Succeeded', undefined, REMOTESYNCS);
  await waitForReady(mgmt, ns(), 'tenant', 'False', 'InvalidKubeconfig', undefined, REMOTESYNCS);
  // Its cluster goes down.
  await down.proxy().down();
}, 120_000);

afterAll(async () => {
  const edge2 = await clusterClient(DOWN);
  await edge2.request({ method: 'DELETE', path: `/api/v1/namespaces/default/configmaps/${ns()}-down-cm` }).catch(() => undefined);
  rmSync(dir, { recursive: true, force: true });
});

describe('the text tree', () => {
  test('dependencies both ways, recursively, and the applied objects with their kstatus; no escape codes when piped', async () => {
    const { code, stdout, stderr } = await tree('sync/app');
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    expect(stdout).not.toContain(ESC);
    const lines = stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(new RegExp(`^Sync/${ns()}/app  Ready=True  Succeeded  sha256:[0-9a-f]{12}$`));
    expect(lines.slice(1).map((l) => l.replace(/ {2}sha256:[0-9a-f]{12}/, ''))).toEqual([
      '├── depends on',
      '│   └── ProxySync/proxy  Ready=True  Succeeded',
      '│       └── RemoteSync/edge  Ready=True  Succeeded',
      '│           └── Sync/base  Ready=True  Succeeded',
      '├── depended on by',
      '│   └── Sync/front  Ready=True  Succeeded',
      '└── applied (2)',
      `    ├── ConfigMap/${ns()}/app-cm  Current`,
      `    └── Deployment/${ns()}/web  InProgress — 0 of 1 replicas created`,
    ]);
  });

  test('kstatus is read from the live objects: the Deployment turns Current once its status says so', async () => {
    await markDeploymentAvailable(mgmt, ns(), 'web');
    const { stdout } = await tree('sync/app');
    expect(stdout).toContain(`└── Deployment/${ns()}/web  Current\n`);
  });

  test('a ProxySync: into edge-1, the Sync it keeps there, its state and what it applied there', async () => {
    const { code, stdout } = await tree('psy/proxy');
    expect(code).toBe(0);
    const lines = stdout.trimEnd().split('\n').map((l) => l.replace(/ {2}sha256:[0-9a-f]{12}/, ''));
    expect(lines).toEqual([
      `ProxySync/${ns()}/proxy  Ready=True  Succeeded`,
      '├── depends on',
      '│   └── RemoteSync/edge  Ready=True  Succeeded',
      '│       └── Sync/base  Ready=True  Succeeded',
      '├── depended on by',
      '│   └── Sync/app  Ready=True  Succeeded',
      '│       └── Sync/front  Ready=True  Succeeded',
      `└── applied in cluster ${edge.server.origin} (Secret ${ns()}/edge-1-kubeconfig key value)`,
      `    └── Sync/${ns()}/proxy  Ready=True  Succeeded`,
      `        └── ConfigMap/${ns()}/proxy-cm  Current`,
    ]);
  });

  test('a stopped cluster is shown as unreachable on its node, with what is known to be there; the exit code stays 0', async () => {
    const { code, stdout, stderr } = await tree('rsy/down');
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    const lines = stdout.trimEnd().split('\n');
    expect(lines[1]).toMatch(
      new RegExp(`^└── cluster https://127\\.0\\.0\\.1:${deadPort} \\(Secret ${ns()}/down-kubeconfig key value\\): unreachable: https://127\\.0\\.0\\.1:${deadPort}: .*ECONNREFUSED`),
    );
    expect(lines[2]).toBe(`    └── ConfigMap/default/${ns()}-down-cm  Unknown — not read (its cluster: unreachable)`);
  });

  test("a tenant's exec kubeconfig is refused without running it", async () => {
    const { code, stdout } = await tree('rsy/tenant');
    expect(code).toBe(0);
    expect(stdout).toMatch(/└── cluster: refused: Secret \S+\/tenant-kubeconfig key value: .*exec/);
    expect(existsSync(marker)).toBe(false);
  });
});

describe('-o json and -o yaml', () => {
  test('a RemoteSync: its cluster and the objects there, as read in edge-1', async () => {
    const [yaml, json] = await Promise.all([tree('rsy/edge', '-o', 'yaml'), tree('rsy/edge', '-o', 'json')]);
    expect([yaml.code, json.code, yaml.stderr, json.stderr]).toEqual([0, 0, '', '']);
    const t = JSON.parse(json.stdout) as Tree;
    expect(parse(yaml.stdout, { version: '1.1' })).toEqual(t);
    expect(t).toMatchObject({ kind: 'RemoteSync', namespace: ns(), name: 'edge', server: mgmt.server.origin, ready: 'True', reason: 'Succeeded' });
    expect(t.cluster).toEqual({ server: edge.server.origin, kubeconfig: `Secret ${ns()}/edge-1-kubeconfig key value` });
    expect(t.objects).toEqual([{ apiVersion: 'v1', kind: 'ConfigMap', namespace: ns(), name: 'edge-cm', status: 'Current', message: 'ConfigMap edge-cm: current' }]);
    expect(t.dependsOn.map((d) => [d.kind, d.name, d.unmet])).toEqual([['Sync', 'base', undefined]]);
    expect(t.dependents.map((d) => `${d.kind}/${d.name}`)).toEqual(['ProxySync/proxy']);
    // The object is there in edge-1, and not in mgmt.
    expect(await find(edge, `/api/v1/namespaces/${ns()}/configmaps/edge-cm`)).toBeDefined();
    expect(await find(mgmt, `/api/v1/namespaces/${ns()}/configmaps/edge-cm`)).toBeUndefined();
  });

  test("in a remote cluster only the managing cluster's origin is ours: seen from another managing cluster (--cluster-id), the same object is another's twin", async () => {
    // The object carries our origin (mgmt's kube-system uid, the operator's default --cluster-id) and is ours by default (above).
    const cm = await find<{ metadata: { labels?: Record<string, string> } }>(edge, `/api/v1/namespaces/${ns()}/configmaps/edge-cm`);
    const uid = (await mgmt.request<{ metadata: { uid: string } }>({ path: '/api/v1/namespaces/kube-system' })).metadata.uid;
    expect(cm?.metadata.labels?.['syncprims.dev/origin']).toBe(uid);
    const [ours, theirs] = await Promise.all([treeJson('rsy/edge'), tree('rsy/edge', '--cluster-id', 'another-managing-cluster', '-o', 'json')]);
    expect(ours.objects?.map((o) => `${o.name} ${o.status}`)).toEqual(['edge-cm Current']);
    expect((JSON.parse(theirs.stdout) as Tree).objects?.map((o) => `${o.name} ${o.status}`)).toEqual(['edge-cm NotFound']);
  });

  test('a ProxySync: the remote Sync nested under its object, with its own objects', async () => {
    const t = await treeJson('proxysync/proxy');
    const sync = t.objects?.[0];
    expect(sync).toMatchObject({ apiVersion: 'syncprims.dev/v1alpha1', kind: 'Sync', namespace: ns(), name: 'proxy', status: 'Current' });
    expect(sync?.sync).toMatchObject({ kind: 'Sync', name: 'proxy', ready: 'True', reason: 'Succeeded', objects: [{ kind: 'ConfigMap', name: 'proxy-cm', status: 'Current' }] });
  });

  test('unreachable and refused clusters are said in the structure', async () => {
    const [down, tenant] = await Promise.all([treeJson('rsy/down'), treeJson('rsy/tenant')]);
    expect(down.cluster).toMatchObject({ server: `https://127.0.0.1:${deadPort}`, problem: 'unreachable', message: expect.stringContaining('ECONNREFUSED') });
    expect(down.objects).toEqual([expect.objectContaining({ name: `${ns()}-down-cm`, status: 'Unknown' })]);
    expect(tenant.cluster).toMatchObject({ problem: 'refused', message: expect.stringContaining('exec') });
    expect(tenant.cluster?.server).toBeUndefined();
    expect(existsSync(marker)).toBe(false);
  });
});

describe('exit codes', () => {
  test('1: the sync does not exist; 2: bad usage; 3: the managing cluster cannot be reached', async () => {
    const { file, port } = await unreachableKubeconfig(dir);
    const [missing, noName, notKind, unreachable] = await Promise.all([
      tree('sync/nope'),
      tree('sync'),
      tree('app'),
      runCli(['tree', 'sync/app', '--kubeconfig', file]),
    ]);
    expect(missing).toEqual({ code: 1, stdout: '', stderr: `syncprims: Sync ${ns()}/nope not found (list them: syncprims get sync -n ${ns()})\n` });
    expect(noName).toMatchObject({ code: 2, stdout: '', stderr: expect.stringContaining('name the sync as kind/name') });
    expect(notKind).toMatchObject({ code: 2, stderr: expect.stringContaining('name a sync as kind/name, e.g. sync/app') });
    expect(unreachable.code).toBe(3);
    expect(unreachable.stderr).toMatch(new RegExp(`^syncprims: cannot reach the cluster at https://127\\.0\\.0\\.1:${port} .*\n$`));
  });

  test('--help has an example', async () => {
    const help = await runCli(['tree', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('Examples:\n  $ syncprims tree');
  });
});
