// `syncprims trace` as a user runs it (a real process, stdout a pipe), with
// operators on mgmt and on edge-1: an object applied by a Sync in mgmt; one
// applied in edge-1 by a RemoteSync of mgmt (followed with --mgmt-kubeconfig,
// whose identity must be the object's origin); one applied in edge-1 by the
// Sync that a ProxySync of mgmt keeps there (followed up to the ProxySync).
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { rmSync } from 'node:fs';
import { parse } from 'yaml';
import type { Trace } from '../../src/cli/trace/trace-chain.js';
import type { KubeClient } from '../../src/kube/client.js';
import { assertCliBuilt, runCli, tempDir, unreachableKubeconfig } from '../support/cli.js';
import { kubeconfigPath } from '../support/controlplane.js';
import { useOperatedNamespace } from '../support/operated-namespace.js';
import { useRemoteNamespace } from '../support/remote-namespace.js';
import { applyProxySync, applyRemoteSync, kubeconfigOf, PROXYSYNCS, putKubeconfigSecret, REMOTESYNCS } from '../support/remote.js';
import { applySync, waitForReady, type SyncObject } from '../support/syncs.js';

const HOME = 'mgmt';
const EDGE = 'edge-1';
const ESC = '\x1b';
let mgmt: KubeClient;
let edge: KubeClient;
let mgmtId = '';
const live: Record<string, SyncObject> = {};
const dir = tempDir('syncprims-cli-trace-');
const ns = useOperatedNamespace(HOME, 'cli-trace', (o) => ({ client: mgmt } = o));
useRemoteNamespace(EDGE, ns, { operator: [], ready: (c) => (edge = c) });

const inMgmt = (...args: string[]) => runCli(['trace', '--kubeconfig', kubeconfigPath(HOME), '-n', ns(), ...args]);
const inEdge = (...args: string[]) => runCli(['trace', '--kubeconfig', kubeconfigPath(EDGE), '-n', ns(), ...args]);
const MGMT = ['--mgmt-kubeconfig', kubeconfigPath(HOME)];
const configMap = (name: string) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: ns() }, data: { a: '1' } });
/** The first 12 hex digits of a revision, as the text shows it. */
const short = (revision: string | undefined) => revision?.slice(0, 'sha256:'.length + 12);

beforeAll(async () => {
  assertCliBuilt();
  mgmtId = (await mgmt.request<{ metadata: { uid: string } }>({ path: '/api/v1/namespaces/kube-system' })).metadata.uid;
  await putKubeconfigSecret(mgmt, ns(), 'edge-1-kubeconfig', await kubeconfigOf(EDGE));
  await applySync(mgmt, ns(), 'local', { source: { inline: [configMap('local-cm')] } });
  await applyRemoteSync(mgmt, ns(), 'edge', { kubeConfig: { secretRef: { name: 'edge-1-kubeconfig' } }, source: { inline: [configMap('edge-cm')] } });
  await applyProxySync(mgmt, ns(), 'proxy', { clusterRef: { name: EDGE }, template: { spec: { source: { inline: [configMap('proxy-cm')] } } } });
  [live.local, live.edge, live.proxy] = await Promise.all([
    waitForReady(mgmt, ns(), 'local', 'True', 'Succeeded'),
    waitForReady(mgmt, ns(), 'edge', 'True', 'Succeeded', undefined, REMOTESYNCS),
    waitForReady(mgmt, ns(), 'proxy', 'True', 'Succeeded', undefined, PROXYSYNCS),
  ]);
  live.remote = await waitForReady(edge, ns(), 'proxy', 'True', 'Succeeded');
}, 120_000);

afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('an object in the managing cluster', () => {
  test('the text: the object, then the Sync that applied it, its source, revision and state; no escape codes when piped', async () => {
    const { code, stdout, stderr } = await inMgmt('configmap/local-cm');
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    expect(stdout).not.toContain(ESC);
    expect(stdout.trimEnd().split('\n')).toEqual([
      'Object:      ConfigMap/local-cm',
      `Namespace:   ${ns()}`,
      `Cluster:     ${mgmt.server.origin}`,
      `Applied by:  Sync ${ns()}/local`,
      '---',
      'Sync:        local',
      `Namespace:   ${ns()}`,
      `Cluster:     ${mgmt.server.origin}`,
      'Source:      inline, 1 object',
      `Revision:    ${short(live.local!.status?.lastAppliedRevision)}`,
      `Inventory:   lists ConfigMap/${ns()}/local-cm`,
      'Ready:       True',
      'Reason:      Succeeded',
      `Message:     applied revision ${live.local!.status?.lastAppliedRevision}`,
    ]);
  });

  test('-o json and -o yaml: the same structure; the kind by its short name or as Kind.version', async () => {
    const [json, yaml] = await Promise.all([inMgmt('cm/local-cm', '-o', 'json'), inMgmt('ConfigMap.v1/local-cm', '-o', 'yaml')]);
    expect([json.code, yaml.code]).toEqual([0, 0]);
    const trace = JSON.parse(json.stdout) as Trace;
    expect(parse(yaml.stdout, { version: '1.1' })).toEqual(trace);
    expect(trace).toEqual({
      object: { apiVersion: 'v1', kind: 'ConfigMap', namespace: ns(), name: 'local-cm', server: mgmt.server.origin },
      appliedBy: [
        {
          kind: 'Sync',
          namespace: ns(),
          name: 'local',
          server: mgmt.server.origin,
          found: true,
          source: 'inline, 1 object',
          revision: live.local!.status?.lastAppliedRevision,
          ready: 'True',
          reason: 'Succeeded',
          message: `applied revision ${live.local!.status?.lastAppliedRevision}`,
          listsObject: true,
        },
      ],
    });
  });
});

describe('an object in edge-1 applied by a RemoteSync of mgmt', () => {
  test('with --mgmt-kubeconfig: the RemoteSync in mgmt, whose id is the origin', async () => {
    const { code, stdout, stderr } = await inEdge('cm/edge-cm', ...MGMT, '-o', 'json');
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    const trace = JSON.parse(stdout) as Trace;
    expect(trace.object).toEqual({ apiVersion: 'v1', kind: 'ConfigMap', namespace: ns(), name: 'edge-cm', server: edge.server.origin });
    expect(trace.appliedBy).toEqual([
      expect.objectContaining({
        kind: 'RemoteSync',
        namespace: ns(),
        name: 'edge',
        server: mgmt.server.origin,
        origin: mgmtId,
        found: true,
        target: 'kubeconfig Secret edge-1-kubeconfig key value',
        revision: live.edge!.status?.lastAppliedRevision,
        ready: 'True',
        listsObject: true,
      }),
    ]);
  });

  test('without it: what the labels say, and one line saying how to follow it (exit 1)', async () => {
    const { code, stdout, stderr } = await inEdge('cm/edge-cm');
    expect(code).toBe(1);
    expect(stderr).toBe(
      `syncprims: ConfigMap ${ns()}/edge-cm was applied from the managing cluster with id ${mgmtId}, not this one: pass --mgmt-kubeconfig (and --mgmt-context) of that cluster to follow it\n`,
    );
    expect(stdout).toContain(`Applied by:  RemoteSync ${ns()}/edge (in the managing cluster)\n---\nRemoteSync:  edge\n`);
    expect(stdout).toContain(`Cluster:     the managing cluster, id ${mgmtId} (not given: --mgmt-kubeconfig)\nStatus:      not looked up\n`);
  });

  test('a managing cluster that is not the origin is refused (1); one that cannot be reached is exit 3', async () => {
    const { file, port } = await unreachableKubeconfig(dir);
    const [wrong, down] = await Promise.all([inEdge('cm/edge-cm', '--mgmt-kubeconfig', kubeconfigPath(EDGE)), inEdge('cm/edge-cm', '--mgmt-kubeconfig', file)]);
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toMatch(new RegExp(`^syncprims: ConfigMap ${ns()}/edge-cm was applied from the managing cluster with id ${mgmtId}, and the cluster at ${edge.server.origin} is not it \\(its id .* is [-0-9a-f]+\\): pass the kubeconfig of that cluster, or --mgmt-cluster-id .*\n$`));
    expect(down.code).toBe(3);
    expect(down.stderr).toMatch(new RegExp(`^syncprims: cannot reach the cluster at https://127\\.0\\.0\\.1:${port} .*\n$`));
  });
});

describe('an object in edge-1 applied by the Sync a ProxySync keeps there', () => {
  test('the remote Sync, then the ProxySync in mgmt that keeps it', async () => {
    const { code, stdout, stderr } = await inEdge('configmap/proxy-cm', ...MGMT);
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    const remoteRevision = live.remote!.status?.lastAppliedRevision;
    expect(stdout.trimEnd().split('\n')).toEqual([
      'Object:      ConfigMap/proxy-cm',
      `Namespace:   ${ns()}`,
      `Cluster:     ${edge.server.origin}`,
      `Applied by:  Sync ${ns()}/proxy`,
      '---',
      'Sync:        proxy',
      `Namespace:   ${ns()}`,
      `Cluster:     ${edge.server.origin}`,
      'Source:      inline, 1 object',
      `Revision:    ${short(remoteRevision)}`,
      `Inventory:   lists ConfigMap/${ns()}/proxy-cm`,
      'Ready:       True',
      'Reason:      Succeeded',
      `Message:     applied revision ${remoteRevision}`,
      `Applied by:  ProxySync ${ns()}/proxy (in the managing cluster)`,
      '---',
      'ProxySync:   proxy',
      `Namespace:   ${ns()}`,
      `Cluster:     ${mgmt.server.origin} (managing cluster, id ${mgmtId})`,
      'Target:      Cluster edge-1',
      `Keeps:       Sync ${ns()}/proxy there`,
      'Source:      inline, 1 object',
      `Revision:    ${short(live.proxy!.status?.lastAppliedRevision)}`,
      `Inventory:   lists Sync/${ns()}/proxy`,
      'Ready:       True',
      'Reason:      Succeeded',
      `Message:     ${live.proxy!.status?.conditions?.find((c) => c.type === 'Ready')?.message}`,
    ]);
  });

  test('the remote Sync itself traces to its ProxySync', async () => {
    const { code, stdout } = await inEdge('sync/proxy', ...MGMT, '-o', 'json');
    expect(code).toBe(0);
    expect((JSON.parse(stdout) as Trace).appliedBy.map((l) => [l.kind, l.server, l.origin, l.listsObject])).toEqual([['ProxySync', mgmt.server.origin, mgmtId, true]]);
  });
});

describe('exit codes', () => {
  test('1: not applied by any sync, not found, no such resource type; 2: bad usage', async () => {
    const [unowned, missing, unknown, noName] = await Promise.all([inMgmt('namespace/default'), inMgmt('cm/nope'), inMgmt('nosuchkinds/x'), inMgmt('cm')]);
    expect(unowned.code).toBe(1);
    expect(unowned.stderr).toBe('syncprims: Namespace default is not applied by any sync: it carries no syncprims.dev/owner-* labels\n');
    expect(unowned.stdout).toContain('Applied by:  no sync');
    expect(missing).toEqual({ code: 1, stdout: '', stderr: `syncprims: ConfigMap nope not found in namespace ${ns()} of the cluster at ${mgmt.server.origin}\n` });
    expect(unknown).toMatchObject({ code: 1, stdout: '', stderr: `syncprims: the server at ${mgmt.server.origin} has no resource type "nosuchkinds" (list them: kubectl api-resources)\n` });
    expect(noName).toMatchObject({ code: 2, stdout: '', stderr: expect.stringContaining('name the object as resource/name, e.g. cm/my-object') });
  });

  test('--help has an example', async () => {
    const help = await runCli(['trace', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('Examples:\n  $ syncprims trace');
  });
});
