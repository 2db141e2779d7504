// Applying with a Sync (a real `syncprims run` process) next to `kubectl apply
// --server-side` and a bare concurrent client, on one dedicated cluster of the
// local control plane (bench-sync, started here and stopped at the end):
//
// 1. 1,000 ConfigMaps: a Sync with them inline (wait: true), timed from
//    creating the Sync to Ready=True, then a no-op resync (the
//    reconcile-requested-at annotation until status.lastHandledReconcileAt
//    echoes it); kubectl on a fresh namespace and again on the unchanged
//    objects; bare server-side apply PATCHes at 16 and 32 in flight. Requests
//    are counted from the operator's metrics, the bare client's own count and
//    the API server's audit log (write requests only).
// 2. Real-world sets from test/fixtures/corpus (a copy of ../shared/corpus) (kube-prometheus with its setup/
//    CRDs, Argo CD's install.yaml): a Sync with an http source (a .tar.gz built
//    and served here), wait: false, versus kubectl as their docs say to apply them.
//
// Run it with `bench/run.sh sync` (from the repository root). The operator is
// compiled from the committed HEAD into .local/bench-sync-operator (so others'
// work in progress under src/ and dist/ does not change what is measured), and
// run as `node .../dist/cli/main.js run`. CM_RUNS (rounds of the ConfigMaps, default 5), RUNS (of the
// real-world sets, default 3) and COUNT (default 1000) can be changed through the environment, and OPERATOR_NODE_ARGS gives the operator's process node
// flags (`--cpu-prof --cpu-prof-dir=DIR`). It prints figures and writes docs/benchmarks/sync.md;
// it asserts nothing about them.
import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import zlib from 'node:zlib';
import tar from 'tar-stream';
import { stringify } from 'yaml';
import { API_VERSION } from '../src/api/kinds.js';
import { OWNER_KIND_LABEL, OWNER_NAME_LABEL, OWNER_NAMESPACE_LABEL, RECONCILE_REQUESTED_AT_ANNOTATION } from '../src/api/marks.js';
import { KubeClient } from '../src/kube/client.js';
import { loadKubeConfigFile } from '../src/kube/config.js';
import { collectionPath, type KubeObject } from '../src/kube/resources.js';
import { watchEvents } from '../src/kube/watch-stream.js';
import { auditLogTail } from '../test/support/audit-files.js';
import { applyAll, type BareResult } from './bare-apply.js';
import {
  buildOperator,
  controlplane,
  createNamespace,
  deleteNamespace,
  deleteSyncNamespace,
  exists,
  ignoreNotFound,
  installCrds,
  int,
  LOCAL,
  type LogLine,
  median,
  OperatorProcess,
  type OperatorTarget,
  processCpuMs,
  ROOT,
  sampleLoad,
  sec,
  serverVersion,
  sleep,
  statusOf,
  stopOperators,
  SYNCS,
  until,
  withTimeout,
} from './support.js';

const run = promisify(execFile);


const CLUSTER = 'bench-sync';
const KUBECTL = path.join(LOCAL, 'bin', 'kubectl');
const KUBECONFIG = path.join(LOCAL, `${CLUSTER}.kubeconfig`);
const AUDIT_LOG = path.join(LOCAL, `${CLUSTER}.audit.log`);
const OPERATOR_LOG = path.join(LOCAL, `${CLUSTER}-operator.log`);
/** The operator measured: compiled here from the committed HEAD (others may rebuild dist/ meanwhile). */
const OPERATOR_DIR = path.join(LOCAL, `${CLUSTER}-operator`);
const OPERATOR_MAIN = path.join(OPERATOR_DIR, 'dist', 'cli', 'main.js');
const OPERATOR: OperatorTarget = { main: OPERATOR_MAIN, kubeconfig: KUBECONFIG, log: OPERATOR_LOG };
const CORPUS = process.env.CORPUS ?? path.join(ROOT, 'test', 'fixtures', 'corpus');
const OUT = path.join(ROOT, 'docs', 'benchmarks', 'sync.md');
const RUNS = Number(process.env.RUNS ?? 3);
/** The ConfigMap rows differ by less than this machine's noise: more rounds than the slow real-world sets. */
const CM_RUNS = Number(process.env.CM_RUNS ?? 5);
const COUNT = Number(process.env.COUNT ?? 1000);
/** Node flags for the operator's process (`--cpu-prof --cpu-prof-dir=...` to see where its time goes). */
const OPERATOR_NODE_ARGS = (process.env.OPERATOR_NODE_ARGS ?? '').split(' ').filter(Boolean);
const BARE_CONCURRENCY = [16, 32];
/** bench/bare-apply.ts, compiled beside this file: the bare client as a process of its own. */
const BARE_APPLY = path.join(path.dirname(fileURLToPath(import.meta.url)), 'bare-apply.js');
const BENCH_UA = 'syncprims-bench/sync';
const BARE_UA = 'syncprims-bench/bare-client';
const OPERATOR_UA = 'syncprims-operator';
const KUBECTL_UA = 'kubectl/';
const SYNC_NAME = 'configmaps';
/** Every namespace of the benchmark: `bench-sync-<what>-<6 hex digits>`. */
const NS_PREFIX = 'bench-sync-';
/** How long the audit log is given to catch up before it is read. */
const AUDIT_SETTLE_MS = 1_000;
const TIMEOUT_MS = 600_000;

// ---------------------------------------------------------------- results

/** Write requests one client sent, from the audit log. */
interface Writes {
  total: number;
  /** `dryRun=All` requests: logged as writes, nothing is stored. */
  dryRun: number;
  /** The others, by `verb resource[/subresource]`. */
  byKind: Record<string, number>;
  /** Every one, in the order received. */
  timeline: TimedWrite[];
}

interface TimedWrite {
  /** resource[/subresource] */
  resource: string;
  dryRun: boolean;
  /** Epoch ms: requestReceivedTimestamp and stageTimestamp (ResponseComplete). */
  received: number;
  completed: number;
}

interface Sample {
  ms: number;
  /** Requests by method, where they could be counted (operator metrics, bare client). */
  requests?: Record<string, number>;
  writes?: Writes;
  /** Objects whose resourceVersion changed (second passes). */
  changed?: number;
  /** Objects applied (Sync inventory, or kubectl's apply patches). */
  objects?: number;
  clientCpuMs: number;
  apiserverCpuMs: number;
  /** Steps of a multi-command run, in ms. */
  steps?: number[];
  /** The operator's: ms from the request that started the phase to each milestone. */
  timeline?: Record<string, number>;
}

type Rows = Map<string, Sample[]>;

function record(rows: Rows | undefined, label: string, sample: Sample): void {
  const line = [
    `${Math.round(sample.ms)} ms`,
    sample.requests ? `requests ${formatCounts(sample.requests)}` : '',
    sample.writes ? `writes ${formatWrites(sample.writes)}` : '',
    sample.changed !== undefined ? `changed ${sample.changed}` : '',
  ].filter(Boolean);
  console.log(`  ${rows ? '' : '(warm-up) '}${label}: ${line.join(', ')}`);
  if (!rows) return;
  const samples = rows.get(label) ?? [];
  samples.push(sample);
  rows.set(label, samples);
}

interface Bench {
  client: KubeClient;
  apiserverPid: number;
  tmp: string;
  kubectlCache: string;
}

// ---------------------------------------------------------------- main

async function main(): Promise<void> {
  const load = sampleLoad();
  const build = await buildOperator(OPERATOR_DIR);
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'syncprims-bench-sync-'));
  let bench: Bench | undefined;
  const server = await serveArchives(loadCorpora());
  try {
    bench = await startCluster(tmp);
    await cleanLeftovers(bench, server.corpora);
    const cmRows: Rows = new Map();
    console.log(`${COUNT} ConfigMaps: warm-up round (not recorded)...`);
    await configMapRound(bench, server, undefined);
    for (let round = 1; round <= CM_RUNS; round++) {
      console.log(`ConfigMaps, round ${round} of ${CM_RUNS}...`);
      await configMapRound(bench, server, cmRows);
    }
    const corpusRows: Rows = new Map();
    for (let round = 1; round <= RUNS; round++) {
      console.log(`corpus, round ${round} of ${RUNS}...`);
      for (const corpus of server.corpora) await corpusRound(bench, server, corpus, corpusRows, round % 2 === 1);
    }
    const kubernetes = await serverVersion(bench.client);
    writeReport({ cmRows, corpusRows, corpora: server.corpora, kubernetes, load: load.stop(), fetches: server.fetches, build });
  } finally {
    load.stop();
    await stopOperators();
    server.close();
    bench?.client.close();
    await stopCluster();
    rmSync(tmp, { recursive: true, force: true });
    rmSync(OPERATOR_DIR, { recursive: true, force: true });
  }
}

// ---------------------------------------------------------------- cluster


async function startCluster(tmp: string): Promise<Bench> {
  console.log(`starting ${CLUSTER}...`);
  await controlplane(['up', CLUSTER]);
  const client = await KubeClient.create(CLUSTER, loadKubeConfigFile(KUBECONFIG), BENCH_UA);
  const apiserverPid = Number(readFileSync(path.join(LOCAL, `${CLUSTER}.pid`), 'utf8').trim());
  await installCrds(client);
  return { client, apiserverPid, tmp, kubectlCache: path.join(tmp, 'kubectl-cache') };
}

async function stopCluster(): Promise<void> {
  console.log(`stopping ${CLUSTER}...`);
  await controlplane(['stop', CLUSTER]).catch((err: unknown) => console.error(String(err)));
}




/** Namespaces and corpus objects left by an earlier run that was cut short (the cluster's data outlives it). */
async function cleanLeftovers(bench: Bench, corpora: Corpus[]): Promise<void> {
  const list = await bench.client.request<{ items: KubeObject[] }>({ path: '/api/v1/namespaces' });
  const ours = list.items.map((n) => n.metadata.name ?? '').filter((n) => n.startsWith(NS_PREFIX));
  // The corpora first: an APIService they leave keeps namespaces from being deleted.
  for (const corpus of corpora) await cleanCorpus(bench, corpus);
  for (const ns of ours) {
    console.log(`deleting ${ns}, left by an earlier run...`);
    await deleteSyncNamespace(bench.client, ns);
  }
}

// ---------------------------------------------------------------- helpers



/** name -> resourceVersion of the ConfigMaps of a namespace. */
async function configMapVersions(client: KubeClient, namespace: string): Promise<Map<string, string>> {
  const versions = new Map<string, string>();
  let token: string | undefined;
  do {
    const page = await client.request<{ metadata: { continue?: string }; items: KubeObject[] }>({
      path: `/api/v1/namespaces/${namespace}/configmaps`,
      query: { limit: 500, continue: token },
      timeoutMs: 60_000,
    });
    for (const cm of page.items) versions.set(cm.metadata.name ?? '', cm.metadata.resourceVersion ?? '');
    token = page.metadata.continue || undefined;
  } while (token);
  return versions;
}

function changedCount(before: Map<string, string>, after: Map<string, string>): number {
  let n = 0;
  for (const [name, rv] of after) if (before.get(name) !== rv) n++;
  return n + [...before.keys()].filter((name) => !after.has(name)).length;
}


/** User plus system CPU time of a process, from /proc (Linux; 10 ms resolution). */

function countsDiff(after: Record<string, number>, before: Record<string, number>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [k, v] of Object.entries(after)) {
    const d = v - (before[k] ?? 0);
    if (d !== 0) out[k] = d;
  }
  return out;
}

// ---------------------------------------------------------------- watching

interface Seen {
  at: number;
  object: KubeObject;
}

/** What a timed action saw: when its request was sent (performance.now() and epoch ms) and the awaited event. */
interface Timed {
  sentAt: number;
  sentEpoch: number;
  seen: Seen;
}

/**
 * Opens a watch on one object (it may not exist yet) and resolves `seen` with
 * the time the first event that passes `test` arrived. `test` may throw to fail.
 */
async function watchFor(
  client: KubeClient,
  collection: string,
  name: string,
  test: (o: KubeObject) => boolean,
): Promise<{ seen: Promise<Seen>; close: () => void }> {
  const fieldSelector = `metadata.name=${name}`;
  const list = await client.request<{ metadata: { resourceVersion: string } }>({ path: collection, query: { fieldSelector } });
  const res = await client.stream({
    path: collection,
    query: { watch: 1, fieldSelector, resourceVersion: list.metadata.resourceVersion },
    idleTimeoutMs: TIMEOUT_MS,
  });
  const seen = (async (): Promise<Seen> => {
    for await (const event of watchEvents(res)) {
      if (event.type === 'ERROR') throw new Error(`watch of ${name}: ${JSON.stringify(event.object)}`);
      if ((event.type === 'ADDED' || event.type === 'MODIFIED') && test(event.object)) return { at: performance.now(), object: event.object };
    }
    throw new Error(`the watch of ${name} ended`);
  })();
  seen.catch(() => undefined);
  return { seen, close: () => res.destroy() };
}

/** Ready=True for the current generation; throws on Ready=False. */
function syncReady(o: KubeObject): boolean {
  const ready = statusOf(o).conditions?.find((c) => c.type === 'Ready');
  if (!ready || ready.observedGeneration !== o.metadata.generation) return false;
  if (ready.status === 'False') throw new Error(`Sync ${o.metadata.namespace}/${o.metadata.name}: Ready=False ${ready.reason}: ${ready.message}`);
  return ready.status === 'True';
}

// ---------------------------------------------------------------- audit log

interface AuditEvent {
  verb: string;
  requestURI: string;
  userAgent?: string;
  objectRef?: { resource?: string; subresource?: string; namespace?: string };
  requestReceivedTimestamp: string;
  stageTimestamp?: string;
}

/** The write requests the API server logged between open() and close(). */
class AuditWindow {
  private readonly offset: number;
  private readonly from: number;
  private to = Infinity;

  constructor() {
    this.offset = existsSync(AUDIT_LOG) ? statSync(AUDIT_LOG).size : 0;
    this.from = Date.now();
  }

  close(): void {
    this.to = Date.now();
  }

  async writes(userAgentPrefix: string): Promise<Writes> {
    await sleep(AUDIT_SETTLE_MS);
    const writes: Writes = { total: 0, dryRun: 0, byKind: {}, timeline: [] };
    for (const e of this.events()) {
      if (!(e.userAgent ?? '').startsWith(userAgentPrefix)) continue;
      writes.total++;
      const dryRun = /[?&]dryRun=/.test(e.requestURI);
      const resource = `${e.objectRef?.resource ?? '?'}${e.objectRef?.subresource ? `/${e.objectRef.subresource}` : ''}`;
      const received = Date.parse(e.requestReceivedTimestamp);
      writes.timeline.push({ resource, dryRun, received, completed: e.stageTimestamp ? Date.parse(e.stageTimestamp) : received });
      if (dryRun) {
        writes.dryRun++;
        continue;
      }
      const kind = `${e.verb} ${resource}`;
      writes.byKind[kind] = (writes.byKind[kind] ?? 0) + 1;
    }
    writes.timeline.sort((a, b) => a.received - b.received);
    return writes;
  }

  private events(): AuditEvent[] {
    const text = auditLogTail(AUDIT_LOG, this.offset);
    const events: AuditEvent[] = [];
    for (const line of text.split('\n')) {
      if (!line.trim()) continue;
      const e = JSON.parse(line) as AuditEvent;
      const t = Date.parse(e.requestReceivedTimestamp);
      if (t >= this.from - 5 && t <= this.to) events.push(e);
    }
    return events;
  }
}

// ---------------------------------------------------------------- the operator

/** What the operator, the API server and the audit log say about one timed phase. */
async function operatorPhase(bench: Bench, op: OperatorProcess, action: () => Promise<Timed>): Promise<{ sample: Sample; seen: Seen }> {
  const requests = await op.requests();
  const cpu = processCpuMs(op.pid);
  const apiCpu = processCpuMs(bench.apiserverPid);
  const audit = new AuditWindow();
  const { sentAt, sentEpoch, seen } = await action();
  const sample: Sample = {
    ms: seen.at - sentAt,
    clientCpuMs: processCpuMs(op.pid) - cpu,
    apiserverCpuMs: processCpuMs(bench.apiserverPid) - apiCpu,
  };
  audit.close();
  sample.requests = countsDiff(await op.requests(), requests);
  sample.writes = await audit.writes(OPERATOR_UA);
  sample.timeline = operatorTimeline(sample.writes.timeline, op.logsSince(sentEpoch), sentEpoch, sample.ms);
  return { sample, seen };
}

/** Stage 1 of the apply engine (src/apply/order.ts): applied and, for CRDs, Established before the rest. */
const STAGE_ONE = new Set(['customresourcedefinitions', 'namespaces', 'clusterroles']);
const OWN_RESOURCES = new Set(['syncs', 'events']);

/**
 * Where the operator's time went, in ms from the request that started the phase:
 * from its writes in the audit log and its own log lines.
 */
function operatorTimeline(writes: TimedWrite[], logs: LogLine[], from: number, seenMs: number): Record<string, number> {
  const t: Record<string, number> = {};
  const rel = (epoch: number): number => epoch - from;
  const applies = writes.filter((w) => !OWN_RESOURCES.has(w.resource.split('/')[0] ?? '') && !w.dryRun);
  const checks = writes.filter((w) => w.dryRun);
  const first = writes[0];
  if (first) t['first write sent'] = rel(first.received);
  const work = applies.length > 0 ? applies : checks;
  if (work[0]) t['first apply PATCH (or dry run) sent'] = rel(work[0].received);
  const lastStageOne = applies.filter((w) => STAGE_ONE.has(w.resource)).pop();
  const afterStageOne = lastStageOne && applies.find((w) => !STAGE_ONE.has(w.resource) && w.received >= lastStageOne.completed);
  if (lastStageOne && afterStageOne) {
    t['stage 1 (CRDs, Namespaces, ClusterRoles) written'] = rel(lastStageOne.completed);
    t['stage 2 starts (CRDs Established)'] = rel(afterStageOne.received);
  }
  const last = work[work.length - 1];
  if (last) t['last apply PATCH (or dry run) answered'] = rel(last.completed);
  const applied = logs.find((l) => l.msg === 'applied');
  if (applied) t["'applied' logged"] = rel(applied.time);
  const ready = logs.find((l) => l.msg === 'ready');
  if (ready) t["'ready' logged"] = rel(ready.time);
  const status = writes.filter((w) => w.resource === 'syncs/status').pop();
  if (status) t['last status PATCH answered'] = rel(status.completed);
  t['seen by the watch'] = seenMs;
  return t;
}

/** Creates a Sync and resolves when it is Ready=True. */
async function createSyncUntilReady(client: KubeClient, namespace: string, sync: KubeObject): Promise<Timed> {
  const collection = collectionPath(SYNCS, namespace);
  const watch = await watchFor(client, collection, sync.metadata.name ?? '', syncReady);
  try {
    const sentEpoch = Date.now();
    const sentAt = performance.now();
    await client.request({ method: 'POST', path: collection, body: sync, timeoutMs: 60_000 });
    return { sentAt, sentEpoch, seen: await withTimeout(`Sync ${sync.metadata.name} to be Ready`, watch.seen) };
  } finally {
    watch.close();
  }
}

/** Annotates a Sync and resolves when its status echoes the annotation. */
async function resyncUntilEchoed(client: KubeClient, namespace: string, name: string, value: string): Promise<Timed> {
  const collection = collectionPath(SYNCS, namespace);
  const watch = await watchFor(client, collection, name, (o) => statusOf(o).lastHandledReconcileAt === value);
  try {
    const sentEpoch = Date.now();
    const sentAt = performance.now();
    await client.request({
      method: 'PATCH',
      path: `${collection}/${name}`,
      contentType: 'application/merge-patch+json',
      body: { metadata: { annotations: { [RECONCILE_REQUESTED_AT_ANNOTATION]: value } } },
    });
    return { sentAt, sentEpoch, seen: await withTimeout(`Sync ${name} to echo the reconcile request`, watch.seen) };
  } finally {
    watch.close();
  }
}

// ---------------------------------------------------------------- part 1: 1,000 ConfigMaps

const LABEL = {
  opCreate: `operator: create the Sync → Ready=True`,
  opResync: 'operator: no-op resync (annotation → `lastHandledReconcileAt` echoed)',
  opHttp: 'operator, http source (the same objects in one YAML file): create the Sync → Ready=True',
  opHttpWarm: 'operator, http source, in a process that applied and pruned such a Sync before (warm): create the Sync → Ready=True',
  opInlineWarm: 'operator, inline, in a process that applied and pruned such a Sync before (warm): create the Sync → Ready=True',
  kubectlFresh: '`kubectl apply --server-side`, fresh namespace',
  kubectlAgain: '`kubectl apply --server-side`, again, objects unchanged',
  bareFresh: (c: number) => `bare client, ${c} in flight, fresh namespace`,
  bareAgain: (c: number) => `bare client, ${c} in flight, again, objects unchanged`,
  bareProcess: (c: number) => `bare client, ${c} in flight, in a new process (as new as the operator's), fresh namespace`,
  bareWatched: (c: number) => `bare client, ${c} in flight, with a watch of the ConfigMaps (as the operator keeps), fresh namespace`,
};

/** The ConfigMaps; `namespace` and the owner labels as the operator renders them, for the other appliers. */
function configMaps(rendered?: { namespace: string }): KubeObject[] {
  return Array.from({ length: COUNT }, (_, i) => {
    const name = `cm-${String(i).padStart(4, '0')}`;
    const labels: Record<string, string> = { 'app.kubernetes.io/part-of': 'bench-sync' };
    if (rendered) {
      Object.assign(labels, { [OWNER_KIND_LABEL]: 'Sync', [OWNER_NAMESPACE_LABEL]: rendered.namespace, [OWNER_NAME_LABEL]: SYNC_NAME });
    }
    const metadata = rendered ? { name, namespace: rendered.namespace, labels } : { name, labels };
    return {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata,
      data: { index: String(i), 'settings.yaml': `replicas: ${i % 5}\nlevel: info\nowner: team-${i % 17}\nnote: ${'x'.repeat(64)}\n` },
    };
  });
}

async function configMapRound(bench: Bench, server: ArchiveServer, rows: Rows | undefined): Promise<void> {
  await operatorConfigMaps(bench, rows);
  await operatorInlineWarmConfigMaps(bench, rows);
  await operatorHttpConfigMaps(bench, server, rows);
  await operatorHttpConfigMaps(bench, server, rows, true);
  await kubectlConfigMaps(bench, rows);
  for (const c of BARE_CONCURRENCY) await bareConfigMaps(bench, rows, c);
  await bareProcessConfigMaps(bench, rows, BARE_CONCURRENCY[0] ?? 16);
  await bareWatchedConfigMaps(bench, rows, BARE_CONCURRENCY[0] ?? 16);
}

async function operatorConfigMaps(bench: Bench, rows: Rows | undefined): Promise<void> {
  const { client } = bench;
  const namespace = await createNamespace(client, `${NS_PREFIX}op`);
  const op = await OperatorProcess.start(OPERATOR, namespace, [], OPERATOR_NODE_ARGS);
  try {
    record(rows, LABEL.opCreate, await createConfigMapSync(bench, op, namespace, { inline: configMaps() }));
    await sleep(1_000); // what follows Ready (an Event) stays out of the resync's window
    const before = await configMapVersions(client, namespace);
    const value = new Date().toISOString();
    const resync = await operatorPhase(bench, op, () => resyncUntilEchoed(client, namespace, SYNC_NAME, value));
    resync.sample.changed = changedCount(before, await configMapVersions(client, namespace));
    record(rows, LABEL.opResync, resync.sample);
  } finally {
    await op.stop();
  }
  await deleteSyncNamespace(client, namespace);
}

/** The inline Sync again, in a process that applied and pruned one like it first (see `warmUp`). */
async function operatorInlineWarmConfigMaps(bench: Bench, rows: Rows | undefined): Promise<void> {
  const { client } = bench;
  const namespace = await createNamespace(client, `${NS_PREFIX}opwarm`);
  const warmNamespace = await createNamespace(client, `${NS_PREFIX}warm`);
  const op = await OperatorProcess.start(OPERATOR, namespace, [], OPERATOR_NODE_ARGS);
  try {
    await warmUp(client, namespace, warmNamespace, { inline: configMaps() });
    record(rows, LABEL.opInlineWarm, await createConfigMapSync(bench, op, namespace, { inline: configMaps() }));
  } finally {
    await op.stop();
  }
  await deleteSyncNamespace(client, namespace);
  await deleteSyncNamespace(client, warmNamespace);
}

/** Creates the Sync of the ConfigMaps with `source` and times it until Ready (the objects applied counted). */
async function createConfigMapSync(bench: Bench, op: OperatorProcess, namespace: string, source: Record<string, unknown>): Promise<Sample> {
  const sync: KubeObject = {
    apiVersion: API_VERSION,
    kind: 'Sync',
    metadata: { name: SYNC_NAME, namespace },
    spec: { source, defaultNamespace: namespace, wait: true },
  };
  const created = await operatorPhase(bench, op, () => createSyncUntilReady(bench.client, namespace, sync));
  return { ...created.sample, objects: statusOf(created.seen.object).inventory?.entries?.length };
}

/**
 * The same Sync with the objects in a YAML file served over loopback (`source.http`): the Sync
 * object stays small, where the inline form carries the 1,000 objects through each of its writes.
 */
async function operatorHttpConfigMaps(bench: Bench, server: ArchiveServer, rows: Rows | undefined, warm = false): Promise<void> {
  const { client } = bench;
  const namespace = await createNamespace(client, `${NS_PREFIX}ophttp`);
  const url = server.serve('configmaps.yaml', Buffer.from(configMaps().map((o) => stringify(o)).join('---\n')));
  const op = await OperatorProcess.start(OPERATOR, namespace, [], OPERATOR_NODE_ARGS);
  const warmNamespace = warm ? await createNamespace(client, `${NS_PREFIX}warm`) : undefined;
  try {
    if (warmNamespace) await warmUp(client, namespace, warmNamespace, { http: { url } });
    record(rows, warm ? LABEL.opHttpWarm : LABEL.opHttp, await createConfigMapSync(bench, op, namespace, { http: { url } }));
  } finally {
    await op.stop();
  }
  await deleteSyncNamespace(client, namespace);
  if (warmNamespace) await deleteSyncNamespace(client, warmNamespace);
}

/**
 * What a running operator has done before: a Sync of the same objects (into `target`), Ready, then
 * deleted and its objects pruned, before the clock starts. A new process's first Sync also pays for
 * compiling its code (the JIT), which the bare client, in this long-running process, paid in the
 * warm-up round.
 */
async function warmUp(client: KubeClient, namespace: string, target: string, source: Record<string, unknown>): Promise<void> {
  const name = 'warm-up';
  const sync: KubeObject = { apiVersion: API_VERSION, kind: 'Sync', metadata: { name, namespace }, spec: { source, defaultNamespace: target, wait: true } };
  const syncPath = `${collectionPath(SYNCS, namespace)}/${name}`;
  await createSyncUntilReady(client, namespace, sync);
  await client.request({ method: 'DELETE', path: syncPath });
  await until('the warm-up Sync to be gone (its objects pruned)', async () => !(await exists(client, syncPath)));
  await sleep(1_000); // its Events and the watch's deletions stay out of the measured span
}

interface KubectlRun {
  ms: number;
  cpuMs: number;
  stdout: string;
}

/** Runs kubectl (version-matched, from .local/bin) under /usr/bin/time for its CPU. */
async function kubectl(bench: Bench, args: string[]): Promise<KubectlRun> {
  const timeFile = path.join(bench.tmp, 'kubectl.time');
  const started = performance.now();
  const { stdout } = await run(
    '/usr/bin/time',
    ['-f', '%U %S', '-o', timeFile, KUBECTL, '--kubeconfig', KUBECONFIG, '--cache-dir', bench.kubectlCache, ...args],
    { maxBuffer: 256 * 2 ** 20, timeout: TIMEOUT_MS },
  ).catch((err: unknown) => {
    throw new Error(`kubectl ${args.join(' ')}: ${(err as { stderr?: string }).stderr ?? String(err)}`);
  });
  const ms = performance.now() - started;
  const [user = NaN, system = NaN] = readFileSync(timeFile, 'utf8').trim().split('\n').pop()!.split(' ').map(Number);
  return { ms, cpuMs: (user + system) * 1000, stdout };
}

async function kubectlPhase(bench: Bench, commands: string[][]): Promise<Sample> {
  const apiCpu = processCpuMs(bench.apiserverPid);
  const audit = new AuditWindow();
  const startEpoch = Date.now();
  const steps: KubectlRun[] = [];
  for (const args of commands) steps.push(await kubectl(bench, args));
  audit.close();
  const sample: Sample = {
    ms: steps.reduce((n, s) => n + s.ms, 0),
    clientCpuMs: steps.reduce((n, s) => n + s.cpuMs, 0),
    apiserverCpuMs: processCpuMs(bench.apiserverPid) - apiCpu,
    steps: steps.map((s) => s.ms),
  };
  sample.writes = await audit.writes(KUBECTL_UA);
  sample.objects = sample.writes.byKind['patch configmaps'] ?? undefined;
  const { timeline } = sample.writes;
  const first = timeline[0];
  const last = timeline[timeline.length - 1];
  sample.timeline = {};
  if (first) sample.timeline['first apply PATCH (or dry run) sent'] = first.received - startEpoch;
  if (last) sample.timeline['last apply PATCH (or dry run) answered'] = last.completed - startEpoch;
  sample.timeline['kubectl exited'] = sample.ms;
  return sample;
}

async function kubectlConfigMaps(bench: Bench, rows: Rows | undefined): Promise<void> {
  const { client } = bench;
  const namespace = await createNamespace(client, `${NS_PREFIX}kubectl`);
  const file = path.join(bench.tmp, `${namespace}.yaml`);
  writeFileSync(file, configMaps({ namespace }).map((o) => stringify(o)).join('---\n'));
  const apply = ['apply', '--server-side', '--force-conflicts', '-f', file];
  record(rows, LABEL.kubectlFresh, await kubectlPhase(bench, [apply]));
  const before = await configMapVersions(client, namespace);
  const again = await kubectlPhase(bench, [apply]);
  again.changed = changedCount(before, await configMapVersions(client, namespace));
  record(rows, LABEL.kubectlAgain, again);
  rmSync(file);
  await deleteNamespace(client, namespace);
}

/** Server-side apply PATCHes, `concurrency` in flight, from a new client (new connections). */
async function bareApply(bench: Bench, objects: KubeObject[], concurrency: number, watch?: string): Promise<Sample> {
  const client = await KubeClient.create('bare', loadKubeConfigFile(KUBECONFIG), BARE_UA);
  // The watch (of the namespace's ConfigMaps), started before the clock, its events read and parsed as they come.
  const watched = watch ? await client.stream({ method: 'GET', path: `/api/v1/namespaces/${watch}/configmaps`, query: { watch: true }, idleTimeoutMs: 600_000 }) : undefined;
  const draining = watched ? drain(watchEvents(watched)) : undefined;
  const requests: Record<string, number> = {};
  client.observe((r) => void (requests[r.method] = (requests[r.method] ?? 0) + 1));
  const cpu = process.cpuUsage();
  const apiCpu = processCpuMs(bench.apiserverPid);
  const audit = new AuditWindow();
  const started = performance.now();
  await applyAll(client, objects, concurrency);
  const ms = performance.now() - started;
  const used = process.cpuUsage(cpu);
  audit.close();
  watched?.destroy();
  await draining;
  client.close();
  return {
    ms,
    requests,
    clientCpuMs: (used.user + used.system) / 1000,
    apiserverCpuMs: processCpuMs(bench.apiserverPid) - apiCpu,
    writes: await audit.writes(BARE_UA),
  };
}

/** Reads a watch's events until it ends (or fails: the caller ends it). */
async function drain(events: AsyncIterable<unknown>): Promise<void> {
  try {
    for await (const _ of events);
  } catch {
    // destroyed by the caller
  }
}

/**
 * The bare client in a process of its own, started for the run, connected,
 * then told to go: as new as the operator's process, whose first Sync pays
 * for compiling its code, where the in-process bare client runs warm.
 */
async function bareProcessConfigMaps(bench: Bench, rows: Rows | undefined, concurrency: number): Promise<void> {
  const namespace = await createNamespace(bench.client, `${NS_PREFIX}barep${concurrency}`);
  const file = path.join(mkdtempSync(path.join(os.tmpdir(), 'syncprims-bench-bare-')), 'objects.json');
  writeFileSync(file, JSON.stringify(configMaps({ namespace })));
  const child = spawn(process.execPath, [BARE_APPLY, KUBECONFIG, file, String(concurrency), BARE_UA], { stdio: ['pipe', 'pipe', 'inherit'] });
  try {
    const lines = createInterface({ input: child.stdout });
    const next = (): Promise<string> => new Promise((resolve, reject) => {
      lines.once('line', resolve);
      child.once('exit', (code) => reject(new Error(`the bare client's process exited (${code})`)));
    });
    if ((await withTimeout('the bare client to connect', next(), TIMEOUT_MS)) !== 'ready') throw new Error("the bare client's process did not say ready");
    const apiCpu = processCpuMs(bench.apiserverPid);
    const audit = new AuditWindow();
    const answer = next();
    child.stdin.write('go\n');
    const result = JSON.parse(await withTimeout("the bare client's applies", answer, TIMEOUT_MS)) as BareResult;
    audit.close();
    record(rows, LABEL.bareProcess(concurrency), {
      ms: result.ms,
      requests: result.requests,
      clientCpuMs: result.clientCpuMs,
      apiserverCpuMs: processCpuMs(bench.apiserverPid) - apiCpu,
      writes: await audit.writes(BARE_UA),
    });
  } finally {
    child.kill();
    rmSync(path.dirname(file), { recursive: true, force: true });
  }
  await deleteNamespace(bench.client, namespace);
}

/** The bare client with the watch an operator keeps of what it applies: what that watch costs the API server. */
async function bareWatchedConfigMaps(bench: Bench, rows: Rows | undefined, concurrency: number): Promise<void> {
  const namespace = await createNamespace(bench.client, `${NS_PREFIX}barew${concurrency}`);
  record(rows, LABEL.bareWatched(concurrency), await bareApply(bench, configMaps({ namespace }), concurrency, namespace));
  await deleteNamespace(bench.client, namespace);
}

async function bareConfigMaps(bench: Bench, rows: Rows | undefined, concurrency: number): Promise<void> {
  const { client } = bench;
  const namespace = await createNamespace(client, `${NS_PREFIX}bare${concurrency}`);
  const objects = configMaps({ namespace });
  record(rows, LABEL.bareFresh(concurrency), await bareApply(bench, objects, concurrency));
  const before = await configMapVersions(client, namespace);
  const again = await bareApply(bench, objects, concurrency);
  again.changed = changedCount(before, await configMapVersions(client, namespace));
  record(rows, LABEL.bareAgain(concurrency), again);
  await deleteNamespace(client, namespace);
}

// ---------------------------------------------------------------- part 2: real-world sets

interface Corpus {
  name: string;
  /** What the archive holds: path inside it -> content. */
  files: { name: string; content: Buffer }[];
  archive: Buffer;
  defaultNamespace?: string;
  /** A namespace the set uses but does not create: created (untimed) before each run. */
  precreate?: string;
  /** kubectl commands, as the project's docs say, timed together. */
  kubectlSteps: string[][];
  kubectlStepNames: string[];
  deleteSteps: string[][];
  namespaces: string[];
  crdGroups: string[];
  apiServices: string[];
  /** The value of app.kubernetes.io/part-of on its objects. */
  partOf: string;
  /** How long each clean-up took (deleting, until the namespaces and CRDs were gone). */
  cleanupMs: number[];
}

function yamlFiles(dir: string, prefix = ''): { name: string; content: Buffer }[] {
  return readdirSync(dir)
    .filter((f) => /\.ya?ml$/.test(f))
    .sort()
    .map((f) => ({ name: `${prefix}${f}`, content: readFileSync(path.join(dir, f)) }));
}

function loadCorpora(): Corpus[] {
  const kp = path.join(CORPUS, 'kube-prometheus', 'manifests');
  const argo = path.join(CORPUS, 'argo-cd', 'install.yaml');
  const apply = ['apply', '--server-side', '--force-conflicts'];
  return [
    {
      name: 'kube-prometheus',
      files: [...yamlFiles(path.join(kp, 'setup'), 'setup/'), ...yamlFiles(kp)],
      archive: Buffer.alloc(0),
      kubectlSteps: [
        [...apply, '-f', path.join(kp, 'setup')],
        ['wait', '--for', 'condition=Established', '--all', 'CustomResourceDefinition', '--namespace=monitoring', '--timeout=300s'],
        [...apply, '-f', kp],
      ],
      kubectlStepNames: ['apply setup/', 'wait Established', 'apply manifests/'],
      // The CRs before their CRDs; the unavailable APIService is deleted first (below).
      deleteSteps: [
        ['delete', '--ignore-not-found', '--wait=false', '-f', kp],
        ['delete', '--ignore-not-found', '--wait=false', '-f', path.join(kp, 'setup')],
      ],
      namespaces: ['monitoring'],
      crdGroups: ['monitoring.coreos.com'],
      apiServices: ['v1beta1.metrics.k8s.io'],
      partOf: 'kube-prometheus',
      cleanupMs: [],
    },
    {
      name: 'argo-cd',
      files: [{ name: 'install.yaml', content: readFileSync(argo) }],
      archive: Buffer.alloc(0),
      defaultNamespace: 'argocd',
      precreate: 'argocd',
      kubectlSteps: [[...apply, '-n', 'argocd', '-f', argo]],
      kubectlStepNames: ['apply -n argocd'],
      deleteSteps: [['delete', '--ignore-not-found', '--wait=false', '-n', 'argocd', '-f', argo]],
      namespaces: ['argocd'],
      crdGroups: ['argoproj.io'],
      apiServices: [],
      partOf: 'argocd',
      cleanupMs: [],
    },
  ];
}

async function tarGz(files: { name: string; content: Buffer }[]): Promise<Buffer> {
  const pack = tar.pack();
  for (const f of files) pack.entry({ name: f.name, size: f.content.length, mode: 0o644, mtime: new Date(0) }, f.content);
  pack.finalize();
  const chunks: Buffer[] = [];
  for await (const chunk of pack.pipe(zlib.createGzip())) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

interface ArchiveServer {
  corpora: Corpus[];
  url: (corpus: Corpus) => string;
  /** Serves `content` at /<name> from now on; returns its URL. */
  serve: (name: string, content: Buffer) => string;
  fetches: Map<string, number>;
  close: () => void;
}

/** A node:http server on 127.0.0.1 serving each corpus as <name>.tar.gz, and files given to `serve`. */
async function serveArchives(corpora: Corpus[]): Promise<ArchiveServer> {
  for (const corpus of corpora) corpus.archive = await tarGz(corpus.files);
  const fetches = new Map<string, number>();
  const files = new Map<string, Buffer>();
  const server = http.createServer((req, res) => {
    const file = files.get(req.url ?? '');
    if (file) {
      res.writeHead(200, { 'content-type': 'application/yaml', 'content-length': file.length }).end(file);
      return;
    }
    const corpus = corpora.find((c) => req.url === `/${c.name}.tar.gz`);
    if (!corpus) {
      res.writeHead(404).end();
      return;
    }
    fetches.set(corpus.name, (fetches.get(corpus.name) ?? 0) + 1);
    res.writeHead(200, { 'content-type': 'application/gzip', 'content-length': corpus.archive.length }).end(corpus.archive);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  const serve = (name: string, content: Buffer): string => {
    files.set(`/${name}`, content);
    return `http://127.0.0.1:${port}/${name}`;
  };
  return { corpora, url: (c) => `http://127.0.0.1:${port}/${c.name}.tar.gz`, serve, fetches, close: () => server.close() };
}

const corpusLabel = (corpus: Corpus, how: 'operator' | 'kubectl'): string => `${corpus.name}|${how}`;

async function corpusRound(bench: Bench, server: ArchiveServer, corpus: Corpus, rows: Rows, operatorFirst: boolean): Promise<void> {
  const order = operatorFirst ? (['operator', 'kubectl'] as const) : (['kubectl', 'operator'] as const);
  for (const how of order) {
    if (corpus.precreate) {
      await bench.client.request({ method: 'POST', path: '/api/v1/namespaces', body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: corpus.precreate } } });
    }
    let syncNamespace: string | undefined;
    let sample: Sample;
    if (how === 'operator') {
      ({ sample, namespace: syncNamespace } = await corpusOperator(bench, server, corpus));
    } else {
      sample = await kubectlPhase(bench, corpus.kubectlSteps);
      sample.objects = Object.entries(sample.writes?.byKind ?? {})
        .filter(([k]) => k.startsWith('patch '))
        .reduce((n, [, v]) => n + v, 0);
    }
    record(rows, corpusLabel(corpus, how), sample);
    const started = performance.now();
    await cleanCorpus(bench, corpus);
    if (syncNamespace) await deleteSyncNamespace(bench.client, syncNamespace);
    corpus.cleanupMs.push(performance.now() - started);
  }
}

/** Applies the corpus with a Sync; returns the Sync's namespace, deleted by the caller after the corpus. */
async function corpusOperator(bench: Bench, server: ArchiveServer, corpus: Corpus): Promise<{ sample: Sample; namespace: string }> {
  const { client } = bench;
  const namespace = await createNamespace(client, `${NS_PREFIX}corpus`);
  const op = await OperatorProcess.start(OPERATOR, namespace, [], OPERATOR_NODE_ARGS);
  let sample: Sample;
  try {
    const spec: Record<string, unknown> = { source: { http: { url: server.url(corpus) } }, wait: false };
    if (corpus.defaultNamespace) spec.defaultNamespace = corpus.defaultNamespace;
    const sync: KubeObject = { apiVersion: API_VERSION, kind: 'Sync', metadata: { name: corpus.name, namespace }, spec };
    const created = await operatorPhase(bench, op, () => createSyncUntilReady(client, namespace, sync));
    sample = { ...created.sample, objects: statusOf(created.seen.object).inventory?.entries?.length };
  } finally {
    await op.stop();
  }
  return { sample, namespace };
}

/** Deletes what a corpus created (the operator is stopped by then) and waits until it is gone. */
async function cleanCorpus(bench: Bench, corpus: Corpus): Promise<void> {
  const { client } = bench;
  // An APIService without a backend makes discovery fail, which keeps namespaces from being deleted.
  for (const name of corpus.apiServices) {
    await ignoreNotFound(client.request({ method: 'DELETE', path: `/apis/apiregistration.k8s.io/v1/apiservices/${name}` }));
  }
  for (const args of corpus.deleteSteps) {
    // `-f manifests/` names CRs whose CRD may be gone already: those are expected errors.
    await kubectl(bench, args).catch((err: unknown) => {
      if (!/resource mapping not found/.test(String(err))) console.log(`  (cleanup) ${String(err).split('\n')[0]}`);
    });
  }
  // kubectl delete stops at kinds whose CRD is gone: the cluster-scoped RBAC objects by label too.
  const selector = { labelSelector: `app.kubernetes.io/part-of=${corpus.partOf}` };
  for (const kind of ['clusterroles', 'clusterrolebindings']) {
    await client.request({ method: 'DELETE', path: `/apis/rbac.authorization.k8s.io/v1/${kind}`, query: selector });
  }
  for (const ns of corpus.namespaces) await ignoreNotFound(client.request({ method: 'DELETE', path: `/api/v1/namespaces/${ns}` }));
  await until(`${corpus.name} to be deleted`, async () => {
    for (const ns of corpus.namespaces) if (await exists(client, `/api/v1/namespaces/${ns}`)) return false;
    const roles = await client.request<{ items: unknown[] }>({ path: '/apis/rbac.authorization.k8s.io/v1/clusterroles', query: selector });
    if (roles.items.length > 0) return false;
    const crds = await client.request<{ items: { spec: { group: string } }[] }>({ path: '/apis/apiextensions.k8s.io/v1/customresourcedefinitions' });
    return !crds.items.some((c) => corpus.crdGroups.includes(c.spec.group));
  }, 600_000, 500);
}

// ---------------------------------------------------------------- report



/** `GET 1,004, PATCH 1,001`; per-run values joined with `/` where they differ. */
function formatCounts(counts: Record<string, number>): string {
  return Object.entries(counts)
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([k, v]) => `${k} ${int(v)}`)
    .join(', ');
}

/**
 * `1,004 (patch configmaps 1,000; patch syncs/status 2; ...)`. With `collapse`, the apply
 * patches of the set's own objects are one figure and only the operator's own writes are named.
 */
function formatWrites(w: Writes, collapse = false): string {
  let entries = Object.entries(w.byKind);
  if (collapse) {
    const own = (k: string): boolean => OWN_RESOURCES.has(k.split(' ')[1]?.split('/')[0] ?? '');
    const applies = entries.filter(([k]) => k.startsWith('patch ') && !own(k)).reduce((n, [, v]) => n + v, 0);
    entries = [['apply patches', applies], ...entries.filter(([k]) => !k.startsWith('patch ') || own(k))];
  }
  const kinds = entries
    .sort(([ka, a], [kb, b]) => b - a || (ka < kb ? -1 : ka > kb ? 1 : 0))
    .map(([k, v]) => `${k} ${int(v)}`);
  if (w.dryRun) kinds.push(`dry-run patches ${int(w.dryRun)}`);
  return `${int(w.total)}${kinds.length ? ` (${kinds.join('; ')})` : ''}`;
}

/** The value of every run when they differ, else the one value. */
function perRun(samples: Sample[], show: (s: Sample) => string | undefined): string {
  const values = samples.map(show);
  if (values.every((v) => v === undefined)) return '';
  const distinct = [...new Set(values.map((v) => v ?? '–'))];
  return distinct.length === 1 ? (distinct[0] ?? '') : values.map((v) => v ?? '–').join(' / ');
}

function timingCells(samples: Sample[], objects: number): string[] {
  const ms = median(samples.map((s) => s.ms));
  return [
    `${sec(ms)} s`,
    samples.map((s) => int(s.ms)).join(', '),
    objects > 0 ? int(objects / (ms / 1000)) : '',
    `${int(median(samples.map((s) => s.clientCpuMs)))} ms`,
    `${int(median(samples.map((s) => s.apiserverCpuMs)))} ms`,
  ];
}

function configMapTable(rows: Rows): string {
  const header = [
    '| how | median | runs (ms) | objects/s | client CPU | apiserver CPU | requests sent (by method) | write requests in the audit log | objects changed |',
    '|---|---|---|---|---|---|---|---|---|',
  ];
  const lines = [...rows].map(([label, samples]) => {
    const cells = [
      label,
      ...timingCells(samples, COUNT),
      perRun(samples, (s) => (s.requests ? formatCounts(s.requests) : undefined)) || 'not visible',
      perRun(samples, (s) => (s.writes ? formatWrites(s.writes) : undefined)),
      perRun(samples, (s) => (s.changed === undefined ? undefined : int(s.changed))) || 'all (created)',
    ];
    return `| ${cells.join(' | ')} |`;
  });
  return [...header, ...lines].join('\n');
}

function corpusTable(rows: Rows, corpora: Corpus[]): string {
  const header = [
    '| set | how | objects | median | runs (ms) | objects/s | client CPU | apiserver CPU | steps (median, ms) | requests sent (by method) | write requests in the audit log |',
    '|---|---|---|---|---|---|---|---|---|---|---|',
  ];
  const lines: string[] = [];
  for (const corpus of corpora) {
    for (const how of ['operator', 'kubectl'] as const) {
      const samples = rows.get(corpusLabel(corpus, how)) ?? [];
      if (samples.length === 0) continue;
      const objects = median(samples.map((s) => s.objects ?? NaN));
      const steps = how === 'kubectl' ? corpus.kubectlStepNames.map((n, i) => `${n} ${int(median(samples.map((s) => s.steps?.[i] ?? NaN)))}`).join('; ') : '';
      const what = how === 'operator' ? 'Sync, http source (.tar.gz), `wait: false`: create → Ready=True' : `\`kubectl\`: ${corpus.kubectlStepNames.join(', ')}`;
      const cells = [
        corpus.name,
        what,
        int(objects),
        ...timingCells(samples, objects),
        steps,
        perRun(samples, (s) => (s.requests ? formatCounts(s.requests) : undefined)) || 'not visible',
        perRun(samples, (s) => (s.writes ? formatWrites(s.writes, true) : undefined)),
      ];
      lines.push(`| ${cells.join(' | ')} |`);
    }
  }
  return [...header, ...lines].join('\n');
}

function fetchNote(r: ReportInput): string {
  const runs = r.corpusRows.get(corpusLabel(r.corpora[0]!, 'operator'))?.length ?? 0;
  return r.corpora.map((c) => `${c.name}: ${r.fetches.get(c.name) ?? 0} times in ${runs} runs`).join(', ');
}

/** The milestones of the timelines, in the order they happen. */
const MILESTONES = [
  'first write sent',
  'first apply PATCH (or dry run) sent',
  'stage 1 (CRDs, Namespaces, ClusterRoles) written',
  'stage 2 starts (CRDs Established)',
  'last apply PATCH (or dry run) answered',
  "'applied' logged",
  'last status PATCH answered',
  "'ready' logged",
  'seen by the watch',
  'kubectl exited',
];

/** Median ms of each milestone, one column per row of samples. */
function timelineTable(columns: [string, Sample[]][]): string {
  const milestones: string[] = [];
  for (const [, samples] of columns) {
    for (const s of samples) for (const k of Object.keys(s.timeline ?? {})) if (!milestones.includes(k)) milestones.push(k);
  }
  const rank = (k: string): number => (MILESTONES.includes(k) ? MILESTONES.indexOf(k) : MILESTONES.length);
  milestones.sort((a, b) => rank(a) - rank(b));
  const header = [`| ms from the request that starts it | ${columns.map(([label]) => label).join(' | ')} |`, `|---${'|---'.repeat(columns.length)}|`];
  const lines = milestones.map((k) => {
    const cells = columns.map(([, samples]) => {
      const values = samples.map((s) => s.timeline?.[k]);
      return values.every((v) => v === undefined) ? '' : int(median(values.map((v) => v ?? NaN)));
    });
    return `| ${k} | ${cells.join(' | ')} |`;
  });
  return [...header, ...lines].join('\n');
}

/**
 * Two rows compared round by round (run i of each row was measured in the same round): which was
 * faster how often, and whether their ranges overlap, so a difference is not read into noise.
 */
function comparison(nameA: string, a: Sample[], nameB: string, b: Sample[]): string {
  const n = Math.min(a.length, b.length);
  if (n === 0) return '';
  let aFaster = 0;
  for (let i = 0; i < n; i++) if ((a[i]?.ms ?? NaN) < (b[i]?.ms ?? NaN)) aFaster++;
  const range = (xs: Sample[]): [number, number] => [Math.min(...xs.map((x) => x.ms)), Math.max(...xs.map((x) => x.ms))];
  const [aMin, aMax] = range(a);
  const [bMin, bMax] = range(b);
  const overlap = aMin <= bMax && bMin <= aMax;
  const ratio = median(a.map((x) => x.ms)) / median(b.map((x) => x.ms));
  return (
    `- ${nameA} / ${nameB}: medians ${sec(median(a.map((x) => x.ms)))} s / ${sec(median(b.map((x) => x.ms)))} s (×${ratio.toFixed(2)}); ` +
    `${nameA} was faster in ${aFaster} of ${n} rounds; runs ${sec(aMin)}–${sec(aMax)} s and ${sec(bMin)}–${sec(bMax)} s ` +
    (overlap ? '**overlap**: these runs do not order the two.' : 'do not overlap.')
  );
}

/** What the operator wrote during the no-op resync besides its dry runs and the status echo. */
function resyncWritesNote(samples: Sample[]): string {
  const extra = samples.map((s) =>
    Object.entries(s.writes?.byKind ?? {})
      .filter(([k]) => k !== 'patch syncs/status')
      .map(([k, v]) => `${k} ${v}`)
      .join(', '),
  );
  const echoes = samples.map((s) => s.writes?.byKind['patch syncs/status'] ?? 0);
  const others = extra.every((e) => e === '') ? 'nothing else' : `also: ${extra.map((e) => e || 'nothing').join(' / ')} (per run)`;
  const dryRuns = samples.map((s) => s.writes?.dryRun ?? 0);
  const checks = dryRuns.every((d) => d === 0) ? 'it sent no dry run' : `its other writes were \`dryRun=All\` patches (${dryRuns.join(', ')} per run)`;
  return `- During the no-op resync the operator's stored writes were the status echo (\`patch syncs/status\`: ${echoes.join(', ')} per run) and ${others}; ${checks}.`;
}

function configMapNotes(rows: Rows): string {
  const get = (label: string): Sample[] => rows.get(label) ?? [];
  const bare = BARE_CONCURRENCY[0] ?? 16;
  return [
    comparison('operator create', get(LABEL.opCreate), 'kubectl fresh', get(LABEL.kubectlFresh)),
    comparison('operator create', get(LABEL.opCreate), `bare ${bare} fresh`, get(LABEL.bareFresh(bare))),
    comparison('operator create (http source)', get(LABEL.opHttp), `bare ${bare} fresh`, get(LABEL.bareFresh(bare))),
    comparison('operator create (http source)', get(LABEL.opHttp), `bare ${bare} fresh in a new process`, get(LABEL.bareProcess(bare))),
    comparison('operator create', get(LABEL.opCreate), `bare ${bare} fresh in a new process`, get(LABEL.bareProcess(bare))),
    comparison('operator create (http source)', get(LABEL.opHttp), `bare ${bare} fresh with a watch`, get(LABEL.bareWatched(bare))),
    comparison('operator create (inline, warm)', get(LABEL.opInlineWarm), `bare ${bare} fresh`, get(LABEL.bareFresh(bare))),
    comparison('operator create (inline, warm)', get(LABEL.opInlineWarm), 'operator create', get(LABEL.opCreate)),
    comparison('operator create (http source, warm)', get(LABEL.opHttpWarm), `bare ${bare} fresh`, get(LABEL.bareFresh(bare))),
    comparison('operator create (http source, warm)', get(LABEL.opHttpWarm), 'operator create (http source)', get(LABEL.opHttp)),
    comparison(`bare ${bare} fresh with a watch`, get(LABEL.bareWatched(bare)), `bare ${bare} fresh`, get(LABEL.bareFresh(bare))),
    comparison(`bare ${bare} fresh in a new process`, get(LABEL.bareProcess(bare)), `bare ${bare} fresh`, get(LABEL.bareFresh(bare))),
    comparison('operator no-op resync', get(LABEL.opResync), 'kubectl unchanged', get(LABEL.kubectlAgain)),
    comparison('kubectl fresh', get(LABEL.kubectlFresh), 'kubectl unchanged', get(LABEL.kubectlAgain)),
    resyncWritesNote(get(LABEL.opResync)),
  ]
    .filter(Boolean)
    .join('\n');
}

function corpusNotes(rows: Rows, corpora: Corpus[]): string {
  const get = (label: string): Sample[] => rows.get(label) ?? [];
  return corpora
    .map((c) => comparison(`${c.name} operator`, get(corpusLabel(c, 'operator')), 'kubectl', get(corpusLabel(c, 'kubectl'))))
    .filter(Boolean)
    .join('\n');
}

interface ReportInput {
  cmRows: Rows;
  corpusRows: Rows;
  corpora: Corpus[];
  kubernetes: string;
  /** 1-minute load averages sampled during the run. */
  load: number[];
  fetches: Map<string, number>;
  build: string;
}

function writeReport(r: ReportInput): void {
  const date = new Date().toISOString().slice(0, 10);
  const gib = Math.round(os.totalmem() / 2 ** 30);
  const kb = (c: Corpus): string => `${int(c.files.reduce((n, f) => n + f.content.length, 0) / 1024)} KiB in ${c.files.length} file${c.files.length === 1 ? '' : 's'}, ${int(c.archive.length / 1024)} KiB as .tar.gz`;
  const report = `## Applying: a Sync versus kubectl and a bare client

Script: \`bench/sync.ts\`. Measured ${date} on ${os.availableParallelism()} cores (${os.cpus()[0]?.model.trim() ?? '?'}), ${gib} GiB,
Node ${process.version}, Kubernetes ${r.kubernetes} (kubectl of the same build, \`.local/bin/kubectl\`), etcd embedded.
One cluster of the local control plane, \`${CLUSTER}\`, started for the benchmark and stopped at the end.
The operator: ${r.build}. The machine's 1-minute load average (everything on it, this benchmark's
own cluster and processes included), sampled every 10 s during the run, was ${median(r.load).toFixed(1)} (median;
${Math.min(...r.load).toFixed(1)} to ${Math.max(...r.load).toFixed(1)}) on ${os.availableParallelism()} cores.

### ${int(COUNT)} ConfigMaps

Method: the same ${int(COUNT)} ConfigMaps (about ${int(Buffer.byteLength(JSON.stringify(configMaps({ namespace: 'bench-sync-x' }))) / COUNT)} B each as JSON), each approach in a
fresh namespace:
- **operator**: \`node dist/cli/main.js run --namespace <ns> --metrics-addr 127.0.0.1:0
  --health-addr 127.0.0.1:0\`, one process per run, started and primed (\`/readyz\`) before the clock
  starts; default \`--concurrency 8\`, so the pipeline applies 16 objects at a time. Per object the
  apply engine (\`src/apply/engine.ts\`) reads the live object from the operator's watch of owned
  objects (started and primed before the apply, inside the timed span; no GET per object), then for an
  object that exists sends a \`dryRun=All\` apply compared with it, and a real apply only when they
  differ (a new object: one apply; an unchanged one: one dry run). A Sync with the ConfigMaps inline and \`wait: true\`, timed from the
  POST of the Sync until a watch on it delivers Ready=True for its generation. Then the no-op resync: a merge patch of the
  \`${RECONCILE_REQUESTED_AT_ANNOTATION}\` annotation, timed until the watch delivers
  \`status.lastHandledReconcileAt\` equal to it. Requests sent are the change of the operator's
  \`syncprims_cluster_requests_total\` over the phase (every request: GETs include its LISTs and WATCHes).
  The same Sync with the objects in one YAML file instead (\`source.http\`, served by a \`node:http\` server on
  127.0.0.1, no digest), timed the same way: inline, the Sync object itself carries the 1,000 objects (about
  250 KB) through its POST and each of its writes and watch events. Every operator row above runs a
  new process, whose first Sync also pays for compiling the operator's code (V8's JIT), which the bare
  client, in this long-running benchmark process, has paid by its first recorded round. The two "warm" rows are
  the inline Sync and the http source again, each in a process that first applied a Sync of the same 1,000 ConfigMaps,
  in the same form (into another namespace), saw it Ready, deleted it and saw it gone (its objects pruned), all before the clock starts:
  what an operator that has been running a while has done before.
- **kubectl**: \`kubectl apply --server-side --force-conflicts -f <one file>\` (\`--force-conflicts\`
  because the operator and the bare client force too; \`--cache-dir\` in a temporary folder, warmed by
  the warm-up round), timed as a process from spawn to exit; then the same command again over the
  unchanged objects. This kubectl build has no \`-v\` flag, so its reads are not counted.
- **bare client**: \`KubeClient\` (\`src/kube/client.ts\`), one server-side apply PATCH per object
  (\`fieldManager=bench-bare\`, \`force=true\`), ${BARE_CONCURRENCY.join(' or ')} in flight, a new client (new
  connections) for each pass; then the same again over the unchanged objects.
  The floor for an applier that writes every object once. Once more (${BARE_CONCURRENCY[0] ?? 16} in flight, fresh) with a
  watch of the namespace's ConfigMaps open, started before the clock and its events read and parsed as
  they come: the watch the operator keeps of what it applies (drift, health, resync from the cache).
  Once more (${BARE_CONCURRENCY[0] ?? 16} in flight, fresh) in a new Node process for each run (\`bench/bare-apply.ts\`), started, connected
  (a GET of \`/version\`) and then told to go, as the operator's process is started and primed before its clock: as new
  as the operator's process, paying for compiling its own code on the way; its CPU is that process's over the applies.

kubectl and the bare client apply the objects as the operator renders them (with its three owner
labels and the namespace), so every approach stores the same objects. One unrecorded warm-up
round, then ${CM_RUNS} rounds run every row in turn; the median is reported, with every run. "Write
requests" are the API server's audit log entries (create, update, patch, delete) from that client's
user agent in the phase's time window; a server-side apply that changes nothing is still logged as a
patch (the stored object, and its resourceVersion, do not change: see "objects changed", which
compares every resourceVersion before and after). \`dryRun=All\` patches are counted apart: logged
as writes, they store nothing. Client CPU: the operator process's and kubectl's user + system time
(\`/proc\`, \`/usr/bin/time\`; 10 ms resolution), the bare client's is this process's. Apiserver CPU:
the cluster's kube-apiserver process's (it includes its background work).

${configMapTable(r.cmRows)}

Compared round by round:
${configMapNotes(r.cmRows)}

${CONFIGMAP_NOTE}

${cpuNote(r.cmRows)}

Where the time goes (median over the runs; milestones from each client's writes in the audit log,
the operator's own log lines, and the bench's watch; for kubectl, from the process's spawn):

${timelineTable([
  ['operator, create', r.cmRows.get(LABEL.opCreate) ?? []],
  ['operator, no-op resync', r.cmRows.get(LABEL.opResync) ?? []],
  ['operator, inline, warm, create', r.cmRows.get(LABEL.opInlineWarm) ?? []],
  ['operator, http source, create', r.cmRows.get(LABEL.opHttp) ?? []],
  ['operator, http source, warm, create', r.cmRows.get(LABEL.opHttpWarm) ?? []],
  ['kubectl, fresh', r.cmRows.get(LABEL.kubectlFresh) ?? []],
  ['kubectl, unchanged', r.cmRows.get(LABEL.kubectlAgain) ?? []],
])}

### Real-world sets

Method: ${r.corpora.map((c) => `\`${c.name}\` (${kb(c)})`).join(' and ')}, from \`${CORPUS}\`.
- **operator**: a Sync whose source is \`http\`: a .tar.gz built here with tar-stream and served by a
  \`node:http\` server on 127.0.0.1 (fetched ${fetchNote(r)}), \`wait: false\` (no pods run on this control
  plane); one operator process per run, primed before the clock starts. Timed from the POST of the Sync
  until Ready=True. The operator applies the whole set in stages (CRDs, Namespaces and ClusterRoles;
  then, once the CRDs are Established, the rest).
- **kubectl**, as each project documents it: kube-prometheus: \`kubectl apply --server-side -f
  manifests/setup\`, \`kubectl wait --for condition=Established --all CustomResourceDefinition
  --namespace=monitoring\`, \`kubectl apply --server-side -f manifests/\` (timed together; each step's
  median apart); Argo CD: \`kubectl apply --server-side -n argocd -f install.yaml\` (its namespaced
  objects name no namespace: the docs apply it with \`-n argocd\`, so the Sync has
  \`defaultNamespace: argocd\`). Namespace \`argocd\` is created, untimed, before each run of either
  approach. \`--force-conflicts\` as above.

After every run everything is deleted (the APIService \`v1beta1.metrics.k8s.io\` first: without a
backend it makes discovery fail, which keeps namespaces from being deleted; then \`kubectl delete -f\`,
then the namespaces), and the next run starts once the namespaces and the CRDs are gone, so each run
creates the CRDs anew on the same cluster (nothing else ran on it; a clean-up, until the namespaces
and CRDs were gone, took ${r.corpora.map((c) => `${c.name}: ${c.cleanupMs.map((ms) => sec(ms)).join(', ')} s`).join('; ')}:
cheaper than a new cluster per run, whose etcd data would also stay behind). ${RUNS} rounds; in each the two approaches alternate which goes
first. kubectl's "objects" is its count of apply patches in the audit log. In the write requests,
"apply patches" are the set's objects; the others are the operator's own (finalizer, status, Event).

${corpusTable(r.corpusRows, r.corpora)}

Compared round by round:
${corpusNotes(r.corpusRows, r.corpora)}

Where the time goes (median over the runs, as above):

${timelineTable(r.corpora.flatMap((c) => (['operator', 'kubectl'] as const).map((how): [string, Sample[]] => [`${c.name}, ${how}`, r.corpusRows.get(corpusLabel(c, how)) ?? []])))}

${CORPUS_NOTE}
`;
  writeFileSync(OUT, report);
  console.log(`\n${report}`);
}

const CONFIGMAP_NOTE = `What the operator does beyond the bare client's applies: it reads and renders the set, primes a watch
of ConfigMaps, and writes the Sync's finalizer and its final status (and an Event), each echoed by its
watch. Those two writes are JSON patches answered with metadata only, so the API server neither merges nor
sends back the whole Sync (they were merge patches answered with the object until 2026-11-26: the inline
row's median then was 2.39 s against the bare client's 1.30 s). Inline, the Sync object itself is
about 250 KB (the 1,000 objects): the API server still decodes, validates, stores and sends to every
watcher that whole object for the POST and for each of those writes, which the http source's small Sync
does not pay. The bare client with the watch the operator keeps open measures what that watch costs the
API server; in the runs so far it has not separated from the plain bare client by more than the noise.`;

/**
 * The client's and the API server's CPU over each row's span, in cores: near the machine's, the
 * rows are bounded by CPU (every ms either process spends is taken from the other), not by waiting.
 */
function cpuNote(rows: Rows): string {
  const line = (label: string, name: string): string | undefined => {
    const samples = rows.get(label) ?? [];
    if (samples.length === 0) return undefined;
    const client = median(samples.map((x) => x.clientCpuMs));
    const api = median(samples.map((x) => x.apiserverCpuMs));
    const cores = median(samples.map((x) => (x.clientCpuMs + x.apiserverCpuMs) / x.ms));
    return `- ${name}: client ${int(client)} ms, API server ${int(api)} ms; together ${cores.toFixed(2)} cores over the span (median of the runs)`;
  };
  const lines = [
    line(LABEL.opCreate, 'operator, inline'),
    line(LABEL.opInlineWarm, 'operator, inline, warm'),
    line(LABEL.opHttp, 'operator, http source'),
    line(LABEL.opHttpWarm, 'operator, http source, warm'),
    line(LABEL.bareFresh(BARE_CONCURRENCY[0] ?? 16), `bare client, ${BARE_CONCURRENCY[0] ?? 16} in flight`),
  ].filter((l): l is string => l !== undefined);
  return `CPU, and why the operator is behind the bare client at the same concurrency: the API server, etcd (in
the control plane's supervisor, not counted here) and the client share the machine's ${os.availableParallelism()} cores. The operator
spends more CPU than the bare client on the same 1,000 requests (reading and rendering the set, its watch of
the ConfigMaps, health, inventory and metrics on top of them), and makes the API server spend more (the
Sync's own writes and their watch events, the LIST that primes the watch, the Event). Client and API server
together keep most of the cores busy in every row, etcd the rest, so what either spends comes out of the
other's time: the gap is CPU, not waiting. On a cluster, where the
operator does not run on the API server's machine, its own CPU would not slow the API server.
${lines.join('\n')}`;
}

const CORPUS_NOTE = `The operator reads the whole set before it applies anything (a file that does not parse applies
nothing), kubectl each \`-f\` before it applies it. Most of the time to the operator's first apply is parsing:
the subset reader (docs/source.md) reads kube-prometheus's 5.6 MB of YAML in about 250-300 ms in a fresh process (100 ms once warm; bench/parse.ts), where the
\`yaml\` library alone took 700-900 ms (the first apply then went out at 969 ms, against kubectl's 353).`;

// Exits explicitly: after a failure, a watch may still be open.
main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
