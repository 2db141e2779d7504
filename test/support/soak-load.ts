// Soak stage `load` (issue 15, item 5): SYNCS (1,000 x SOAK_SCALE) Syncs of
// OBJECTS (10) ConfigMaps each, reconciled from scratch by one operator on a
// control plane of the stage's own, then again by a new operator after a
// restart. Measured: time to all Ready (from the first POST), the operator's
// writes (audit log) and requests, its CPU time and peak RSS (/proc); after
// the restart, time until every Sync was reconciled again, and the writes and
// requests that took (none needed: nothing changed). The Syncs use inline
// sources, so the figures are of the operator, not of a source server
// (bench/many-syncs.ts measures the same size with Flux artifacts).
// Checked (the stage fails, exit 1, without load.json, unless all hold): from
// scratch every Sync Ready and no object written twice (at most OBJECTS + 3
// writes per Sync: its objects, its finalizer, its status, its Event); after
// the restart every Sync reconciled, 0 writes, every Sync still Ready, and a
// number of requests that does not grow with the Syncs.
// Run by soak/run.sh; writes .local/soak/load.json (load.failed.json when a check fails).
import path from 'node:path';
import { API_VERSION } from '../../src/api/kinds.js';
import { mapLimit } from '../../src/apply/map-limit.js';
import type { KubeClient } from '../../src/kube/client.js';
import { OperatorProcess, processCpuMs, sleep, stopOperators, until, type OperatorTarget } from '../../bench/support.js';
import { sampleValue } from './prometheus.js';
import { check, finishStage, provenance, SOAK_DIR, type Check } from './soak-result.js';
import { auditWrites, memoryKiB, mib, ownPlane, scaled, snapshotOperator } from './soak-support.js';

const STAGE = 'load';
const SYNCS = scaled(Number(process.env.SYNCS ?? 1000), 10);
const OBJECTS = Number(process.env.OBJECTS ?? 10);
const NS = 'load';
const CLUSTER = 'soak-load';
const TIMEOUT_MS = 30 * 60_000;
/** Writes per Sync from scratch: each of its objects once, its finalizer, its status, its Event. */
const WRITES_PER_SYNC = OBJECTS + 3;
/** Requests of the operator after the restart: lists, watches, its lease; none per Sync (10 at 1,000 Syncs). */
const RESTART_REQUESTS = 20;

const syncBody = (i: number): Record<string, unknown> => ({
  apiVersion: API_VERSION,
  kind: 'Sync',
  metadata: { name: `s-${i}` },
  spec: {
    source: {
      inline: Array.from({ length: OBJECTS }, (_, k) => ({
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: `s-${i}-cm-${k}`, namespace: NS },
        data: { value: 'v1', more: 'x'.repeat(64) },
      })),
    },
  },
});

interface Readiness {
  ready: number;
  total: number;
}

async function readiness(client: KubeClient): Promise<Readiness> {
  const list = await client.request<{ items: { metadata: { generation?: number }; status?: { observedGeneration?: number; conditions?: { type: string; status: string }[] } }[] }>({
    path: `/apis/${API_VERSION}/namespaces/${NS}/syncs`,
  });
  const ready = list.items.filter((s) => s.status?.observedGeneration === s.metadata.generation && (s.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True'));
  return { ready: ready.length, total: list.items.length };
}

const reconciles = async (op: OperatorProcess): Promise<number> => sampleValue(await op.metrics(), 'controller_runtime_reconcile_total', { controller: 'sync' });
const total = (counts: Record<string, number>): number => Object.values(counts).reduce((a, b) => a + b, 0);

/** What a phase measured, and the checks of what the stage claims of it. */
interface Phase {
  figures: Record<string, unknown>;
  checks: Check[];
}

async function fromScratch(client: KubeClient, target: OperatorTarget, auditLog: string): Promise<Phase> {
  const op = await OperatorProcess.start(target, NS);
  const epoch = Date.now();
  const started = performance.now();
  await mapLimit(Array.from({ length: SYNCS }, (_, i) => i), 32, (i) => client.request({ method: 'POST', path: `/apis/${API_VERSION}/namespaces/${NS}/syncs`, body: syncBody(i) }));
  await until(`${SYNCS} Syncs Ready`, async () => (await readiness(client)).ready === SYNCS, TIMEOUT_MS, 500);
  const readyMs = performance.now() - started;
  const cpuMs = processCpuMs(op.pid); // the whole process: its start included
  await sleep(2_000); // the echoes of the last writes
  // Read again: the wait above ended on all Ready, so its own figure could not fail a check.
  const settled = await readiness(client);
  const result = {
    readyMs: Math.round(readyMs),
    writes: auditWrites(auditLog, epoch - 5, Date.now()),
    requests: await op.requests(),
    operatorCpuMs: Math.round(cpuMs),
    peakRssKiB: memoryKiB(op.pid!).peak,
    reconciles: await reconciles(op),
  };
  console.log(
    `from scratch: ${SYNCS} Syncs x ${OBJECTS} ConfigMaps Ready in ${(readyMs / 1000).toFixed(1)} s; writes ${result.writes.total}` +
      ` (${(result.writes.total / SYNCS).toFixed(1)} per sync); CPU ${(cpuMs / 1000).toFixed(1)} s; peak RSS ${mib(result.peakRssKiB)}`,
  );
  await op.stop();
  const configMapWrites = Object.entries(result.writes.byKind).filter(([kind]) => kind.endsWith(' configmaps')).reduce((n, [, c]) => n + c, 0);
  return {
    figures: result,
    checks: [
      check(`from scratch: ${SYNCS} of ${SYNCS} Syncs still Ready once their writes' echoes are handled`, settled.ready === SYNCS && settled.total === SYNCS, `${settled.ready} of ${settled.total}`),
      check(`from scratch: each ConfigMap written once (${SYNCS * OBJECTS})`, configMapWrites === SYNCS * OBJECTS, configMapWrites),
      check(`from scratch: at most ${WRITES_PER_SYNC} writes per Sync`, result.writes.total <= SYNCS * WRITES_PER_SYNC, (result.writes.total / SYNCS).toFixed(2)),
    ],
  };
}

async function afterRestart(client: KubeClient, target: OperatorTarget, auditLog: string): Promise<Phase> {
  const epoch = Date.now();
  const started = performance.now();
  const op = await OperatorProcess.start(target, NS);
  await until(`${SYNCS} Syncs reconciled after the restart`, async () => (await reconciles(op)) >= SYNCS, TIMEOUT_MS, 500);
  await until('the work queue empty', async () => sampleValue(await op.metrics(), 'workqueue_depth', { name: 'sync' }) === 0, TIMEOUT_MS, 500);
  const reconciledMs = performance.now() - started;
  const cpuMs = processCpuMs(op.pid); // the whole process: its start and priming included
  await sleep(2_000);
  const still = await readiness(client);
  const result = {
    reconciledMs: Math.round(reconciledMs),
    readyAfter: still.ready,
    writes: auditWrites(auditLog, epoch, Date.now()),
    requests: await op.requests(),
    operatorCpuMs: Math.round(cpuMs),
    peakRssKiB: memoryKiB(op.pid!).peak,
  };
  console.log(
    `after a restart: every Sync reconciled in ${(reconciledMs / 1000).toFixed(1)} s (from the start of the process); writes ${result.writes.total};` +
      ` requests ${total(result.requests)}; CPU ${(cpuMs / 1000).toFixed(1)} s; peak RSS ${mib(result.peakRssKiB)}; Ready ${still.ready}/${SYNCS}`,
  );
  const reconciled = await reconciles(op);
  await op.stop();
  const requests = total(result.requests);
  return {
    figures: result,
    checks: [
      // The wait above ended once every Sync was reconciled; the claim is that none was reconciled again (nothing changed).
      check(`after the restart: every Sync reconciled once, none again (${SYNCS})`, reconciled === SYNCS, reconciled),
      check('after the restart: 0 writes', result.writes.total === 0, `${result.writes.total} ${JSON.stringify(result.writes.byKind)}`),
      check(`after the restart: ${SYNCS} of ${SYNCS} Syncs Ready`, still.ready === SYNCS && still.total === SYNCS, `${still.ready} of ${still.total}`),
      check(`after the restart: at most ${RESTART_REQUESTS} requests (none per Sync)`, requests <= RESTART_REQUESTS, `${requests} ${JSON.stringify(result.requests)}`),
    ],
  };
}

async function main(): Promise<void> {
  console.log(`stage load: ${SYNCS} Syncs x ${OBJECTS} ConfigMaps, on a control plane of its own`);
  const ran = provenance();
  const plane = await ownPlane(STAGE, [CLUSTER]);
  try {
    const { client, kubeconfig, auditLog } = plane.clusters[CLUSTER]!;
    await client.request({ method: 'POST', path: '/api/v1/namespaces', body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } } });
    const target = snapshotOperator(kubeconfig, path.join(SOAK_DIR, 'load-operator.log'));
    const scratch = await fromScratch(client, target, auditLog);
    const restart = await afterRestart(client, target, auditLog);
    finishStage(STAGE, ran, [...scratch.checks, ...restart.checks], { syncs: SYNCS, objects: OBJECTS, fromScratch: scratch.figures, afterRestart: restart.figures });
  } finally {
    await stopOperators();
    await plane.down();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
