// dependsOn through a real `syncprims run` process (src/deps/, src/controllers/dependencies.ts):
// how long a chain of Syncs takes when a dependent is woken by its
// dependency's readiness change (an index fed by the shared informers) rather
// than by polling, next to lone Syncs measured in the same run. On one
// dedicated cluster of the local control plane (bench-deps, started here and
// stopped at the end), in a fresh namespace per run, one operator process per
// run (`--log-level debug`):
//
// 1. single: lone Syncs (one inline ConfigMap, no dependsOn), one after
//    another, each created once the previous is Ready; from the POST to a
//    watch on the namespace's Syncs delivering Ready=True. T1 is their median.
// 2. chain: CHAIN Syncs POSTed at once (last first), chain-i dependsOn
//    chain-(i-1), one inline ConfigMap each; from the first POST to the last
//    Ready=True seen by the watch. Compared with CHAIN x T1.
// 3. wake gap: per link, from the watch seeing chain-(i-1) Ready=True to the
//    watch seeing chain-i start applying (lastAttemptedRevision set, Ready
//    Unknown/Progressing, or Ready=True).
// 4. reconciles per chain member (the operator's `reconciled` debug lines)
//    and the operator's syncprims_dependency_wakes_total and
//    syncprims_dependency_wait_seconds over the chain.
//
// Run it with `bench/run.sh deps` (from the repository root). The operator is
// compiled from the committed HEAD into .local/bench-deps-operator. RUNS
// (default 3), SINGLES (default 20) and CHAIN (default 20) can be changed
// through the environment. It prints figures and writes
// docs/benchmarks/deps.md; it asserts nothing about them.
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { API_VERSION } from '../src/api/kinds.js';
import { KubeClient } from '../src/kube/client.js';
import { loadKubeConfigFile } from '../src/kube/config.js';
import { collectionPath, type KubeObject } from '../src/kube/resources.js';
import { watchEvents } from '../src/kube/watch-stream.js';
import {
  buildOperator,
  controlplane,
  createNamespace,
  deleteSyncNamespace,
  installCrds,
  int,
  LOCAL,
  median,
  OperatorProcess,
  type OperatorTarget,
  processCpuMs,
  ROOT,
  sampleLoad,
  serverVersion,
  sleep,
  statusOf,
  stopOperators,
  SYNCS,
  withTimeout,
} from './support.js';
import { sampleValue } from '../test/support/prometheus.js';

const CLUSTER = 'bench-deps';
const KUBECONFIG = path.join(LOCAL, `${CLUSTER}.kubeconfig`);
const OPERATOR_LOG = path.join(LOCAL, `${CLUSTER}-operator.log`);
/** The operator measured: compiled here from the committed HEAD (others may rebuild dist/ meanwhile). */
const OPERATOR_DIR = path.join(LOCAL, `${CLUSTER}-operator`);
const OPERATOR: OperatorTarget = { main: path.join(OPERATOR_DIR, 'dist', 'cli', 'main.js'), kubeconfig: KUBECONFIG, log: OPERATOR_LOG };
const OUT = path.join(ROOT, 'docs', 'benchmarks', 'deps.md');
const RUNS = Number(process.env.RUNS ?? 3);
const SINGLES = Number(process.env.SINGLES ?? 20);
const CHAIN = Number(process.env.CHAIN ?? 20);
const BENCH_UA = 'syncprims-bench/deps';
/** Every namespace of the benchmark: `bench-deps-run<n>-<6 hex digits>`. */
const NS_PREFIX = 'bench-deps-';
/** After the last Ready, how long reconciles are still counted (what a Ready status write sets off). */
const SETTLE_MS = 2_000;
const WAIT_MS = 120_000;
/** Requeue intervals of polling designs for an unready dependency, for the computed comparison. */
const POLLING = [
  { who: "Flux's default", seconds: 30 },
  { who: "Fleet's", seconds: 15 },
];

// ---------------------------------------------------------------- watching

/** One event of the namespace's watch: when it arrived (performance.now()) and the object. */
interface Seen {
  at: number;
  object: KubeObject;
}

/**
 * A watch on every Sync of one namespace, opened before anything is created:
 * keeps every ADDED or MODIFIED event per name, and resolves waiters on the
 * first event (already seen or to come) that passes their test.
 */
class SyncWatch {
  private readonly seen = new Map<string, Seen[]>();
  private readonly waiters = new Set<{ name: string; test: (o: KubeObject) => boolean; resolve: (s: Seen) => void; reject: (e: Error) => void }>();
  private failure: Error | undefined;

  private constructor(private readonly close_: () => void) {}

  static async open(client: KubeClient, namespace: string): Promise<SyncWatch> {
    const collection = collectionPath(SYNCS, namespace);
    const list = await client.request<{ metadata: { resourceVersion: string } }>({ path: collection });
    const res = await client.stream({ path: collection, query: { watch: 1, resourceVersion: list.metadata.resourceVersion }, idleTimeoutMs: 600_000 });
    const watch = new SyncWatch(() => res.destroy());
    void watch.pump(watchEvents(res));
    return watch;
  }

  private async pump(events: AsyncGenerator<{ type: string; object: KubeObject }>): Promise<void> {
    try {
      for await (const event of events) {
        if (event.type === 'ERROR') throw new Error(`watch: ${JSON.stringify(event.object)}`);
        if (event.type !== 'ADDED' && event.type !== 'MODIFIED') continue;
        const at = performance.now();
        const name = event.object.metadata.name ?? '';
        const list = this.seen.get(name) ?? [];
        list.push({ at, object: event.object });
        this.seen.set(name, list);
        for (const w of [...this.waiters]) {
          if (w.name !== name) continue;
          try {
            if (!w.test(event.object)) continue;
            this.waiters.delete(w);
            w.resolve({ at, object: event.object });
          } catch (err) {
            this.waiters.delete(w);
            w.reject(err as Error);
          }
        }
      }
      this.fail(new Error('the watch ended'));
    } catch (err) {
      this.fail(err as Error);
    }
  }

  private fail(err: Error): void {
    this.failure ??= err;
    for (const w of this.waiters) w.reject(err);
    this.waiters.clear();
  }

  /** The first event of `name` that passes `test`, already seen or to come. */
  first(name: string, test: (o: KubeObject) => boolean): Promise<Seen> {
    const hit = this.events(name).find((s) => test(s.object));
    if (hit) return Promise.resolve(hit);
    if (this.failure) return Promise.reject(this.failure);
    const promise = new Promise<Seen>((resolve, reject) => this.waiters.add({ name, test, resolve, reject }));
    promise.catch(() => undefined);
    return promise;
  }

  events(name: string): Seen[] {
    return this.seen.get(name) ?? [];
  }

  close(): void {
    this.close_();
  }
}

const readyOf = (o: KubeObject) => statusOf(o).conditions?.find((c) => c.type === 'Ready');

/** Ready=True for the current generation; throws on a Ready=False other than waiting for dependencies. */
function readyTrue(o: KubeObject): boolean {
  const ready = readyOf(o);
  if (!ready || ready.observedGeneration !== o.metadata.generation) return false;
  if (ready.status === 'False' && ready.reason !== 'DependencyNotReady') {
    throw new Error(`Sync ${o.metadata.namespace}/${o.metadata.name}: Ready=False ${ready.reason}: ${ready.message}`);
  }
  return ready.status === 'True';
}

/** Applying has started: a revision attempted, Ready=Unknown/Progressing, or (straight through) Ready=True. */
function started(o: KubeObject): boolean {
  const ready = readyOf(o);
  if (statusOf(o).lastAttemptedRevision !== undefined) return true;
  if (ready?.status === 'Unknown' && ready.reason === 'Progressing') return true;
  return readyTrue(o);
}

// ---------------------------------------------------------------- the syncs

function syncObject(namespace: string, name: string, dependsOn?: string): KubeObject {
  const configMap = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { sync: name } };
  const spec: Record<string, unknown> = { source: { inline: [configMap] }, defaultNamespace: namespace };
  if (dependsOn) spec.dependsOn = [{ name: dependsOn }];
  return { apiVersion: API_VERSION, kind: 'Sync', metadata: { name, namespace }, spec };
}

async function post(client: KubeClient, sync: KubeObject): Promise<void> {
  await client.request({ method: 'POST', path: collectionPath(SYNCS, sync.metadata.namespace), body: sync, timeoutMs: 60_000 });
}

// ---------------------------------------------------------------- one run

interface Single {
  /** POST → Ready=True seen. */
  ms: number;
  /** POST → start seen. */
  startMs: number;
}

interface Member {
  name: string;
  /** ms from the first POST: first seen by the watch, started applying, Ready=True. */
  created: number;
  started: number;
  ready: number;
  reconciles: number;
  /** Checks that found a dependency in flight and stopped without writing ('deferred'). */
  deferred: number;
  /** Waiting statuses written (Ready=False DependencyNotReady, one per change of the pending list). */
  waitingReports: number;
}

interface Run {
  namespace: string;
  singles: Single[];
  /** Reconciles of each lone Sync. */
  singleReconciles: number[];
  /** First POST → last Ready=True. */
  chainMs: number;
  /** ms to send all the POSTs (each answered). */
  postsMs: number;
  members: Member[];
  /** Per link i (1..CHAIN-1): watch saw chain-(i-1) Ready=True → watch saw chain-i start. */
  gaps: number[];
  /** Per link: the operator's 'ready' of chain-(i-1) logged → its 'dependencies met' of chain-i logged. */
  operatorGaps: number[];
  /** Links whose dependent was first seen after its dependency was Ready. */
  lateDependents: number;
  /** From the operator's log, until its 'ready' of chain-0: reconciles of the other members, and their waiting statuses. */
  burstReconciles: number;
  burstWaiting: number;
  /** The reasons in the waiting statuses' pending lists, counted. */
  pendingReasons: Record<string, number>;
  wakes: number;
  waitCount: number;
  waitSum: number;
  operatorCpuMs: number;
  apiserverCpuMs: number;
}

async function oneRun(client: KubeClient, apiserverPid: number, round: number): Promise<Run> {
  const namespace = await createNamespace(client, `${NS_PREFIX}run${round}`);
  const op = await OperatorProcess.start(OPERATOR, namespace, ['--log-level', 'debug']);
  const watch = await SyncWatch.open(client, namespace);
  try {
    await lone(client, watch, namespace, 'warm-up');
    const singles: Single[] = [];
    for (let i = 0; i < SINGLES; i++) singles.push(await lone(client, watch, namespace, `single-${i}`));
    await sleep(SETTLE_MS);
    const before = await op.metrics();
    const cpu = processCpuMs(op.pid);
    const apiCpu = processCpuMs(apiserverPid);
    const chain = await runChain(client, watch, namespace);
    const operatorCpuMs = processCpuMs(op.pid) - cpu;
    const apiserverCpuMs = processCpuMs(apiserverPid) - apiCpu;
    await sleep(SETTLE_MS);
    const after = await op.metrics();
    const diff = (name: string): number => sampleValue(after, name) - sampleValue(before, name);
    const logs = op.logsSince(0).map((l) => l.fields);
    const mine = (name: string, msg: string): Record<string, unknown>[] =>
      logs.filter((f) => f.msg === msg && f.kind === 'Sync' && f.namespace === namespace && f.name === name);
    const members = chain.members.map((m) => ({
      ...m,
      reconciles: mine(m.name, 'reconciled').length,
      deferred: mine(m.name, 'a dependency is being reconciled; checking again once it is done').length,
      waitingReports: logs.filter((f) => f.kind === 'Sync' && f.namespace === namespace && f.name === m.name && f.reason === 'DependencyNotReady').length,
    }));
    const logTime = (name: string, msg: string): number => {
      const line = mine(name, msg)[0];
      return line ? Date.parse(String(line.time)) : NaN;
    };
    const pendingReasons: Record<string, number> = {};
    for (const f of logs) {
      if (f.namespace !== namespace || f.reason !== 'DependencyNotReady' || !String(f.name).startsWith('chain-')) continue;
      for (const p of (f.pending ?? []) as { reason?: string }[]) pendingReasons[p.reason ?? '?'] = (pendingReasons[p.reason ?? '?'] ?? 0) + 1;
    }
    const firstReady = logTime(members[0]!.name, 'ready');
    const others = logs.filter(
      (f) => f.kind === 'Sync' && f.namespace === namespace && String(f.name).startsWith('chain-') && f.name !== members[0]!.name && Date.parse(String(f.time)) <= firstReady,
    );
    const operatorGaps = members.slice(1).map((m, i) => logTime(m.name, 'dependencies met') - logTime(members[i]!.name, 'ready'));
    return {
      namespace,
      singles,
      singleReconciles: singles.map((_, i) => mine(`single-${i}`, 'reconciled').length),
      ...chain,
      members,
      operatorGaps,
      pendingReasons,
      burstReconciles: others.filter((f) => f.msg === 'reconciled').length,
      burstWaiting: others.filter((f) => f.reason === 'DependencyNotReady').length,
      wakes: diff('syncprims_dependency_wakes_total'),
      waitCount: diff('syncprims_dependency_wait_seconds_count'),
      waitSum: diff('syncprims_dependency_wait_seconds_sum'),
      operatorCpuMs,
      apiserverCpuMs,
    };
  } finally {
    watch.close();
    await op.stop();
  }
}

/** One Sync alone: POST, then the watch's Ready=True. */
async function lone(client: KubeClient, watch: SyncWatch, namespace: string, name: string): Promise<Single> {
  const ready = watch.first(name, readyTrue);
  const start = watch.first(name, started);
  const sentAt = performance.now();
  await post(client, syncObject(namespace, name));
  const seen = await withTimeout(`Sync ${name} to be Ready`, ready, WAIT_MS);
  const startSeen = await start;
  return { ms: seen.at - sentAt, startMs: startSeen.at - sentAt };
}

async function runChain(client: KubeClient, watch: SyncWatch, namespace: string) {
  const names = Array.from({ length: CHAIN }, (_, i) => `chain-${i}`);
  const syncs = names.map((name, i) => syncObject(namespace, name, i > 0 ? names[i - 1] : undefined));
  const ready = names.map((name) => watch.first(name, readyTrue));
  const start = names.map((name) => watch.first(name, started));
  const t0 = performance.now();
  // Sent last-first, all at once: no step is in order by luck.
  await Promise.all([...syncs].reverse().map((s) => post(client, s)));
  const postsMs = performance.now() - t0;
  const readyAt = (await withTimeout(`the chain of ${CHAIN} to be Ready`, Promise.all(ready), WAIT_MS)).map((s) => s.at - t0);
  const startAt = (await Promise.all(start)).map((s) => s.at - t0);
  const members = names.map((name, i) => ({
    name,
    created: (watch.events(name)[0]?.at ?? NaN) - t0,
    started: startAt[i]!,
    ready: readyAt[i]!,
    reconciles: 0,
    deferred: 0,
    waitingReports: 0,
  }));
  const gaps = members.slice(1).map((m, i) => m.started - members[i]!.ready);
  const lateDependents = members.slice(1).filter((m, i) => m.created > members[i]!.ready).length;
  return { chainMs: Math.max(...readyAt), postsMs, members, gaps, lateDependents };
}

// ---------------------------------------------------------------- main

async function main(): Promise<void> {
  const load = sampleLoad();
  const build = await buildOperator(OPERATOR_DIR);
  let client: KubeClient | undefined;
  try {
    console.log(`starting ${CLUSTER}...`);
    await controlplane(['up', CLUSTER]);
    client = await KubeClient.create(CLUSTER, loadKubeConfigFile(KUBECONFIG), BENCH_UA);
    const apiserverPid = Number(readFileSync(path.join(LOCAL, `${CLUSTER}.pid`), 'utf8').trim());
    await installCrds(client);
    await cleanLeftovers(client);
    const runs: Run[] = [];
    for (let round = 1; round <= RUNS; round++) {
      console.log(`run ${round} of ${RUNS}: ${SINGLES} lone Syncs, then a chain of ${CHAIN}...`);
      const r = await oneRun(client, apiserverPid, round);
      runs.push(r);
      printRun(r);
      await deleteSyncNamespace(client, r.namespace);
    }
    const kubernetes = await serverVersion(client);
    writeReport({ runs, kubernetes, load: load.stop(), build });
  } finally {
    load.stop();
    await stopOperators();
    client?.close();
    console.log(`stopping ${CLUSTER}...`);
    await controlplane(['stop', CLUSTER]).catch((err: unknown) => console.error(String(err)));
    rmSync(OPERATOR_DIR, { recursive: true, force: true });
  }
}

/** Namespaces left by an earlier run that was cut short (the cluster's data outlives it). */
async function cleanLeftovers(client: KubeClient): Promise<void> {
  const list = await client.request<{ items: KubeObject[] }>({ path: '/api/v1/namespaces' });
  for (const ns of list.items.map((n) => n.metadata.name ?? '').filter((n) => n.startsWith(NS_PREFIX))) {
    console.log(`deleting ${ns}, left by an earlier run...`);
    await deleteSyncNamespace(client, ns);
  }
}

function printRun(r: Run): void {
  const t1 = median(r.singles.map((s) => s.ms));
  console.log(
    `  T1 ${int(t1)} ms (lone Syncs ${r.singles.map((s) => int(s.ms)).join(', ')}); chain ${int(r.chainMs)} ms = ` +
      `${(r.chainMs / (CHAIN * t1)).toFixed(2)} x ${CHAIN} x T1; wake gaps ${r.gaps.map(int).join(', ')} ms; ` +
      `reconciles ${r.members.map((m) => m.reconciles).join(', ')}; wakes ${r.wakes}; waits ${r.waitCount} (sum ${r.waitSum.toFixed(2)} s)`,
  );
}

// ---------------------------------------------------------------- report

interface ReportInput {
  runs: Run[];
  kubernetes: string;
  load: number[];
  build: string;
}

const ms = (n: number): string => `${int(n)} ms`;
const s2 = (n: number): string => `${(n / 1000).toFixed(2)} s`;
const sum = (xs: number[]): number => xs.reduce((a, b) => a + b, 0);
/** The largest value that is a number (NaN when none is). */
const max = (xs: number[]): number => Math.max(...xs.filter((v) => !Number.isNaN(v)));
const minMedMax = (xs: number[]): string => `${int(Math.min(...xs))} / ${int(median(xs))} / ${int(Math.max(...xs))}`;

/** The figures of one run, by row. */
function figures(r: Run): Record<string, number> {
  const t1 = median(r.singles.map((s) => s.ms));
  const links = r.members.slice(1);
  return {
    t1,
    chain: r.chainMs,
    nT1: CHAIN * t1,
    ratio: r.chainMs / (CHAIN * t1),
    gapMedian: median(r.gaps),
    gapMax: max(r.gaps),
    opGapMedian: median(r.operatorGaps),
    opGapMax: max(r.operatorGaps),
    singleStart: median(r.singles.map((s) => s.startMs)),
    singleApply: median(r.singles.map((s) => s.ms - s.startMs)),
    memberApply: median(links.map((m) => m.ready - m.started)),
    first: r.members[0]?.ready ?? NaN,
    firstExcess: (r.members[0]?.ready ?? NaN) - t1,
    excess: r.chainMs - CHAIN * t1,
    perLink: (r.chainMs - (r.members[0]?.ready ?? NaN)) / (CHAIN - 1),
    perLinkRatio: (r.chainMs - (r.members[0]?.ready ?? NaN)) / (CHAIN - 1) / t1,
    burstReconciles: r.burstReconciles,
    burstWaiting: r.burstWaiting,
    gapSum: sum(r.gaps),
    applySum: sum(links.map((m) => m.ready - m.started)),
    posts: r.postsMs,
    lastCreated: Math.max(...r.members.map((m) => m.created)),
    reconcilesMin: Math.min(...r.members.map((m) => m.reconciles)),
    reconcilesMedian: median(r.members.map((m) => m.reconciles)),
    reconcilesMax: Math.max(...r.members.map((m) => m.reconciles)),
    reconcilesTotal: sum(r.members.map((m) => m.reconciles)),
    singleReconcilesMedian: median(r.singleReconciles),
    deferred: sum(r.members.map((m) => m.deferred)),
    waitingReportsMedian: median(r.members.map((m) => m.waitingReports)),
    waitingReportsTotal: sum(r.members.map((m) => m.waitingReports)),
    wakes: r.wakes,
    waitCount: r.waitCount,
    waitSum: r.waitSum * 1000,
    operatorCpu: r.operatorCpuMs,
    apiserverCpu: r.apiserverCpuMs,
  };
}

type Row = [label: string, key: string, format: (n: number) => string];

function table(runs: Run[], rows: Row[], first = 'measure'): string {
  const all = runs.map(figures);
  const header = [`| ${first} | median | ${runs.map((_, i) => `run ${i + 1}`).join(' | ')} |`, `|---|---|${runs.map(() => '---|').join('')}`];
  const lines = rows.map(([label, key, f]) => {
    const values = all.map((x) => x[key] ?? NaN);
    return `| ${label} | ${f(median(values))} | ${values.map(f).join(' | ')} |`;
  });
  return [...header, ...lines].join('\n');
}

function writeReport(r: ReportInput): void {
  const date = new Date().toISOString().slice(0, 10);
  const gib = Math.round(os.totalmem() / 2 ** 30);
  const all = r.runs.map(figures);
  const med = (key: string): number => median(all.map((x) => x[key] ?? NaN));
  const links = CHAIN - 1;
  const ratio = med('ratio');
  const reconciles = r.runs.flatMap((run) => run.members.map((m) => m.reconciles));
  const singleReconciles = r.runs.flatMap((run) => run.singleReconciles);
  const late = r.runs.map((run) => run.lateDependents);
  const polling = POLLING.map((p) => `${p.who} ${p.seconds} s: ${CHAIN} × ${p.seconds} s = ${CHAIN * p.seconds} s`).join('; ');
  const pollingRows = POLLING.map(
    (p) => `| polling every ${p.seconds} s (${p.who}), **computed**: ${CHAIN} × ${p.seconds} s | ${CHAIN * p.seconds} s | measured chain is ${((med('chain') / (CHAIN * p.seconds * 1000)) * 100).toFixed(1)} % of it |`,
  );
  const report = `## Dependencies (bench/deps.ts)

Script: \`bench/deps.ts\`. Measured ${date} on ${os.availableParallelism()} cores (${os.cpus()[0]?.model.trim() ?? '?'}), ${gib} GiB,
Node ${process.version}, Kubernetes ${r.kubernetes}, etcd embedded. One cluster of the local control plane,
\`${CLUSTER}\`, started for the benchmark and stopped at the end. The operator: ${r.build}. The machine's
1-minute load average (everything on it, this benchmark's own cluster and processes included), sampled every
10 s during the run, was ${median(r.load).toFixed(1)} (median; ${Math.min(...r.load).toFixed(1)} to ${Math.max(...r.load).toFixed(1)}) on ${os.availableParallelism()} cores.

Method: ${RUNS} runs, each in a fresh namespace with its own operator process (\`node dist/cli/main.js run
--namespace <ns> --metrics-addr 127.0.0.1:0 --health-addr 127.0.0.1:0 --log-level debug\`, default
\`--concurrency 8\`), started and primed (\`/readyz\`) first. Every Sync has one inline ConfigMap and the
default \`wait: true\`. Times are taken by the benchmark from a single watch on the namespace's Syncs, opened
before anything is created; an event's time is when the watch delivered it.
- **single**: one unrecorded warm-up Sync, then ${SINGLES} lone Syncs (no \`dependsOn\`), one after another,
  each created once the previous is Ready=True. Timed from the POST to the watch delivering Ready=True for
  the Sync's generation. **T1** is the median of a run's ${SINGLES}.
- **chain**: ${CHAIN} Syncs \`chain-0\` … \`chain-${CHAIN - 1}\`, \`chain-i\` with \`dependsOn: [{name: chain-(i-1)}]\`,
  all POSTed concurrently (issued last-first). Timed from the first POST to the watch delivering the last
  Ready=True. Compared with ${CHAIN} × T1 of the same run (the issue's target: a ratio under 1.5).
- **wake gap**, per link (${links} per run): from the watch delivering \`chain-(i-1)\` Ready=True to the watch
  delivering the first status of \`chain-i\` that shows it applying (\`status.lastAttemptedRevision\` set, or
  Ready=Unknown/Progressing, or Ready=True). The same link from the operator's own log lines (epoch ms):
  \`ready\` of \`chain-(i-1)\` to \`dependencies met\` of \`chain-i\`.
- **reconciles**: the operator's \`reconciled\` debug lines per Sync, counted until ${SETTLE_MS / 1000} s after
  the last Ready=True; "waiting statuses" are the Ready=False/DependencyNotReady status writes (logged once
  per change of the pending list and its reasons); "deferred" are checks that found a dependency still being reconciled and stopped
  without writing (to be woken once it is done). From \`/metrics\`, the change over the chain (from before
  its first POST to ${SETTLE_MS / 1000} s after its last Ready) of \`syncprims_dependency_wakes_total\` (reconciles
  queued because a dependency's readiness changed) and of the \`syncprims_dependency_wait_seconds\`
  histogram (one observation per Sync that waited, from its first unmet check to the check that found its
  dependencies met).

${table(r.runs, [
  [`single: T1, lone Sync POST → Ready=True (median of ${SINGLES})`, 't1', ms],
  [`chain of ${CHAIN}: first POST → last Ready=True`, 'chain', ms],
  [`${CHAIN} × T1`, 'nT1', ms],
  [`**ratio chain / (${CHAIN} × T1)**`, 'ratio', (n) => n.toFixed(2)],
  [`wake gap, watch: median over the ${links} links`, 'gapMedian', ms],
  [`wake gap, watch: max over the ${links} links`, 'gapMax', ms],
  [`wake gap, operator log ('ready' → 'dependencies met'): median`, 'opGapMedian', ms],
  [`wake gap, operator log: max`, 'opGapMax', ms],
  [`reconciles per chain member: min`, 'reconcilesMin', int],
  [`reconciles per chain member: median`, 'reconcilesMedian', int],
  [`reconciles per chain member: max`, 'reconcilesMax', int],
  [`reconciles per lone Sync: median`, 'singleReconcilesMedian', int],
  [`waiting statuses written (DependencyNotReady) per chain member: median`, 'waitingReportsMedian', int],
  [`waiting statuses written, whole chain`, 'waitingReportsTotal', int],
  [`deferred checks, whole chain`, 'deferred', int],
  [`\`syncprims_dependency_wakes_total\`, over the chain`, 'wakes', int],
  [`\`syncprims_dependency_wait_seconds\` count, over the chain`, 'waitCount', int],
  [`\`syncprims_dependency_wait_seconds\` sum, over the chain`, 'waitSum', s2],
  [`operator CPU during the chain (first POST → last Ready)`, 'operatorCpu', ms],
  [`kube-apiserver CPU during the chain`, 'apiserverCpu', ms],
])}

Computed, not measured: a design that rechecks an unready dependency on a fixed requeue interval instead of
being woken would need about one interval per member of the chain: ${polling}.

| model | chain of ${CHAIN} | note |
|---|---|---|
| measured here (median) | ${s2(med('chain'))} | woken by the dependency's readiness change |
${pollingRows.join('\n')}

Where the chain's time goes (from the watch's events, ms from the first POST; in each run the first three rows
add up to its chain time, their medians need not; the operator's log lines are counted where named):

${table(r.runs, [
  ['`chain-0`: POST → Ready=True', 'first', ms],
  [`sum of the ${links} wake gaps`, 'gapSum', ms],
  [`sum of the ${links} dependents' start → Ready=True`, 'applySum', ms],
  [`chain − ${CHAIN} × T1 (the excess)`, 'excess', ms],
  ['`chain-0` POST → Ready=True, less T1', 'firstExcess', ms],
  [`operator log, before its \`ready\` of \`chain-0\`: reconciles of the other ${links} members`, 'burstReconciles', int],
  [`operator log, before its \`ready\` of \`chain-0\`: their waiting statuses written`, 'burstWaiting', int],
  [`after \`chain-0\`: (chain − \`chain-0\` Ready) / ${links}, per link`, 'perLink', ms],
  ['the same, in T1', 'perLinkRatio', (n) => n.toFixed(2)],
], 'part')}

For comparison, within each lone Sync (median over a run's ${SINGLES}, then over the runs): POST → start seen
${ms(med('singleStart'))}, start → Ready=True ${ms(med('singleApply'))}; a chain member's start → Ready=True:
${ms(med('memberApply'))}. All ${CHAIN} POSTs were answered within ${ms(med('posts'))} of the first (median); the last
chain member was first seen by the watch at ${ms(med('lastCreated'))}. Links whose dependent was first seen only
after its dependency was Ready: ${late.join(', ')} (per run).

Reading:
${reading(r, { ratio, reconciles, singleReconciles, med })}
`;
  writeFileSync(OUT, report);
  console.log(`\n${report}`);
}

function reasons(runs: Run[]): string {
  const total: Record<string, number> = {};
  for (const run of runs) for (const [k, v] of Object.entries(run.pendingReasons)) total[k] = (total[k] ?? 0) + v;
  return Object.entries(total)
    .sort(([, a], [, b]) => b - a)
    .map(([k, v]) => `${k} ${v}`)
    .join(', ');
}

function reading(
  r: ReportInput,
  x: { ratio: number; reconciles: number[]; singleReconciles: number[]; med: (key: string) => number },
): string {
  const { ratio, med } = x;
  const ratios = r.runs.map((run) => figures(run).ratio ?? NaN);
  const under = ratios.filter((v) => v < 1.5).length;
  const lines = [
    `- The chain of ${CHAIN} took ${s2(med('chain'))} (median), ${ratio.toFixed(2)} × ${CHAIN} lone applies (T1 ${ms(med('t1'))}); ` +
      `the ratio was under the target of 1.5 in ${under} of ${r.runs.length} runs (${ratios.map((v) => v.toFixed(2)).join(', ')}).`,
    `- A dependent started applying ${ms(med('gapMedian'))} (median; worst link ${ms(med('gapMax'))}) after the watch showed its dependency Ready ` +
      `(a lone Sync: ${ms(med('singleStart'))} from its POST to its start seen); ` +
      `in the operator's own log, ${ms(med('opGapMedian'))} (worst ${ms(med('opGapMax'))}) from its \`ready\` line to the dependent's \`dependencies met\`. ` +
      `The ${CHAIN - 1} gaps together are ${s2(med('gapSum'))} of the ${s2(med('chain'))}; the rest is \`chain-0\`'s POST → Ready=True ` +
      `(${s2(med('first'))}) and the other members' start → Ready=True (${s2(med('applySum'))} together).`,
    (med('excess') > 0 ? `- Where the excess over ${CHAIN} × T1 (${ms(med('excess'))}) goes:` : `- The chain took ${ms(-med('excess'))} less than ${CHAIN} × T1 (median).`) +
      ` \`chain-0\`, with no dependency, took ${ms(med('first'))} from its POST ` +
      `to Ready=True, ${ms(med('firstExcess'))} more than T1; before the operator logged it \`ready\` it had run ${int(med('burstReconciles'))} reconciles ` +
      `of the other members and written ${int(med('burstWaiting'))} of their waiting statuses (medians), all on ${os.availableParallelism()} cores shared with the API server. ` +
      `After \`chain-0\`, each link took ${ms(med('perLink'))} on average, ${med('perLinkRatio').toFixed(2)} × T1.`,
    `- Reconciles per chain member: ${minMedMax(x.reconciles)} (min / median / max over all runs), against ${minMedMax(x.singleReconciles)} for a lone Sync; ` +
      `a waiting member wrote a waiting status ${int(med('waitingReportsMedian'))} times (median), as what it waited for changed ` +
      `(the pending reasons in those statuses, all runs: ${reasons(r.runs)}). ` +
      `Every chain finished within ${s2(Math.max(...r.runs.map((run) => run.chainMs)))}, far inside the 5-minute backstop requeue of a waiting Sync, so no member was released by it.`,
    `- The polling figures are arithmetic on the interval, not measurements of Flux or Fleet; they only show the scale of waiting one interval per link.`,
  ];
  return lines.join('\n');
}

// Exits explicitly: after a failure, a watch may still be open.
main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
