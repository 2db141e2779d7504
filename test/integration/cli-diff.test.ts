// `syncprims diff` as a user runs it (a real process, stdout a pipe) against
// a Sync, a RemoteSync (into edge-1) and a ProxySync (a Sync kept in edge-1)
// that an operator on mgmt has applied.
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parse, stringify } from 'yaml';
import type { KubeClient } from '../../src/kube/client.js';
import type { KubeObject } from '../../src/kube/resources.js';
import { assertCliBuilt, closedPort, runCli, tempDir, unreachableKubeconfig } from '../support/cli.js';
import { kubeconfigPath, kubeconfigViaPort } from '../support/controlplane.js';
import { eventually } from '../support/eventually.js';
import { useOperatedNamespace } from '../support/operated-namespace.js';
import { useRemoteNamespace } from '../support/remote-namespace.js';
import { applyProxySync, applyRemoteSync, kubeconfigOf, PROXYSYNCS, putKubeconfigSecret } from '../support/remote.js';
import { applySync, find, getSync, syncPath, waitForReady } from '../support/syncs.js';

const HOME = 'mgmt';
const EDGE = 'edge-1';
const KUBECONFIG = kubeconfigPath(HOME);
let mgmt: KubeClient;
let edge: KubeClient;
let dir: string;
const ns = useOperatedNamespace(HOME, 'cli-diff', (o) => ({ client: mgmt } = o));
// No operator runs in edge-1; the RemoteSync applies the namespace there.
useRemoteNamespace(EDGE, ns, { create: false, ready: (c) => (edge = c) });

const ESC = '\x1b';
const diff = (...args: string[]) => runCli(['diff', '--kubeconfig', KUBECONFIG, '-n', ns(), ...args]);
const configMap = (name: string, data: Record<string, string>) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: ns() }, data });
const secret = (name: string, data: Record<string, string>) => ({ apiVersion: 'v1', kind: 'Secret', metadata: { name, namespace: ns() }, stringData: data });
const cmPath = (name: string) => `/api/v1/namespaces/${ns()}/configmaps/${name}`;
const appSpec = () => ({ source: { inline: [configMap('app-a', { a: '1' }), configMap('app-b', { b: '1' }), secret('app-s', { token: 'one' })] } });
const edgeSpec = () => ({
  kubeConfig: { secretRef: { name: 'edge-1-kubeconfig' } },
  source: { inline: [{ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns() } }, configMap('edge-cm', { e: '1' })] },
});
const proxySpec = () => ({ clusterRef: { name: 'edge-1' }, template: { spec: { source: { configMap: { name: 'proxy-src' } } } } });

/** A YAML file of sync objects in the test's directory. */
function file(name: string, objects: Record<string, unknown>[]): string {
  const at = path.join(dir, name);
  writeFileSync(at, objects.map((o) => stringify(o)).join('---\n'));
  return at;
}

const mergePatch = (client: KubeClient, at: string, body: unknown) => client.request({ method: 'PATCH', path: at, contentType: 'application/merge-patch+json', body });

/**
 * Suspends a sync and waits until the operator says so: a hand edit of what it
 * applied then stays (running, it would correct it at once, from the watch).
 */
async function suspend(plural: string, name: string): Promise<void> {
  await mergePatch(mgmt, syncPath(ns(), name, plural), { spec: { suspend: true } });
  // Suspended keeps Ready as it was (True here), with the reason Suspended.
  await waitForReady(mgmt, ns(), name, 'True', 'Suspended', undefined, plural);
}

beforeAll(async () => {
  assertCliBuilt();
  dir = tempDir();
  await putKubeconfigSecret(mgmt, ns(), 'edge-1-kubeconfig', await kubeconfigOf(EDGE));
  await mgmt.request({ method: 'POST', path: `/api/v1/namespaces/${ns()}/configmaps`, body: configMap('proxy-src', { 'cm.yaml': stringify(configMap('proxied', { p: '1' })) }) });
  await applySync(mgmt, ns(), 'app', appSpec());
  await applyRemoteSync(mgmt, ns(), 'edge', edgeSpec());
  await applyProxySync(mgmt, ns(), 'proxy', proxySpec());
  await waitForReady(mgmt, ns(), 'app', 'True', 'Succeeded');
  await waitForReady(mgmt, ns(), 'edge', 'True', 'Succeeded', 60_000, 'remotesyncs');
  // No operator runs in edge-1: the remote Sync is kept there, and the ProxySync waits for it to report.
  await eventually('the ProxySync to record its remote Sync and copy', async () => {
    const p = await getSync(mgmt, ns(), 'proxy', PROXYSYNCS);
    return (p.status?.inventory?.entries.length ?? 0) === 2 ? p : undefined;
  });
}, 120_000);

afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('unchanged', () => {
  test('a Sync, a RemoteSync (in edge-1), a ProxySync (its Sync in edge-1 and the copy of its source): nothing printed, exit 0', async () => {
    const none = { code: 0, stdout: '', stderr: '' };
    expect(await Promise.all([diff('sync/app'), diff('rsy/edge'), diff('psy/proxy')])).toEqual([none, none, none]);
  });
});

describe('a Sync in the cluster', () => {
  test('after a hand edit: the edit as a unified diff, Secret values masked, exit 1; -o yaml and json give the objects without noise', async () => {
    await suspend('syncs', 'app');
    // kubectl-style: a merge patch (the field manager of the data's `a` changes, and `extra` is another manager's).
    await mergePatch(mgmt, cmPath('app-a'), { data: { a: 'edited', extra: 'x' } });
    await mergePatch(mgmt, `/api/v1/namespaces/${ns()}/secrets/app-s`, { stringData: { token: 'two' } });
    const [text, json, yaml] = await Promise.all([diff('sy/app'), diff('sy/app', '-o', 'json'), diff('sy/app', '-o', 'yaml')]);
    expect(text).toMatchObject({ code: 1, stderr: `syncprims diff: note: Sync ${ns()}/app is suspended: the operator applies nothing until it is resumed\n` });
    expect(text.stdout).not.toContain(ESC);
    const [cm, sec] = text.stdout.split(/(?=^--- live )/m);
    expect(cm).toBe(
      [
        `--- live ConfigMap ${ns()}/app-a`,
        `+++ merged ConfigMap ${ns()}/app-a`,
        '@@ -1,6 +1,6 @@',
        'apiVersion: v1',
        'data:',
        '-  a: edited',
        '+  a: "1"',
        // Another manager's field: the apply leaves it.
        '  extra: x',
        'kind: ConfigMap',
        'metadata:',
        '',
      ].join('\n').replace(/^(?=[a-z ])/gm, ' '),
    );
    expect(sec).toContain(`--- live Secret ${ns()}/app-s\n+++ merged Secret ${ns()}/app-s\n`);
    expect(sec).toContain('\n-  token: "*** (before)"\n+  token: "*** (after)"\n');
    expect(text.stdout).not.toMatch(/managedFields|resourceVersion|creationTimestamp|uid:|syncprims\.dev\/owner|b25l|dHdv/);

    expect(json.code).toBe(1);
    const items = JSON.parse(json.stdout) as { sync: string; action: string; object: string; live: KubeObject; merged: KubeObject }[];
    expect(items.map((i) => [i.sync, i.action, i.object])).toEqual([
      [`Sync ${ns()}/app`, 'configured', `ConfigMap ${ns()}/app-a`],
      [`Sync ${ns()}/app`, 'configured', `Secret ${ns()}/app-s`],
    ]);
    expect(items[0]!.live).toEqual({ ...configMap('app-a', { a: 'edited', extra: 'x' }) });
    expect(items[0]!.merged).toEqual(configMap('app-a', { a: '1', extra: 'x' }));
    expect(yaml.code).toBe(1);
    expect(parse(yaml.stdout, { version: '1.1' })).toEqual(items);
  });

  test('-f a changed file: changed, added and pruned objects; the sync in the cluster is left as it is', async () => {
    const changed = file('app.yaml', [
      { apiVersion: 'syncprims.dev/v1alpha1', kind: 'Sync', metadata: { name: 'app' }, spec: { source: { inline: [configMap('app-a', { a: '2' }), configMap('app-c', { c: '1' }), secret('app-s', { token: 'one' })] } } },
    ]);
    const res = await diff('-f', changed);
    expect(res).toMatchObject({ code: 1, stderr: '' });
    const headers = res.stdout.split('\n').filter((l) => /^(---|\+\+\+) /.test(l));
    expect(headers).toEqual([
      `--- live ConfigMap ${ns()}/app-a`,
      `+++ merged ConfigMap ${ns()}/app-a`,
      `--- live ConfigMap ${ns()}/app-c`,
      `+++ merged ConfigMap ${ns()}/app-c (would be created)`,
      `--- live Secret ${ns()}/app-s`,
      `+++ merged Secret ${ns()}/app-s`,
      `--- live ConfigMap ${ns()}/app-b`,
      `+++ merged ConfigMap ${ns()}/app-b (would be pruned)`,
    ]);
    expect(res.stdout).toContain('\n+  a: "2"\n');
    expect(res.stdout).toContain('@@ -0,0 +1,7 @@\n+apiVersion: v1\n+data:\n+  c: "1"\n');
    expect(res.stdout).toContain('@@ -1,7 +0,0 @@\n-apiVersion: v1\n-data:\n-  b: "1"\n');
    expect(await find(mgmt, cmPath('app-c'))).toBeUndefined();
    expect(await find(mgmt, cmPath('app-b'))).toBeDefined();
  });
});

describe('across clusters', () => {
  test('a RemoteSync: a hand edit in edge-1', async () => {
    await suspend('remotesyncs', 'edge');
    await mergePatch(edge, cmPath('edge-cm'), { data: { e: 'edited' } });
    const res = await diff('rsy/edge');
    expect(res).toMatchObject({ code: 1, stderr: expect.stringContaining(`RemoteSync ${ns()}/edge is suspended`) });
    expect(res.stdout).toContain(`--- live ConfigMap ${ns()}/edge-cm\n+++ merged ConfigMap ${ns()}/edge-cm\n`);
    expect(res.stdout).toContain('\n-  e: edited\n+  e: "1"\n');
    expect(res.stdout).not.toContain('syncprims.dev/origin');
  });

  test("a RemoteSync whose object in edge-1 another managing cluster's twin (same namespace and name, another origin) applied: left alone, as the operator leaves it", async () => {
    const labels = { 'syncprims.dev/owner-kind': 'RemoteSync', 'syncprims.dev/owner-namespace': ns(), 'syncprims.dev/owner-name': 'twin', 'syncprims.dev/origin': 'another-mgmt' };
    await edge.request({ method: 'POST', path: `/api/v1/namespaces/${ns()}/configmaps`, body: { ...configMap('twin-cm', { by: 'theirs' }), metadata: { name: 'twin-cm', namespace: ns(), labels } } });
    const twin = file('twin.yaml', [{ apiVersion: 'syncprims.dev/v1alpha1', kind: 'RemoteSync', metadata: { name: 'twin' }, spec: { kubeConfig: { secretRef: { name: 'edge-1-kubeconfig' } }, source: { inline: [configMap('twin-cm', { by: 'ours' })] } } }]);
    const res = await diff('-f', twin);
    expect(res).toEqual({
      code: 1,
      stdout: '',
      stderr: `syncprims: RemoteSync ${ns()}/twin: ConfigMap ${ns()}/twin-cm is owned by RemoteSync/${ns()}/twin (applied from managing cluster another-mgmt): left alone (OwnershipConflict)\n`,
    });
    expect(await find(edge, cmPath('twin-cm'))).toMatchObject({ data: { by: 'theirs' } });
  });

  test('a ProxySync: a changed template shows in the Sync it keeps in edge-1', async () => {
    const template = { spec: { source: { configMap: { name: 'proxy-src' } }, defaultNamespace: ns(), prune: false } };
    const changed = file('proxy.yaml', [{ apiVersion: 'syncprims.dev/v1alpha1', kind: 'ProxySync', metadata: { name: 'proxy', namespace: ns() }, spec: { ...proxySpec(), template } }]);
    const res = await diff('-f', changed, '-o', 'json');
    expect(res).toMatchObject({ code: 1, stderr: '' });
    const items = JSON.parse(res.stdout) as { action: string; object: string; live: KubeObject; merged: KubeObject }[];
    expect(items.map((i) => [i.action, i.object])).toEqual([['configured', `Sync ${ns()}/proxy`]]);
    expect(items[0]!.live.spec).toMatchObject({ prune: true });
    expect(items[0]!.live.spec).not.toHaveProperty('defaultNamespace');
    expect(items[0]!.merged.spec).toMatchObject({ prune: false, defaultNamespace: ns(), source: { configMap: { name: 'proxy-src' } } });
    const remote = await find<KubeObject>(edge, syncPath(ns(), 'proxy'));
    expect(remote?.spec).not.toHaveProperty('defaultNamespace');
  });
});

describe('exit codes and errors', () => {
  test('1: a sync that does not exist; 2: bad usage; a broken file names its line; --help has examples', async () => {
    const broken = path.join(dir, 'broken.yaml');
    writeFileSync(broken, 'apiVersion: syncprims.dev/v1alpha1\nkind: Sync\nmetadata: {name: x\n');
    // Applied as the service account the sync names (which may do nothing here), as the operator applies it.
    const asNobody = file('nobody.yaml', [{ apiVersion: 'syncprims.dev/v1alpha1', kind: 'Sync', metadata: { name: 'nobody' }, spec: { serviceAccountName: 'nobody', source: { inline: [configMap('app-a', { a: '1' }), configMap('nobody-cm', {})] } } }]);
    const [missing, neither, both, badFile, help, forbidden, badLimit] = await Promise.all([
      diff('sync/nope'),
      diff(),
      diff('sync/app', '-f', broken),
      diff('-f', broken),
      runCli(['diff', '--help']),
      diff('-f', asNobody),
      diff('sync/app', '--source-fetch-timeout', 'soon'),
    ]);
    expect(badLimit).toMatchObject({ code: 2, stdout: '', stderr: expect.stringContaining('--source-fetch-timeout soon: invalid duration "soon"') });
    expect(forbidden).toMatchObject({ code: 1, stdout: '' });
    // Another sync's object is left alone; the account may not patch ConfigMaps.
    expect(forbidden.stderr.split('\n')).toEqual([
      `syncprims diff: Sync ${ns()}/nobody: ConfigMap ${ns()}/app-a is owned by Sync/${ns()}/app: left alone (OwnershipConflict)`,
      expect.stringMatching(new RegExp(`^syncprims diff: Sync ${ns()}/nobody: ConfigMap ${ns()}/nobody-cm: configmaps "nobody-cm" is forbidden: User "system:serviceaccount:${ns()}:nobody" cannot patch`)),
      'syncprims: 2 objects would not apply (see above)',
      '',
    ]);
    expect(help).toMatchObject({ code: 0, stdout: expect.stringContaining('Examples:\n  $ syncprims diff sync/app') });
    expect(missing).toEqual({ code: 1, stdout: '', stderr: `syncprims: Sync ${ns()}/nope not found (list them: syncprims get sync -n ${ns()})\n` });
    expect(neither).toMatchObject({ code: 2, stderr: expect.stringContaining('give diff a sync as kind/name, or a file with -f') });
    expect(both.code).toBe(2);
    expect(badFile).toMatchObject({ code: 1, stdout: '' });
    expect(badFile.stderr).toMatch(new RegExp(`^syncprims: ${broken.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}.*document 1.*line \\d+`));
    expect(badFile.stderr.split('\n')).toHaveLength(2);
  });

  test('3: the managing cluster, or the sync\'s own cluster, cannot be reached; an exec kubeconfig is refused without running', async () => {
    const { file: dead, port } = await unreachableKubeconfig(dir);
    const deadEdge = await closedPort();
    await putKubeconfigSecret(mgmt, ns(), 'dead-kubeconfig', kubeconfigViaPort(EDGE, deadEdge).exportConfig());
    const marker = path.join(dir, 'exec-ran');
    await putKubeconfigSecret(
      mgmt,
      ns(),
      'exec-kubeconfig',
      await kubeconfigOf(EDGE, (kc) => {
        (kc.users as { user: Record<string, unknown> }[])[0]!.user = { exec: { apiVersion: 'client.authentication.k8s.io/v1', command: 'touch', args: [marker] } };
      }),
    );
    const remote = (name: string, secretName: string) =>
      file(`${name}.yaml`, [{ apiVersion: 'syncprims.dev/v1alpha1', kind: 'RemoteSync', metadata: { name }, spec: { kubeConfig: { secretRef: { name: secretName } }, source: { inline: [configMap('x', {})] } } }]);
    const [home, away, exec] = await Promise.all([
      runCli(['diff', 'sync/app', '--kubeconfig', dead]),
      diff('-f', remote('dead', 'dead-kubeconfig')),
      diff('-f', remote('exec', 'exec-kubeconfig')),
    ]);
    expect(home.code).toBe(3);
    expect(home.stderr).toMatch(new RegExp(`^syncprims: cannot reach the cluster at https://127\\.0\\.0\\.1:${port} .*\n$`));
    expect(away).toMatchObject({ code: 3, stdout: '' });
    expect(away.stderr).toMatch(new RegExp(`^syncprims: RemoteSync ${ns()}/dead: cannot diff in its cluster \\(Secret ${ns()}/dead-kubeconfig key value\\): unreachable: https://127\\.0\\.0\\.1:${deadEdge}.*\n$`));
    expect(exec).toMatchObject({ code: 1, stdout: '' });
    expect(exec.stderr).toMatch(/^syncprims: RemoteSync \S+\/exec: .*exec.*\n$/);
    expect(await find(mgmt, cmPath('x'))).toBeUndefined();
    expect(() => rmSync(marker)).toThrow();
  });
});
