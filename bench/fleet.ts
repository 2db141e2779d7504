// FleetSync (docs/fleet.md) over the simulated fleet of bench/remote.ts (b),
// against the same RemoteSyncs created directly, measured in one run, on a
// control plane of the benchmark's own (.local/bench-fleet-plane): the managing
// cluster `bench-fleet-mgmt` and the two API servers `bench-fleet-1` and
// `bench-fleet-2` that hold the identities.
//
// The fleet: FLEET_N identities (default 1000), each a namespace `fleet-<i>` in
// bench-fleet-1 (even i) or bench-fleet-2 (odd i), a ServiceAccount confined to
// it and a token; its kubeconfig (everything inline) in a Secret of mgmt.
// The cases (FLEET_CASES, default both, in this order), each in a fresh
// namespace of mgmt with its N Secrets and a fresh operator:
//   direct: the baseline. N RemoteSyncs POSTed (32 at a time), each applying
//     FLEET_OBJECTS (10) ConfigMaps, each with its `defaultNamespace:
//     fleet-<i>` written in it: first POST → all Ready=True.
//   fleet: the N Secrets labelled `syncprims.dev/cluster: c-<i>` (the
//     inventory) and annotated `values.syncprims.dev/namespace: fleet-<i>`
//     (the cluster's value `namespace`), one FleetSync (kind RemoteSync,
//     selecting them all, the same 10 ConfigMaps, `substitute: {}` and
//     `defaultNamespace: ${namespace}` in its template): its POST → all N
//     children Ready=True, and → the FleetSync Ready=True with N/N clusters.
//     Each identity may write in its own namespace only, so each child must
//     get its own defaultNamespace: the substitution gives it, from the
//     cluster's Secret, when the child is made (no child is born without it,
//     none is placed by the benchmark or at admission, as runs before this
//     one had to).
// Measured in each case: the time; the operator's writes to mgmt from mgmt's
// audit log (by verb and resource, and those with fieldManager=syncprims-fleet,
// the FleetSync's own); the operator's RSS at all-Ready and its peak (VmHWM);
// its reconciles, their time and queue wait per controller (/metrics); in the
// fleet case, the children whose spec.defaultNamespace (at their first Ready)
// is their identity's namespace.
// Between the cases the ConfigMaps applied go, and the operator stops.
// FLEET_CPU_PROF=1 runs the fleet case's operator under `node --cpu-prof`
// (summed up in the results: run it apart, FLEET_CASES=fleet, and give the
// results to the report as PROFILE_FROM). REPORT_FROM=results.json only writes
// the report; FLEET_BEFORE (none by default) is another run's results (an
// earlier build's, or this build's with the cases in another order), its
// FleetSync shown beside.
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
import { benchPlaces, onFleetPlane, resource, runOrReport, type Identity, type RunFacts } from './fleet-setup.js';
import { configMaps, LABEL_PART_OF, secretObject } from './identities.js';
import { buildOperator, createNamespace, int, LOCAL, OperatorProcess, processCpuMs, ROOT, serverVersion, sleep, until } from './support.js';
import { memoryKiB, readyOf, readyTrue, Tracker } from './tracker.js';

const PREFIX = 'bench-fleet';
const { mgmt: MGMT, plane: PLANE, results: RESULTS, operatorDir: OPERATOR_DIR, operator: OPERATOR } = benchPlaces(PREFIX);
const N = Number(process.env.FLEET_N ?? 1000);
const FLEET_OBJECTS = Number(process.env.FLEET_OBJECTS ?? 10);
const TIMEOUT_MS = Number(process.env.FLEET_TIMEOUT_MS ?? 1_200_000);
/** The cases to run, in this order (default both). */
const CASES = (process.env.FLEET_CASES ?? 'direct,fleet').split(',') as CaseKind[];
/** FLEET_CPU_PROF=1: the fleet case's operator runs under `node --cpu-prof` (its profile summed up in the results; the timing then pays the sampling). */
const CPU_PROF = process.env.FLEET_CPU_PROF === '1';
const PROFILES = path.join(LOCAL, `${PREFIX}-profiles`);
const CREATE_CONCURRENCY = 32;
const CLUSTER_LABEL = 'syncprims.dev/cluster';
/** The annotation of each cluster's Secret that gives it the value `namespace` (src/clusters/cluster-values.ts). */
const NAMESPACE_VALUE = 'values.syncprims.dev/namespace';
const FLEET_FIELD_MANAGER = 'syncprims-fleet';
const OUT = path.join(ROOT, 'docs', 'benchmarks', 'fleet.md');
const AUDIT_LOG = path.join(PLANE.dir, `${MGMT}.audit.log`);


/**
 * direct: RemoteSyncs created with their defaultNamespace; fleet: one
 * FleetSync with `substitute`, each child given its defaultNamespace from its
 * cluster's value `namespace` (an annotation of its Secret).
 */
type CaseKind = 'direct' | 'fleet';
const isFleet = (kind: CaseKind): boolean => kind === 'fleet';

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
  /** fleet only: the children whose spec.defaultNamespace, at their first Ready, was their identity's namespace (from the substitution). */
  substituted?: number;
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
  const secret = (id: Identity): KubeObject => (isFleet(kind) ? clusterSecret(id) : secretObject(`fleet-${id.i}-kubeconfig`, id.kubeconfig));
  await mapLimit(fleet, CREATE_CONCURRENCY, (id) => mgmt.request({ method: 'POST', path: `/api/v1/namespaces/${namespace}/secrets`, body: secret(id) }));
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
    const fleetReady = isFleet(kind) ? startFleet(mgmt, namespace, objects, fleet.length, t0) : undefined;
    if (!isFleet(kind)) await createSyncs(mgmt, rsPath, fleet, objects);
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
    const substituted = isFleet(kind) ? [...tracker.firstObject].filter(([name, o]) => (o.spec as { defaultNamespace?: string } | undefined)?.defaultNamespace === names.get(name)).length : undefined;
    const result: CaseResult = { ms, halfMs: tracker.quantile(0.5), ready: tracker.at.size, fleetReadyMs, substituted, rssKiB: mem.rss, hwmKiB: mem.hwm, operatorCpuMs, load: [load0, os.loadavg()[0] ?? NaN], writes: auditWrites(epoch), controllers, error };
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

/**
 * Identity `id` as a cluster of the inventory: its Secret `c-<i>-kubeconfig`,
 * labelled `syncprims.dev/cluster: c-<i>`, with the value `namespace` its
 * identity may write in.
 */
function clusterSecret(id: Identity): KubeObject {
  const s = secretObject(`c-${id.i}-kubeconfig`, id.kubeconfig, { [CLUSTER_LABEL]: `c-${id.i}`, bench: 'fleet' });
  s.metadata.annotations = { [NAMESPACE_VALUE]: id.namespace };
  return s;
}

/** POSTs a RemoteSync `fleet-<i>` per identity (32 at a time), each with its defaultNamespace. */
async function createSyncs(mgmt: KubeClient, rsPath: string, fleet: Identity[], objects: KubeObject[]): Promise<void> {
  await mapLimit(fleet, CREATE_CONCURRENCY, (id) =>
    mgmt.request({
      method: 'POST',
      path: rsPath,
      body: {
        apiVersion: API_VERSION,
        kind: 'RemoteSync',
        metadata: { name: `fleet-${id.i}` },
        spec: { kubeConfig: { secretRef: { name: `fleet-${id.i}-kubeconfig` } }, defaultNamespace: id.namespace, source: { inline: objects } },
      },
      timeoutMs: 60_000,
    }),
  );
}

/** The FleetSync of the fleet case: every cluster of the inventory, the ConfigMaps `objects` into the namespace of the cluster's value `namespace`. */
const fleetSyncSpec = (objects: KubeObject[]): Record<string, unknown> => ({
  kind: 'RemoteSync',
  clusters: { selector: { matchLabels: { bench: 'fleet' } } },
  substitute: {},
  template: { spec: { defaultNamespace: '${namespace}', source: { inline: objects } } },
});

/** POSTs the FleetSync; resolves to the ms from t0 until it is Ready with n/n. */
async function startFleet(mgmt: KubeClient, namespace: string, objects: KubeObject[], n: number, t0: number): Promise<number> {
  await mgmt.request({
    method: 'POST',
    path: collectionPath(resource('FleetSync'), namespace),
    body: { apiVersion: API_VERSION, kind: 'FleetSync', metadata: { name: 'all' }, spec: fleetSyncSpec(objects) },
  });
  return fleetReadyAt(mgmt, namespace, n, t0);
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
  /** The cases in the order they ran (FLEET_CASES). */
  order?: CaseKind[];
  identitiesMs: number;
  direct?: CaseResult;
  fleet?: CaseResult;
}

async function main(): Promise<void> {
  const build = await buildOperator(OPERATOR_DIR);
  await onFleetPlane(PREFIX, N, async ({ clients, mgmt, fleet, identitiesMs, load }) => {
    const results: Partial<Record<CaseKind, CaseResult>> = {};
    for (const [k, kind] of CASES.entries()) {
      if (k > 0) await clearRemote(clients, fleet);
      console.log(`${kind}: ${kind === 'fleet' ? `one FleetSync over ${N} clusters` : `${N} RemoteSyncs`}...`);
      results[kind] = await runCase(mgmt, fleet, kind);
      console.log(`  ${JSON.stringify(results[kind])}`);
    }
    const report: Report = { date: new Date().toISOString().slice(0, 10), n: N, objects: FLEET_OBJECTS, build, kubernetes: await serverVersion(mgmt), load, identitiesMs, order: CASES, ...results };
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
  direct: 'direct: N RemoteSyncs, each its defaultNamespace',
  fleet: 'FleetSync (RemoteSync kind), `defaultNamespace: ${namespace}` substituted',
};
/** The figures of another run (an earlier build, or the cases in another order), its FleetSync shown beside this one's: FLEET_BEFORE (none by default). */
const BEFORE = process.env.FLEET_BEFORE;
/**
 * What the runs before substitution measured, for the reader: the report of
 * commit 7d38751 (docs/benchmarks/fleet.md, 1,000 identities, the operator
 * from 169e0be), its FleetSync's children placed by other means.
 */
const BEFORE_SUBSTITUTION =
  'Before substitution (the report of commit 7d38751, another run and build): the FleetSync\'s children given their namespace at admission by a MutatingAdmissionPolicy, 1.23x its direct case; placed by the benchmark after their creation, 1.17x';
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
    row("children given their identity's namespace by the substitution", (c) => (c.substituted === undefined ? '–' : `${int(c.substituted)} of ${int(c.ready)} Ready`)),
    row('RemoteSync reconciles by result (/metrics)', (c) => reconcileCounts(c.controllers?.remotesync)),
    row('FleetSync reconciles by result', (c) => reconcileCounts(fleetController(c))),
    row('RemoteSync: time in reconciles, summed; mean wait in the queue', (c) => timeIn(c.controllers?.remotesync)),
    row('FleetSync: time in reconciles, summed; mean wait in the queue', (c) => timeIn(fleetController(c))),
  ];
}

function writeReport(r: Report): void {
  const present = (['direct', 'fleet'] as const).filter((k) => r[k]);
  const before = BEFORE && existsSync(BEFORE) ? (JSON.parse(readFileSync(BEFORE, 'utf8')) as Report) : undefined;
  const heads = [...present.map((k) => CASE_TITLES[k]), ...(before?.fleet ? [`FleetSync of another run: commit ${commitOf(before.build)}, ${before.date}, load ${before.load.toFixed(1)}`] : [])];
  const cols: Column[] = [...present.map((k) => ({ c: r[k]!, direct: r.direct })), ...(before?.fleet ? [{ c: before.fleet, direct: before.direct }] : [])];
  const lines = [
    `## FleetSync over the simulated fleet (\`bench/fleet.ts\`)`,
    '',
    `Measured ${r.date}, Kubernetes ${r.kubernetes}, the operator ${r.build}; ${os.cpus().length} CPUs, load ${r.load.toFixed(1)} at the start. ` +
      `${int(r.n)} identities (namespaces \`fleet-<i>\` on two local API servers, each a ServiceAccount confined to its namespace; created in ${s2(r.identitiesMs)}), ` +
      `${r.objects} ConfigMaps each. The cases in one run, in the order ${(r.order ?? present).join(', ')}, each with a fresh operator watching its own namespace of mgmt` +
      `${before?.fleet ? `; the last column is the FleetSync of another run (its cases in the order ${(before.order ?? ['direct', 'fleet']).join(', ')}; its \`time / direct\` against that run's direct, ${before.direct ? s2(before.direct.ms) : '–'})` : ''}.`,
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
  const { direct: d, fleet: f } = r;
  const x = (num: CaseResult, den: CaseResult): string => `${(num.ms / den.ms).toFixed(2)}x`;
  const parts = [
    ...(f && d ? [`FleetSync / direct: **${x(f, d)}** (the target: at most 1.2x)`] : []),
    ...(before?.fleet && before.direct ? [`in the other run (commit ${commitOf(before.build)}, the order ${(before.order ?? ['direct', 'fleet']).join(', ')}): ${x(before.fleet, before.direct)} its direct`] : []),
    ...(f && d && before?.fleet && before.direct
      ? [`both runs together (the FleetSync's times summed over the direct ones'): **${((f.ms + before.fleet.ms) / (d.ms + before.direct.ms)).toFixed(2)}x**`]
      : []),
    BEFORE_SUBSTITUTION,
  ];
  return [`${parts.join('; ')}.`];
}

/**
 * Where the FleetSync's time goes against the direct case, from /metrics: the
 * RemoteSync workers (--concurrency, 8) are busy throughout, so the wall time
 * is about the RemoteSyncs' summed reconcile time over 8.
 */
function whereTimeGoes(r: Report): string[] {
  const { direct: d, fleet: f } = r;
  const dr = d?.controllers?.remotesync;
  const fr = f?.controllers?.remotesync;
  const fs = f?.controllers?.fleetsync;
  if (!d || !f || !dr || !fr || !fs) return [];
  const count = (c: ControllerFigures): number => Object.values(c.reconciles).reduce((a, b) => a + b, 0);
  const mean = (c: ControllerFigures): string => `${((c.reconcileSeconds / count(c)) * 1000).toFixed(0)} ms`;
  return [
    '',
    `**Where the time goes** (FleetSync against direct, from /metrics): the RemoteSync workers (8) are busy from the first POST to the last Ready ` +
      `(direct: ${s2((dr.reconcileSeconds * 1000) / 8)} of RemoteSync reconciles per worker for ${s2(d.ms)} of wall time; FleetSync: ${s2((fr.reconcileSeconds * 1000) / 8)} for ${s2(f.ms)}), ` +
      `so the time is about the RemoteSyncs' reconcile time over 8. Direct: ${int(count(dr))} RemoteSync reconciles (${int(dr.retries)} retried), ${s2(dr.reconcileSeconds * 1000)} summed, ${mean(dr)} each; ` +
      `FleetSync: ${int(count(fr))} RemoteSync reconciles (${int(fr.retries)} retried), ${s2(fr.reconcileSeconds * 1000)} summed, ${mean(fr)} each: ` +
      `${s2(((fr.reconcileSeconds - dr.reconcileSeconds) * 1000) / 8)} more per worker, against ${s2(f.ms - d.ms)} more wall time. Beside them ran the FleetSync's ${int(count(fs))} reconciles ` +
      `(${s2(fs.reconcileSeconds * 1000)} summed, ${mean(fs)} each) and its ${int(f.writes.fleetManager + f.writes.fleetSyncs)} writes to mgmt; the operator's CPU was ` +
      `${s2(f.operatorCpuMs)} against ${s2(d.operatorCpuMs)} (one event loop, one mgmt API server, ${os.cpus().length} CPUs shared).`,
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
        .join(', ')}. ` +
      `The operator's CPU (from /proc) was ${s2(run.fleet.operatorCpuMs)} in those ${s2(run.fleet.ms)}, the FleetSync's own code (src/fleet) ${s2(prof.byArea.find(([a]) => a === 'src/fleet')?.[1] ?? 0)} of the samples ` +
      `(the samples not idle count a thread waiting for one of the ${os.cpus().length} CPUs too): the wall time is the operator waiting on the API servers, not its CPU.`,
  ];
}

const METHOD = [
  `Method: the identities as in \`bench/remote.ts\` (b); each may write in its own namespace \`fleet-<i>\` only. direct (the baseline, in the same run): N Secrets and N RemoteSyncs POSTed 32 at a time, ` +
    `each with its \`defaultNamespace: fleet-<i>\` written in it. fleet: N Secrets labelled \`syncprims.dev/cluster: c-<i>\` (the inventory) and annotated ` +
    `\`values.syncprims.dev/namespace: fleet-<i>\` (the cluster's value \`namespace\`), then one FleetSync selecting them, with \`substitute: {}\` and ` +
    `\`defaultNamespace: \${namespace}\` in its template: each child is made with its own namespace, as a direct RemoteSync is created with it, so neither case pays ` +
    `a step the other does not (the runs before substitution placed the children by a PATCH after their creation, or at admission by a MutatingAdmissionPolicy). ` +
    `A child counts as substituted if its \`spec.defaultNamespace\` at its first Ready is its identity's namespace. Timed with a watch of the RemoteSyncs, to Ready=True for their generation. ` +
    `Writes are counted from mgmt's audit log (the operator's user agent; Leases and Events apart); reconciles, their time and the queue wait from the operator's /metrics at all-Ready. ` +
    `One run of each case on a shared machine: the load row shows how the machine's other work moved during it; read differences of a few percent between cases with that in mind.`,
];

runOrReport<Report>(main, writeReport);
