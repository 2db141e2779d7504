// The writes a Sync costs, counted in the API server's audit log: a new Sync
// folds its progress into its first result (one status write), one that has
// applied before still announces lastAttemptedRevision before it applies.
import { describe, expect, test } from '@jest/globals';
import type { KubeClient } from '../../src/kube/client.js';
import type { KubeObject } from '../../src/kube/resources.js';
import { watchEvents } from '../../src/kube/watch-stream.js';
import { requestsSince, writesSince, type AuditEvent } from '../support/audit.js';
import { eventually } from '../support/eventually.js';
import { useOperatedNamespace } from '../support/operated-namespace.js';
import type { OperatorProcess } from '../support/operator.js';
import { applySync, createSyncs, syncPath, waitForReady, type SyncObject } from '../support/syncs.js';

const CLUSTER = 'mgmt';
const OPERATOR = 'syncprims-operator';
const SYNCS = 40;
const OBJECTS = 10;
let client: KubeClient;
let op: OperatorProcess;
// (--log-level debug: the `reconciled` lines name each reconcile's causes)
const ns = useOperatedNamespace(CLUSTER, 'syncwrites', (o) => ({ client, op } = o), ['--log-level', 'debug']);
const reconciles = (): Promise<number> => op.metric('controller_runtime_reconcile_total', { controller: 'sync' });

const configMaps = (sync: string, value: string): KubeObject[] =>
  Array.from({ length: OBJECTS }, (_, k) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `${sync}-${k}`, namespace: ns() }, data: { value } }));

/** The operator's writes to one Sync and what it applied for it, by what they were. */
function writesOf(writes: AuditEvent[], sync: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const w of writes) {
    const ref = w.objectRef ?? {};
    let what: string | undefined;
    if (ref.resource === 'syncs' && ref.name === sync) what = ref.subresource === 'status' ? 'status' : 'sync';
    else if (ref.resource === 'configmaps' && ref.name?.startsWith(`${sync}-`)) what = 'objects';
    else if (ref.resource === 'events' && ref.name?.startsWith(`${sync}.`)) what = 'events';
    if (what) out[what] = (out[what] ?? 0) + 1;
  }
  return out;
}

/** The operator's writes since `since`, once each of `syncs` has its Applied Event: sent without waiting for it, it may trail the status. */
async function writesWithEvents(since: Date, syncs: string[]): Promise<AuditEvent[]> {
  return eventually(`the Applied Events of ${syncs.join(', ')}`, async () => {
    const writes = await writesSince(CLUSTER, since, OPERATOR);
    return syncs.every((sync) => (writesOf(writes, sync).events ?? 0) > 0) ? writes : undefined;
  });
}

/** Every status of a Sync a watch delivers until `done` passes one (or the watch is cut short). */
async function statusesUntil(name: string, from: string, done: (s: SyncObject) => boolean): Promise<SyncObject[]> {
  const res = await client.stream({ path: syncPath(ns()), query: { watch: 1, resourceVersion: from, fieldSelector: `metadata.name=${name}` }, idleTimeoutMs: 60_000 });
  const seen: SyncObject[] = [];
  try {
    for await (const e of watchEvents<SyncObject>(res)) {
      if (e.type !== 'MODIFIED') continue;
      seen.push(e.object);
      if (done(e.object)) break;
    }
  } finally {
    res.destroy();
  }
  return seen;
}

const readyTrue = (s: SyncObject): boolean =>
  s.status?.observedGeneration === s.metadata.generation && (s.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');

describe('writes per sync', () => {
  test(`${SYNCS} new Syncs of ${OBJECTS} ConfigMaps created at once: each costs the finalizer, its objects, one Event and one status write, in one reconcile`, async () => {
    const since = new Date(Date.now() - 1000);
    const reconcilesBefore = await reconciles();
    const names = Array.from({ length: SYNCS }, (_, i) => `w${i}`);
    await createSyncs(client, ns(), names, (name) => ({ source: { inline: configMaps(name, 'one') } }));
    for (const name of names) await waitForReady(client, ns(), name, 'True', 'Succeeded');
    const writes = await writesWithEvents(since, names);
    for (const name of names) {
      // Progress folded into the result: no Ready=Unknown write before the apply of a Sync that applied nothing yet.
      expect({ name, ...writesOf(writes, name) }).toEqual({ name, sync: 1, objects: OBJECTS, events: 1, status: 1 });
    }
    // One reconcile each: neither the echo of a Sync's own finalizer patch (it lands while the first
    // reconcile runs) nor the watch's echoes of its own applies (their answers were read already)
    // queue a second one. A Sync created after them and Ready: what was queued before it has run by then.
    await applySync(client, ns(), 'barrier', { source: { inline: configMaps('barrier', 'one') } });
    await waitForReady(client, ns(), 'barrier', 'True', 'Succeeded');
    // Its `reconciled` line (and the count beside it) comes after its status write, which the wait saw.
    await op.waitForLog('the barrier reconciled', (l) => l.msg === 'reconciled' && l.kind === 'Sync' && l.namespace === ns() && l.name === 'barrier');
    // A Sync reconciled more than once is named, with the causes of each of its reconciles.
    const extra = [...names, 'barrier']
      .map((name) => ({ name, causes: op.logs.filter((l) => l.msg === 'reconciled' && l.kind === 'Sync' && l.namespace === ns() && l.name === name).map((l) => l.causes) }))
      .filter((r) => r.causes.length !== 1);
    expect(extra).toEqual([]);
    expect((await reconciles()) - reconcilesBefore).toBe(SYNCS + 1);
  });

  test('a Sync that has applied before writes lastAttemptedRevision before it applies a new revision, then its result', async () => {
    const created = new Date(Date.now() - 1000);
    const first = await applySync(client, ns(), 'again', { source: { inline: configMaps('again', 'one') } });
    const ready = await waitForReady(client, ns(), 'again', 'True', 'Succeeded');
    const before = ready.status!.lastAppliedRevision!;
    expect(first.metadata.generation).toBe(1);
    // Everything of the first revision is written before the window opens: its Event may trail the status.
    await writesWithEvents(created, ['again']);
    const since = new Date();
    const edited = await applySync(client, ns(), 'again', { source: { inline: configMaps('again', 'two') } });
    const statuses = await statusesUntil('again', ready.metadata.resourceVersion!, (s) => readyTrue(s) && s.status?.lastAppliedRevision !== before);
    const announced = statuses.find((s) => s.status?.lastAttemptedRevision !== before && s.status?.lastAppliedRevision === before);
    expect(announced?.status?.conditions?.find((c) => c.type === 'Ready')).toMatchObject({ status: 'Unknown', reason: 'Progressing' });
    expect(statuses.at(-1)?.status?.lastAppliedRevision).toBe(announced?.status?.lastAttemptedRevision);
    expect(edited.metadata.generation).toBe(2);
    const writes = writesOf(await writesWithEvents(since, ['again']), 'again');
    expect(writes).toEqual({ objects: OBJECTS, events: 1, status: 2 });
    // Each changed object cost one request: the cache shows our value differs, so no dry run asks first.
    const verbs = (events: AuditEvent[]): string[] =>
      events.filter((e) => e.objectRef?.resource === 'configmaps' && e.objectRef.name?.startsWith('again-')).map((e) => `${e.verb}${e.requestURI.includes('dryRun=') ? ' (dry run)' : ''}`);
    expect(verbs(await requestsSince(CLUSTER, since, OPERATOR))).toEqual(Array(OBJECTS).fill('patch'));

    // A revision that no longer sets a field we own (the data): certainly a change too, one request each.
    const last = statuses.at(-1)!;
    const removedSince = new Date();
    const withoutData = configMaps('again', 'two').map(({ data: _data, ...rest }) => rest);
    await applySync(client, ns(), 'again', { source: { inline: withoutData } });
    await statusesUntil('again', last.metadata.resourceVersion!, (s) => readyTrue(s) && s.status?.lastAppliedRevision !== last.status?.lastAppliedRevision);
    expect(verbs(await requestsSince(CLUSTER, removedSince, OPERATOR))).toEqual(Array(OBJECTS).fill('patch'));
    expect((await client.request<KubeObject>({ path: `/api/v1/namespaces/${ns()}/configmaps/again-0` })).data).toBeUndefined();
  });
});
