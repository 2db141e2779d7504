// Lane: own clusters (test/support/lanes-runner.js: it runs beside the shared-cluster files).
// Leader failover under load on a real API server (the own lane's): operators with
// --leader-elect (short lease flags), many syncs in flight, the leader
// SIGKILLed (in `make soak`, each new leader in turn). A standby takes over
// and finishes the work; the audit log, which tells the processes apart by
// the instance id in their User-Agent, shows that no two ever wrote in the
// same window (Lease writes aside), that standbys wrote nothing, and that no
// leader wrote an object a previous one had already applied.
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { API_VERSION, OWNER_KIND_LABEL } from '../../src/api/index.js';
import { OPERATOR_USER_AGENT } from '../../src/cli/run/run.js';
import type { KubeClient } from '../../src/kube/client.js';
import { completedAt, instanceIn, writesSince, type AuditEvent } from '../support/audit.js';
import { closeClients, clusterClient, OWN_LANE_CLUSTER } from '../support/controlplane.js';
import { installCrds } from '../support/crds.js';
import { eventually } from '../support/eventually.js';
import { useTestNamespace } from '../support/namespace.js';
import { OperatorProcess, SHORT_LEASE } from '../support/operator.js';
import { createSyncs, type SyncObject } from '../support/syncs.js';

const CLUSTER = OWN_LANE_CLUSTER;
/** `make soak` (SOAK=1): more syncs and a chain of failovers; `make test`: one. */
const SOAK = process.env.SOAK === '1';
const SYNCS = SOAK ? 200 : 40;
const OBJECTS = SOAK ? 20 : 15;
/** Leaders killed one after the other (each takeover by one of the standbys left). */
const KILLS = SOAK ? 3 : 1;
/**
 * Standbys beyond those the kills need: in the soak, one more, so that a last leader that loses its
 * Lease without being killed (a starved event loop on a loaded machine) is followed, not mourned.
 */
const SPARES = SOAK ? 1 : 0;

const ns = useTestNamespace(CLUSTER, 'failover');
let client: KubeClient;
const started: OperatorProcess[] = [];

beforeAll(async () => {
  client = await clusterClient(CLUSTER);
  await installCrds(CLUSTER);
});

afterAll(async () => {
  await Promise.all(started.map((op) => op.stop('SIGKILL')));
  await closeClients();
});

async function start(concurrency = 4): Promise<OperatorProcess> {
  const op = await OperatorProcess.start(CLUSTER, ['--namespace', ns(), '--leader-elect', '--leader-election-namespace', ns(), '--concurrency', String(concurrency), ...SHORT_LEASE]);
  started.push(op);
  return op;
}

/** The instance id an operator logged at start (the end of its User-Agent). */
async function instanceOf(op: OperatorProcess): Promise<string> {
  const line = await op.waitForLog('the starting line', (l) => l.msg === 'starting');
  expect(String(line.userAgent)).toMatch(new RegExp(`^${OPERATOR_USER_AGENT}/\\S+ \\(${CLUSTER}\\) instance/${line.instance as string}$`));
  return line.instance as string;
}

async function appliedCount(): Promise<number> {
  const list = await client.request<{ items: unknown[] }>({ path: `/api/v1/namespaces/${ns()}/configmaps`, query: { labelSelector: OWNER_KIND_LABEL } });
  return list.items.length;
}

async function readyCount(): Promise<number> {
  const list = await client.request<{ items: SyncObject[] }>({ path: `/apis/${API_VERSION}/namespaces/${ns()}/syncs` });
  return list.items.filter((s) => s.status?.observedGeneration === s.metadata.generation && s.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')).length;
}

/** The syncs not Ready, with their Ready condition (for a failure's message). */
async function notReady(): Promise<string> {
  const list = await client.request<{ items: SyncObject[] }>({ path: `/apis/${API_VERSION}/namespaces/${ns()}/syncs` });
  const ready = (s: SyncObject): boolean => s.status?.observedGeneration === s.metadata.generation && (s.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');
  const bad = list.items.filter((s) => !ready(s));
  return `${bad.length}: ${JSON.stringify(bad.slice(0, 5).map((s) => [s.metadata.name, s.status?.conditions?.find((c) => c.type === 'Ready')]))}`;
}

/**
 * From the audit log: the processes wrote in the namespace one after the other: the `killed`
 * leaders first (each some of the work, in the order they led), then the one that finished (any
 * other standby wrote nothing); none before its predecessor's last write was done; and each of
 * the `total` objects was applied once across all of them.
 */
async function expectLeadersTookTurns(since: Date, killed: string[], instances: string[], total: number): Promise<void> {
  const writes = (await writesSince(CLUSTER, since, OPERATOR_USER_AGENT)).filter((w) => w.objectRef?.namespace === ns());
  const firstOf = (id: string): number => Math.min(...writes.filter((w) => instanceIn(w) === id).map((w) => Date.parse(w.requestReceivedTimestamp)));
  const leaders = [...new Set(writes.map(instanceIn))].sort((a, b) => firstOf(a) - firstOf(b));
  expect(instances).toEqual(expect.arrayContaining(leaders));
  expect(leaders.slice(0, killed.length)).toEqual(killed);
  expect(leaders.length).toBeGreaterThan(killed.length);
  const by = leaders.map((id) => writes.filter((w) => instanceIn(w) === id));
  // No overlap: each new leader's first write was received after its predecessor's last one was done.
  for (let k = 1; k < leaders.length; k++) {
    const lastBefore = Math.max(...by[k - 1]!.map(completedAt));
    const firstAfter = Math.min(...by[k]!.map((w) => Date.parse(w.requestReceivedTimestamp)));
    expect(firstAfter).toBeGreaterThan(lastBefore);
  }
  // Each object was applied once across all: what a killed leader applied, the next one found unchanged.
  // An apply in flight when its leader died can be logged unanswered (504: the server saw the client go)
  // although it took effect; the next leader then sends nothing for it, else it sends it again. So:
  // every object has a request, none more than one answered, and the unanswered ones are killed
  // leaders', at most the applies that can be in flight per kill: --concurrency (4) reconciles at
  // once, each with 2 x --concurrency applies in flight.
  const applies = writes.filter((w) => w.objectRef?.resource === 'configmaps' && w.verb === 'patch');
  const answered = (w: AuditEvent): boolean => (w.responseStatus?.code ?? 0) >= 200 && (w.responseStatus?.code ?? 0) < 300;
  const byName = new Map<string, AuditEvent[]>();
  for (const w of applies) byName.set(w.objectRef!.name!, [...(byName.get(w.objectRef!.name!) ?? []), w]);
  expect(byName.size).toBe(total);
  expect([...byName].filter(([, ws]) => ws.filter(answered).length > 1).map(([n]) => n)).toEqual([]);
  const unanswered = applies.filter((w) => !answered(w));
  expect(unanswered.filter((w) => instanceIn(w) === leaders.at(-1))).toEqual([]);
  expect(unanswered.length).toBeLessThanOrEqual(4 * (2 * 4) * (leaders.length - 1));
}

describe('leader failover under load', () => {
  test(`the leader SIGKILLed ${KILLS === 1 ? 'once' : `${KILLS} times`} with ${SYNCS} syncs of ${OBJECTS} objects in flight: a standby finishes, and never writes while the old leader does`, async () => {
    const since = new Date();
    const first = await start();
    await first.waitForLog('the first to lead', (l) => l.msg.startsWith('became leader'));
    const standbys = [];
    for (let i = 0; i < KILLS + SPARES; i++) standbys.push(await start());
    for (const op of standbys) await op.waitReady('a standby ready');
    const ids = new Map<OperatorProcess, string>();
    for (const op of [first, ...standbys]) ids.set(op, await instanceOf(op));
    expect(new Set(ids.values()).size).toBe(KILLS + SPARES + 1);

    const names = Array.from({ length: SYNCS }, (_, i) => `f-${String(i).padStart(3, '0')}`);
    await createSyncs(client, ns(), names, (name) => ({
      source: { inline: Array.from({ length: OBJECTS }, (_, k) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `${name}-${k}`, namespace: ns() }, data: { k: String(k) } })) },
    }));
    const total = SYNCS * OBJECTS;
    // Each leader is killed once it has done a share of what was left when it took over (so each writes,
    // and the last one still has work): kill k of KILLS at 1/(KILLS+2-k) of the rest.
    const leaders = [first];
    let leader = first;
    for (let k = 1; k <= KILLS; k++) {
      const base = k === 1 ? 0 : await appliedCount();
      const from = base + Math.max(1, Math.floor((total - base) / (KILLS + 2 - k)));
      const atKill = await eventually(`kill ${k}: part of the work done`, async () => {
        const n = await appliedCount();
        return n >= from ? n : undefined;
      }, 180_000, 20);
      expect(atKill).toBeLessThan(total);
      expect(await leader.stop('SIGKILL')).toBeNull();
      const left = standbys.filter((op) => !leaders.includes(op));
      leader = await eventually('a standby to take over', async () => left.find((op) => op.logs.some((l) => l.msg.startsWith('became leader'))), 60_000);
      leaders.push(leader);
    }
    await eventually('every sync Ready', async () => ((await readyCount()) === SYNCS ? true : undefined), 600_000, 250).catch(async (err: unknown) => {
      throw new Error(`${String(err)}; not Ready: ${await notReady()}; the leader's last log lines: ${JSON.stringify(leader.logs.slice(-10))}`);
    });
    expect(await appliedCount()).toBe(total);

    await expectLeadersTookTurns(since, leaders.slice(0, KILLS).map((op) => ids.get(op)!), [...ids.values()], total);
    await leader.stop('SIGTERM');
  }, 900_000);
});

describe('a paused leader', () => {
  test('SIGSTOPped while it applies and resumed after a standby took over: it writes nothing it had not sent (the write fence), and leaves', async () => {
    await Promise.all(started.map((op) => op.stop('SIGKILL')));
    const since = new Date();
    // One worker (--concurrency 1), whose reconcile has at most 2 x --concurrency applies in flight
    // (SyncPipeline's concurrency): at most 2 writes can be on their way when the process is paused,
    // past the fence already (checked, but not yet flushed to the socket: the server then receives
    // them when the process wakes; a run of 2026-12-03 saw two such applies, 2 ms apart).
    const old = await start(1);
    await old.waitForLog('the first to lead', (l) => l.msg.startsWith('became leader'));
    const standby = await start();
    await standby.waitReady('the standby ready');
    const [oldId, newId] = [await instanceOf(old), await instanceOf(standby)];

    const names = Array.from({ length: 20 }, (_, i) => `p-${String(i).padStart(2, '0')}`);
    const total = names.length * OBJECTS;
    const applied = async (): Promise<number> => {
      const list = await client.request<{ items: { metadata: { name: string } }[] }>({ path: `/api/v1/namespaces/${ns()}/configmaps`, query: { labelSelector: OWNER_KIND_LABEL } });
      return list.items.filter((o) => o.metadata.name.startsWith('p-')).length;
    };
    await createSyncs(client, ns(), names, (name) => ({
      source: { inline: Array.from({ length: OBJECTS }, (_, k) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `${name}-${k}`, namespace: ns() }, data: { k: String(k) } })) },
    }));
    const atPause = await eventually('part of the work done', async () => {
      const n = await applied();
      return n >= total / 5 ? n : undefined;
    }, 180_000, 20);
    expect(atPause).toBeLessThan(total);
    old.child.kill('SIGSTOP');
    await eventually('the standby to take over', async () => (standby.logs.some((l) => l.msg.startsWith('became leader')) ? true : undefined), 60_000);
    await eventually('the new leader to write', async () => ((await applied()) > atPause ? true : undefined), 60_000);
    // Woken, the old leader's work goes on for a moment (its timers have not run yet): the fence stops its writes.
    old.child.kill('SIGCONT');
    await eventually('every p- sync Ready', async () => {
      const list = await client.request<{ items: SyncObject[] }>({ path: `/apis/${API_VERSION}/namespaces/${ns()}/syncs` });
      const ready = list.items.filter((s) => (s.metadata.name ?? '').startsWith('p-') && s.status?.observedGeneration === s.metadata.generation && s.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'));
      return ready.length === names.length ? true : undefined;
    }, 300_000, 250);
    const left = await eventually('the old leader to leave (it lost its Lease)', async () => (old.child.exitCode === null ? undefined : old.child.exitCode), 60_000);
    expect(left).not.toBe(0);

    const writes = (await writesSince(CLUSTER, since, OPERATOR_USER_AGENT)).filter((w) => w.objectRef?.namespace === ns() && w.objectRef?.resource !== 'leases');
    const firstOfNew = Math.min(...writes.filter((w) => instanceIn(w) === newId).map((w) => Date.parse(w.requestReceivedTimestamp)));
    const late = writes.filter((w) => instanceIn(w) === oldId && Date.parse(w.requestReceivedTimestamp) >= firstOfNew);
    process.stdout.write(`failover: paused leader: ${writes.filter((w) => instanceIn(w) === oldId).length} writes before the pause, ${late.length} after the new leader's first\n`);
    // What was on its way when it was paused may still land (as with client-go); nothing it began after.
    // (Without the fence, 4 or 5 writes land here: the rest of the reconcile it was in.)
    expect(late.length).toBeLessThanOrEqual(2);
  }, 600_000);
});
