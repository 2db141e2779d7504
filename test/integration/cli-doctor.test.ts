// `syncprims doctor` as a user runs it (a real process, stdout a pipe). First
// a healthy namespace (exit 0); then, in the same namespace, what it is for:
// a RemoteSync deleted while its cluster cannot be reached (its finalizer
// stuck), a dependency cycle, a dependency that does not exist, a CRD missing
// in a remote cluster, a ProxySync whose cluster runs no operator for it, and
// finally the operator itself killed (its liveness Lease left to lapse).
import { beforeAll, describe, expect, test } from '@jest/globals';
import { parse } from 'yaml';
import type { Finding } from '../../src/cli/doctor/doctor-findings.js';
import type { KubeClient } from '../../src/kube/client.js';
import type { Lease } from '../../src/runtime/lease-lock.js';
import { assertCliBuilt, closedPort, runCli, tableCells } from '../support/cli.js';
import { kubeconfigPath, kubeconfigViaPort } from '../support/controlplane.js';
import { installCrds } from '../support/crds.js';
import { eventually } from '../support/eventually.js';
import { useOperatedNamespace } from '../support/operated-namespace.js';
import type { OperatorProcess } from '../support/operator.js';
import { useRemoteNamespace } from '../support/remote-namespace.js';
import { applyProxySync, applyRemoteSync, getRemoteSync, kubeconfigOf, PROXYSYNCS, putKubeconfigSecret, REMOTESYNCS } from '../support/remote.js';
import { applySync, getSync, readyOf, syncPath, waitForReady } from '../support/syncs.js';

const CLUSTER = 'mgmt';
const KUBECONFIG = kubeconfigPath(CLUSTER);
let client: KubeClient;
let op: OperatorProcess;
// A short liveness Lease: a killed operator shows as gone within 3 s.
const ns = useOperatedNamespace(CLUSTER, 'cli-doctor', (o) => ({ client, op } = o), ['--liveness-lease-duration', '3s']);
// The ProxySync's namespace in edge-2, made by the ProxySync (no operator runs there for it: nothing holds its Sync).
useRemoteNamespace('edge-2', ns, { create: false });

const doctor = (...args: string[]) => runCli(['doctor', '--kubeconfig', KUBECONFIG, '-n', ns(), ...args]);
const findingsOf = async (...args: string[]): Promise<{ code: number; findings: Finding[] }> => {
  const { code, stdout } = await doctor('-o', 'json', ...args);
  return { code, findings: (JSON.parse(stdout) as { findings: Finding[] }).findings };
};

beforeAll(async () => {
  assertCliBuilt();
  // The ProxySync's Sync needs the CRDs in edge-2 (a fresh edge-2 has none: no other file need run first).
  await installCrds('edge-2');
  await Promise.all([
    putKubeconfigSecret(client, ns(), 'edge-1-kubeconfig', await kubeconfigOf('edge-1')),
    putKubeconfigSecret(client, ns(), 'edge-2-kubeconfig', await kubeconfigOf('edge-2')),
    // A cluster whose API server is gone: nothing listens on its port.
    putKubeconfigSecret(client, ns(), 'dead', kubeconfigViaPort('edge-1', await closedPort()).exportConfig()),
  ]);
});

describe('syncprims doctor', () => {
  test('a healthy namespace: no problems found, exit 0; the operator holds its liveness Lease', async () => {
    await applySync(client, ns(), 'good', { source: { inline: [] } });
    await applyRemoteSync(client, ns(), 'edge', { kubeConfig: { secretRef: { name: 'edge-1-kubeconfig' } }, source: { inline: [] } });
    await Promise.all([waitForReady(client, ns(), 'good', 'True', 'Succeeded'), waitForReady(client, ns(), 'edge', 'True', 'Succeeded', undefined, REMOTESYNCS)]);
    const lease = await client.request<Lease>({ path: `/apis/coordination.k8s.io/v1/namespaces/${ns()}/leases/syncprims-operator` });
    expect(lease.metadata.labels).toEqual({ 'syncprims.dev/operator-lease': 'true', 'syncprims.dev/watch-namespace': ns() });
    expect(lease.spec).toMatchObject({ holderIdentity: expect.stringMatching(/.+/), leaseDurationSeconds: 3 });

    const [table, json, yaml] = await Promise.all([doctor(), doctor('-o', 'json'), doctor('-o', 'yaml')]);
    expect(table).toEqual({ code: 0, stdout: `No problems found (2 syncs in namespace ${ns()}).\n`, stderr: '' });
    expect(json).toEqual({ code: 0, stdout: '{\n  "findings": []\n}\n', stderr: '' });
    expect(yaml).toEqual({ code: 0, stdout: 'findings: []\n', stderr: '' });
  });

  test('a finalizer stuck on an unreachable cluster, a cycle and a stopped operator: each reported, with what to do, exit 1', async () => {
    // The stuck finalizer: a RemoteSync whose cluster is gone, deleted.
    const configMap = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: ns(), namespace: 'default' }, data: { a: '1' } };
    await applyRemoteSync(client, ns(), 'gone', { kubeConfig: { secretRef: { name: 'dead' } }, source: { inline: [configMap] } });
    await waitForReady(client, ns(), 'gone', 'False', 'ClusterUnreachable', undefined, REMOTESYNCS);
    await client.request({ method: 'DELETE', path: syncPath(ns(), 'gone', REMOTESYNCS) });
    // The cycle, and a dependency on nothing.
    await applySync(client, ns(), 'cyc-b', { source: { inline: [] }, dependsOn: [{ name: 'cyc-a' }] });
    await applySync(client, ns(), 'cyc-a', { source: { inline: [] }, dependsOn: [{ name: 'cyc-b' }] });
    await applySync(client, ns(), 'lonely', { source: { inline: [] }, dependsOn: [{ name: 'nope' }] });
    // A kind edge-1 does not serve; and a ProxySync into edge-2, where no operator watches its namespace.
    const widget = { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: ns(), namespace: 'default' } };
    await applyRemoteSync(client, ns(), 'widgets', { kubeConfig: { secretRef: { name: 'edge-1-kubeconfig' } }, source: { inline: [widget] } });
    await applyProxySync(client, ns(), 'proxy', { clusterRef: { name: 'edge-2' }, template: { spec: { source: { inline: [] } } } });
    await Promise.all([
      waitForReady(client, ns(), 'cyc-a', 'False', 'DependencyCycle'),
      waitForReady(client, ns(), 'widgets', 'False', 'CRDNotInstalled', undefined, REMOTESYNCS),
      eventually('the ProxySync to keep its Sync in edge-2', async () => ((await getSync(client, ns(), 'proxy', PROXYSYNCS)).status as { remote?: unknown } | undefined)?.remote),
    ]);
    const held = await getRemoteSync(client, ns(), 'gone');
    expect(held.metadata.deletionTimestamp).toBeDefined();
    expect(readyOf(held)?.reason).toBe('ClusterUnreachable');

    // With the operator running: everything but the operator.
    const running = await eventually('the deletion to be older than --stuck-after 1s', async () => {
      const r = await findingsOf('--stuck-after', '1s');
      return r.findings.some((f) => f.problem === 'StuckFinalizer') ? r : undefined;
    });
    expect(running.code).toBe(1);
    expect(running.findings.map((f) => `${f.problem} ${f.object}`)).toEqual([
      'OperatorNotRunning ProxySync/proxy',
      'StuckFinalizer RemoteSync/gone',
      'ClusterUnreachable Secret/dead',
      'CRDNotInstalled RemoteSync/widgets',
      'DependencyCycle Sync/cyc-a',
      'MissingDependency Sync/lonely',
    ]);
    const by = (findings: Finding[], problem: string, object: string): Finding => findings.find((f) => f.problem === problem && f.object === object)!;
    expect(by(running.findings, 'OperatorNotRunning', 'ProxySync/proxy').message).toMatch(
      new RegExp(`^no operator in its cluster \\(https://127\\.0\\.0\\.1:\\d+\\) watches namespace ${ns()}, so its Sync ${ns()}/proxy there is never reconciled: `),
    );
    const stuck = by(running.findings, 'StuckFinalizer', 'RemoteSync/gone');
    expect(stuck.message).toMatch(new RegExp(`^deleted \\d+s ago, still held by its finalizer syncprims.dev/finalizer: ClusterUnreachable: .*${ns()}/dead`));
    expect(stuck.since).toBe(held.metadata.deletionTimestamp);
    expect(stuck.action).toContain(`kubectl patch remotesyncs/gone -n ${ns()} --type=merge -p '{"metadata":{"finalizers":null}}'`);
    const unreachable = by(running.findings, 'ClusterUnreachable', 'Secret/dead');
    expect(unreachable.since).toBe(readyOf(held)?.lastTransitionTime);
    expect(unreachable.message).toContain(`; used by RemoteSync/gone`);
    expect(by(running.findings, 'CRDNotInstalled', 'RemoteSync/widgets').message).toContain('Widget');
    expect(by(running.findings, 'DependencyCycle', 'Sync/cyc-a').message).toBe('dependency cycle: Sync/cyc-a -> Sync/cyc-b -> Sync/cyc-a');
    expect(by(running.findings, 'MissingDependency', 'Sync/lonely')).toMatchObject({ message: 'depends on Sync/nope, which does not exist', action: 'create Sync/nope, or remove it from the dependsOn of Sync/lonely' });
    // Under the default --stuck-after (5m) the deletion is too recent to be stuck.
    const [byDefault, killed] = await Promise.all([findingsOf(), op.stop('SIGKILL')]);
    expect(byDefault.findings.map((f) => f.problem)).not.toContain('StuckFinalizer');

    // The operator killed: no clean stop, so its Lease lapses (3 s after its last renewal).
    expect(killed).toBeNull();
    const stopped = await eventually('the killed operator\'s Lease to lapse', async () => {
      const r = await findingsOf('--stuck-after', '1s');
      return r.findings.some((f) => f.problem === 'OperatorNotRunning' && f.object === '-') ? r : undefined;
    });
    expect(stopped.code).toBe(1);
    const notRunning = by(stopped.findings, 'OperatorNotRunning', '-');
    // Other operators may run in this cluster (for other namespaces): either way, it says what became of this one's.
    expect(notRunning.message).toMatch(
      new RegExp(`^no (operator is running|running operator watches namespace ${ns()}): the last, Lease ${ns()}/syncprims-operator of .+, was renewed last at .+ \\(\\d+s ago\\) and has lapsed`),
    );
    expect(notRunning.action).toMatch(/^start the operator/);
    // Now the finalizer waits for an operator first.
    expect(by(stopped.findings, 'StuckFinalizer', 'RemoteSync/gone').action).toBe('start the operator: only it removes the finalizer (after cleaning up)');

    // The same findings as a table (one per line, no escape codes when piped) and as YAML.
    const [table, yaml, all] = await Promise.all([
      doctor('--stuck-after', '1s'),
      doctor('--stuck-after', '1s', '-o', 'yaml'),
      runCli(['doctor', '-A', '--kubeconfig', KUBECONFIG, '--stuck-after', '1s']),
    ]);
    expect(table.code).toBe(1);
    expect(table.stderr).toBe(`syncprims: ${stopped.findings.length} problems found\n`);
    expect(table.stdout).not.toContain('\x1b');
    const [header, ...rows] = tableCells(table.stdout);
    expect(header).toEqual(['PROBLEM', 'OBJECT', 'FINDING', 'WHAT TO DO']);
    expect(rows.map((r) => [r[0], r[1]])).toEqual(stopped.findings.map((f) => [f.problem, f.object]));
    expect(rows.find((r) => r[0] === 'DependencyCycle')).toEqual(['DependencyCycle', 'Sync/cyc-a', 'dependency cycle: Sync/cyc-a -> Sync/cyc-b -> Sync/cyc-a', 'remove one of these dependsOn entries: no sync of a cycle ever becomes Ready']);
    expect(yaml.code).toBe(1);
    const fromYaml = (parse(yaml.stdout) as { findings: Finding[] }).findings;
    expect(fromYaml.map((f) => [f.problem, f.object])).toEqual(stopped.findings.map((f) => [f.problem, f.object]));

    // -A: a NAMESPACE column, this namespace's rows among them.
    expect(all.code).toBe(1);
    const [allHeader, ...allRows] = tableCells(all.stdout);
    expect(allHeader).toEqual(['PROBLEM', 'NAMESPACE', 'OBJECT', 'FINDING', 'WHAT TO DO']);
    expect(allRows.filter((r) => r[1] === ns()).map((r) => `${r[0]} ${r[2]}`)).toEqual(expect.arrayContaining(['OperatorNotRunning -', 'StuckFinalizer RemoteSync/gone', 'DependencyCycle Sync/cyc-a']));
  });

  test('bad usage: exit 2, one line', async () => {
    const bad = await doctor('--stuck-after', 'soon');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/^syncprims: --stuck-after soon: .*duration such as 30s, 5m or 1h30m.*\n$/);
    const help = await runCli(['doctor', '--help']);
    expect(help.stdout).toContain('$ syncprims doctor -n apps');
    expect(help.stdout).toContain('No problems found');
  });
});
