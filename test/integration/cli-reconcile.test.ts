// `syncprims reconcile`, `suspend` and `resume` as a user runs them (a real
// process, stdout a pipe) against syncs of the three kinds: an operator on
// mgmt, and one on edge-1 for the Sync that the ProxySync keeps there.
import { beforeAll, describe, expect, test } from '@jest/globals';
import type { KubeClient } from '../../src/kube/client.js';
import { assertCliBuilt, runCli } from '../support/cli.js';
import { kubeconfigPath } from '../support/controlplane.js';
import { eventually } from '../support/eventually.js';
import { useOperatedNamespace } from '../support/operated-namespace.js';
import { useRemoteNamespace } from '../support/remote-namespace.js';
import { applyProxySync, applyRemoteSync, kubeconfigOf, PROXYSYNCS, putKubeconfigSecret, REMOTESYNCS } from '../support/remote.js';
import { applySync, find, getSync, readyOf, syncPath, waitForReady, type SyncObject } from '../support/syncs.js';

const HOME = 'mgmt';
const EDGE = 'edge-1';
const KUBECONFIG = kubeconfigPath(HOME);
const REQUEST = 'syncprims.dev/reconcile-requested-at';
let mgmt: KubeClient;
let edge: KubeClient;
const ns = useOperatedNamespace(HOME, 'cli-drive', (o) => ({ client: mgmt } = o));
// The RemoteSync applies into this namespace of edge-1; the ProxySync's Sync lives there too, applied by edge-1's operator.
useRemoteNamespace(EDGE, ns, { operator: [], ready: (c) => (edge = c) });

const cli = (...args: string[]) => runCli([...args, '--kubeconfig', KUBECONFIG, '-n', ns()], { timeoutMs: 60_000 });
const configMap = (name: string) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: ns() }, data: { a: '1' } });
const inlineNames = (s: SyncObject | undefined): string[] =>
  ((s?.spec.source as { inline?: { metadata: { name: string } }[] } | undefined)?.inline ?? []).map((o) => o.metadata.name);
const edgeSync = (name: string): Promise<SyncObject | undefined> => find<SyncObject>(edge, syncPath(ns(), name));
/** The request's value as the CLI printed it on its first line. */
const requestIn = (stdout: string): string | undefined => new RegExp(`\\(${REQUEST}: (\\S+)\\)`).exec(stdout)?.[1];

beforeAll(async () => {
  assertCliBuilt();
  await putKubeconfigSecret(mgmt, ns(), 'edge-1-kubeconfig', await kubeconfigOf(EDGE));
  await Promise.all([
    applySync(mgmt, ns(), 'good', { source: { inline: [configMap('good')] } }),
    applySync(mgmt, ns(), 'broken', { source: { configMap: { name: 'missing' } } }),
    applySync(mgmt, ns(), 'waiting', { source: { inline: [] }, dependsOn: [{ name: 'broken' }] }),
    applyRemoteSync(mgmt, ns(), 'edge', { kubeConfig: { secretRef: { name: 'edge-1-kubeconfig' } }, source: { inline: [configMap('edge-cm')] } }),
    applyProxySync(mgmt, ns(), 'proxy', { clusterRef: { name: EDGE }, template: { spec: { source: { inline: [configMap('proxy-cm')] } } } }),
  ]);
  await Promise.all([
    waitForReady(mgmt, ns(), 'good', 'True', 'Succeeded'),
    waitForReady(mgmt, ns(), 'broken', 'False', 'SourceError'),
    waitForReady(mgmt, ns(), 'waiting', 'False', 'DependencyNotReady'),
    waitForReady(mgmt, ns(), 'edge', 'True', 'Succeeded', 60_000, REMOTESYNCS),
    waitForReady(mgmt, ns(), 'proxy', 'True', 'Succeeded', 60_000, PROXYSYNCS),
  ]);
}, 120_000);

describe('reconcile', () => {
  test('a Sync: the request is handled, it ends Ready, exit 0', async () => {
    const res = await cli('reconcile', 'sync/good');
    expect({ code: res.code, stderr: res.stderr }).toEqual({ code: 0, stderr: '' });
    const lines = res.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(new RegExp(`^► reconcile of Sync ${ns()}/good requested \\(${REQUEST}: \\S+\\)$`));
    expect(lines.at(-1)).toMatch(new RegExp(`^✔ Sync ${ns()}/good is Ready: applied revision sha256:[0-9a-f]{12}$`));
    expect(res.stdout).not.toContain('\x1b');
    const now = await getSync(mgmt, ns(), 'good');
    const mark = now.metadata.annotations?.[REQUEST];
    expect(mark).toBe(requestIn(res.stdout));
    expect(now.status?.lastHandledReconcileAt).toBe(mark);
    expect(readyOf(now)).toMatchObject({ status: 'True', reason: 'Succeeded' });
  });

  test('a Sync that ends not Ready: exit 1, its reason and message in one line', async () => {
    const res = await cli('reconcile', 'sy/broken');
    expect(res.code).toBe(1);
    expect(res.stderr).toBe(`syncprims: Sync ${ns()}/broken is not Ready: SourceError: ${readyOf(await getSync(mgmt, ns(), 'broken'))?.message}\n`);
    expect(res.stderr).toContain(`ConfigMap ${ns()}/missing not found`);
    const now = await getSync(mgmt, ns(), 'broken');
    expect(now.status?.lastHandledReconcileAt).toBe(requestIn(res.stdout));
  });

  test('a RemoteSync', async () => {
    const res = await cli('reconcile', 'remotesync/edge');
    expect(res.stderr).toBe('');
    expect(res.code).toBe(0);
    expect(res.stdout).toContain(`✔ RemoteSync ${ns()}/edge is Ready: applied revision sha256:`);
    const now = await getSync(mgmt, ns(), 'edge', REMOTESYNCS);
    expect(now.status?.lastHandledReconcileAt).toBe(requestIn(res.stdout));
  });

  test('a ProxySync: it ends once its remote Sync in edge-1 has handled the request too', async () => {
    const before = (await edgeSync('proxy'))?.metadata.annotations?.[REQUEST];
    const res = await cli('reconcile', 'psy/proxy');
    expect(res.stderr).toBe('');
    expect(res.code).toBe(0);
    expect(res.stdout).toContain(`✔ ProxySync ${ns()}/proxy is Ready: applied revision sha256:`);
    const proxy = await getSync(mgmt, ns(), 'proxy', PROXYSYNCS);
    expect(proxy.status?.lastHandledReconcileAt).toBe(requestIn(res.stdout));
    // The request reaches the remote Sync as a mark of its own, which it has echoed by now.
    const remote = (await edgeSync('proxy'))!;
    const mark = remote.metadata.annotations?.[REQUEST];
    expect(mark).toMatch(/^syncprims:[0-9a-f]{16}$/);
    expect(mark).not.toBe(before);
    expect(remote.status?.lastHandledReconcileAt).toBe(mark);
  });

  test('--wait=false returns once the request is made; waiting ends at --timeout with exit 1 and what it was doing', async () => {
    // `waiting` never settles (it depends on `broken`): only a command that does not wait can exit 0.
    const quick = await cli('reconcile', 'sync/waiting', '--wait=false');
    expect({ code: quick.code, stderr: quick.stderr }).toEqual({ code: 0, stderr: '' });
    expect(quick.stdout.trimEnd().split('\n')).toHaveLength(1);
    expect((await getSync(mgmt, ns(), 'waiting')).metadata.annotations?.[REQUEST]).toBe(requestIn(quick.stdout));

    const slow = await cli('reconcile', 'sync/waiting', '--timeout', '1s');
    expect(slow.code).toBe(1);
    expect(slow.stdout).toContain('◎ dependencies pending: Sync/broken (NotReady)\n');
    expect(slow.stderr).toBe(
      `syncprims: timed out after 1s waiting for Sync ${ns()}/waiting (last seen: dependencies pending: Sync/broken (NotReady)); ` +
        `the request stands (follow it: syncprims get sync/waiting -n ${ns()} --watch)\n`,
    );
  });
});

describe('suspend and resume', () => {
  test('a Sync: suspended as the operator shows it, said once; resumed until Ready', async () => {
    const suspended = await cli('suspend', 'sync/good');
    expect({ code: suspended.code, stderr: suspended.stderr }).toEqual({ code: 0, stderr: '' });
    expect(suspended.stdout.trimEnd().split('\n').at(-1)).toBe(`✔ Sync ${ns()}/good is suspended (Ready stays True)`);
    const now = await getSync(mgmt, ns(), 'good');
    expect(now.spec.suspend).toBe(true);
    expect(readyOf(now)).toMatchObject({ status: 'True', reason: 'Suspended' });
    expect(now.status?.observedGeneration).toBe(now.metadata.generation);

    const [again, refused] = await Promise.all([cli('suspend', 'sync/good'), cli('reconcile', 'sync/good')]);
    expect(again).toEqual({ code: 0, stdout: `✔ Sync ${ns()}/good is already suspended\n`, stderr: '' });
    expect(refused).toEqual({
      code: 1,
      stdout: '',
      stderr: `syncprims: Sync ${ns()}/good is suspended: resume it to reconcile it (syncprims resume sync/good -n ${ns()})\n`,
    });

    const resumed = await cli('resume', 'sync/good');
    expect({ code: resumed.code, stderr: resumed.stderr }).toEqual({ code: 0, stderr: '' });
    expect(resumed.stdout).toMatch(new RegExp(`^► resuming Sync ${ns()}/good \\(spec.suspend: false\\)\n`));
    expect(resumed.stdout).toMatch(new RegExp(`✔ Sync ${ns()}/good is Ready: applied revision sha256:[0-9a-f]{12}\n$`));
    const after = await getSync(mgmt, ns(), 'good');
    expect(after.spec.suspend).toBe(false);
    expect(readyOf(after)).toMatchObject({ status: 'True', reason: 'Succeeded' });
  });

  test('a ProxySync: while suspended its remote Sync is not maintained (a hand edit stays); resumed, it is again', async () => {
    const suspended = await cli('suspend', 'psy/proxy');
    expect(suspended.stderr).toBe('');
    expect(suspended.code).toBe(0);
    expect(suspended.stdout.trimEnd().split('\n').at(-1)).toBe(
      `✔ ProxySync ${ns()}/proxy is suspended (Ready stays True); its remote Sync ${ns()}/proxy in cluster ${EDGE} is no longer maintained (it runs on its own)`,
    );

    const edited = await edge.request<SyncObject>({
      method: 'PATCH',
      path: syncPath(ns(), 'proxy'),
      contentType: 'application/merge-patch+json',
      body: { spec: { source: { inline: [configMap('hand-edit')] } } },
    });
    // The ProxySync has seen the remote Sync since the edit (it mirrors what edge-1's operator made of it) and left it alone.
    await eventually('the suspended ProxySync to mirror the edited remote Sync', async () => {
      const p = await getSync(mgmt, ns(), 'proxy', PROXYSYNCS);
      const remote = (p.status as { remote?: { observedGeneration?: number } } | undefined)?.remote;
      return remote?.observedGeneration === edited.metadata.generation ? p : undefined;
    });
    expect(inlineNames(await edgeSync('proxy'))).toEqual(['hand-edit']);
    expect(readyOf(await getSync(mgmt, ns(), 'proxy', PROXYSYNCS))?.reason).toBe('Suspended');

    const resumed = await cli('resume', 'proxysync/proxy');
    expect(resumed.stderr).toBe('');
    expect(resumed.code).toBe(0);
    expect(resumed.stdout).toContain(`✔ ProxySync ${ns()}/proxy is Ready: applied revision sha256:`);
    expect(inlineNames(await edgeSync('proxy'))).toEqual(['proxy-cm']);
  });
});

describe('exit codes and usage', () => {
  test('0: nothing to resume; 1: a sync that does not exist', async () => {
    const [resume, reconcile, suspend] = await Promise.all([cli('resume', 'sync/good'), cli('reconcile', 'sync/nope'), cli('suspend', 'rsy/nope')]);
    expect(resume).toEqual({ code: 0, stdout: `✔ Sync ${ns()}/good is not suspended\n`, stderr: '' });
    expect(reconcile).toEqual({ code: 1, stdout: '', stderr: `syncprims: Sync ${ns()}/nope not found (list them: syncprims get sync -n ${ns()})\n` });
    expect(suspend).toEqual({ code: 1, stdout: '', stderr: `syncprims: RemoteSync ${ns()}/nope not found (list them: syncprims get remotesync -n ${ns()})\n` });
  });

  test('2: bad usage, before any request', async () => {
    const [bare, kindOnly, timeout, wait, none] = await Promise.all([
      cli('reconcile', 'good'),
      cli('suspend', 'sync'),
      cli('resume', 'sync/good', '--timeout', 'soon'),
      cli('reconcile', 'sync/good', '--wait=maybe'),
      runCli(['reconcile']),
    ]);
    expect(bare).toMatchObject({ code: 2, stdout: '', stderr: expect.stringContaining('name a sync as kind/name, e.g. sync/good') });
    expect(kindOnly).toMatchObject({ code: 2, stderr: expect.stringContaining('name the sync as kind/name, e.g. sync/my-app') });
    expect(timeout).toMatchObject({ code: 2, stderr: expect.stringContaining('--timeout "soon": must be a duration such as 30s, 5m or 1h30m') });
    expect(wait).toMatchObject({ code: 2, stderr: expect.stringContaining('want true or false, e.g. --wait=false') });
    expect(none).toMatchObject({ code: 2, stderr: expect.stringContaining("missing required argument 'kind/name'") });
  });

  test('each command has an example in its --help', async () => {
    const commands = ['reconcile', 'suspend', 'resume'];
    const helps = await Promise.all(commands.map((cmd) => runCli([cmd, '--help'])));
    for (const [i, cmd] of commands.entries()) {
      expect(helps[i]).toMatchObject({ code: 0, stdout: expect.stringContaining(`Examples:\n  $ syncprims ${cmd} `) });
      expect(helps[i]!.stdout).toContain('--wait=false');
    }
  });
});
