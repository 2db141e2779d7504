// `syncprims events` as a user runs it (a real process, stdout a pipe): the
// Events of a Sync, a RemoteSync and a ProxySync and of what they applied
// (in edge-1 for the last two), in time order.
import { beforeAll, describe, expect, test } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { parse } from 'yaml';
import type { KubeClient } from '../../src/kube/client.js';
import type { KubeObject } from '../../src/kube/resources.js';
import { assertCliBuilt, closedPort, runCli, tableCells } from '../support/cli.js';
import { kubeconfigPath, kubeconfigViaPort } from '../support/controlplane.js';
import { eventually } from '../support/eventually.js';
import { useTestNamespace } from '../support/namespace.js';
import { useOperatedNamespace } from '../support/operated-namespace.js';
import { useRemoteNamespace } from '../support/remote-namespace.js';
import { applyProxySync, applyRemoteSync, kubeconfigOf, PROXYSYNCS, putKubeconfigSecret } from '../support/remote.js';
import { applySync, getSync, waitForReady } from '../support/syncs.js';

const HOME = 'mgmt';
const EDGE = 'edge-1';
const KUBECONFIG = kubeconfigPath(HOME);
let mgmt: KubeClient;
let edge: KubeClient;
const ns = useOperatedNamespace(HOME, 'cli-events', (o) => ({ client: mgmt } = o));
// No operator runs in edge-1; the RemoteSync applies the namespace there.
useRemoteNamespace(EDGE, ns, { create: false, ready: (c) => (edge = c) });

const ESC = '\x1b';
/** A namespace no operator watches: the status of a Sync there is what the test writes. */
const quiet = useTestNamespace(HOME, 'cli-hostile');
/** Text from a cluster that would retitle the terminal and clear its screen, with C1 and DEL besides. */
const HOSTILE = 'before\x1b]0;pwned\x07\x1b[2J\x9b2J\x7f\rafter';
// eslint-disable-next-line no-control-regex
const CONTROL = /[\x00-\x08\x0b-\x1f\x7f-\x9f]/;
const HEADER = ['LAST SEEN', 'TYPE', 'REASON', 'OBJECT', 'MESSAGE'];
const events = (...args: string[]) => runCli(['events', '--kubeconfig', KUBECONFIG, '-n', ns(), ...args]);
const configMap = (name: string) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: ns() }, data: { a: '1' } });
const shift = (iso: string, seconds: number) => new Date(Date.parse(iso) + seconds * 1000).toISOString().replace(/\.\d+Z$/, 'Z');

interface EventObject extends KubeObject {
  reason: string;
  type: string;
  lastTimestamp: string;
  involvedObject: { kind: string; name: string };
}

/** Records an Event on `obj` as a controller would (core/v1), seen `count` times up to `last`. */
async function recordEvent(client: KubeClient, obj: KubeObject, e: { type: string; reason: string; message: string; last: string; count?: number }): Promise<void> {
  const first = shift(e.last, -(e.count ?? 1) * 60);
  await client.request({
    method: 'POST',
    path: `/api/v1/namespaces/${obj.metadata.namespace}/events`,
    body: {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name: `${obj.metadata.name}.${randomBytes(4).toString('hex')}` },
      involvedObject: { apiVersion: obj.apiVersion, kind: obj.kind, name: obj.metadata.name, namespace: obj.metadata.namespace, uid: obj.metadata.uid },
      type: e.type,
      reason: e.reason,
      message: e.message,
      source: { component: 'cli-events-test' },
      firstTimestamp: first,
      lastTimestamp: e.last,
      count: e.count ?? 1,
    },
  });
}

const get = <T = KubeObject>(client: KubeClient, path: string) => client.request<T>({ path });
const cmPath = (name: string) => `/api/v1/namespaces/${ns()}/configmaps/${name}`;

/** The operator's `Applied` Event on a sync, once recorded. */
function appliedEvent(kind: string, name: string): Promise<EventObject> {
  return eventually(`the Applied Event of ${kind} ${name}`, async () => {
    const list = await mgmt.request<{ items: EventObject[] }>({ path: `/api/v1/namespaces/${ns()}/events`, query: { fieldSelector: `involvedObject.kind=${kind},involvedObject.name=${name},reason=Applied` } });
    return list.items[0];
  });
}

let applied: EventObject;

beforeAll(async () => {
  assertCliBuilt();
  await putKubeconfigSecret(mgmt, ns(), 'edge-1-kubeconfig', await kubeconfigOf(EDGE));
  await putKubeconfigSecret(mgmt, ns(), 'edge-rs', await kubeconfigOf(EDGE));
  await applySync(mgmt, ns(), 'app', { source: { inline: [configMap('app-cm')] } });
  await applyRemoteSync(mgmt, ns(), 'edge', {
    kubeConfig: { secretRef: { name: 'edge-rs' } },
    source: { inline: [{ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns() } }, configMap('edge-cm')] },
  });
  await applyProxySync(mgmt, ns(), 'proxy', { clusterRef: { name: 'edge-1' }, template: { spec: { source: { inline: [] } } } });
  await waitForReady(mgmt, ns(), 'app', 'True', 'Succeeded');
  await waitForReady(mgmt, ns(), 'edge', 'True', 'Succeeded', 60_000, 'remotesyncs');
  // No operator runs in edge-1: the remote Sync is kept there, and the ProxySync waits for it to report.
  await eventually('the ProxySync to record its remote Sync', async () => {
    const p = await getSync(mgmt, ns(), 'proxy', PROXYSYNCS);
    return (p.status?.inventory?.entries.length ?? 0) === 1 ? p : undefined;
  });
  applied = await appliedEvent('Sync', 'app');
  // Around the operator's Event: older and newer ones on the ConfigMap it applied, and one of ours on the Sync.
  const [sync, cm] = await Promise.all([getSync(mgmt, ns(), 'app'), get(mgmt, cmPath('app-cm'))]);
  await recordEvent(mgmt, { ...cm, apiVersion: 'v1', kind: 'ConfigMap' }, { type: 'Warning', reason: 'Oldest', message: 'first of all', last: shift(applied.lastTimestamp, -90), count: 3 });
  await recordEvent(mgmt, sync, { type: 'Normal', reason: 'Second', message: 'on the sync', last: shift(applied.lastTimestamp, -60) });
  await recordEvent(mgmt, { ...cm, apiVersion: 'v1', kind: 'ConfigMap' }, { type: 'Normal', reason: 'Third', message: 'line one\nline two', last: shift(applied.lastTimestamp, -30) });
}, 120_000);

describe('text from the cluster', () => {
  test('an Event message and a condition message with escape sequences and control characters: printed without them', async () => {
    const sync = await applySync(mgmt, quiet(), 'hostile', { suspend: true, source: { inline: [] } });
    const condition = { type: 'Ready', status: 'False', reason: 'Failed', message: `status ${HOSTILE}`, lastTransitionTime: new Date().toISOString().replace(/\.\d+Z$/, 'Z') };
    await mgmt.request({
      method: 'PATCH',
      path: `/apis/syncprims.dev/v1alpha1/namespaces/${quiet()}/syncs/hostile/status`,
      contentType: 'application/merge-patch+json',
      body: { status: { observedGeneration: sync.metadata.generation, conditions: [condition] } },
    });
    await recordEvent(mgmt, sync, { type: 'Warning', reason: 'Hostile', message: `event ${HOSTILE}`, last: new Date().toISOString().replace(/\.\d+Z$/, 'Z') });
    const printed = [
      await runCli(['events', 'sync/hostile', '--kubeconfig', KUBECONFIG, '-n', quiet()]),
      await runCli(['tree', 'sync/hostile', '--kubeconfig', KUBECONFIG, '-n', quiet()]),
      await runCli(['get', 'sync/hostile', '--kubeconfig', KUBECONFIG, '-n', quiet()]),
      await runCli(['get', 'syncs', '--kubeconfig', KUBECONFIG, '-n', quiet(), '-o', 'yaml']),
      await runCli(['get', 'syncs', '--kubeconfig', KUBECONFIG, '-n', quiet(), '-o', 'json']),
    ];
    for (const { code, stdout, stderr } of printed) {
      expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
      expect({ stdout, control: CONTROL.test(stdout) }).toEqual({ stdout, control: false });
    }
    const [events, tree, table, yaml, json] = printed.map((p) => p.stdout);
    expect(events).toContain('event beforeafter');
    expect(tree).toContain('status beforeafter');
    expect(table).toContain('hostile');
    // Structured output keeps the value, escaped.
    expect(JSON.parse(json!).items[0].status.conditions[0].message).toBe(`status ${HOSTILE}`);
    expect(yaml).toContain('\\e]0;pwned\\a\\e[2J');
  });
});

describe('a Sync', () => {
  test('its Events and those of what it applied, oldest first, in a table (no escape codes when piped)', async () => {
    const { code, stdout, stderr } = await events('sync/app');
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    expect(stdout).not.toContain(ESC);
    const [header, ...rows] = tableCells(stdout);
    expect(header).toEqual(HEADER);
    const ours = rows.filter((r) => ['Oldest', 'Second', 'Third', 'Applied'].includes(r[2]!));
    expect(ours.map((r) => r.slice(1))).toEqual([
      ['Warning', 'Oldest', 'ConfigMap/app-cm', 'first of all'],
      ['Normal', 'Second', 'Sync/app', 'on the sync'],
      ['Normal', 'Third', 'ConfigMap/app-cm', 'line one line two'],
      ['Normal', 'Applied', 'Sync/app', applied.message],
    ]);
    expect(ours[0]![0]).toMatch(/^\d+[sm]\d*s? \(x3 over \d+m\d*s?\)$/);
    // Nothing but the Sync and what it applied.
    expect(rows.every((r) => /^(Sync\/app|ConfigMap\/app-cm)$/.test(r[3]!))).toBe(true);
  });

  test('-o json and -o yaml: a List of the Events in the same order; --sync-only leaves out the objects', async () => {
    const [json, yaml, only] = await Promise.all([events('sy/app', '-o', 'json'), events('sy/app', '-o', 'yaml'), events('sy/app', '--sync-only', '-o', 'json')]);
    expect(json.code).toBe(0);
    const list = JSON.parse(json.stdout) as { apiVersion: string; kind: string; items: EventObject[] };
    expect(list).toMatchObject({ apiVersion: 'v1', kind: 'List' });
    expect(list.items.every((e) => e.kind === 'Event' && e.apiVersion === 'v1')).toBe(true);
    const reasons = list.items.map((e) => e.reason).filter((r) => ['Oldest', 'Second', 'Third', 'Applied'].includes(r));
    expect(reasons).toEqual(['Oldest', 'Second', 'Third', 'Applied']);
    const times = list.items.map((e) => Date.parse(e.lastTimestamp));
    expect(times).toEqual([...times].sort((a, b) => a - b));
    expect(parse(yaml.stdout, { version: '1.1' })).toEqual(list);
    const own = (JSON.parse(only.stdout) as { items: EventObject[] }).items;
    expect(own.map((e) => e.involvedObject.kind)).toEqual(own.map(() => 'Sync'));
    expect(own.map((e) => e.reason)).toEqual(expect.arrayContaining(['Second', 'Applied']));
  });
});

describe('across clusters', () => {
  test("a RemoteSync's own Events and those of what it applied in edge-1; a ProxySync's and its remote Sync's", async () => {
    const [edgeCm, remoteSync, rsApplied] = await Promise.all([get(edge, cmPath('edge-cm')), get(edge, `/apis/syncprims.dev/v1alpha1/namespaces/${ns()}/syncs/proxy`), appliedEvent('RemoteSync', 'edge')]);
    // Events carry whole seconds: ours must be seen a second after the Applied one, or the two tie
    // and the order falls to when each was first seen (ours a minute earlier).
    const after = Date.parse(rsApplied.lastTimestamp) + 1000;
    if (Date.now() < after) await new Promise((resolve) => setTimeout(resolve, after - Date.now()));
    const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
    await recordEvent(edge, { ...edgeCm, apiVersion: 'v1', kind: 'ConfigMap' }, { type: 'Warning', reason: 'EdgeTrouble', message: 'seen in edge-1', last: now });
    await recordEvent(edge, { ...remoteSync, apiVersion: 'syncprims.dev/v1alpha1', kind: 'Sync' }, { type: 'Normal', reason: 'RemoteSaid', message: 'from the remote Sync', last: now });
    // The ProxySync's own: the operator's Event when its Ready condition first changed.
    await eventually('an Event on the ProxySync', async () => {
      const list = await mgmt.request<{ items: unknown[] }>({ path: `/api/v1/namespaces/${ns()}/events`, query: { fieldSelector: 'involvedObject.kind=ProxySync,involvedObject.name=proxy' } });
      return list.items.length > 0 ? true : undefined;
    });
    const [rs, ps] = await Promise.all([events('rsy/edge'), events('psy/proxy')]);
    expect(rs).toMatchObject({ code: 0, stderr: '' });
    const rsRows = tableCells(rs.stdout).slice(1).map((r) => r.slice(1));
    expect(rsRows).toContainEqual(['Normal', 'Applied', 'RemoteSync/edge', rsApplied.message]);
    expect(rsRows).toContainEqual(['Warning', 'EdgeTrouble', '[edge-rs] ConfigMap/edge-cm', 'seen in edge-1']);
    expect(rsRows.findIndex((r) => r[1] === 'Applied')).toBeLessThan(rsRows.findIndex((r) => r[1] === 'EdgeTrouble'));
    expect(ps).toMatchObject({ code: 0, stderr: '' });
    const psRows = tableCells(ps.stdout).slice(1).map((r) => r.slice(1));
    expect(psRows).toContainEqual(['Normal', 'RemoteSaid', '[edge-1] Sync/proxy', 'from the remote Sync']);
    expect(psRows.some((r) => r[2] === 'ProxySync/proxy')).toBe(true);
  });

  test('a remote cluster that cannot be reached is one line on stderr, not a failure', async () => {
    const port = await closedPort();
    await putKubeconfigSecret(mgmt, ns(), 'edge-rs', kubeconfigViaPort(EDGE, port).exportConfig());
    const res = await events('rsy/edge');
    expect(res.code).toBe(0);
    expect(res.stderr).toMatch(new RegExp(`^syncprims events: RemoteSync ${ns()}/edge: the Events in its cluster \\(edge-rs\\) are not shown: unreachable: https://127\\.0\\.0\\.1:${port}: .*ECONNREFUSED.*\n$`));
    expect(tableCells(res.stdout).slice(1).map((r) => r[3])).toContain('RemoteSync/edge');
  });
});

describe('exit codes', () => {
  test('1: a sync that does not exist; 2: bad usage; --help has examples', async () => {
    const [missing, noName, badOutput, help] = await Promise.all([events('rsy/nope'), events('sync'), events('sync/app', '-o', 'wide'), runCli(['events', '--help'])]);
    expect(help).toMatchObject({ code: 0, stdout: expect.stringContaining('Examples:\n  $ syncprims events sync/app') });
    expect(missing).toEqual({ code: 1, stdout: '', stderr: `syncprims: RemoteSync ${ns()}/nope not found (list them: syncprims get remotesync -n ${ns()})\n` });
    expect(noName).toMatchObject({ code: 2, stderr: expect.stringContaining('name the sync as kind/name, e.g. sync/my-app') });
    expect(badOutput).toMatchObject({ code: 2, stderr: expect.stringContaining("argument 'wide' is invalid") });
  });
});
