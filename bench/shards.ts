// Sharding (`syncprims run --shards`, src/runtime/shards.ts) over the simulated
// fleet of bench/fleet.ts, on a control plane of the benchmark's own
// (.local/bench-shards-plane): the managing cluster `bench-shards-mgmt` and the
// two API servers `bench-shards-1` and `bench-shards-2` that hold the identities.
//
// The fleet: SHARDS_BENCH_IDENTITIES identities (default 1000; 3000 to see it
// at three times the size), each a namespace `fleet-<i>` of one of the two
// servers, a ServiceAccount confined to it and a token, each its own cluster:
// its kubeconfig (everything inline) in a Secret of mgmt labelled
// `syncprims.dev/cluster: c-<i>` and annotated with the value `namespace`.
// One FleetSync (kind RemoteSync, all of them, SHARDS_BENCH_OBJECTS (10)
// ConfigMaps, `defaultNamespace: ${namespace}` substituted) as in bench/fleet.ts.
//
// The cases (SHARDS_BENCH_CASES, default `baseline,1,2,3`, in this order), each
// in a fresh namespace of mgmt (its Secrets, and its Leases: it is the leader
// election namespace too) with fresh operators:
//   baseline: one operator without --shards (the reference of the same run);
//   1, 2, 3: that many replicas with `--shards --leader-election-namespace <ns>`
//     and the lease flags SHARDS_BENCH_LEASE (default 15s,10s,2s: the flags'
//     defaults), started one after the other, the FleetSync POSTed once each
//     counts all of them as members.
// Measured in each case: the FleetSync's POST → every child Ready=True (a watch
// of the RemoteSyncs) and → the FleetSync Ready with N/N; per replica, its CPU
// (utime+stime from /proc/<pid>/stat) over that rollout, its RSS and peak
// (VmHWM), its requests (`syncprims_cluster_requests_total` of its /metrics)
// to mgmt and to the edges, and the keys it holds (the key Leases' holders);
// the edges' audit logs: the operators' writes per identity, and the identities
// written by more than one process (the User-Agent names the instance): with
// sharding, each must be written by one replica only; mgmt's audit log: the
// writes, the key Lease writes. Then, SETTLE_MS after all Ready, a quiet window
// (SHARDS_BENCH_QUIET_MS, 30 s): the requests per second to mgmt and to the
// edges (summed over the replicas' /metrics), the replicas' CPU. Then a template
// change (the ConfigMaps' value v1 → v2): with 2 and 3 replicas, right after
// `kill -9` of the replica holding the FleetSync's namespace key (so that the
// FleetSync itself must be taken over as well as its clusters); timed from the
// kill until every key Lease is held by a live replica, and until every child is
// Ready with v2 (and the FleetSync Ready at its generation); then each
// identity's first ConfigMap is read back from its edge. With no kill (baseline,
// 1 replica) the same change, as the reference.
// Between the cases the ConfigMaps applied go, and the operators stop (SIGTERM;
// all at once; the time each took is reported: a replica gives its keys up on
// the way out).
//
// Run it with `bench/run.sh shards`. It writes docs/benchmarks/shards.md.
// REPORT_FROM=results.json only writes the report; SHARDS_BENCH_ALSO=<results
// of another run>(,<...>) adds its table (e.g. the 3,000 run beside the 1,000);
// SHARDS_BENCH_KEEP=1 keeps the section already written (its results file may
// be gone: .local is per machine) and adds this run's table to it.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { API_VERSION } from '../src/api/kinds.js';
import { clusterShardKey, namespaceShardKey, SHARD_LEASE_LABEL, shardLeaseName } from '../src/api/shard-marks.js';
import { mapLimit } from '../src/apply/map-limit.js';
import type { KubeClient } from '../src/kube/client.js';
import { collectionPath, type KubeObject } from '../src/kube/resources.js';
import { sampleValue } from '../test/support/prometheus.js';
import { CollectionWatch } from './collection-watch.js';
import { benchPlaces, onFleetPlane, resource, runOrReport, type Identity, type RunFacts } from './fleet-setup.js';
import { configMaps, LABEL_PART_OF, secretObject } from './identities.js';
import { buildOperator, createNamespace, int, OperatorProcess, processCpuMs, ROOT, serverVersion, sleep, until, type OperatorTarget } from './support.js';
import { memoryKiB, readyOf, readyTrue, Tracker } from './tracker.js';

const PREFIX = 'bench-shards';
const { mgmt: MGMT, servers: SERVERS, plane: PLANE, operatorDir: OPERATOR_DIR, operator: OPERATOR } = benchPlaces(PREFIX);
const N = Number(process.env.SHARDS_BENCH_IDENTITIES ?? 1000);
const OBJECTS = Number(process.env.SHARDS_BENCH_OBJECTS ?? 10);
const QUIET_MS = Number(process.env.SHARDS_BENCH_QUIET_MS ?? 30_000);
/** After all Ready, before the quiet window: the last status writes and requeues pass. */
const SETTLE_MS = Number(process.env.SHARDS_BENCH_SETTLE_MS ?? 10_000);
const TIMEOUT_MS = Number(process.env.SHARDS_BENCH_TIMEOUT_MS ?? 1_200_000);
/** --leader-election-lease-duration, -renew-deadline, -retry-period. */
const LEASE = (process.env.SHARDS_BENCH_LEASE ?? '15s,10s,2s').split(',');
const CASES = (process.env.SHARDS_BENCH_CASES ?? 'baseline,1,2,3').split(',').map(caseOf);
const RESULTS = path.join(ROOT, '.local', `${PREFIX}-results-${N}.json`);
const OUT = path.join(ROOT, 'docs', 'benchmarks', 'shards.md');
const CREATE_CONCURRENCY = 32;
const CLUSTER_LABEL = 'syncprims.dev/cluster';
const NAMESPACE_VALUE = 'values.syncprims.dev/namespace';
const OPERATOR_USER_AGENT = 'syncprims-operator';
const FLEET = 'all';

interface CaseSpec {
  name: string;
  replicas: number;
  sharded: boolean;
}

function caseOf(name: string): CaseSpec {
  if (name === 'baseline') return { name, replicas: 1, sharded: false };
  const replicas = Number(name);
  if (!(replicas >= 1 && Number.isInteger(replicas))) throw new Error(`SHARDS_BENCH_CASES: ${name}: want baseline or a number of replicas`);
  return { name, replicas, sharded: true };
}

// ---------------------------------------------------------------- what is measured

/** Requests of one replica (its /metrics), to mgmt and to the edges, by method. */
interface Requests {
  mgmt: number;
  edges: number;
  mgmtByMethod: Record<string, number>;
  edgesByMethod: Record<string, number>;
}

interface ReplicaFigures {
  /** Its instance id (the member name with --shards). */
  id: string;
  /** Cluster keys and whether the namespace key (the FleetSync's) was held at all-Ready. */
  clusterKeys: number;
  namespaceKey: boolean;
  /** CPU over the rollout (the POST → all Ready), ms. */
  cpuMs: number;
  /** CPU from its start to all-Ready (priming, joining, the rollout), ms. */
  cpuTotalMs: number;
  rssKiB: number;
  hwmKiB: number;
  /** Over the rollout. */
  requests: Requests;
  /** CPU over the quiet window, ms. */
  quietCpuMs: number;
  /** Over the template change (survivors only). */
  changeCpuMs?: number;
  changeRequests?: Requests;
  killed?: boolean;
  /** SIGTERM → exit. */
  stopMs?: number;
  /** Its warnings and errors over the case, by message. */
  warnings: Record<string, number>;
  /** 'took over a shard key from a replica that stopped renewing' lines. */
  tookOver: number;
}

/** The operators' writes in one audit log window. */
interface AuditWrites {
  /** Writes, dry runs apart; Leases and Events apart on mgmt. */
  writes: number;
  dryRuns: number;
  byKind: Record<string, number>;
  /** Edges: identities (namespaces fleet-<i>) written by more than one process; mgmt: children whose status more than one wrote. */
  byMany: number;
  /** Edges: identities written at all. */
  written: number;
  /** mgmt: writes of shard key Leases, and of membership (and liveness) Leases. */
  keyLeaseWrites?: number;
  otherLeaseWrites?: number;
  /** Writes by process (instance id). */
  byInstance: Record<string, number>;
}

interface Change {
  /** The replica killed (kill -9), and the keys it held. */
  killed?: { id: string; clusterKeys: number; namespaceKey: boolean };
  /** From the kill until every key Lease is held by a live replica. */
  keysHeldMs?: number;
  /** From the kill (or the PATCH) until every child is Ready with v2. */
  readyMs: number;
  halfMs: number;
  /** … and the FleetSync Ready at its new generation with N/N. */
  fleetReadyMs: number;
  ready: number;
  /** Identities whose first ConfigMap read back from its edge holds v2. */
  edgeChecked: number;
  edges: AuditWrites;
  mgmt: AuditWrites;
  error?: string;
}

interface Quiet {
  ms: number;
  requests: Requests;
  mgmtWrites: AuditWrites;
}

interface CaseResult {
  name: string;
  replicas: number;
  sharded: boolean;
  readyMs: number;
  halfMs: number;
  fleetReadyMs: number;
  ready: number;
  /** The POST after the replicas started: until each counted them all (ms, sharded only). */
  membersMs?: number;
  load: [number, number];
  figures: ReplicaFigures[];
  edges: AuditWrites;
  mgmt: AuditWrites;
  /** Key Leases at all-Ready: how many, and held by a live replica. */
  keyLeases?: { count: number; held: number };
  quiet: Quiet;
  change: Change;
  error?: string;
}

const sumRequests = (rs: Requests[]): Requests => {
  const out: Requests = { mgmt: 0, edges: 0, mgmtByMethod: {}, edgesByMethod: {} };
  for (const r of rs) {
    out.mgmt += r.mgmt;
    out.edges += r.edges;
    for (const [m, v] of Object.entries(r.mgmtByMethod)) out.mgmtByMethod[m] = (out.mgmtByMethod[m] ?? 0) + v;
    for (const [m, v] of Object.entries(r.edgesByMethod)) out.edgesByMethod[m] = (out.edgesByMethod[m] ?? 0) + v;
  }
  return out;
};

/** `syncprims_cluster_requests_total` as `cluster|method` → count. */
function requestCounts(metrics: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const m of metrics.matchAll(/^syncprims_cluster_requests_total\{([^}]*)\} (\S+)$/gm)) {
    const labels = Object.fromEntries([...(m[1] ?? '').matchAll(/(\w+)="([^"]*)"/g)].map((x) => [x[1], x[2]]));
    const key = `${labels.cluster}|${labels.method}`;
    out.set(key, (out.get(key) ?? 0) + Number(m[2]));
  }
  return out;
}

/** The change between two scrapes: a remote cluster's label is `<namespace>/<Secret>`, mgmt's its context's name. */
function requestsBetween(before: Map<string, number>, after: Map<string, number>): Requests {
  const out: Requests = { mgmt: 0, edges: 0, mgmtByMethod: {}, edgesByMethod: {} };
  for (const [key, v] of after) {
    const d = v - (before.get(key) ?? 0);
    if (!d) continue;
    const [cluster = '', method = ''] = key.split('|');
    if (cluster.includes('/')) {
      out.edges += d;
      out.edgesByMethod[method] = (out.edgesByMethod[method] ?? 0) + d;
    } else {
      out.mgmt += d;
      out.mgmtByMethod[method] = (out.mgmtByMethod[method] ?? 0) + d;
    }
  }
  return out;
}

interface AuditEvent {
  verb: string;
  userAgent?: string;
  requestURI: string;
  requestReceivedTimestamp: string;
  objectRef?: { resource?: string; namespace?: string; name?: string; subresource?: string };
}

const instanceOf = (e: AuditEvent): string => /instance\/(\S+)/.exec(e.userAgent ?? '')?.[1] ?? '?';

/** The operators' writes in `file` received in [from, to) (epoch ms). */
function operatorWrites(file: string, from: number, to: number): AuditEvent[] {
  if (!existsSync(file)) return [];
  const out: AuditEvent[] = [];
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (!line.includes(`"userAgent":"${OPERATOR_USER_AGENT}`)) continue;
    const e = JSON.parse(line) as AuditEvent;
    const at = Date.parse(e.requestReceivedTimestamp);
    if (at >= from && at < to) out.push(e);
  }
  return out;
}

const auditLog = (cluster: string): string => path.join(PLANE.dir, `${cluster}.audit.log`);

/** The operators' writes to the edges in [from, to): per identity, and by how many processes. */
function edgeWrites(from: number, to: number): AuditWrites {
  const out: AuditWrites = { writes: 0, dryRuns: 0, byKind: {}, byMany: 0, written: 0, byInstance: {} };
  const writers = new Map<string, Set<string>>();
  for (const e of SERVERS.flatMap((s) => operatorWrites(auditLog(s), from, to))) {
    if (e.requestURI.includes('dryRun=')) {
      out.dryRuns++;
      continue;
    }
    out.writes++;
    const kind = `${e.verb} ${e.objectRef?.resource ?? '?'}`;
    out.byKind[kind] = (out.byKind[kind] ?? 0) + 1;
    const who = instanceOf(e);
    out.byInstance[who] = (out.byInstance[who] ?? 0) + 1;
    const ns = e.objectRef?.namespace ?? '?';
    let set = writers.get(ns);
    if (!set) writers.set(ns, (set = new Set()));
    set.add(who);
  }
  out.written = writers.size;
  out.byMany = [...writers.values()].filter((s) => s.size > 1).length;
  return out;
}

/** The operators' writes to mgmt in [from, to) in `namespace`: Leases (key, other) and Events apart. */
function mgmtWrites(namespace: string, from: number, to: number): AuditWrites {
  const out: AuditWrites = { writes: 0, dryRuns: 0, byKind: {}, byMany: 0, written: 0, keyLeaseWrites: 0, otherLeaseWrites: 0, byInstance: {} };
  const statusWriters = new Map<string, Set<string>>();
  for (const e of operatorWrites(auditLog(MGMT), from, to)) {
    if (e.objectRef?.namespace !== namespace) continue;
    const r = e.objectRef.resource ?? '?';
    if (r === 'leases') {
      if ((e.objectRef.name ?? '').startsWith('syncprims-shard-')) out.keyLeaseWrites!++;
      else out.otherLeaseWrites!++;
      continue;
    }
    if (r === 'events') continue;
    if (e.requestURI.includes('dryRun=')) {
      out.dryRuns++;
      continue;
    }
    out.writes++;
    const kind = `${e.verb} ${r}${e.objectRef.subresource ? `/${e.objectRef.subresource}` : ''}`;
    out.byKind[kind] = (out.byKind[kind] ?? 0) + 1;
    const who = instanceOf(e);
    out.byInstance[who] = (out.byInstance[who] ?? 0) + 1;
    if (r === 'remotesyncs' && e.objectRef.subresource === 'status') {
      const name = e.objectRef.name ?? '?';
      let set = statusWriters.get(name);
      if (!set) statusWriters.set(name, (set = new Set()));
      set.add(who);
    }
  }
  out.written = statusWriters.size;
  out.byMany = [...statusWriters.values()].filter((s) => s.size > 1).length;
  return out;
}

// ---------------------------------------------------------------- the fleet

function clusterSecret(id: Identity): KubeObject {
  const s = secretObject(`c-${id.i}-kubeconfig`, id.kubeconfig, { [CLUSTER_LABEL]: `c-${id.i}`, bench: 'shards' });
  s.metadata.annotations = { [NAMESPACE_VALUE]: id.namespace };
  return s;
}

const templateOf = (value: string): Record<string, unknown> => ({ spec: { defaultNamespace: '${namespace}', source: { inline: configMaps(PREFIX, OBJECTS, 'cm', value) } } });

const fleetPath = (namespace: string): string => `${collectionPath(resource('FleetSync'), namespace)}/${FLEET}`;

async function postFleet(mgmt: KubeClient, namespace: string): Promise<void> {
  await mgmt.request({
    method: 'POST',
    path: collectionPath(resource('FleetSync'), namespace),
    body: {
      apiVersion: API_VERSION,
      kind: 'FleetSync',
      metadata: { name: FLEET },
      spec: { kind: 'RemoteSync', clusters: { selector: { matchLabels: { bench: 'shards' } } }, substitute: {}, template: templateOf('v1') },
    },
  });
}

/** The FleetSync's template changed: its ConfigMaps hold `value`. Resolves to its new generation. */
async function changeTemplate(mgmt: KubeClient, namespace: string, value: string): Promise<number> {
  const f = await mgmt.request<KubeObject>({
    method: 'PATCH',
    path: fleetPath(namespace),
    contentType: 'application/merge-patch+json',
    body: { spec: { template: templateOf(value) } },
  });
  return f.metadata.generation ?? NaN;
}

/** ms from t0 until the FleetSync is Ready=True at generation ≥ `generation` with n/n clusters. */
async function fleetReadyAt(mgmt: KubeClient, namespace: string, n: number, t0: number, generation = 1): Promise<number> {
  await until(
    'the FleetSync to be Ready',
    async () => {
      const f = await mgmt.request<KubeObject & { status?: { readyClusters?: string; observedGeneration?: number } }>({ path: fleetPath(namespace) });
      const ready = readyOf(f);
      return ready?.status === 'True' && (f.status?.observedGeneration ?? 0) >= generation && (f.metadata.generation ?? 0) >= generation && f.status?.readyClusters === `${n}/${n}`;
    },
    TIMEOUT_MS,
    250,
  );
  return performance.now() - t0;
}

/** A child is Ready for its generation and its ConfigMaps hold `value`. */
const readyWith =
  (value: string) =>
  (o: KubeObject): boolean =>
    readyTrue(o) && (o.spec as { source?: { inline?: { data?: { value?: string } }[] } } | undefined)?.source?.inline?.[0]?.data?.value === value;

/** The identities whose first ConfigMap, read from its edge, holds `value`. */
async function checkEdges(clients: Map<string, KubeClient>, fleet: Identity[], value: string): Promise<number> {
  const ok = await mapLimit(fleet, CREATE_CONCURRENCY, async (id) => {
    const cm = await clients
      .get(id.server)!
      .request<{ data?: Record<string, string> }>({ path: `/api/v1/namespaces/${id.namespace}/configmaps/cm-0000` })
      .catch(() => undefined);
    return cm?.data?.value === value;
  });
  return ok.filter(Boolean).length;
}

async function clearRemote(clients: Map<string, KubeClient>, fleet: Identity[]): Promise<void> {
  await mapLimit(fleet, CREATE_CONCURRENCY, (id) =>
    clients.get(id.server)!.request({ method: 'DELETE', path: `/api/v1/namespaces/${id.namespace}/configmaps`, query: { labelSelector: `${LABEL_PART_OF}=${PREFIX}` } }),
  );
}

// ---------------------------------------------------------------- the replicas

interface Replica {
  op: OperatorProcess;
  id: string;
  startedAt: number;
}

async function startReplicas(spec: CaseSpec, namespace: string): Promise<Replica[]> {
  const lease = ['--leader-election-lease-duration', LEASE[0]!, '--leader-election-renew-deadline', LEASE[1]!, '--leader-election-retry-period', LEASE[2]!];
  // One FleetSync over the whole fleet: past 1,000 clusters, past a FleetSync's default quota (QuotaExceeded, nothing written).
  const quota = N > 1000 ? ['--fleet-max-clusters', String(N)] : [];
  const extra = ['--cluster-id', PREFIX, ...quota, ...(spec.sharded ? ['--shards', '--leader-election-namespace', namespace, ...lease] : [])];
  const replicas: Replica[] = [];
  for (let k = 0; k < spec.replicas; k++) {
    const target: OperatorTarget = { ...OPERATOR, log: path.join(ROOT, '.local', `${PREFIX}-operator-${spec.name}-${k}.log`) };
    const startedAt = Date.now();
    const op = await OperatorProcess.start(target, namespace, extra);
    let id = '';
    await until('the starting line', async () => {
      id = String(op.logsSince(0).find((l) => l.msg === 'starting')?.fields.instance ?? '');
      return id !== '';
    }, 30_000, 50);
    replicas.push({ op, id, startedAt });
  }
  return replicas;
}

/** Until each replica counts `n` live members (its syncprims_shard_members). */
async function membersSeen(replicas: Replica[], n: number): Promise<void> {
  await until(`${n} shard members seen by each replica`, async () => {
    for (const r of replicas) if (sampleValue(await r.op.metrics(), 'syncprims_shard_members') !== n) return false;
    return true;
  }, 120_000, 250);
}

interface LeaseObject {
  metadata: { name: string };
  spec?: { holderIdentity?: string };
}

/** The key Leases of `namespace`: name → holder. */
async function keyLeases(mgmt: KubeClient, namespace: string): Promise<Map<string, string>> {
  const list = await mgmt.request<{ items: LeaseObject[] }>({ path: `/apis/coordination.k8s.io/v1/namespaces/${namespace}/leases`, query: { labelSelector: SHARD_LEASE_LABEL }, timeoutMs: 60_000 });
  return new Map(list.items.map((l) => [l.metadata.name, l.spec?.holderIdentity ?? '']));
}

/** The names of the key Leases every case needs: the N clusters' and the namespace's. */
const expectedKeys = (namespace: string, fleet: Identity[]): { clusters: string[]; namespace: string } => ({
  clusters: fleet.map((id) => shardLeaseName(clusterShardKey(namespace, `c-${id.i}-kubeconfig`))),
  namespace: shardLeaseName(namespaceShardKey(namespace)),
});

const WARN_LEVELS = new Set(['warn', 'error', 'fatal']);

function warningsOf(op: OperatorProcess, from: number): { warnings: Record<string, number>; tookOver: number } {
  const warnings: Record<string, number> = {};
  let tookOver = 0;
  for (const l of op.logsSince(from)) {
    if (l.msg === 'took over a shard key from a replica that stopped renewing') tookOver++;
    if (WARN_LEVELS.has(String(l.fields.level))) warnings[l.msg] = (warnings[l.msg] ?? 0) + 1;
  }
  return { warnings, tookOver };
}

// ---------------------------------------------------------------- a case

async function runCase(mgmt: KubeClient, clients: Map<string, KubeClient>, fleet: Identity[], spec: CaseSpec): Promise<CaseResult> {
  const namespace = await createNamespace(mgmt, `${PREFIX}-${spec.sharded ? `r${spec.replicas}` : 'base'}`);
  await mapLimit(fleet, CREATE_CONCURRENCY, (id) => mgmt.request({ method: 'POST', path: `/api/v1/namespaces/${namespace}/secrets`, body: clusterSecret(id) }));
  const caseEpoch = Date.now();
  const replicas = await startReplicas(spec, namespace);
  const rsPath = collectionPath(resource('RemoteSync'), namespace);
  const watch = await CollectionWatch.open(mgmt, rsPath);
  const names = new Set(fleet.map((id) => `${FLEET}-c-${id.i}`));
  const keys = expectedKeys(namespace, fleet);
  try {
    const m0 = performance.now();
    if (spec.sharded) await membersSeen(replicas, spec.replicas);
    const membersMs = spec.sharded ? performance.now() - m0 : undefined;
    await sleep(2_000);
    // The rollout: the POST → every child Ready.
    const epoch = Date.now();
    const cpu0 = replicas.map((r) => processCpuMs(r.op.pid));
    const req0 = await Promise.all(replicas.map(async (r) => requestCounts(await r.op.metrics())));
    const load0 = os.loadavg()[0] ?? NaN;
    const t0 = performance.now();
    const tracker = new Tracker(watch, names, readyTrue, t0);
    await postFleet(mgmt, namespace);
    const fleetReady = fleetReadyAt(mgmt, namespace, fleet.length, t0);
    let error: string | undefined;
    await tracker.wait(`${fleet.length} children Ready (${spec.name})`, TIMEOUT_MS).catch((err: unknown) => {
      error = String(err);
      console.error(`  ${error}`);
    });
    const readyMs = error ? performance.now() - t0 : tracker.last;
    const cpu1 = replicas.map((r) => processCpuMs(r.op.pid));
    const req1 = await Promise.all(replicas.map(async (r) => requestCounts(await r.op.metrics())));
    const mem = replicas.map((r) => memoryKiB(r.op.pid));
    const fleetReadyMs = await fleetReady.catch(() => NaN);
    const rolloutEnd = Date.now();
    const load1 = os.loadavg()[0] ?? NaN;
    const holders = spec.sharded ? await keyLeases(mgmt, namespace) : new Map<string, string>();
    const ids = new Set(replicas.map((r) => r.id));
    const keyLeaseCount = holders.size;
    const heldLive = [...holders.values()].filter((h) => ids.has(h)).length;
    console.log(`  all Ready in ${s2(readyMs)} (the FleetSync ${s2(fleetReadyMs)}); key Leases ${keyLeaseCount}, held by live replicas ${heldLive}`);

    // At rest.
    await sleep(SETTLE_MS);
    const q0 = Date.now();
    const qcpu0 = replicas.map((r) => processCpuMs(r.op.pid));
    const qreq0 = await Promise.all(replicas.map(async (r) => requestCounts(await r.op.metrics())));
    await sleep(QUIET_MS);
    const qcpu1 = replicas.map((r) => processCpuMs(r.op.pid));
    const qreq1 = await Promise.all(replicas.map(async (r) => requestCounts(await r.op.metrics())));
    const q1 = Date.now();
    const quiet: Quiet = { ms: q1 - q0, requests: sumRequests(replicas.map((_, k) => requestsBetween(qreq0[k]!, qreq1[k]!))), mgmtWrites: mgmtWrites(namespace, q0, q1) };
    console.log(`  at rest: mgmt ${(quiet.requests.mgmt / (quiet.ms / 1000)).toFixed(2)}/s, edges ${(quiet.requests.edges / (quiet.ms / 1000)).toFixed(2)}/s`);

    const figures: ReplicaFigures[] = replicas.map((r, k) => ({
      id: r.id,
      clusterKeys: keys.clusters.filter((name) => holders.get(name) === r.id).length,
      namespaceKey: holders.get(keys.namespace) === r.id,
      cpuMs: cpu1[k]! - cpu0[k]!,
      cpuTotalMs: cpu1[k]!,
      rssKiB: mem[k]!.rss,
      hwmKiB: mem[k]!.hwm,
      requests: requestsBetween(req0[k]!, req1[k]!),
      quietCpuMs: qcpu1[k]! - qcpu0[k]!,
      warnings: {},
      tookOver: 0,
    }));

    const change = await templateChange(mgmt, clients, fleet, spec, namespace, watch, replicas, figures, keys);
    const result: CaseResult = {
      name: spec.name,
      replicas: spec.replicas,
      sharded: spec.sharded,
      readyMs,
      halfMs: tracker.quantile(0.5),
      fleetReadyMs,
      ready: tracker.at.size,
      membersMs,
      load: [load0, load1],
      figures,
      edges: edgeWrites(epoch, rolloutEnd),
      mgmt: mgmtWrites(namespace, epoch, rolloutEnd),
      ...(spec.sharded && { keyLeases: { count: keyLeaseCount, held: heldLive } }),
      quiet,
      change,
      error,
    };
    // All at once (one after the other, each leaving replica's keys would pass to the next to leave).
    await Promise.all(
      replicas.map(async (r, k) => {
        if (figures[k]!.killed) return;
        const t = performance.now();
        await r.op.stop();
        figures[k]!.stopMs = performance.now() - t;
      }),
    );
    // Their warnings over the whole case, the stop included.
    for (const [k, r] of replicas.entries()) Object.assign(figures[k]!, warningsOf(r.op, caseEpoch));
    return result;
  } finally {
    watch.close();
    await Promise.all(replicas.map((r) => r.op.stop()));
  }
}

/**
 * The template's ConfigMaps v1 → v2; with more than one replica, right after
 * `kill -9` of the replica holding the FleetSync's namespace key.
 */
async function templateChange(
  mgmt: KubeClient,
  clients: Map<string, KubeClient>,
  fleet: Identity[],
  spec: CaseSpec,
  namespace: string,
  watch: CollectionWatch,
  replicas: Replica[],
  figures: ReplicaFigures[],
  keys: { clusters: string[]; namespace: string },
): Promise<Change> {
  const kill = spec.sharded && spec.replicas > 1;
  const victim = kill ? Math.max(0, figures.findIndex((f) => f.namespaceKey)) : -1;
  const survivors = replicas.filter((_, k) => k !== victim);
  const live = new Set(survivors.map((r) => r.id));
  const epoch = Date.now();
  const cpu0 = replicas.map((r) => processCpuMs(r.op.pid));
  const req0 = await Promise.all(replicas.map(async (r) => requestCounts(await r.op.metrics())));
  const t0 = performance.now();
  const tracker = new Tracker(watch, new Set(fleet.map((id) => `${FLEET}-c-${id.i}`)), readyWith('v2'), t0);
  if (kill) {
    process.kill(replicas[victim]!.op.pid!, 'SIGKILL');
    figures[victim]!.killed = true;
    console.log(`  kill -9 ${replicas[victim]!.id} (${figures[victim]!.clusterKeys} cluster keys${figures[victim]!.namespaceKey ? ' and the namespace key' : ''}), then the template changed`);
  }
  const generation = await changeTemplate(mgmt, namespace, 'v2');
  const all = [...keys.clusters, keys.namespace];
  const keysHeld = kill
    ? until(
        'every key Lease held by a live replica',
        async () => {
          const h = await keyLeases(mgmt, namespace);
          return all.every((name) => live.has(h.get(name) ?? ''));
        },
        TIMEOUT_MS,
        250,
      ).then(() => performance.now() - t0)
    : undefined;
  const fleetReady = fleetReadyAt(mgmt, namespace, fleet.length, t0, generation);
  let error: string | undefined;
  await tracker.wait(`${fleet.length} children Ready with v2 (${spec.name})`, TIMEOUT_MS).catch((err: unknown) => {
    error = String(err);
    console.error(`  ${error}`);
  });
  const readyMs = error ? performance.now() - t0 : tracker.last;
  const fleetReadyMs = await fleetReady.catch(() => NaN);
  const keysHeldMs = keysHeld ? await keysHeld.catch(() => NaN) : undefined;
  const end = Date.now();
  for (const [k, r] of replicas.entries()) {
    if (k === victim) continue;
    figures[k]!.changeCpuMs = processCpuMs(r.op.pid) - cpu0[k]!;
    figures[k]!.changeRequests = requestsBetween(req0[k]!, requestCounts(await r.op.metrics()));
  }
  const edgeChecked = await checkEdges(clients, fleet, 'v2');
  const v = figures[victim];
  console.log(`  the change Ready in ${s2(readyMs)} (the FleetSync ${s2(fleetReadyMs)})${keysHeldMs !== undefined ? `; every key held by a live replica after ${s2(keysHeldMs)}` : ''}; edges holding v2: ${edgeChecked}`);
  return {
    ...(v && { killed: { id: v.id, clusterKeys: v.clusterKeys, namespaceKey: v.namespaceKey } }),
    keysHeldMs,
    readyMs,
    halfMs: tracker.quantile(0.5),
    fleetReadyMs,
    ready: tracker.at.size,
    edgeChecked,
    edges: edgeWrites(epoch, end),
    mgmt: mgmtWrites(namespace, epoch, end),
    error,
  };
}

// ---------------------------------------------------------------- the run

interface Report extends RunFacts {
  identitiesMs: number;
  lease: string[];
  quietMs: number;
  cases: CaseResult[];
  /** Wall time of the whole run. */
  runMs: number;
}

async function main(): Promise<void> {
  const start = performance.now();
  const build = await buildOperator(OPERATOR_DIR);
  await onFleetPlane(PREFIX, N, async ({ clients, mgmt, fleet, identitiesMs, load }) => {
    const cases: CaseResult[] = [];
    for (const [k, spec] of CASES.entries()) {
      if (k > 0) await clearRemote(clients, fleet);
      console.log(`${spec.sharded ? `--shards, ${spec.replicas} replica${spec.replicas === 1 ? '' : 's'}` : 'baseline: one operator without --shards'}: one FleetSync over ${N} clusters...`);
      const result = await runCase(mgmt, clients, fleet, spec);
      console.log(`  ${JSON.stringify(result)}`);
      cases.push(result);
    }
    const report: Report = {
      date: new Date().toISOString().slice(0, 10),
      n: N,
      objects: OBJECTS,
      build,
      kubernetes: await serverVersion(mgmt),
      load,
      identitiesMs,
      lease: LEASE,
      quietMs: QUIET_MS,
      cases,
      runMs: performance.now() - start,
    };
    writeFileSync(RESULTS, JSON.stringify(report));
    console.log(`wrote ${path.relative(ROOT, RESULTS)}`);
    printTable(report);
    writeReport(report);
  });
}

// ---------------------------------------------------------------- the report

const s2 = (ms: number | undefined): string => (ms === undefined || Number.isNaN(ms) ? '–' : `${(ms / 1000).toFixed(2)} s`);
const mib = (kib: number): string => `${(kib / 1024).toFixed(0)} MiB`;
const per = (count: number, n: number): string => (count / n).toFixed(2);
const rps = (count: number, ms: number): string => (count / (ms / 1000)).toFixed(2);
const ratio = (x: number, base: number | undefined): string => (base === undefined || !(base > 0) || Number.isNaN(x) ? '' : ` (${(x / base).toFixed(2)}x)`);
const methods = (m: Record<string, number>): string =>
  Object.entries(m)
    .sort((a, b) => b[1] - a[1])
    .map(([k, v]) => `${k} ${int(v)}`)
    .join(', ') || 'none';
const title = (c: CaseResult): string => (c.sharded ? `--shards, ${c.replicas} replica${c.replicas === 1 ? '' : 's'}` : 'baseline: no --shards');
const sum = (xs: number[]): number => xs.reduce((a, b) => a + b, 0);
const alive = (c: CaseResult): ReplicaFigures[] => c.figures.filter((f) => !f.killed);

/** The rows of a run's table: one column per case; ratios against the case of 1 replica. */
function rows(r: Report): { heads: string[]; rows: [string, string[]][] } {
  const base = r.cases.find((c) => c.sharded && c.replicas === 1);
  const n = r.n;
  const each = (f: (c: CaseResult) => string): string[] => r.cases.map(f);
  const perReplica = (c: CaseResult, f: (x: ReplicaFigures) => string): string => c.figures.map(f).join(' / ');
  const edgeReq = (c: CaseResult): number => sum(c.figures.map((f) => f.requests.edges));
  const mgmtReq = (c: CaseResult): number => sum(c.figures.map((f) => f.requests.mgmt));
  const cpu = (c: CaseResult): number => sum(c.figures.map((f) => f.cpuMs));
  const maxCpu = (c: CaseResult): number => Math.max(...c.figures.map((f) => f.cpuMs));
  const baseOf = (f: (c: CaseResult) => number): number | undefined => (base ? f(base) : undefined);
  const out: [string, string[]][] = [
    ['**all N children Ready** (from the POST); the FleetSync Ready with N/N', each((c) => `**${s2(c.readyMs)}**${ratio(c.readyMs, baseOf((b) => b.readyMs))} (${int(c.ready)}); ${s2(c.fleetReadyMs)}`)],
    ['half Ready', each((c) => s2(c.halfMs))],
    ['the replicas counted each other (start → POST)', each((c) => (c.membersMs === undefined ? '–' : s2(c.membersMs)))],
    ['**CPU per replica over the rollout** (user+sys)', each((c) => `**${perReplica(c, (f) => s2(f.cpuMs))}**`)],
    ['CPU: the busiest replica; all replicas summed', each((c) => `${s2(maxCpu(c))}${ratio(maxCpu(c), baseOf(maxCpu))}; ${s2(cpu(c))}${ratio(cpu(c), baseOf(cpu))}`)],
    ['CPU per replica from its start to all-Ready', each((c) => perReplica(c, (f) => s2(f.cpuTotalMs)))],
    ['RSS per replica at all-Ready; peak (VmHWM)', each((c) => perReplica(c, (f) => `${mib(f.rssKiB)}; ${mib(f.hwmKiB)}`))],
    ['keys held per replica at all-Ready: clusters (+ the namespace\'s: the FleetSync)', each((c) => (c.sharded ? perReplica(c, (f) => `${int(f.clusterKeys)}${f.namespaceKey ? ' +ns' : ''}`) : '–'))],
    ['key Leases at all-Ready; held by a live replica', each((c) => (c.keyLeases ? `${int(c.keyLeases.count)}; ${int(c.keyLeases.held)}` : '–'))],
    ['**requests per identity to the edges over the rollout** (/metrics, all replicas)', each((c) => `**${per(edgeReq(c), n)}**${ratio(edgeReq(c), baseOf(edgeReq))}`)],
    ['… by method, all', each((c) => methods(sumRequests(c.figures.map((f) => f.requests)).edgesByMethod))],
    ['writes per identity to the edges (their audit logs); dry runs', each((c) => `${per(c.edges.writes, n)}; ${per(c.edges.dryRuns, n)}`)],
    ['**identities written by more than one process** (audit); written at all', each((c) => `**${int(c.edges.byMany)}**; ${int(c.edges.written)}`)],
    ['requests to mgmt over the rollout (/metrics), per identity', each((c) => `${per(mgmtReq(c), n)}${ratio(mgmtReq(c), baseOf(mgmtReq))}`)],
    ['writes to mgmt (audit; Leases, Events apart), per identity; key Lease writes; other Lease writes', each((c) => `${per(c.mgmt.writes, n)}; ${int(c.mgmt.keyLeaseWrites ?? 0)}; ${int(c.mgmt.otherLeaseWrites ?? 0)}`)],
    ['children whose status more than one process wrote', each((c) => int(c.mgmt.byMany))],
    [`**at rest, requests/s** over ${s2(r.quietMs)}: to mgmt; to the edges`, each((c) => `**${rps(c.quiet.requests.mgmt, c.quiet.ms)}; ${rps(c.quiet.requests.edges, c.quiet.ms)}**`)],
    ['at rest: requests by method to mgmt; to the edges', each((c) => `${methods(c.quiet.requests.mgmtByMethod)}; ${methods(c.quiet.requests.edgesByMethod)}`)],
    ['at rest: Lease writes to mgmt (audit): key; membership and liveness', each((c) => `${int(c.quiet.mgmtWrites.keyLeaseWrites ?? 0)}; ${int(c.quiet.mgmtWrites.otherLeaseWrites ?? 0)}`)],
    ['at rest: CPU per replica (share of one core)', each((c) => perReplica(c, (f) => `${((f.quietCpuMs / c.quiet.ms) * 100).toFixed(1)}%`))],
    ['template change: kill -9 of (keys it held)', each((c) => (c.change.killed ? `the replica holding the namespace key (${int(c.change.killed.clusterKeys)} cluster keys${c.change.killed.namespaceKey ? ' + the namespace' : ''})` : 'no kill'))],
    ['**take-over: from the kill until every key Lease is held by a live replica**', each((c) => (c.change.keysHeldMs === undefined ? '–' : `**${s2(c.change.keysHeldMs)}**`))],
    ['**the change Ready everywhere** (every child Ready with v2, from the kill or the PATCH); the FleetSync Ready at its generation', each((c) => `**${s2(c.change.readyMs)}** (${int(c.change.ready)}); ${s2(c.change.fleetReadyMs)}`)],
    ['the change: identities whose ConfigMap on its edge holds v2 (read back)', each((c) => int(c.change.edgeChecked))],
    ['the change: requests per identity to the edges (/metrics, the live replicas)', each((c) => per(sum(alive(c).map((f) => f.changeRequests?.edges ?? 0)), n))],
    ['the change: writes per identity to the edges (audit); identities written by more than one process', each((c) => `${per(c.change.edges.writes, n)}; ${int(c.change.edges.byMany)}`)],
    ['the change: CPU per live replica', each((c) => perReplica(c, (f) => (f.killed ? 'killed' : s2(f.changeCpuMs))))],
    ['the change: key Lease writes to mgmt (audit)', each((c) => int(c.change.mgmt.keyLeaseWrites ?? 0))],
    ['"took over a shard key" log lines, per replica', each((c) => (c.sharded ? perReplica(c, (f) => (f.killed ? 'killed' : int(f.tookOver))) : '–'))],
    ['a clean stop (SIGTERM → exit), per replica', each((c) => perReplica(c, (f) => (f.killed ? 'killed' : s2(f.stopMs))))],
    ['load (1 min) at the POST; at all-Ready', each((c) => c.load.map((x) => x.toFixed(1)).join('; '))],
  ];
  return { heads: r.cases.map(title), rows: out };
}

function printTable(r: Report): void {
  const t = rows(r);
  console.log(`\n${int(r.n)} identities, ratios against 1 replica:`);
  for (const [name, cells] of t.rows) console.log(`  ${name.replace(/\*\*/g, '')}\n    ${cells.map((c, k) => `${t.heads[k]}: ${c.replace(/\*\*/g, '')}`).join(' | ')}`);
}

function table(r: Report): string[] {
  const t = rows(r);
  return [`| ${int(r.n)} identities | ${t.heads.join(' | ')} |`, `|---|${t.heads.map(() => '---').join('|')}|`, ...t.rows.map(([name, cells]) => `| ${name} | ${cells.join(' | ')} |`)];
}

function facts(r: Report): string {
  return (
    `Measured ${r.date}, Kubernetes ${r.kubernetes}, the operator ${r.build}; ${os.cpus().length} CPUs, load ${r.load.toFixed(1)} at the start; ` +
    `${int(r.n)} identities (created in ${s2(r.identitiesMs)}), ${r.objects} ConfigMaps each; lease flags ${r.lease.join(', ')}; the whole run ${s2(r.runMs)}.`
  );
}

function warningsLine(r: Report): string[] {
  const parts = r.cases.flatMap((c) =>
    c.figures
      .map((f, k) => [k, Object.entries(f.warnings)] as const)
      .filter(([, w]) => w.length > 0)
      .map(([k, w]) => `${title(c)}, replica ${k}: ${w.map(([m, v]) => `"${m}" ${int(v)}`).join(', ')}`),
  );
  const errors = r.cases.flatMap((c) => [c.error, c.change.error].filter(Boolean).map((e) => `${title(c)}: ${e}`));
  return [
    ...(parts.length ? ['', `Warnings and errors in the operators' logs: ${parts.join('; ')}.`] : []),
    ...(errors.length ? ['', `Errors: ${errors.join('; ')}`] : []),
  ];
}

/** When the machine was busy with other work: the wall times are not those of a quiet machine. */
function loadNote(r: Report): string {
  const loads = [r.load, ...r.cases.flatMap((c) => c.load)].filter((x) => !Number.isNaN(x));
  const cpus = os.cpus().length;
  if (loads.length === 0 || Math.max(...loads) <= cpus) return '';
  return (
    ` The machine was busy with other work during this run (1-minute load ${Math.min(...loads).toFixed(1)} to ${Math.max(...loads).toFixed(1)} on ${cpus} CPUs, the load row): ` +
    `read the wall times against each other within this run only, not against sections measured on a quiet machine.`
  );
}

/** The figures of the table in sentences: what was done once, the CPU and memory per replica, the take-over, at rest. */
function reading(r: Report): string[] {
  const byReplicas = (k: number): CaseResult | undefined => r.cases.find((c) => c.sharded && c.replicas === k);
  const one = byReplicas(1);
  const sharded = r.cases.filter((c) => c.sharded);
  if (!one || sharded.length < 2) return [];
  const base = r.cases.find((c) => !c.sharded);
  const edgePer = (c: CaseResult): string => per(sum(c.figures.map((f) => f.requests.edges)), r.n);
  const list = (f: (c: CaseResult) => string): string => sharded.map((c) => `${f(c)} (${c.replicas})`).join(', ');
  const twice = sum(r.cases.map((c) => c.edges.byMany + c.change.edges.byMany + c.mgmt.byMany));
  const maxCpu = (c: CaseResult): number => Math.max(...c.figures.map((f) => f.cpuMs));
  const totalCpu = (c: CaseResult): number => sum(c.figures.map((f) => f.cpuMs));
  const maxHwm = (c: CaseResult): number => Math.max(...c.figures.map((f) => f.hwmKiB));
  const killed = sharded.filter((c) => c.change.killed);
  const leaseSeconds = r.lease[0] ?? '?';
  const quietPerReplica = (c: CaseResult): string => (c.quiet.requests.mgmt / (c.quiet.ms / 1000) / c.replicas).toFixed(2);
  return [
    '',
    `**Reading.** Requests per identity to the edges over the rollout, by replicas: ${list(edgePer)}${base ? ` (baseline ${edgePer(base)})` : ''}; ` +
      `writes per identity from the edges' audit logs ${list((c) => per(c.edges.writes, r.n))}; identities written by more than one process, in every window of every case ` +
      `(rollouts, and the changes after the kills): **${int(twice)}**. ` +
      `CPU over the rollout: the busiest replica ${list((c) => `${((maxCpu(c) / maxCpu(one)) * 100).toFixed(0)}%`)} of one replica's; all replicas summed ${list((c) => `${(totalCpu(c) / totalCpu(one)).toFixed(2)}x`)}: ` +
      `each replica still watches the whole namespace (every Secret and RemoteSync in its own cache) and keeps its own membership and passes, which is the likely part of the sum that grows with the replicas. ` +
      `Peak RSS per replica: ${list((c) => mib(maxHwm(c)))} (the caches are not sharded, the clusters opened are). ` +
      (killed.length
        ? `Take-over after \`kill -9\`: every key Lease held by a live replica ${killed.map((c) => `${s2(c.change.keysHeldMs)} (${c.replicas} replicas, ${int(c.change.killed!.clusterKeys)} cluster keys and the namespace's taken over)`).join(', ')} ` +
          `after the kill, with a lease duration of ${leaseSeconds}: the others count a member dead one lease duration after they last saw it renew, by their own clocks. ` +
          `The change made right after the kill was Ready everywhere after ${killed.map((c) => `${s2(c.change.readyMs)} (${c.replicas})`).join(', ')}, against ${s2(one.change.readyMs)} for the same change with 1 replica and no kill. `
        : '') +
      `At rest the replicas wrote ${list((c) => int(c.quiet.mgmtWrites.keyLeaseWrites ?? 0))} key Leases; mgmt's requests per second per replica: ${list(quietPerReplica)} (each renews its membership Lease every retry period, ${r.lease[2] ?? '?'}).`,
  ];
}

function writeReport(r: Report): void {
  const also = (process.env.SHARDS_BENCH_ALSO ?? '')
    .split(',')
    .filter((f) => f && existsSync(f))
    .map((f) => JSON.parse(readFileSync(f, 'utf8')) as Report);
  const lines = [
    `## Sharding (run --shards): \`bench/shards.ts\``,
    '',
    `${facts(r)} Ratios in parentheses are against \`--shards\` with 1 replica of the same run. ` +
      `**On this ${os.cpus().length}-core machine more replicas cannot be faster in wall time**: the replicas, the three API servers and etcd share the same cores, ` +
      `so the figures to watch are the CPU per replica (each replica's share of the work), the requests per identity to the edges (the same with 1, 2 and 3 replicas if nothing is done twice), ` +
      `and the identities written by more than one process (0 if each cluster is worked by one replica at a time).${loadNote(r)}`,
    '',
    ...table(r),
    ...reading(r),
    ...warningsLine(r),
    ...also.flatMap(added),
    '',
    ...METHOD,
  ];
  writeFileSync(OUT, `${(process.env.SHARDS_BENCH_KEEP === '1' && existsSync(OUT) ? kept(r) : lines).join('\n')}\n`);
  console.log(`wrote ${path.relative(ROOT, OUT)}`);
}

/** Another run's facts, table and warnings, below the first run's. */
function added(r: Report): string[] {
  return ['', facts(r), '', ...table(r), ...warningsLine(r)];
}

/** The section already written, with this run's table added above its method. */
function kept(r: Report): string[] {
  const lines = readFileSync(OUT, 'utf8').trimEnd().split('\n');
  const method = lines.findIndex((l) => l.startsWith('Method: '));
  const at = method < 0 ? lines.length : method - 1;
  return [...lines.slice(0, at), ...added(r), ...lines.slice(at)];
}

const METHOD = [
  `Method: the fleet of \`bench/fleet.ts\` (each identity a ServiceAccount confined to its namespace \`fleet-<i>\` on one of two local API servers, its kubeconfig in a Secret ` +
    `of mgmt labelled as a cluster of the inventory, its namespace as the cluster's value), and one FleetSync (kind RemoteSync) over all of them, its ConfigMaps given each ` +
    `identity's namespace by substitution. The cases in one run, in this order, each in a fresh namespace of mgmt (the leader election namespace too) with fresh operators ` +
    `(\`run --namespace <ns> --cluster-id bench-shards\`, 8 workers per controller): **baseline**, one operator without \`--shards\`; then \`--shards --leader-election-namespace <ns>\` ` +
    `with the lease flags above and 1, 2 and 3 replicas, local processes started one after the other; the FleetSync is POSTed once every replica counts all of them ` +
    `(\`syncprims_shard_members\`), so no key moves during the rollout. Timed with a watch of the RemoteSyncs (Ready=True for their generation) and by polling the ` +
    `FleetSync. CPU is user+sys from \`/proc/<pid>/stat\`, memory VmRSS and VmHWM from \`/proc/<pid>/status\`. Requests are each replica's ` +
    `\`syncprims_cluster_requests_total\` (every request: a GET may be a LIST or a WATCH), summed over the replicas: a remote cluster's label is its Secret, mgmt's its context. ` +
    `Writes come from the API servers' audit logs (Metadata level, writes only), by the operators' User-Agent, which names the process (\`instance/<id>\`): an identity written ` +
    `by two processes in one window would be work done twice. At rest: ${SETTLE_MS / 1000} s after all Ready, a quiet window. Then the template's ConfigMaps change (v1 → v2): ` +
    `with 2 and 3 replicas right after \`kill -9\` of the replica that holds the namespace key (the FleetSync's, so the FleetSync itself must be taken over too, and its ` +
    `clusters), with the baseline and 1 replica without a kill (the reference); timed from the kill (or the PATCH) until every key Lease names a live replica (the Leases ` +
    `polled every 250 ms) and until every child is Ready with v2; each identity's first ConfigMap is then read back from its edge. A killed replica's Lease lapses after the ` +
    `lease duration by the others' clocks, and its holder is confirmed gone by a fresh read of its membership Lease: the take-over cannot be shorter than the lease duration. ` +
    `Between cases the ConfigMaps go and the operators stop (SIGTERM, all at once; the warnings below the table count their logs from their start to their exit). One run of each case on a shared machine: the load row shows how the machine's other work moved.`,
];

runOrReport<Report>(main, (r) => {
  printTable(r);
  writeReport(r);
});
