// Lane: own clusters (test/support/lanes-runner.js: it runs beside the shared-cluster files).
// The operator SIGKILLed in the middle of its work, then started again, on the
// real mgmt API server: in the middle of applying 1,000 objects, of pruning
// most of them, and of deleting the sync. After each restart it converges,
// leaves nothing it owns behind, touches nothing it does not own (objects
// without our labels, one marked `syncprims.dev/prune: disabled`), and writes
// no object twice: the API server's audit log counts the writes of both
// processes (told apart by the instance id in their User-Agent). Each scenario
// has a sync of its own, brought to where it starts by an operator run to
// Ready first, so that each stands alone (`-t '(b)'`).
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { OWNER_NAME_LABEL, PRUNE_ANNOTATION, PRUNE_DISABLED } from '../../src/api/marks.js';
import { OPERATOR_USER_AGENT } from '../../src/cli/run/run.js';
import type { KubeClient } from '../../src/kube/client.js';
import type { KubeObject } from '../../src/kube/resources.js';
import { instanceIn, writesSince, type AuditEvent } from '../support/audit.js';
import { closeClients, clusterClient, OWN_LANE_CLUSTER } from '../support/controlplane.js';
import { installCrds } from '../support/crds.js';
import { eventually } from '../support/eventually.js';
import { useTestNamespace } from '../support/namespace.js';
import { OperatorProcess } from '../support/operator.js';
import { applySync, find, getSync, syncPath, waitForReady } from '../support/syncs.js';

const CLUSTER = OWN_LANE_CLUSTER;
const OBJECTS = 1000;
/** Kept by the prune of scenario (b), and the objects of (c)'s sync. */
const KEPT = 300;
/** Objects per apply or prune in flight: the operator's --concurrency 4 gives the pipeline 8. */
const IN_FLIGHT = 8;
const BYSTANDERS = ['bystander-a', 'bystander-b', 'bystander-c'];
/** The syncs of the three scenarios (each its own objects, named after it). */
const SCENARIOS = ['big', 'prune', 'gone'];
/** The objects of the scenarios' sources that carry `prune: disabled`: (b) drops the second and keeps the first; (c) leaves both. */
const PINS: Record<string, number[]> = { big: [0, OBJECTS - 2], prune: [0, OBJECTS - 2], gone: [0, KEPT - 1] };

const ns = useTestNamespace(CLUSTER, 'restarts');
let client: KubeClient;
const started: OperatorProcess[] = [];

beforeAll(async () => {
  client = await clusterClient(CLUSTER);
  await installCrds(CLUSTER);
  // Objects of the namespace that are not ours: no owner labels, one with a name in each scenario's pattern.
  for (const name of unowned()) {
    await client.request({ method: 'POST', path: cmPath(), body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { mine: 'no' } } });
  }
});

afterAll(async () => {
  await Promise.all(started.map((op) => op.stop('SIGKILL')));
  await closeClients();
});

function cmPath(name = ''): string {
  return `/api/v1/namespaces/${ns()}/configmaps${name ? `/${name}` : ''}`;
}

const objectName = (i: number, prefix: string): string => `${prefix}-${String(i).padStart(4, '0')}`;
/** The objects of a scenario's source that carry `prune: disabled`. */
const pinned = (sync: string): string[] => (PINS[sync] ?? []).map((i) => objectName(i, sync));
const unowned = (): string[] => [...BYSTANDERS, ...SCENARIOS.map((sync) => objectName(OBJECTS, sync))];

/** A sync's source: the first `count` ConfigMaps named after `prefix`; the pinned ones (PINS) carry the prune-disabled annotation. */
function source(count: number, prefix: string): KubeObject[] {
  return Array.from({ length: count }, (_, i) => {
    const name = objectName(i, prefix);
    const isPinned = (PINS[prefix] ?? []).includes(i);
    return {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name, namespace: ns(), ...(isPinned ? { annotations: { [PRUNE_ANNOTATION]: PRUNE_DISABLED } } : {}) },
      data: { index: String(i) },
    };
  });
}

async function start(concurrency = 4): Promise<OperatorProcess> {
  const op = await OperatorProcess.start(CLUSTER, ['--namespace', ns(), '--concurrency', String(concurrency)]);
  started.push(op);
  return op;
}

/** The names of the ConfigMaps that carry the sync's owner label. */
async function owned(sync: string): Promise<string[]> {
  const list = await client.request<{ items: KubeObject[] }>({ path: cmPath(), query: { labelSelector: `${OWNER_NAME_LABEL}=${sync}` } });
  return list.items.map((o) => o.metadata.name!).sort();
}

/**
 * Polls the owned ConfigMaps until `midway` holds for their count, then
 * SIGKILLs the operator; returns the count seen then. The operator applies or
 * deletes two at a time, so the window is seconds wide even on a fast machine.
 */
async function killWhen(op: OperatorProcess, what: string, midway: (count: number) => boolean, sync: string): Promise<number> {
  const count = await eventually(what, async () => {
    const n = (await owned(sync)).length;
    return midway(n) ? n : undefined;
  }, 120_000, 20);
  expect(await op.stop('SIGKILL')).toBeNull();
  return count;
}

/** The operator's writes in the namespace since `since` (both processes), by object name (ConfigMaps only). */
async function configMapWrites(since: Date): Promise<AuditEvent[]> {
  const writes = await writesSince(CLUSTER, since, OPERATOR_USER_AGENT);
  return writes.filter((w) => w.objectRef?.namespace === ns() && w.objectRef.resource === 'configmaps');
}

const succeeded = (w: AuditEvent): boolean => (w.responseStatus?.code ?? 0) < 300 && (w.responseStatus?.code ?? 0) >= 200;

/** The instance ids that wrote, in the order of their first write. */
function writers(writes: AuditEvent[]): string[] {
  return [...new Set(writes.map(instanceIn))];
}

/** How many of `verbs` the process `instance` sent that succeeded. */
function succeededBy(writes: AuditEvent[], instance: string, verbs: string[]): number {
  return writes.filter((w) => instanceIn(w) === instance && verbs.includes(w.verb) && succeeded(w)).length;
}

/**
 * The bound on writes across a kill: each of `names` got its write (`verbs`)
 * once. At least one request each, at most one answered 2xx (none when its
 * only request was the killed process's, unanswered), and no request for any
 * other object. A request in flight when the first process died can
 * be logged unanswered (504: the server saw the client go) although it took
 * effect, and then the restarted process, finding the object as wanted, sends
 * nothing more; or it took no effect, and the restarted process sends it
 * again. So the unanswered ones are the killed process's, at most IN_FLIGHT.
 */
function expectWrittenOnce(writes: AuditEvent[], verbs: string[], names: string[]): void {
  const of = writes.filter((w) => verbs.includes(w.verb));
  const byName = new Map<string, AuditEvent[]>();
  for (const w of of) byName.set(w.objectRef!.name!, [...(byName.get(w.objectRef!.name!) ?? []), w]);
  expect([...byName.keys()].sort()).toEqual([...names].sort());
  expect([...byName].filter(([, ws]) => ws.filter(succeeded).length > 1).map(([n, ws]) => `${n}: ${ws.map((w) => w.responseStatus?.code).join(',')}`)).toEqual([]);
  const unanswered = of.filter((w) => !succeeded(w));
  const killed = writers(writes)[0];
  expect(unanswered.filter((w) => instanceIn(w) !== killed)).toEqual([]);
  expect(unanswered.length).toBeLessThanOrEqual(IN_FLIGHT);
}

/** Where a scenario starts: its sync applied from `objects` and Ready, by an operator that is then stopped. */
async function converged(sync: string, objects: KubeObject[]): Promise<void> {
  await applySync(client, ns(), sync, { source: { inline: objects }, prune: true });
  const op = await start();
  const ready = await waitForReady(client, ns(), sync, 'True', 'Succeeded', 180_000);
  expect(ready.status?.inventory?.entries).toHaveLength(objects.length);
  expect(await op.stop('SIGTERM')).toBe(0);
}

/** Nothing without our labels was written, and those objects still carry none. */
async function expectUnownedUntouched(writes: AuditEvent[]): Promise<void> {
  expect(writes.filter((w) => unowned().includes(w.objectRef!.name!)).map((w) => `${w.verb} ${w.objectRef?.name}`)).toEqual([]);
  for (const name of unowned()) expect((await find<KubeObject>(client, cmPath(name)))?.metadata.labels).toBeUndefined();
}

/** The names of the objects that got a request of `verbs`. */
function namesWritten(writes: AuditEvent[], verbs: string[]): string[] {
  return [...new Set(writes.filter((w) => verbs.includes(w.verb)).map((w) => w.objectRef!.name!))];
}

describe('SIGKILL and restart', () => {
  test(`(a) in the middle of applying ${OBJECTS} objects: all applied, each written once across both processes`, async () => {
    const SYNC = 'big';
    const since = new Date(Date.now() - 1000);
    await applySync(client, ns(), SYNC, { source: { inline: source(OBJECTS, SYNC) }, prune: true });
    const first = await start();
    const atKill = await killWhen(first, 'some but not all objects applied', (n) => n >= 400 && n < OBJECTS - 200, SYNC);
    const second = await start();
    const ready = await waitForReady(client, ns(), SYNC, 'True', 'Succeeded', 180_000);
    expect(ready.status?.inventory?.entries).toHaveLength(OBJECTS);
    const names = await owned(SYNC);
    expect(names).toEqual(source(OBJECTS, SYNC).map((o) => o.metadata.name).sort());

    const writes = await configMapWrites(since);
    // Both processes applied part of the set.
    expect(writers(writes)).toHaveLength(2);
    // The killed process made what was there at the kill; the new one made the rest (none twice, below).
    const [killed, survivor] = writers(writes) as [string, string];
    expect(succeededBy(writes, killed, ['create', 'patch', 'update'])).toBeGreaterThanOrEqual(atKill);
    expect(succeededBy(writes, survivor, ['create', 'patch', 'update'])).toBeGreaterThan(0);
    // One write per object across both: what the first applied, the second finds unchanged in its
    // cache (our managedFields entry) and does not send again.
    expectWrittenOnce(writes, ['create', 'patch', 'update'], names);
    expect(writes.filter((w) => w.verb === 'delete')).toEqual([]);
    // The prune-disabled objects were written once (created), as any other; nothing unowned was written.
    const pins = writes.filter((w) => pinned(SYNC).includes(w.objectRef!.name!) && succeeded(w));
    expect(pins.map((w) => `${w.verb} ${w.objectRef?.name}`).sort()).toEqual(pinned(SYNC).map((n) => `patch ${n}`).sort());
    await expectUnownedUntouched(writes);
    await second.stop('SIGTERM');
  }, 300_000);

  test(`(b) in the middle of pruning ${OBJECTS - KEPT} objects: the rest pruned, each deleted once, the kept ones not written`, async () => {
    const SYNC = 'prune';
    const [pinnedKept, pinnedDropped] = pinned(SYNC) as [string, string];
    await converged(SYNC, source(OBJECTS, SYNC));
    const since = new Date();
    const before = await getSync(client, ns(), SYNC);
    const op = await start();
    await applySync(client, ns(), SYNC, { source: { inline: source(KEPT, SYNC) }, prune: true });
    const atKill = await killWhen(op, 'some but not all objects pruned', (n) => n <= OBJECTS - 200 && n > KEPT + 150, SYNC);
    const second = await start();
    const ready = await eventually('the new revision Ready', async () => {
      const s = await waitForReady(client, ns(), SYNC, 'True', 'Succeeded', 180_000);
      return s.status?.lastAppliedRevision !== before.status?.lastAppliedRevision ? s : undefined;
    }, 180_000);
    // The dropped prune-disabled object left the inventory but not the cluster.
    expect(ready.status?.inventory?.entries).toHaveLength(KEPT);
    const expected = [...source(KEPT, SYNC).map((o) => o.metadata.name!), pinnedDropped].sort();
    expect(await owned(SYNC)).toEqual(expected);

    const writes = await configMapWrites(since);
    expect(writers(writes)).toHaveLength(2);
    // The killed process deleted what was gone at the kill; the new one deleted the rest.
    const [killed, survivor] = writers(writes) as [string, string];
    expect(succeededBy(writes, killed, ['delete'])).toBeGreaterThanOrEqual(OBJECTS - atKill);
    expect(succeededBy(writes, survivor, ['delete'])).toBeGreaterThan(0);
    // The kept prune-disabled object was written by neither.
    expect(writes.filter((w) => w.objectRef?.name === pinnedKept).map((w) => w.verb)).toEqual([]);
    const dropped = source(OBJECTS, SYNC).slice(KEPT).map((o) => o.metadata.name!).filter((n) => n !== pinnedDropped);
    expectWrittenOnce(writes, ['delete'], dropped);
    // Nothing but those deletes: the kept objects are unchanged, the pinned ones are left, in both processes.
    expect(writes.filter((w) => w.verb !== 'delete').map((w) => `${w.verb} ${w.objectRef?.name}`)).toEqual([]);
    await expectUnownedUntouched(writes);
    await second.stop('SIGTERM');
  }, 300_000);

  test('(c) in the middle of deleting the sync: deletion completes, nothing owned is left but the prune-disabled objects', async () => {
    const SYNC = 'gone';
    await converged(SYNC, source(KEPT, SYNC));
    const since = new Date();
    const op = await start();
    // The first reconcile after the start writes nothing (all unchanged): wait for it, then delete.
    await eventually('the sync reconciled by the new process', async () =>
      (await op.metric('controller_runtime_reconcile_total', { controller: 'sync' })) >= 1 ? true : undefined,
    );
    await client.request({ method: 'DELETE', path: syncPath(ns(), SYNC) });
    const atKill = await killWhen(op, 'some but not all objects deleted', (n) => n <= KEPT - 50 && n > 50, SYNC);
    const second = await start();
    await eventually('the sync gone', async () => ((await find(client, syncPath(ns(), SYNC))) === undefined ? true : undefined), 120_000);
    // Only the prune-disabled objects keep the owner labels (as Flux leaves them).
    expect(await owned(SYNC)).toEqual([...pinned(SYNC)].sort());

    const writes = await configMapWrites(since);
    expect(writers(writes)).toHaveLength(2);
    expect(atKill).toBeGreaterThan(50);
    const deleted = source(KEPT, SYNC).map((o) => o.metadata.name!).filter((n) => !pinned(SYNC).includes(n));
    expectWrittenOnce(writes, ['delete'], deleted);
    expect(writes.filter((w) => w.verb !== 'delete').map((w) => `${w.verb} ${w.objectRef?.name}`)).toEqual([]);
    await expectUnownedUntouched(writes);
    await second.stop('SIGTERM');
  }, 300_000);
});

describe('SIGKILL before the inventory records what was applied', () => {
  test('a new sync killed in its first apply, then deleted while no operator runs: its deletion finds and prunes what was applied', async () => {
    const since = new Date();
    await applySync(client, ns(), 'fresh', { source: { inline: source(400, 'fresh') }, prune: true });
    const op = await start();
    const atKill = await killWhen(op, 'part of the first apply done', (n) => n >= 150 && n < 300, 'fresh');
    // Nothing recorded the applied objects: a new sync writes its status once, at the end of its first apply.
    expect((await getSync(client, ns(), 'fresh')).status?.inventory?.entries ?? []).toEqual([]);
    await client.request({ method: 'DELETE', path: syncPath(ns(), 'fresh') });
    const second = await start();
    await eventually('the sync gone', async () => ((await find(client, syncPath(ns(), 'fresh'))) === undefined ? true : undefined), 120_000);
    expect(await owned('fresh')).toEqual([]);
    const writes = await configMapWrites(since);
    // Whatever the first process sent a write for (taken effect or not), the second deleted once or found gone.
    const applied = namesWritten(writes, ['patch']);
    expect(applied.length).toBeGreaterThanOrEqual(atKill);
    expectWrittenOnce(writes, ['patch'], applied);
    const deleted = namesWritten(writes, ['delete']);
    expect(deleted.length).toBeGreaterThanOrEqual(atKill);
    expect(applied).toEqual(expect.arrayContaining(deleted));
    expect(writes.filter((w) => w.verb === 'delete' && !succeeded(w))).toEqual([]);
    expect(deleted.length).toBe(writes.filter((w) => w.verb === 'delete').length);
    await second.stop('SIGTERM');
  }, 180_000);

  test('a sync killed while applying a revision that adds objects, whose source then drops them: the next apply prunes them', async () => {
    await applySync(client, ns(), 'grow', { source: { inline: source(50, 'grow') }, prune: true });
    const op = await start();
    const first = await waitForReady(client, ns(), 'grow', 'True', 'Succeeded', 120_000);
    await applySync(client, ns(), 'grow', { source: { inline: source(400, 'grow') }, prune: true });
    await killWhen(op, 'part of the added objects applied', (n) => n >= 200 && n < 350, 'grow');
    // While no operator runs, the source goes back to what it was.
    await applySync(client, ns(), 'grow', { source: { inline: source(50, 'grow').map((o) => ({ ...o, data: { index: 'again' } })) }, prune: true });
    const second = await start();
    await eventually('the third revision Ready', async () => {
      const s = await waitForReady(client, ns(), 'grow', 'True', 'Succeeded', 120_000);
      return s.status?.lastAppliedRevision !== first.status?.lastAppliedRevision ? s : undefined;
    }, 120_000);
    expect(await owned('grow')).toEqual(source(50, 'grow').map((o) => o.metadata.name).sort());
    await second.stop('SIGTERM');
  }, 180_000);
});
