// Lane: own clusters (test/support/lanes-runner.js: it runs beside the shared-cluster files).
// Drift corrected at once, caused by the watch event of the owned object (no
// reconcile request, no interval), with the field managers and the fields named;
// a fighter backed off rather than fought in a hot loop; and a resync of
// unchanged objects that sends no request for them (decided from the cache).
import { describe, expect, test } from '@jest/globals';
import type { KubeClient } from '../../src/kube/client.js';
import type { KubeObject } from '../../src/kube/resources.js';
import { OWN_LANE_CLUSTER } from '../support/controlplane.js';
import { eventually } from '../support/eventually.js';
import { useOperatedNamespace } from '../support/operated-namespace.js';
import { type LogLine, type OperatorProcess } from '../support/operator.js';
import { applySync, deleteSyncAndWait, eventsFor, find, getSync, readyOf, waitForReady } from '../support/syncs.js';

const CLUSTER = OWN_LANE_CLUSTER;
let client: KubeClient;
let op: OperatorProcess;
const ns = useOperatedNamespace(CLUSTER, 'drift', (o) => ({ client, op } = o), ['--log-level', 'trace']);

const cm = (name: string, data: Record<string, string>): KubeObject => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: ns() }, data });
const cmPath = (name: string): string => `/api/v1/namespaces/${ns()}/configmaps/${name}`;

/** Sets `data` of a ConfigMap as `kubectl patch` does (an Update under its own field manager). */
function patchAs(manager: string, name: string, data: Record<string, string>): Promise<KubeObject> {
  return client.request<KubeObject>({ method: 'PATCH', path: cmPath(name), query: { fieldManager: manager }, contentType: 'application/merge-patch+json', body: { data } });
}

const at = (l: LogLine): number => Date.parse(String(l.time ?? '')) || Number(l.time ?? 0);

/** The operator's requests to one path since `since` (trace `request` lines), split into dry runs and the rest. */
function requestsTo(path: string, since: number): { dryRuns: LogLine[]; writes: LogLine[]; all: LogLine[] } {
  const all = op.logs.filter((l) => l.msg === 'request' && l.path === path && at(l) >= since);
  const dry = (l: LogLine) => JSON.stringify(l.query ?? '').includes('dryRun');
  return { all, dryRuns: all.filter(dry), writes: all.filter((l) => l.method !== 'GET' && !dry(l)) };
}

function reconcilesSince(name: string, since: number): LogLine[] {
  return op.logs.filter((l) => l.msg === 'reconciled' && l.kind === 'Sync' && l.namespace === ns() && l.name === name && at(l) >= since);
}

/** Waits until the Sync's reconciles stop (the echoes of its own writes handled). */
async function settled(name: string): Promise<void> {
  await op.settledReconciles('Sync', ns(), name);
}

describe('drift', () => {
  test('a hand edit (kubectl-patch) is corrected at once, caused by the watch event, and the Event names the manager and the field', async () => {
    await applySync(client, ns(), 'hand', { interval: '1h', source: { inline: [cm('hand', { a: '1', b: '2' })] } });
    await waitForReady(client, ns(), 'hand', 'True');
    await settled('hand');
    const since = Date.now();
    await patchAs('kubectl-patch', 'hand', { a: '9' });
    await eventually('the edit to be corrected', async () => ((await find<{ data: Record<string, string> }>(client, cmPath('hand')))?.data.a === '1' ? true : undefined), 30_000);
    const event = await eventually('a Drifted Event', async () => (await eventsFor(client, ns(), 'hand')).find((e) => e.reason === 'Drifted'));
    expect(event.type).toBe('Warning');
    expect(event.message).toBe(`ConfigMap/${ns()}/hand: .data.a changed by kubectl-patch; corrected`);
    const line = op.logs.find((l) => l.level === 'warn' && l.object === `${ns()}_hand__ConfigMap`);
    expect(line).toMatchObject({ fields: ['.data.a'], managers: ['kubectl-patch'] });
    await settled('hand');
    // Caused by the watch event: the reconciles since were woken by owned-object events only (no
    // reconcile request, no timer), and one of them was the drift's.
    const causes = reconcilesSince('hand', since).flatMap((l) => l.causes as string[]);
    expect(causes).toContain(`owned object drifted: ${ns()}_hand__ConfigMap`);
    expect(causes.filter((c) => !c.startsWith('owned object'))).toEqual([]);
    // One correction: one apply, no dry run first (the cache showed the drift); nothing else to the object.
    const sent = requestsTo(cmPath('hand'), since);
    expect(sent.writes).toHaveLength(1);
    expect(sent.dryRuns).toHaveLength(0);
    expect(sent.all).toHaveLength(1);
  });

  test("a hand edit of a Secret's value applied through stringData is corrected (stringData is applied as the data it is stored as)", async () => {
    const secret = { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'hand-s', namespace: ns() }, stringData: { token: 'one' } };
    await applySync(client, ns(), 'hand-s', { interval: '1h', source: { inline: [secret] } });
    await waitForReady(client, ns(), 'hand-s', 'True');
    await settled('hand-s');
    const path = `/api/v1/namespaces/${ns()}/secrets/hand-s`;
    const b64 = (v: string): string => Buffer.from(v).toString('base64');
    await client.request({ method: 'PATCH', path, query: { fieldManager: 'kubectl-patch' }, contentType: 'application/merge-patch+json', body: { data: { token: b64('two') } } });
    await eventually('the edit to be corrected', async () => ((await find<{ data: Record<string, string> }>(client, path))?.data.token === b64('one') ? true : undefined), 30_000);
    const event = await eventually('a Drifted Event', async () => (await eventsFor(client, ns(), 'hand-s')).find((e) => e.reason === 'Drifted'));
    expect(event.message).toBe(`Secret/${ns()}/hand-s: .data.token changed by kubectl-patch; corrected`);
  });

  test("a Secret an earlier version applied through stringData: the first reconcile takes the data's ownership (one write), then a hand edit of the value is corrected", async () => {
    const path = `/api/v1/namespaces/${ns()}/secrets/legacy-s`;
    const labels = { 'syncprims.dev/owner-kind': 'Sync', 'syncprims.dev/owner-namespace': ns(), 'syncprims.dev/owner-name': 'legacy-s' };
    // As an earlier version applied it: stringData under our field manager, which owns `.stringData.token` then, not `.data.token`.
    const old = { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'legacy-s', namespace: ns(), labels }, stringData: { token: 'one' } };
    await client.request({ method: 'PATCH', path, query: { fieldManager: 'syncprims', force: true }, contentType: 'application/apply-patch+yaml', body: old });
    const since = Date.now();
    const secret = { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'legacy-s', namespace: ns() }, stringData: { token: 'one' } };
    await applySync(client, ns(), 'legacy-s', { interval: '1h', source: { inline: [secret] } });
    await waitForReady(client, ns(), 'legacy-s', 'True');
    await settled('legacy-s');
    // The value is the same, but our ownership moves from stringData to data: that is sent.
    expect(requestsTo(path, since).writes).toHaveLength(1);
    type Managed = { data: Record<string, string>; metadata: { managedFields?: { manager: string; operation: string; fieldsV1?: { 'f:data'?: Record<string, unknown> } }[] } };
    const ours = (await find<Managed>(client, path))?.metadata.managedFields?.find((m) => m.manager === 'syncprims' && m.operation === 'Apply');
    expect(Object.keys(ours?.fieldsV1?.['f:data'] ?? {})).toEqual(['f:token']);

    const b64 = (v: string): string => Buffer.from(v).toString('base64');
    await client.request({ method: 'PATCH', path, query: { fieldManager: 'kubectl-patch' }, contentType: 'application/merge-patch+json', body: { data: { token: b64('two') } } });
    await eventually('the edit to be corrected', async () => ((await find<Managed>(client, path))?.data.token === b64('one') ? true : undefined), 30_000);
    const event = await eventually('a Drifted Event', async () => (await eventsFor(client, ns(), 'legacy-s')).find((e) => e.reason === 'Drifted'));
    expect(event.message).toBe(`Secret/${ns()}/legacy-s: .data.token changed by kubectl-patch; corrected`);
  });

  test('a fighter that keeps re-setting a field under its own manager is backed off, not fought in a hot loop', async () => {
    await applySync(client, ns(), 'fought', { interval: '1m', source: { inline: [cm('fought', { replicas: '1' })] } });
    await waitForReady(client, ns(), 'fought', 'True');
    await settled('fought');
    const since = Date.now();
    // 10 s of a fighter re-setting the field every 100 ms (about 100 times when we put it back each time).
    let fights = 0;
    for (const end = Date.now() + 10_000; Date.now() < end; ) {
      const got = await find<{ data: Record<string, string> }>(client, cmPath('fought'));
      if (got?.data.replicas !== '5') {
        await patchAs('hpa-like-fighter', 'fought', { replicas: '5' });
        fights += 1;
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    const sent = requestsTo(cmPath('fought'), since);
    // Corrections back off 1 s, 2 s, 4 s, 8 s...: in 10 s, 4 or 5, not one per fight.
    expect(sent.writes.length).toBeGreaterThanOrEqual(3);
    expect(sent.writes.length).toBeLessThanOrEqual(5);
    expect(fights).toBeGreaterThanOrEqual(sent.writes.length);
    // Every request the operator sent to the cluster in the window, whatever it was for: a handful per correction.
    const all = op.logs.filter((l) => l.msg === 'request' && at(l) >= since && at(l) < since + 10_000);
    expect(all.length).toBeLessThanOrEqual(6 * sent.writes.length);
    const fighting = await eventually('an Event naming the fight', async () =>
      (await eventsFor(client, ns(), 'fought')).find((e) => e.reason === 'Drifted' && e.message.includes('fighting')),
    );
    expect(fighting.message).toMatch(new RegExp(`^ConfigMap/${ns()}/fought: \\.data\\.replicas changed by hpa-like-fighter; corrected \\(\\d+ times in a row: fighting hpa-like-fighter; the next correction waits \\d+s\\)$`));

    // While a correction waits, backed off, the Ready message says the object differs and who changes it
    // (one more change by the fighter now, corrected several times in a row: its correction waits seconds).
    await patchAs('hpa-like-fighter', 'fought', { replicas: '7' });
    const note = `; 1 object differs until its correction, backed off (fighting): ConfigMap/${ns()}/fought .data.replicas changed by hpa-like-fighter`;
    const waiting = await eventually('the Ready message to say a correction waits', async () => {
      const ready = readyOf(await getSync(client, ns(), 'fought'));
      return ready?.message.endsWith(note) ? ready : undefined;
    });
    expect(waiting).toMatchObject({ status: 'True', reason: 'Succeeded' });
    // A requested reconcile applies in full, which corrects every drifted object, backed off or not:
    // the status that echoes the request no longer says one waits.
    await client.request({
      method: 'PATCH',
      path: `/apis/syncprims.dev/v1alpha1/namespaces/${ns()}/syncs/fought`,
      contentType: 'application/merge-patch+json',
      body: { metadata: { annotations: { 'syncprims.dev/reconcile-requested-at': 'mid-fight' } } },
    });
    const handled = await eventually('the reconcile request handled', async () => {
      const s = await getSync(client, ns(), 'fought');
      return s.status?.lastHandledReconcileAt === 'mid-fight' ? s : undefined;
    });
    expect(readyOf(handled)?.message).toBe(waiting.message.slice(0, -note.length));
    expect((await find<{ data: Record<string, string> }>(client, cmPath('fought')))?.data.replicas).toBe('1');

    // Gone, so that its backed-off correction still due does not land in the next tests' windows.
    await deleteSyncAndWait(client, ns(), 'fought');
  });

  test('a correction backed off outlives a source that fails to render: once the source is fixed, it is made and announced', async () => {
    const spec = (inline: KubeObject[]) => ({ interval: '1m', source: { inline } });
    await applySync(client, ns(), 'halted', spec([cm('halted', { replicas: '1' })]));
    await waitForReady(client, ns(), 'halted', 'True');
    await settled('halted');
    const id = `${ns()}_halted__ConfigMap`;
    const corrections = (since = 0) => op.logs.filter((l) => l.level === 'warn' && l.object === id && at(l) >= since && String(l.msg).includes('changed by render-fighter'));
    // Fought until the next correction waits 16 s or more (corrections back off 1 s, 2 s, 4 s, 8 s...).
    for (let round = 1; !corrections().some((l) => Number(/waits (\d+)s/.exec(String(l.msg))?.[1]) >= 16); round++) {
      await patchAs('render-fighter', 'halted', { replicas: '5' });
      await op.waitForLog(`correction ${round}`, (l) => l.level === 'warn' && l.object === id && l.corrections === round, 30_000);
    }
    // Once more: this correction waits, backed off, and the Ready message says so.
    await patchAs('render-fighter', 'halted', { replicas: '7' });
    await eventually('the Ready message to say a correction waits', async () =>
      readyOf(await getSync(client, ns(), 'halted'))?.message.endsWith(`backed off (fighting): ConfigMap/${ns()}/halted .data.replicas changed by render-fighter`) || undefined,
    );
    // Meanwhile the source breaks (the same object twice: it does not render, nothing is applied), then is fixed.
    const fought = corrections().length;
    await applySync(client, ns(), 'halted', spec([cm('halted', { replicas: '1' }), cm('halted', { replicas: '2' })]));
    await waitForReady(client, ns(), 'halted', 'False', 'SourceError');
    expect((await find<{ data: Record<string, string> }>(client, cmPath('halted')))?.data.replicas).toBe('7');
    const fixedAt = Date.now();
    await applySync(client, ns(), 'halted', spec([cm('halted', { replicas: '1' })]));
    // The fixed source's apply corrects the object and names who changed it: the waiting correction was
    // not dropped by the reconcile that rendered nothing.
    const ready = await waitForReady(client, ns(), 'halted', 'True', 'Succeeded');
    expect(readyOf(ready)?.message).not.toContain('backed off');
    expect((await find<{ data: Record<string, string> }>(client, cmPath('halted')))?.data.replicas).toBe('1');
    expect(corrections(fixedAt)).toHaveLength(1);
    expect(corrections()).toHaveLength(fought + 1);

    await deleteSyncAndWait(client, ns(), 'halted');
  });

  test('an owned object deleted by hand is recreated at once, caused by the watch event; one pruned by the sync is not', async () => {
    await applySync(client, ns(), 'gone', { interval: '1h', source: { inline: [cm('gone-a', { a: '1' }), cm('gone-b', { b: '1' })] } });
    await waitForReady(client, ns(), 'gone', 'True');
    await settled('gone');
    const uid = (await find(client, cmPath('gone-a')))!.metadata.uid;
    const since = Date.now();
    await client.request({ method: 'DELETE', path: cmPath('gone-a') });
    const back = await eventually('gone-a recreated', async () => {
      const got = await find(client, cmPath('gone-a'));
      return got && got.metadata.uid !== uid ? got : undefined;
    }, 30_000);
    expect(back).toMatchObject({ data: { a: '1' } });
    const event = await eventually('a Drifted Event', async () => (await eventsFor(client, ns(), 'gone')).find((e) => e.reason === 'Drifted'));
    expect(event.message).toBe(`ConfigMap/${ns()}/gone-a: deleted, not by this sync; recreated`);
    await settled('gone');
    const causes = reconcilesSince('gone', since).flatMap((l) => l.causes as string[]);
    expect(causes).toContain(`owned object deleted: ${ns()}_gone-a__ConfigMap`);
    expect(causes.filter((c) => !c.startsWith('owned object'))).toEqual([]);

    // The sync's own prune: gone-b leaves the set. Its deletion wakes the sync, which sends nothing
    // more for it (no recreation, no second Drifted Event).
    const pruneSince = Date.now();
    await applySync(client, ns(), 'gone', { interval: '1h', source: { inline: [cm('gone-a', { a: '1' })] } });
    await eventually('gone-b pruned', async () => ((await find(client, cmPath('gone-b'))) === undefined ? true : undefined), 30_000);
    await settled('gone');
    expect(await find(client, cmPath('gone-b'))).toBeUndefined();
    expect(requestsTo(cmPath('gone-b'), pruneSince).writes.map((l) => l.method)).toEqual(['DELETE']);
    expect((await eventsFor(client, ns(), 'gone')).filter((e) => e.reason === 'Drifted')).toHaveLength(1);
  });
});

describe('resync without requests', () => {
  test('a requested reconcile of 200 unchanged ConfigMaps sends no request for them: no dry run, no GET, no write', async () => {
    const objects = Array.from({ length: 200 }, (_, i) => cm(`noop-${i}`, { i: String(i) }));
    await applySync(client, ns(), 'noop', { interval: '1h', source: { inline: objects } });
    await waitForReady(client, ns(), 'noop', 'True');
    await settled('noop');
    const since = Date.now();
    await applySync(client, ns(), 'noop', { interval: '1h', source: { inline: objects } }, { annotations: { 'syncprims.dev/reconcile-requested-at': 'again' } });
    await eventually('the requested reconcile', async () => ((await getSync(client, ns(), 'noop')).status?.lastHandledReconcileAt === 'again' ? true : undefined));
    await settled('noop');
    const sent = op.logs.filter((l) => l.msg === 'request' && at(l) >= since && !String(l.path).includes('/leases/'));
    const toObjects = sent.filter((l) => String(l.path).includes('/configmaps/noop-'));
    expect(toObjects).toEqual([]);
    // The status write (lastHandledReconcileAt) is all: at most a few requests in all, against 200 dry runs before.
    expect(sent.filter((l) => String(l.path).endsWith('/syncs/noop/status'))).toHaveLength(1);
    expect(sent.length).toBeLessThanOrEqual(3);
  });

  test('a value the API server stores in another form (cpu: 0.5 is kept as 500m): applied once without a dry run, found unchanged, then not sent again', async () => {
    const quota = { apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name: 'normalised', namespace: ns() }, spec: { hard: { cpu: 0.5 } } };
    const quotaPath = `/api/v1/namespaces/${ns()}/resourcequotas/normalised`;
    await applySync(client, ns(), 'normalised', { interval: '1h', source: { inline: [quota] } });
    await waitForReady(client, ns(), 'normalised', 'True');
    expect((await find<{ spec: { hard: Record<string, string> } }>(client, quotaPath))?.spec.hard.cpu).toBe('500m');
    await settled('normalised');
    const version = (await find<KubeObject>(client, quotaPath))?.metadata.resourceVersion;
    const request = async (value: string): Promise<LogLine[]> => {
      const since = Date.now();
      await applySync(client, ns(), 'normalised', { interval: '1h', source: { inline: [quota] } }, { annotations: { 'syncprims.dev/reconcile-requested-at': value } });
      await eventually('the requested reconcile', async () => ((await getSync(client, ns(), 'normalised')).status?.lastHandledReconcileAt === value ? true : undefined));
      await settled('normalised');
      return requestsTo(quotaPath, since).all;
    };
    // The cache shows 0.5 where the object has 500m: applied (no dry run first); the server writes nothing.
    expect((await request('first')).map((l) => `${l.method}${JSON.stringify(l.query ?? '').includes('dryRun') ? ' dry run' : ''}`)).toEqual(['PATCH']);
    expect((await find<KubeObject>(client, quotaPath))?.metadata.resourceVersion).toBe(version);
    expect(op.logs.filter((l) => l.msg === 'applied' && l.namespace === ns() && l.name === 'normalised')).toHaveLength(1); // the creation only
    // That verdict is remembered for this version: the next resync sends nothing for it.
    expect(await request('second')).toEqual([]);
  });
});
