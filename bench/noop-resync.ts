// Resync without requests (issue 14, item 2): what a no-op resync of one Sync
// of N ConfigMaps sends, and what a restart of the operator over it sends,
// for the operator of the committed HEAD (the baseline: one dry run per
// unchanged object) and the operator of the working tree (unchanged objects
// decided from the owned-object cache: our managedFields entry and the live
// values), measured in the same run, alternating, on one dedicated cluster of
// the local control plane (bench-noop, started here and stopped at the end).
//
// Per run and build: a fresh namespace, one Sync of N inline ConfigMaps
// (interval 1h), an operator started (`--namespace`), the Sync Ready, then
// 1. a requested reconcile (`syncprims.dev/reconcile-requested-at`) of the
//    unchanged set: the operator's requests from the request to
//    `lastHandledReconcileAt` (and 2 s of quiet after), from the API server's
//    audit log (so dry runs are told from writes);
// 2. a restart: the operator stopped and started again, its requests until
//    it has reconciled the Sync and been quiet for 2 s;
// 3. a new revision that changes every object (each ConfigMap's value): its
//    requests until Ready with that revision and 2 s of quiet.
//
// Run it with `bench/run.sh noop-resync`. N (default 1000), RUNS (default 2)
// and BASELINE (the baseline's commit, default HEAD) can be changed through
// the environment. It prints figures and writes
// docs/benchmarks/noop-resync.md; it asserts nothing about them.
import { cpSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { execFile } from 'node:child_process';
import { API_VERSION } from '../src/api/kinds.js';
import { KubeClient } from '../src/kube/client.js';
import { loadKubeConfigFile } from '../src/kube/config.js';
import { collectionPath, type KubeObject } from '../src/kube/resources.js';
import { Informer } from '../src/runtime/informer.js';
import { auditLogText } from '../test/support/audit-files.js';
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
  ROOT,
  sampleLoad,
  serverVersion,
  sec,
  sleep,
  statusOf,
  stopOperators,
  SYNCS,
  until,
} from './support.js';

const CLUSTER = 'bench-noop';
const KUBECONFIG = path.join(LOCAL, `${CLUSTER}.kubeconfig`);
const OUT = path.join(ROOT, 'docs', 'benchmarks', 'noop-resync.md');
const N = Number(process.env.N ?? 1000);
const RUNS = Number(process.env.RUNS ?? 2);
const BASELINE = process.env.BASELINE ?? 'HEAD';
const BENCH_UA = 'syncprims-bench/noop-resync';
const OPERATOR_UA = 'syncprims-operator';

interface Build {
  name: string;
  target: OperatorTarget;
  description: string;
}

interface Phase {
  /** Requests by verb (dry runs apart), from the audit log. */
  counts: Record<string, number>;
  total: number;
  ms: number;
}

interface Run {
  build: Build['name'];
  resync: Phase;
  restart: Phase;
  /** A new revision that changes every object. */
  revision: Phase;
  /** Heap per cached owned ConfigMap, managedFields dropped / kept (measured in the working tree's runs). */
  heap?: { dropped: number; kept: number };
}

const run = promisify(execFile);

/** Compiles src/ as it is in the working tree (uncommitted changes included) into `dir`. */
async function buildWorkingTree(dir: string): Promise<string> {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  for (const f of ['src', 'package.json', 'tsconfig.json', 'tsconfig.build.json']) cpSync(path.join(ROOT, f), path.join(dir, f), { recursive: true });
  await run(process.execPath, [path.join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', path.join(dir, 'tsconfig.build.json')], { cwd: ROOT, maxBuffer: 16 * 2 ** 20 });
  return 'compiled by the benchmark from the working tree (`src/` as it was at the start of the run, uncommitted work of other changes included)';
}

function target(dir: string, name: string): OperatorTarget {
  return { main: path.join(dir, 'dist', 'cli', 'main.js'), kubeconfig: KUBECONFIG, log: path.join(LOCAL, `${CLUSTER}-${name}-operator.log`) };
}

function configMaps(namespace: string, edit = ''): KubeObject[] {
  return Array.from({ length: N }, (_, i) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `cm-${i}`, namespace }, data: { index: String(i), value: `value-${i}${edit}` } }));
}

async function syncOf(client: KubeClient, namespace: string): Promise<KubeObject> {
  return client.request<KubeObject>({ path: `${collectionPath(SYNCS, namespace)}/set` });
}

const readyTrue = (o: KubeObject): boolean => statusOf(o).conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;

interface AuditEvent {
  verb: string;
  userAgent?: string;
  requestURI: string;
  requestReceivedTimestamp: string;
  objectRef?: { resource?: string };
}

/** The operator's requests since `since`, from the cluster's audit log. */
function auditSince(since: Date): AuditEvent[] {
  const text = auditLogText(path.join(LOCAL, `${CLUSTER}.audit.log`), since.getTime());
  return text
    .split('\n')
    .filter((l) => l.includes(`"userAgent":"${OPERATOR_UA}`))
    .map((l) => JSON.parse(l) as AuditEvent)
    .filter((e) => new Date(e.requestReceivedTimestamp) >= since);
}

/** The operator's requests since `since` (audit log), by verb, dry runs counted apart. */
async function counted(since: Date): Promise<{ counts: Record<string, number>; total: number }> {
  const events = auditSince(since);
  const counts: Record<string, number> = {};
  for (const e of events.filter((x) => x.objectRef?.resource !== 'leases' && !x.requestURI.includes('watch=true'))) {
    const key = e.requestURI.includes('dryRun=') ? 'dry-run patch' : e.verb;
    counts[key] = (counts[key] ?? 0) + 1;
  }
  return { counts, total: Object.values(counts).reduce((a, b) => a + b, 0) };
}

/** Waits until the operator has sent nothing for `quietMs` (audit log). */
async function quiet(since: Date, quietMs = 2000): Promise<void> {
  let last = -1;
  for (;;) {
    await sleep(quietMs);
    const { total } = await counted(since);
    if (total === last) return;
    last = total;
  }
}

async function oneRun(client: KubeClient, build: Build, round: number): Promise<Run> {
  const namespace = await createNamespace(client, `bench-noop-r${round}`);
  let op: OperatorProcess | undefined;
  try {
    await client.request({ method: 'POST', path: collectionPath(SYNCS, namespace), body: { apiVersion: API_VERSION, kind: 'Sync', metadata: { name: 'set' }, spec: { interval: '1h', source: { inline: configMaps(namespace) } } } });
    op = await OperatorProcess.start(build.target, namespace);
    await until('the Sync to be Ready', async () => readyTrue(await syncOf(client, namespace)));
    await quiet(new Date());

    // 1. A requested reconcile of the unchanged set.
    const since = new Date();
    await client.request({ method: 'PATCH', path: `${collectionPath(SYNCS, namespace)}/set`, contentType: 'application/merge-patch+json', body: { metadata: { annotations: { 'syncprims.dev/reconcile-requested-at': `r${round}` } } } });
    await until('the requested reconcile', async () => statusOf(await syncOf(client, namespace)).lastHandledReconcileAt === `r${round}`, 300_000, 20);
    const resyncMs = Date.now() - since.getTime();
    await quiet(since);
    const resync = { ...(await counted(since)), ms: resyncMs };

    // 2. A restart over the reconciled Sync.
    await op.stop();
    const restartedAt = new Date();
    op = await OperatorProcess.start(build.target, namespace);
    await quiet(restartedAt);
    const restart = { ...(await counted(restartedAt)), ms: Date.now() - restartedAt.getTime() };

    // 3. A new revision that changes every object.
    const editedAt = new Date();
    const before = statusOf(await syncOf(client, namespace)).lastAppliedRevision;
    await client.request({ method: 'PATCH', path: `${collectionPath(SYNCS, namespace)}/set`, contentType: 'application/merge-patch+json', body: { spec: { source: { inline: configMaps(namespace, '-edited') } } } });
    await until('the new revision applied', async () => {
      const sync = await syncOf(client, namespace);
      return readyTrue(sync) && statusOf(sync).observedGeneration === sync.metadata.generation && statusOf(sync).lastAppliedRevision !== before;
    }, 300_000, 20);
    const revisionMs = Date.now() - editedAt.getTime();
    await quiet(editedAt);
    const revision = { ...(await counted(editedAt)), ms: revisionMs };
    const heap = build.name === 'working tree' ? await heapPerObject(client, namespace) : undefined;
    return { build: build.name, resync, restart, revision, heap };
  } finally {
    await op?.stop();
    await deleteSyncNamespace(client, namespace);
  }
}

/** heapUsed after full collections (node --expose-gc), once pending callbacks have run. */
async function settledHeap(): Promise<number> {
  for (let i = 0; i < 2; i++) {
    await new Promise((resolve) => setImmediate(resolve));
    (globalThis as { gc?: () => void }).gc?.();
  }
  return process.memoryUsage().heapUsed;
}

/**
 * The heap per cached owned ConfigMap (applied by the operator), primed by an
 * informer that drops managedFields (as before) and by one that keeps our entry
 * and those written since (keepManagedFieldsOf), in this process.
 */
async function heapPerObject(client: KubeClient, namespace: string): Promise<{ dropped: number; kept: number }> {
  const resource = { group: '', version: 'v1', kind: 'ConfigMap', resource: 'configmaps', namespaced: true };
  const measure = async (keep: boolean): Promise<number> => {
    const before = await settledHeap();
    const informer = new Informer<KubeObject>({ client, resource, namespace, labelSelector: 'syncprims.dev/owner-kind', keepManagedFieldsOf: keep ? 'syncprims' : undefined });
    await informer.start();
    const after = await settledHeap();
    const n = informer.store.list().length;
    await informer.stop();
    return (after - before) / n;
  };
  const dropped: number[] = [];
  const kept: number[] = [];
  for (let i = 0; i < 3; i++) {
    dropped.push(await measure(false));
    kept.push(await measure(true));
  }
  return { dropped: median(dropped), kept: median(kept) };
}

function describe(counts: Record<string, number>): string {
  return Object.entries(counts).sort().map(([k, v]) => `${k} ${int(v)}`).join(', ') || 'none';
}

async function main(): Promise<void> {
  const load = sampleLoad();
  const baselineDir = path.join(LOCAL, `${CLUSTER}-baseline`);
  const currentDir = path.join(LOCAL, `${CLUSTER}-current`);
  const builds: Build[] = [
    { name: `baseline (${BASELINE})`, target: target(baselineDir, 'baseline'), description: await buildOperator(baselineDir, BASELINE) },
    { name: 'working tree', target: target(currentDir, 'current'), description: await buildWorkingTree(currentDir) },
  ];
  let client: KubeClient | undefined;
  try {
    console.log(`starting ${CLUSTER}...`);
    await controlplane(['up', CLUSTER]);
    client = await KubeClient.create(CLUSTER, loadKubeConfigFile(KUBECONFIG), BENCH_UA);
    await installCrds(client);
    const runs: Run[] = [];
    for (let round = 1; round <= RUNS; round++) {
      for (const build of round % 2 ? builds : [...builds].reverse()) {
        console.log(`run ${round} of ${RUNS}, ${build.name}: one Sync of ${N} ConfigMaps...`);
        const r = await oneRun(client, build, round);
        console.log(
          `  no-op resync: ${r.resync.total} requests (${describe(r.resync.counts)}) in ${sec(r.resync.ms)} s; restart: ${r.restart.total} requests (${describe(r.restart.counts)}); ` +
            `new revision: ${r.revision.total} requests (${describe(r.revision.counts)}) in ${sec(r.revision.ms)} s`,
        );
        runs.push(r);
      }
    }
    writeReport(runs, builds, await serverVersion(client), load.stop());
  } finally {
    load.stop();
    await stopOperators();
    client?.close();
    console.log(`stopping ${CLUSTER}...`);
    await controlplane(['stop', CLUSTER]).catch((err: unknown) => console.error(String(err)));
    rmSync(baselineDir, { recursive: true, force: true });
    rmSync(currentDir, { recursive: true, force: true });
  }
}

function writeReport(runs: Run[], builds: Build[], kubernetes: string, load: number[]): void {
  const date = new Date().toISOString().slice(0, 10);
  const rows = runs.map(
    (r, i) =>
      `| ${i + 1} | ${r.build} | ${int(r.resync.total)} | ${describe(r.resync.counts)} | ${sec(r.resync.ms)} s | ${int(r.restart.total)} | ${describe(r.restart.counts)} | ${int(r.revision.total)} | ${describe(r.revision.counts)} | ${sec(r.revision.ms)} s |`,
  );
  const med = (name: Build['name'], f: (r: Run) => number) => median(runs.filter((r) => r.build === name).map(f));
  const summary = builds.map(
    (b) =>
      `- ${b.name}: a no-op resync sent ${int(med(b.name, (r) => r.resync.total))} requests (${int(med(b.name, (r) => r.resync.counts['dry-run patch'] ?? 0))} dry runs), ` +
      `a restart ${int(med(b.name, (r) => r.restart.total))} (${int(med(b.name, (r) => r.restart.counts['dry-run patch'] ?? 0))} dry runs, ${int(med(b.name, (r) => r.restart.counts.patch ?? 0) + med(b.name, (r) => r.restart.counts.create ?? 0))} patches and creates), a new revision that changes every object ${int(med(b.name, (r) => r.revision.total))} (${int(med(b.name, (r) => r.revision.counts['dry-run patch'] ?? 0))} dry runs) in ${sec(med(b.name, (r) => r.revision.ms))} s (medians).`,
  );
  const heaps = runs.flatMap((r) => (r.heap ? [r.heap] : []));
  const heapLine = heaps.length
    ? `Memory: the heap per cached owned ConfigMap (\`global.gc()\`, \`heapUsed\` before and after priming an informer on the
${int(N)} ConfigMaps, in the benchmark's process, median of 3 per run) is ${int(median(heaps.map((h) => h.dropped)))} B with \`managedFields\`
dropped (as before) and ${int(median(heaps.map((h) => h.kept)))} B with our entry kept (\`keepManagedFieldsOf\`, what the owned-object
informers now do): ${int(median(heaps.map((h) => h.kept - h.dropped)))} B more per object (${(median(heaps.map((h) => h.kept - h.dropped))
        * 10_000 / 2 ** 20).toFixed(1)} MiB per 10,000 owned objects).`
    : '';
  const report = `## No-op resync (bench/noop-resync.ts)

Script: \`bench/noop-resync.ts\`. Measured ${date} on ${os.availableParallelism()} cores (${os.cpus()[0]?.model.trim() ?? '?'}), ${Math.round(os.totalmem() / 2 ** 30)} GiB,
Node ${process.version}, Kubernetes ${kubernetes}. One cluster of the local control plane, \`${CLUSTER}\`, started for the
benchmark and stopped at the end. The machine's 1-minute load average (everything on it), sampled every 10 s, was
${median(load).toFixed(1)} (median) on ${os.availableParallelism()} cores. Builds: the baseline ${builds[0]!.description}; the
working tree ${builds[1]!.description}.

Method: ${RUNS} runs, alternating which build goes first; per run and build a fresh namespace, one Sync of ${int(N)} inline
ConfigMaps (\`interval: 1h\`), an operator process (\`--namespace\`), the Sync Ready, then (1) a requested reconcile
(\`syncprims.dev/reconcile-requested-at\`) of the unchanged set, (2) the operator stopped and started again, and (3) a new
revision that changes every ConfigMap's value (the Sync's spec edited), timed until Ready with it. Requests are
the operator's (User-Agent \`${OPERATOR_UA}\`), read from the API server's audit log (Lease renewals and watches left out),
from the request (or the start) until the operator has been quiet for 2 s; a dry run is a PATCH with \`dryRun=All\`.

| run | build | no-op resync: requests | by verb | to lastHandledReconcileAt | restart: requests | by verb | new revision: requests | by verb | to Ready |
|---|---|---|---|---|---|---|---|---|---|
${rows.join('\n')}

${summary.join('\n')}

${heapLine}

What the working tree does: the owned-object informers keep, of \`managedFields\`, our field manager's Apply entry (field
names, never values) and the entries written by others since; an unchanged object is recognised from it (the fields we
would apply are exactly those we own, each value equal to the live one) and not sent; where that cannot be told (a value the
server normalises, a list key it defaults), one dry run is sent and its "unchanged" remembered as a hash of (resourceVersion,
rendered object). \`test/integration/noop-safety.test.ts\` checks the decision against real dry runs over the corpus and
\`examples/\` with hand edits. Where the cache shows one of our values differs (a new revision's change, drift), the object is
applied without a dry run first (since 96381d0); a build before that sends a dry run and then the apply for each changed object.
`;
  writeFileSync(OUT, report);
  console.log(`wrote ${path.relative(ROOT, OUT)}`);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
