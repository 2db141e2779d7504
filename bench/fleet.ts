// FleetSync (docs/fleet.md) over the simulated fleet of bench/remote.ts (b),
// against the same RemoteSyncs created directly, measured in one run, on a
// control plane of the benchmark's own (.local/bench-fleet-plane): the managing
// cluster `bench-fleet-mgmt` and the two API servers `bench-fleet-1` and
// `bench-fleet-2` that hold the identities.
//
// The fleet: FLEET_N identities (default 1000), each a namespace `fleet-<i>` in
// bench-fleet-1 (even i) or bench-fleet-2 (odd i), a ServiceAccount confined to
// it and a token; its kubeconfig (everything inline) in a Secret of mgmt.
// The cases (FLEET_CASES, default all four, in this order), each in a fresh
// namespace of mgmt with its N Secrets and a fresh operator:
//   direct: N RemoteSyncs POSTed (32 at a time), each applying FLEET_OBJECTS
//     (10) ConfigMaps into its `fleet-<i>`: first POST → all Ready=True.
//   placed: the same RemoteSyncs POSTed without defaultNamespace, each given
//     it by the benchmark as soon as it is seen (below): the direct case
//     paying what the fleet case pays for its placement.
//   fleet: the N Secrets labelled `syncprims.dev/cluster: c-<i>` (the
//     inventory), one FleetSync (kind RemoteSync, selecting them all, the same
//     10 ConfigMaps): its POST → all N children Ready=True, and → the
//     FleetSync Ready=True with N/N clusters. Its children placed by the
//     benchmark as they are seen.
//   admitted: the fleet case, its children placed at admission instead: a
//     MutatingAdmissionPolicy bound to the case's namespace sets a RemoteSync's
//     defaultNamespace from its cluster label on create and update.
// A FleetSync's template is the same for every cluster, and each identity may
// write in its own namespace only: the template names no defaultNamespace.
// Placed by the benchmark: a server-side apply of `spec.defaultNamespace:
// fleet-<i>` alone, field manager bench-fleet, 16 in flight (the FleetSync does
// not fight a field it does not set); a RemoteSync reconciled before that
// fails (no namespace) and the next reconcile applies.
// Measured in each case: the time; the operator's writes to mgmt from mgmt's
// audit log (by verb and resource, and those with fieldManager=syncprims-fleet,
// the FleetSync's own); the operator's RSS at all-Ready and its peak (VmHWM);
// its reconciles, their time and queue wait per controller (/metrics).
// Between the cases the ConfigMaps applied go, and the operator stops.
// FLEET_CPU_PROF=1 runs the fleet cases' operators under `node --cpu-prof`
// (summed up in the results: run it apart, FLEET_CASES=fleet, and give the
// results to the report as PROFILE_FROM). REPORT_FROM=results.json only writes
// the report; FLEET_BEFORE (default bench/fleet-before.json) is an earlier
// run's results, shown beside.
//
// Run it with `bench/run.sh fleet`. It writes docs/benchmarks/fleet.md.
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { API_VERSION } from '../src/api/kinds.js';
import { mapLimit } from '../src/apply/map-limit.js';
import { KubeClient } from '../src/kube/client.js';
import { collectionPath, type KubeObject } from '../src/kube/resources.js';
import { sampleValue } from '../test/support/prometheus.js';
import { CollectionWatch } from './collection-watch.js';
import { largestProfile, summarizeProfile, type ProfileSummary } from './cpu-profile.js';
import { admitPlaced, benchPlaces, createIdentities, onOwnPlane, resource, runOrReport, type Identity, type RunFacts } from './fleet-setup.js';
import { configMaps, LABEL_PART_OF, secretObject } from './identities.js';
import { buildOperator, createNamespace, installCrds, int, LOCAL, OperatorProcess, processCpuMs, ROOT, serverVersion, sleep, until } from './support.js';
import { memoryKiB, readyOf, readyTrue, Tracker } from './tracker.js';

const PREFIX = 'bench-fleet';
const { mgmt: MGMT, servers: SERVERS, plane: PLANE, kubeconfigFile, results: RESULTS, operatorDir: OPERATOR_DIR, operator: OPERATOR } = benchPlaces(PREFIX);
const N = Number(process.env.FLEET_N ?? 1000);
const FLEET_OBJECTS = Number(process.env.FLEET_OBJECTS ?? 10);
const TIMEOUT_MS = Number(process.env.FLEET_TIMEOUT_MS ?? 1_200_000);
/** The cases to run, in this order (default all four). */
const CASES = (process.env.FLEET_CASES ?? 'direct,placed,fleet,admitted').split(',') as CaseKind[];
/** FLEET_CPU_PROF=1: the fleet case's operator runs under `node --cpu-prof` (its profile summed up in the results; the timing then pays the sampling). */
const CPU_PROF = process.env.FLEET_CPU_PROF === '1';
const PROFILES = path.join(LOCAL, `${PREFIX}-profiles`);
const CREATE_CONCURRENCY = 32;
const PATCH_CONCURRENCY = 16;
const CLUSTER_LABEL = 'syncprims.dev/cluster';
const FLEET_FIELD_MANAGER = 'syncprims-fleet';
const OUT = path.join(ROOT, 'docs', 'benchmarks', 'fleet.md');
const AUDIT_LOG = path.join(PLANE.dir, `${MGMT}.audit.log`);


/**
 * direct: RemoteSyncs created with their defaultNamespace; placed: the same
 * RemoteSyncs created without it and placed by the benchmark as it places the
 * FleetSync's children (the fleet case's workaround, paid by a direct case);
 * fleet: one FleetSync, its children placed by the benchmark; admitted: one
 * FleetSync, its children placed at admission (a MutatingAdmissionPolicy
 * gives each its defaultNamespace from its cluster label, on create and update).
 */
type CaseKind = 'direct' | 'placed' | 'fleet' | 'admitted';
const isFleet = (kind: CaseKind): boolean => kind === 'fleet' || kind === 'admitted';

interface Writes {
  total: number;
  byKind: Record<string, number>;
  /** Requests whose fieldManager is syncprims-fleet: the FleetSync's writes of its children. */
  fleetManager: number;
  /** Writes of fleetsyncs (status, finalizer): the FleetSync's own bookkeeping. */
  fleetSyncs: number;
}

interface CaseResult {
  ms: number;
  halfMs: number;
  ready: number;
  /** fleet only: POST → the FleetSync Ready=True with N/N. */
  fleetReadyMs?: number;
  /** fleet only: the benchmark's PATCHes of defaultNamespace. */
  benchPatches?: number;
  rssKiB: number;
  hwmKiB: number;
  operatorCpuMs: number;
  /** The 1-minute load average when the case began and when all were Ready. */
  load?: [number, number];
  writes: Writes;
  /** From the operator's /metrics at all-Ready, per controller. */
  controllers: Record<string, ControllerFigures>;
  profile?: ProfileSummary;
  error?: string;
}

interface ControllerFigures {
  /** controller_runtime_reconcile_total by result. */
  reconciles: Record<string, number>;
  /** Seconds in reconciles (controller_runtime_reconcile_time_seconds_sum). */
  reconcileSeconds: number;
  /** Seconds keys waited in the queue (workqueue_queue_duration_seconds_sum), and the adds. */
  queueSeconds: number;
  adds: number;
  retries: number;
}

const CONTROLLERS = ['remotesync', 'fleetsync'];

function controllerFigures(text: string): Record<string, ControllerFigures> {
  const out: Record<string, ControllerFigures> = {};
  for (const c of CONTROLLERS) {
    const reconciles: Record<string, number> = {};
    for (const result of ['success', 'requeue_after', 'retry', 'error']) {
      const v = sampleValue(text, 'controller_runtime_reconcile_total', { controller: c, result });
      if (v > 0) reconciles[result] = v;
    }
    out[c] = {
      reconciles,
      reconcileSeconds: sampleValue(text, 'controller_runtime_reconcile_time_seconds_sum', { controller: c }),
      queueSeconds: sampleValue(text, 'workqueue_queue_duration_seconds_sum', { name: c }),
      adds: sampleValue(text, 'workqueue_adds_total', { name: c }),
      retries: sampleValue(text, 'workqueue_retries_total', { name: c }),
    };
  }
  return out;
}

/** The operator's writes to mgmt (the audit policy logs writes only) from `from` (epoch ms) on. */
function auditWrites(from: number): Writes {
  const out: Writes = { total: 0, byKind: {}, fleetManager: 0, fleetSyncs: 0 };
  for (const line of readFileSync(AUDIT_LOG, 'utf8').split('\n')) {
    if (!line.includes('"userAgent":"syncprims')) continue;
    const e = JSON.parse(line) as { verb: string; requestURI: string; objectRef?: { resource?: string; subresource?: string }; requestReceivedTimestamp: string };
    const resource = e.objectRef?.resource ?? '?';
    if (Date.parse(e.requestReceivedTimestamp) < from || resource === 'leases' || resource === 'events') continue;
    out.total++;
    const kind = `${e.verb} ${resource}${e.objectRef?.subresource ? `/${e.objectRef.subresource}` : ''}`;
    out.byKind[kind] = (out.byKind[kind] ?? 0) + 1;
    if (e.requestURI.includes(`fieldManager=${FLEET_FIELD_MANAGER}`)) out.fleetManager++;
    if (resource === 'fleetsyncs') out.fleetSyncs++;
  }
  return out;
}

/** The RemoteSyncs a case waits for (the FleetSync's children are `all-<cluster>`), each with the namespace its identity may write in. */
const syncNamesOf = (kind: CaseKind, fleet: Identity[]): Map<string, string> =>
  new Map(fleet.map((id) => [isFleet(kind) ? `all-c-${id.i}` : `fleet-${id.i}`, id.namespace]));

async function runCase(mgmt: KubeClient, fleet: Identity[], kind: CaseKind): Promise<CaseResult> {
  const namespace = await createNamespace(mgmt, `${PREFIX}-${kind}`);
  const objects = configMaps(PREFIX, FLEET_OBJECTS, 'cm', 'v1');
  const secret = (id: Identity): KubeObject =>
    isFleet(kind) ? secretObject(`c-${id.i}-kubeconfig`, id.kubeconfig, { [CLUSTER_LABEL]: `c-${id.i}`, bench: 'fleet' }) : secretObject(`fleet-${id.i}-kubeconfig`, id.kubeconfig);
  await mapLimit(fleet, CREATE_CONCURRENCY, (id) => mgmt.request({ method: 'POST', path: `/api/v1/namespaces/${namespace}/secrets`, body: secret(id) }));
  if (kind === 'admitted') await admitPlaced(mgmt, namespace, `${PREFIX}-namespace`);
  const profiled = CPU_PROF && isFleet(kind);
  const op = await startOperator(namespace, profiled);
  const rsPath = collectionPath(resource('RemoteSync'), namespace);
  const watch = await CollectionWatch.open(mgmt, rsPath);
  try {
    await sleep(2_000);
    const names = syncNamesOf(kind, fleet);
    const epoch = Date.now();
    const cpu0 = processCpuMs(op.pid);
    const load0 = os.loadavg()[0] ?? NaN;
    const t0 = performance.now();
    const tracker = new Tracker(watch, new Set(names.keys()), readyTrue, t0);
    const patches = kind === 'placed' || kind === 'fleet' ? placeSyncs(mgmt, watch, rsPath, names) : undefined;
    const fleetReady = isFleet(kind) ? startFleet(mgmt, namespace, objects, fleet.length, t0) : undefined;
    if (!isFleet(kind)) await createSyncs(mgmt, rsPath, fleet, objects, kind === 'direct');
    let error: string | undefined;
    await tracker.wait(`${fleet.length} RemoteSyncs to be Ready (${kind})`, TIMEOUT_MS).catch((err: unknown) => {
      error = String(err);
      console.error(`  ${error}`);
    });
    const ms = error ? performance.now() - t0 : tracker.last;
    const fleetReadyMs = fleetReady ? await fleetReady.catch(() => NaN) : undefined;
    const mem = memoryKiB(op.pid);
    const operatorCpuMs = processCpuMs(op.pid) - cpu0;
    const controllers = controllerFigures(await op.metrics());
    await sleep(1_000);
    const result: CaseResult = { ms, halfMs: tracker.quantile(0.5), ready: tracker.at.size, fleetReadyMs, benchPatches: patches ? await patches : undefined, rssKiB: mem.rss, hwmKiB: mem.hwm, operatorCpuMs, load: [load0, os.loadavg()[0] ?? NaN], writes: auditWrites(epoch), controllers, error };
    if (profiled) result.profile = await profileOf(op);
    return result;
  } finally {
    watch.close();
    await op.stop();
  }
}

/** A fresh operator watching `namespace`; under `node --cpu-prof` if `profiled`. */
async function startOperator(namespace: string, profiled: boolean): Promise<OperatorProcess> {
  if (profiled) rmSync(PROFILES, { recursive: true, force: true });
  return OperatorProcess.start(OPERATOR, namespace, ['--cluster-id', PREFIX], profiled ? ['--cpu-prof', `--cpu-prof-dir=${PROFILES}`] : []);
}

/** Stops a profiled operator (its profile is written at exit) and sums up its profile. */
async function profileOf(op: OperatorProcess): Promise<ProfileSummary | undefined> {
  await op.stop();
  const file = largestProfile(PROFILES);
  return file ? summarizeProfile(file) : undefined;
}

/** POSTs a RemoteSync `fleet-<i>` per identity (32 at a time), with its defaultNamespace if `placed`. */
async function createSyncs(mgmt: KubeClient, rsPath: string, fleet: Identity[], objects: KubeObject[], placed: boolean): Promise<void> {
  await mapLimit(fleet, CREATE_CONCURRENCY, (id) =>
    mgmt.request({
      method: 'POST',
      path: rsPath,
      body: {
        apiVersion: API_VERSION,
        kind: 'RemoteSync',
        metadata: { name: `fleet-${id.i}` },
        spec: { kubeConfig: { secretRef: { name: `fleet-${id.i}-kubeconfig` } }, ...(placed ? { defaultNamespace: id.namespace } : {}), source: { inline: objects } },
      },
      timeoutMs: 60_000,
    }),
  );
}

/** POSTs the FleetSync; resolves to the ms from t0 until it is Ready with n/n. */
async function startFleet(mgmt: KubeClient, namespace: string, objects: KubeObject[], n: number, t0: number): Promise<number> {
  await mgmt.request({
    method: 'POST',
    path: collectionPath(resource('FleetSync'), namespace),
    body: { apiVersion: API_VERSION, kind: 'FleetSync', metadata: { name: 'all' }, spec: { kind: 'RemoteSync', clusters: { selector: { matchLabels: { bench: 'fleet' } } }, template: { spec: { source: { inline: objects } } } } },
  });
  return fleetReadyAt(mgmt, namespace, n, t0);
}

/** Gives each RemoteSync of `names`, as it is seen, the namespace its identity may write in (`names`: RemoteSync → namespace). */
function placeSyncs(mgmt: KubeClient, watch: CollectionWatch, rsPath: string, names: Map<string, string>): Promise<number> {
  const placed = new Set<string>();
  const queue: string[] = [];
  let running = 0;
  let done = 0;
  return new Promise((resolve, reject) => {
    const pump = (): void => {
      while (running < PATCH_CONCURRENCY && queue.length > 0) {
        const name = queue.shift()!;
        running++;
        mgmt
          .request({
            method: 'PATCH',
            path: `${rsPath}/${name}`,
            query: { fieldManager: PREFIX, force: true },
            contentType: 'application/apply-patch+yaml',
            body: { apiVersion: API_VERSION, kind: 'RemoteSync', metadata: { name }, spec: { defaultNamespace: names.get(name) } },
          })
          .then(() => {
            running--;
            if (++done === names.size) {
              stop();
              resolve(done);
            }
            pump();
          }, reject);
      }
    };
    const stop = watch.listen(({ object }) => {
      const name = object.metadata.name ?? '';
      if (placed.has(name) || !names.has(name)) return;
      placed.add(name);
      queue.push(name);
      pump();
    });
  });
}

/** ms from t0 until the FleetSync is Ready=True with n/n clusters (polled every 200 ms). */
async function fleetReadyAt(mgmt: KubeClient, namespace: string, n: number, t0: number): Promise<number> {
  await until(
    'the FleetSync to be Ready',
    async () => {
      const f = await mgmt.request<KubeObject & { status?: { readyClusters?: string } }>({ path: `${collectionPath(resource('FleetSync'), namespace)}/all` });
      return readyOf(f)?.status === 'True' && f.status?.readyClusters === `${n}/${n}`;
    },
    TIMEOUT_MS,
    200,
  );
  return performance.now() - t0;
}

/** The remote ConfigMaps of a case go, so that the next starts from the same state. */
async function clearRemote(clients: Map<string, KubeClient>, fleet: Identity[]): Promise<void> {
  await mapLimit(fleet, CREATE_CONCURRENCY, (id) =>
    clients.get(id.server)!.request({ method: 'DELETE', path: `/api/v1/namespaces/${id.namespace}/configmaps`, query: { labelSelector: `${LABEL_PART_OF}=${PREFIX}` } }),
  );
}

interface Report extends RunFacts {
  identitiesMs: number;
  direct?: CaseResult;
  placed?: CaseResult;
  fleet?: CaseResult;
  admitted?: CaseResult;
}

async function main(): Promise<void> {
  const build = await buildOperator(OPERATOR_DIR);
  await onOwnPlane({ plane: PLANE, clusters: [MGMT, ...SERVERS], kubeconfigFile, userAgent: `${PREFIX}/bench`, operatorDir: OPERATOR_DIR }, async (clients) => {
    const mgmt = clients.get(MGMT)!;
    await installCrds(mgmt);
    console.log(`creating ${N} identities...`);
    const t0 = performance.now();
    const fleet = await createIdentities(clients, { n: N, servers: SERVERS, partOf: PREFIX, kubeconfigFile });
    const identitiesMs = performance.now() - t0;
    const load = os.loadavg()[0] ?? NaN;
    const results: Partial<Record<CaseKind, CaseResult>> = {};
    for (const [k, kind] of CASES.entries()) {
      if (k > 0) await clearRemote(clients, fleet);
      console.log(`${kind}: ${kind === 'fleet' ? `one FleetSync over ${N} clusters` : `${N} RemoteSyncs`}...`);
      results[kind] = await runCase(mgmt, fleet, kind);
      console.log(`  ${JSON.stringify(results[kind])}`);
    }
    const report: Report = { date: new Date().toISOString().slice(0, 10), n: N, objects: FLEET_OBJECTS, build, kubernetes: await serverVersion(mgmt), load, identitiesMs, ...results };
    writeFileSync(RESULTS, JSON.stringify(report));
    writeReport(report);
  });
}

const s2 = (ms: number): string => `${(ms / 1000).toFixed(2)} s`;
const mib = (kib: number): string => `${(kib / 1024).toFixed(0)} MiB`;
const perCluster = (count: number, n: number): string => (count / n).toFixed(2);
const kinds = (w: Writes): string =>
  Object.entries(w.byKind)
    .sort((a, b) => b[1] - a[1])
    .map(([k, v]) => `${k} ${int(v)}`)
    .join(', ');

const CASE_TITLES: Record<CaseKind, string> = {
  direct: 'direct: N RemoteSyncs',
  placed: 'direct, placed as the children',
  fleet: 'FleetSync (RemoteSync kind), children placed by the benchmark',
  admitted: 'FleetSync, children placed at admission',
};
/** The figures of an earlier run (another build), shown beside this one's: FLEET_BEFORE, default bench/fleet-before.json. */
const BEFORE = process.env.FLEET_BEFORE ?? path.join(ROOT, 'bench', 'fleet-before.json');
const commitOf = (build: string): string => /from commit (\w+)/.exec(build)?.[1] ?? build;
const reconcileCounts = (c: ControllerFigures | undefined): string =>
  c
    ? Object.entries(c.reconciles)
        .map(([k, v]) => `${int(v)} ${k}`)
        .join(', ') || '0'
    : '–';
const timeIn = (c: ControllerFigures | undefined): string => (c ? `${s2(c.reconcileSeconds * 1000)}; ${c.adds > 0 ? s2((c.queueSeconds / c.adds) * 1000) : '–'}` : '–');

/** A column of the table: a case, and the direct case of its run. */
interface Column {
  c: CaseResult;
  direct?: CaseResult;
}

/** The table's rows: a title, then one cell per column (the cases of this run, then the earlier FleetSync). */
function rows(n: number, cols: Column[]): string[] {
  const row = (title: string, cell: (c: CaseResult, direct?: CaseResult) => string): string => `| ${title} | ${cols.map((col) => cell(col.c, col.direct)).join(' | ')} |`;
  const fleetWrites = (c: CaseResult): string =>
    c.writes.fleetManager + c.writes.fleetSyncs === 0 ? '–' : `${perCluster(c.writes.fleetManager, n)}; ${int(c.writes.fleetSyncs)} (${int(c.writes.byKind['patch fleetsyncs/status'] ?? 0)} of status)`;
  const fleetController = (c: CaseResult): ControllerFigures | undefined => (c.controllers?.fleetsync?.adds ? c.controllers.fleetsync : undefined);
  return [
    row('all N Ready (from the first POST)', (c) => `${s2(c.ms)} (${int(c.ready)})${c.fleetReadyMs === undefined ? '' : `; the FleetSync Ready with ${n}/${n}: ${s2(c.fleetReadyMs)}`}`),
    row('half Ready', (c) => s2(c.halfMs)),
    row('the time / direct of its run', (c, direct) => (c === direct || !direct ? '1' : `**${(c.ms / direct.ms).toFixed(2)}x**`)),
    row('operator RSS at all-Ready; peak (VmHWM)', (c) => `${mib(c.rssKiB)}; ${mib(c.hwmKiB)}`),
    row('operator CPU', (c) => s2(c.operatorCpuMs)),
    row('load (1 min) at the first POST; at all-Ready', (c) => (c.load ? c.load.map((x) => x.toFixed(1)).join('; ') : '–')),
    row("the operator's writes to mgmt (audit), per cluster", (c) => perCluster(c.writes.total, n)),
    row(`the FleetSync's: children (fieldManager ${FLEET_FIELD_MANAGER}) per cluster; fleetsyncs, all`, fleetWrites),
    row("the benchmark's PATCHes of defaultNamespace", (c) => (c.benchPatches === undefined ? '–' : int(c.benchPatches))),
    row('RemoteSync reconciles by result (/metrics)', (c) => reconcileCounts(c.controllers?.remotesync)),
    row('FleetSync reconciles by result', (c) => reconcileCounts(fleetController(c))),
    row('RemoteSync: time in reconciles, summed; mean wait in the queue', (c) => timeIn(c.controllers?.remotesync)),
    row('FleetSync: time in reconciles, summed; mean wait in the queue', (c) => timeIn(fleetController(c))),
  ];
}

function writeReport(r: Report): void {
  const present = (['direct', 'placed', 'fleet', 'admitted'] as const).filter((k) => r[k]);
  const before = existsSync(BEFORE) ? (JSON.parse(readFileSync(BEFORE, 'utf8')) as Report) : undefined;
  const heads = [...present.map((k) => CASE_TITLES[k]), ...(before?.fleet ? [`FleetSync before: commit ${commitOf(before.build)}, ${before.date}, load ${before.load.toFixed(1)}`] : [])];
  const cols: Column[] = [...present.map((k) => ({ c: r[k]!, direct: r.direct })), ...(before?.fleet ? [{ c: before.fleet, direct: before.direct }] : [])];
  const lines = [
    `## FleetSync over the simulated fleet (\`bench/fleet.ts\`)`,
    '',
    `Measured ${r.date}, Kubernetes ${r.kubernetes}, the operator ${r.build}; ${os.cpus().length} CPUs, load ${r.load.toFixed(1)} at the start. ` +
      `${int(r.n)} identities (namespaces \`fleet-<i>\` on two local API servers, each a ServiceAccount confined to its namespace; created in ${s2(r.identitiesMs)}), ` +
      `${r.objects} ConfigMaps each. The cases in one run, in this order, each with a fresh operator watching its own namespace of mgmt` +
      `${before?.fleet ? `; the last column is the FleetSync of an earlier run (another build, its \`time / direct\` against that run's direct, ${before.direct ? s2(before.direct.ms) : '–'})` : ''}.`,
    '',
    `| | ${heads.join(' | ')} |`,
    `|---|${heads.map(() => '---').join('|')}|`,
    ...rows(r.n, cols),
    '',
    ...ratios(r, before),
    ...whereTimeGoes(r),
    ...(present.some((k) => r[k]?.error) ? ['', `Errors: ${present.map((k) => r[k]?.error).filter(Boolean).join('; ')}`] : []),
    '',
    `Writes by kind: ${present.map((k) => `${k}: ${kinds(r[k]!.writes)}`).join('; ')}.`,
    ...profileLines(),
    '',
    ...METHOD,
  ];
  writeFileSync(OUT, `${lines.join('\n')}\n`);
  console.log(`wrote ${path.relative(ROOT, OUT)}`);
}

function ratios(r: Report, before: Report | undefined): string[] {
  const { direct: d, placed: p, fleet: f, admitted: a } = r;
  const x = (num: CaseResult, den: CaseResult): string => `${(num.ms / den.ms).toFixed(2)}x`;
  const parts = [
    ...(f && d ? [`FleetSync (placed by the benchmark) / direct: **${x(f, d)}** (the target: at most 1.3x)`] : []),
    ...(f && p ? [`FleetSync / direct placed as the children (both pay the step of the placement): **${x(f, p)}**`] : []),
    ...(d && p ? [`the placement alone (placed / direct): ${x(p, d)}`] : []),
    ...(a && d ? [`FleetSync placed at admission / direct (neither pays a failed first reconcile): **${x(a, d)}**`] : []),
    ...(before?.fleet && before.direct ? [`before (commit ${commitOf(before.build)}): ${x(before.fleet, before.direct)} direct`] : []),
  ];
  return parts.length > 0 ? [`${parts.join('; ')}.`] : [];
}

/**
 * Where the FleetSync's time goes against the placed case, from /metrics: the
 * RemoteSync workers (--concurrency, 8) are busy throughout, so the wall time
 * is about the RemoteSyncs' summed reconcile time over 8.
 */
function whereTimeGoes(r: Report): string[] {
  const { placed: p, fleet: f } = r;
  const pr = p?.controllers?.remotesync;
  const fr = f?.controllers?.remotesync;
  const fs = f?.controllers?.fleetsync;
  if (!p || !f || !pr || !fr || !fs) return [];
  const count = (c: ControllerFigures): number => Object.values(c.reconciles).reduce((a, b) => a + b, 0);
  const mean = (c: ControllerFigures): string => `${((c.reconcileSeconds / count(c)) * 1000).toFixed(0)} ms`;
  return [
    '',
    `**Where the time goes** (FleetSync against placed, from /metrics): the RemoteSync workers (8) are busy from the first POST to the last Ready in every case ` +
      `(placed: ${s2((pr.reconcileSeconds * 1000) / 8)} of RemoteSync reconciles per worker for ${s2(p.ms)} of wall time), ` +
      `so the time is the RemoteSyncs' reconcile time over 8. Placed: ${int(count(pr))} RemoteSync reconciles, ${s2(pr.reconcileSeconds * 1000)} summed, ${mean(pr)} each; ` +
      `FleetSync: ${int(count(fr))} RemoteSync reconciles (${int(fr.retries)} failed first ones; placed: ${int(pr.retries)}), ${s2(fr.reconcileSeconds * 1000)} summed, ${mean(fr)} each: ` +
      `${s2(((fr.reconcileSeconds - pr.reconcileSeconds) * 1000) / 8)} more per worker, against ${s2(f.ms - p.ms)} more wall time. Beside them ran the FleetSync's ${int(count(fs))} reconciles ` +
      `(${s2(fs.reconcileSeconds * 1000)} summed, ${mean(fs)} each) and its ${int(f.writes.fleetManager + f.writes.fleetSyncs)} writes to mgmt; the operator's CPU was ` +
      `${s2(f.operatorCpuMs)} against ${s2(p.operatorCpuMs)}: the FleetSync's cost is each RemoteSync reconcile a little slower beside it (one event loop, one mgmt API server, ${os.cpus().length} CPUs shared), not reconciles of its own in their way.`,
  ];
}

/** The profile of the fleet case's operator, from the results of a profiled run (PROFILE_FROM; made with FLEET_CASES=fleet FLEET_CPU_PROF=1). */
function profileLines(): string[] {
  const from = process.env.PROFILE_FROM;
  const run = from ? (JSON.parse(readFileSync(from, 'utf8')) as Report) : undefined;
  const prof = run?.fleet?.profile;
  if (!run?.fleet || !prof) return [];
  return [
    '',
    `**Where the FleetSync case's operator spent its CPU** (a separate run, FleetSync only, its operator under \`node --cpu-prof\`: ${int(run.n)} clusters, ${run.date}, ` +
      `all Ready in ${s2(run.fleet.ms)}; ${s2(prof.totalMs)} profiled from the operator's start to its stop, ${s2(prof.idleMs)} of it idle, ${s2(prof.gcMs)} in GC). By area: ` +
      `${prof.byArea.map(([a, t]) => `${a} ${s2(t)}`).join(', ')}. The functions with the most self time: ${prof.top
        .slice(0, 10)
        .map(([fn, t]) => `\`${fn}\` ${s2(t)}`)
        .join(', ')}.`,
  ];
}

const METHOD = [
  `Method: the identities as in \`bench/remote.ts\` (b). direct: N Secrets and N RemoteSyncs POSTed 32 at a time, each with its \`defaultNamespace\`; ` +
    `placed: the same RemoteSyncs POSTed without it, each given its \`defaultNamespace\` by the benchmark once seen, as the children are; ` +
    `fleet: N Secrets labelled \`syncprims.dev/cluster\` (the inventory) and one FleetSync selecting them. Timed with a watch of the RemoteSyncs, to Ready=True for their generation. ` +
    `**Why placed:** a FleetSync's template is the same for every cluster, and each simulated identity may write in its own namespace only, so the ` +
    `template names no defaultNamespace and the benchmark gives each child its \`spec.defaultNamespace\` once it is seen (server-side apply of that ` +
    `field, field manager bench-fleet, ${PATCH_CONCURRENCY} in flight): a child reconciled before that fails for want of a namespace, and the next reconcile applies. On a real fleet ` +
    `(one namespace name on every cluster) no such step exists; the placed case pays the same step without a FleetSync, so FleetSync / placed is the FleetSync's own cost. ` +
    `admitted: the FleetSync again, in a namespace of mgmt where a MutatingAdmissionPolicy (CEL, in the API server) sets a RemoteSync's \`defaultNamespace\` from its ` +
    `\`syncprims.dev/cluster\` label on create and update: each child is born placed, as on a real fleet, with the same identities and the same template. ` +
    `Writes are counted from mgmt's audit log (the operator's user agent; Leases and Events apart); reconciles, their time and the queue wait from the operator's /metrics at all-Ready. ` +
    `One run of each case on a shared machine: the load row shows how the machine's other work moved during it; read differences of a few percent between cases with that in mind.`,
];

runOrReport<Report>(main, writeReport);
