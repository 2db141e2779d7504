// RemoteSync (docs/remote.md) through a real `syncprims run` process, each
// figure next to a baseline measured in the same run. On dedicated clusters,
// started here and stopped at the end, of a control plane of the benchmark's
// own (.local/bench-remote-plane, its own etcd: a test run that started the
// shared one in .local takes it down when it ends, with every cluster added to
// it meanwhile; bench/controlplane.sh does the same): the managing cluster
// `bench-remote-mgmt` (the operator, its Secrets and RemoteSyncs) and the
// remote clusters `bench-remote-1` … `bench-remote-4` (only as many as the
// fan-out needs; the fleet uses the first two).
//
// (a) Fan-out: M ConfigMaps (FANOUT_M, default 200, inline) applied to K = 1, 2
//     and 4 remote clusters (FANOUT_CLUSTERS), one RemoteSync per cluster with
//     the cluster's admin kubeconfig in a Secret, timed from the first POST of
//     the RemoteSyncs to the last one Ready=True (a watch); a fresh operator
//     per case, started and primed before the clock. Baselines on the same
//     clusters: a bare client (a new KubeClient per cluster, server-side apply
//     PATCHes, 16 in flight per cluster: what the operator uses per set, twice
//     --concurrency), and `kubectl apply --server-side`, one process per cluster,
//     all at once. The operator runs with the default --qps 50 --burst 100 per
//     cluster, and again with --qps FAST_QPS (1000) --burst 2·FAST_QPS, which
//     shows what the client-side limit costs. FANOUT_ROUNDS (default 2) rounds,
//     every other one in the reverse order of appliers.
// (b) Simulated fleet: N identities (FLEET_SIZES, default 100,1000), each a
//     namespace `fleet-<i>` in bench-remote-1 (even i) or bench-remote-2 (odd
//     i), a ServiceAccount there with a Role and RoleBinding granting everything
//     in that namespace only, and a token (TokenRequest, 24 h); its kubeconfig
//     (server, CA data and token inline) in a Secret in a fresh namespace of
//     bench-remote-mgmt, and a RemoteSync with `kubeConfig.secretRef` to it
//     applying 10 ConfigMaps into `fleet-<i>`. The identities are created once
//     (for the largest N, 32 at a time) and the Secrets per size; a fresh
//     operator (node --expose-gc and a preload that runs a full GC on SIGUSR2)
//     per size. Measured: first POST → all Ready; requests per second to each
//     API server (`syncprims_cluster_requests_total`, summed over the
//     identities of that server) while creating and while idle; the operator's
//     TCP connections to each server (/proc); its RSS at all-Ready, after
//     IDLE_MS (30 s) idle, and after a forced GC (VmRSS and V8's heapUsed), at
//     each N, and per idle cluster (RSS@1000 − RSS@100) / 900; at the largest N
//     the requests over LONG_IDLE_MS (150 s) idle, since watches time out and
//     restart over minutes; then recovery:
//     bench-remote-1 is stopped, the spec of every RemoteSync on it is changed
//     (a new value in its ConfigMaps), they are timed to Ready=False
//     ClusterUnreachable, the server stays down RECOVERY_DOWN_MS (30 s) at
//     least, then it is started again, and timed from the
//     start (`controlplane up`; the server answers before its /readyz, which
//     `up` waits for) to every one of them Ready=True for its new generation
//     (and to `syncprims_cluster_reachable` 1 for all its identities). Baseline: a bare
//     client per identity (its own kubeconfig, new connections), 8 identities at
//     a time (--concurrency) with 16 PATCHes in flight each, applying the same
//     10 ConfigMaps (other names) into the same namespaces.
// (c) Latencies (LATENCY_REPEATS, default 10, one after another, each with an
//     identity of its own so that every one opens a new cluster): a late
//     Secret (the RemoteSync POSTed first waits Ready=False ClusterUnreachable
//     naming the Secret; from the Secret's POST to Ready=True), against a Sync
//     with a late ConfigMap source (from the ConfigMap's POST to Ready=True) and
//     a RemoteSync whose Secret was there first (POST → Ready=True); and the
//     ClusterUnreachable verdict, from the RemoteSync's POST to Ready=False
//     ClusterUnreachable, for a stopped cluster (bench-remote-3, stopped after the
//     fan-out: connection refused) and for a black hole (a proxy in front of
//     bench-remote-1 that accepts connections and never answers,
//     test/support/stalling-proxy.ts; BLACKHOLE_REPEATS, default 3, at once).
//
// Run it with `bench/run.sh remote` (from the repository root). The operator is
// compiled from the committed HEAD into .local/bench-remote-operator. It prints
// figures and writes docs/benchmarks/remote.md (and every figure to
// .local/bench-remote-results.json; `REPORT_FROM=<that file>` writes the report
// again without measuring); it asserts nothing about them.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { parse, stringify } from 'yaml';
import { API_VERSION, GROUP, KIND_NAMES, VERSION } from '../src/api/kinds.js';
import { FIELD_MANAGER as OPERATOR_FIELD_MANAGER, FINALIZER } from '../src/api/marks.js';
import { mapLimit } from '../src/apply/map-limit.js';
import { KubeClient } from '../src/kube/client.js';
import { watchEvents } from '../src/kube/watch-stream.js';
import { loadKubeConfigFile } from '../src/kube/config.js';
import { collectionPath, METADATA_ONLY_ACCEPT, type KubeObject, type ResourceInfo } from '../src/kube/resources.js';
import { tcpConnectionsTo } from '../test/support/proc.js';
import { StallingProxy } from '../test/support/stalling-proxy.js';
import {
  buildOperator,
  controlplane,
  type ControlPlaneDir,
  createNamespace,
  deleteSyncNamespace,
  ignoreNotFound,
  installCrds,
  int,
  LOCAL,
  machineBusySince,
  machineCpuMs,
  median,
  OperatorProcess,
  type OperatorTarget,
  pct,
  processCpuMs,
  ROOT,
  sampleLoad,
  serverVersion,
  sleep,
  stopOperators,
  SYNCS,
  until,
} from './support.js';
import { CollectionWatch } from './collection-watch.js';
import { largestProfile, summarizeProfile } from './cpu-profile.js';
import { configMaps as benchConfigMaps, confinedIdentity, type Kubeconfig, kubeConfigOf, LABEL_PART_OF, secretObject, tokenKubeconfig as tokenKubeconfigOf } from './identities.js';
import { memoryKiB, readyFalse, readyOf, readyTrue, Tracker } from './tracker.js';

const run = promisify(execFile);

const PREFIX = 'bench-remote';
const MGMT = `${PREFIX}-mgmt`;
/** The remote clusters, in the order they are used. */
const REMOTES = [1, 2, 3, 4].map((i) => `${PREFIX}-${i}`);
/** The fleet's API servers (identity i on FLEET_SERVERS[i % 2]). */
const FLEET_SERVERS = REMOTES.slice(0, 2);
/** Stopped after the fan-out; the target of the connection-refused verdict. */
const STOPPED = REMOTES[2]!;
/**
 * The benchmark's own control plane (its own directory and etcd, as bench/controlplane.sh does): a test run that
 * started the shared supervisor in .local takes it `down` when it ends, with every cluster added to it meanwhile.
 */
const PLANE: ControlPlaneDir = { dir: path.join(LOCAL, `${PREFIX}-plane`), etcdPort: Number(process.env.ETCD_PORT ?? 0) };
/** Free API server ports unless FIRST_PORT is set (NAME:0: a cluster comes back on its port after `stop` and `up`). */
const PORT: Record<string, number> = Object.fromEntries([MGMT, ...REMOTES].map((c, i) => [c, process.env.FIRST_PORT ? Number(process.env.FIRST_PORT) + i : 0]));
const cp = (args: string[]): Promise<string> => controlplane(args, PLANE);
const up = (clusters: string[]): Promise<string> => cp(['up', ...clusters.map((c) => `${c}:${PORT[c]}`)]);
const kubeconfigFile = (cluster: string): string => path.join(PLANE.dir, `${cluster}.kubeconfig`);
const KUBECTL = path.join(LOCAL, 'bin', 'kubectl');
const OPERATOR_LOG = path.join(LOCAL, `${PREFIX}-operator.log`);
/** The operator measured: compiled here from the committed HEAD (others may rebuild dist/ meanwhile). */
const OPERATOR_DIR = path.join(LOCAL, `${PREFIX}-operator`);
const OPERATOR: OperatorTarget = { main: path.join(OPERATOR_DIR, 'dist', 'cli', 'main.js'), kubeconfig: kubeconfigFile(MGMT), log: OPERATOR_LOG };
const BEFORE_DIR = path.join(LOCAL, `${PREFIX}-operator-before`);
const BEFORE: OperatorTarget = { main: path.join(BEFORE_DIR, 'dist', 'cli', 'main.js'), kubeconfig: kubeconfigFile(MGMT), log: OPERATOR_LOG };
/** A preload for the operator: a full GC on SIGUSR2, then process.memoryUsage() to `<this file>.<pid>.json`. */
const GC_PRELOAD = path.join(LOCAL, `${PREFIX}-gc.cjs`);
const OUT = path.join(ROOT, 'docs', 'benchmarks', 'remote.md');
const RESULTS = path.join(LOCAL, `${PREFIX}-results.json`);

const FANOUT_M = Number(process.env.FANOUT_M ?? 200);
const FANOUT_CLUSTERS = (process.env.FANOUT_CLUSTERS ?? '1,2,4').split(',').map(Number);
const FANOUT_ROUNDS = Number(process.env.FANOUT_ROUNDS ?? 2);
const FAST_QPS = Number(process.env.FAST_QPS ?? 1000);
const FLEET_SIZES = (process.env.FLEET_SIZES ?? '100,1000')
  .split(',')
  .map(Number)
  .filter((n) => n > 0)
  .sort((a, b) => a - b);
const FLEET_OBJECTS = Number(process.env.FLEET_OBJECTS ?? 10);
const IDLE_MS = Number(process.env.IDLE_MS ?? 30_000);
/** At the largest N only: requests counted over this long an idle window (watches time out and restart over minutes). */
const LONG_IDLE_MS = Number(process.env.LONG_IDLE_MS ?? 150_000);
/** The restarted server stays down at least this long (longer if the verdict takes longer). */
const RECOVERY_DOWN_MS = Number(process.env.RECOVERY_DOWN_MS ?? 30_000);
const LATENCY_REPEATS = Number(process.env.LATENCY_REPEATS ?? 10);
const BLACKHOLE_REPEATS = Number(process.env.BLACKHOLE_REPEATS ?? 3);
const FLEET_TIMEOUT_MS = Number(process.env.FLEET_TIMEOUT_MS ?? 900_000);
/**
 * REMOTE_PARTS (default `fanout,latencies,fleet`): the parts measured. Without all three, only the sections
 * measured are written again in docs/benchmarks/remote.md (the fleet's: (b) and its reading lines).
 */
const PARTS = new Set((process.env.REMOTE_PARTS ?? 'fanout,latencies,fleet').split(',').filter(Boolean));
/** OPERATOR_REF: the commit whose operator is measured (default HEAD), e.g. one before a change, for its figures. */
const OPERATOR_REF = process.env.OPERATOR_REF ?? 'HEAD';
/**
 * BEFORE_REF: the fleets are also measured with the operator of this commit (e.g. the one before a change), each
 * size right before the measured operator's, with a baseline of its own (no long idle, no recovery): "before" figures
 * of the same run.
 */
const BEFORE_REF = process.env.BEFORE_REF;
/** FLEET_RECOVERY=0: no restart of a server after each fleet (a shorter run, while developing). */
const FLEET_RECOVERY = process.env.FLEET_RECOVERY !== '0';
/** REMOTE_CPU_PROF=1: the fleets' operators run under `node --cpu-prof` (the timing then pays the sampling); the profile is summed up and printed. */
const CPU_PROF = process.env.REMOTE_CPU_PROF === '1';
const PROFILES = path.join(LOCAL, `${PREFIX}-profiles`);
/** OPERATOR_ARGS: more flags for the fleets' operators, e.g. `--log-level debug` (each reconcile's causes in its log). */
const OPERATOR_ARGS = (process.env.OPERATOR_ARGS ?? '').split(' ').filter(Boolean);

const CLUSTER_ID = 'bench-remote';
const BENCH_UA = 'syncprims-bench/remote';
const FIELD_MANAGER = 'bench-remote';
/** The operator's default --concurrency, and the apply concurrency per set it derives (twice that). */
const WORKERS = 8;
const APPLY_CONCURRENCY = 2 * WORKERS;
/** Identities, Secrets and RemoteSyncs are created this many at a time. */
const CREATE_CONCURRENCY = 32;
const TOKEN_SECONDS = 86_400;
const SAMPLE_EVERY_MS = 1_000;
const READY_TIMEOUT_MS = 300_000;
const FLEET_SA = 'syncer';

const REMOTESYNCS: ResourceInfo = { group: GROUP, version: VERSION, kind: 'RemoteSync', resource: KIND_NAMES.RemoteSync.plural, namespaced: true };
const rsPath = (ns: string, name = ''): string => `${collectionPath(REMOTESYNCS, ns)}${name ? `/${name}` : ''}`;
const cmPath = (ns: string, name = ''): string => `/api/v1/namespaces/${ns}/configmaps${name ? `/${name}` : ''}`;
const fleetNs = (i: number): string => `fleet-${i}`;
const fleetServer = (i: number): string => FLEET_SERVERS[i % FLEET_SERVERS.length]!;

// ---------------------------------------------------------------- objects

/** `n` ConfigMaps `<prefix>-<k>` (identities.ts), labelled part of this benchmark. */
const configMaps = (n: number, prefix: string, value: string, namespace?: string, labels: Record<string, string> = {}): KubeObject[] =>
  benchConfigMaps(PREFIX, n, prefix, value, namespace, labels);

/** The owner labels as the operator renders them, so that the baselines write the same bytes. */
const ownerLabels = (namespace: string, name: string): Record<string, string> => ({
  'syncprims.dev/owner-kind': 'RemoteSync',
  'syncprims.dev/owner-namespace': namespace,
  'syncprims.dev/owner-name': name,
  'syncprims.dev/origin': CLUSTER_ID,
});

function remoteSync(namespace: string, name: string, secret: string, remoteNamespace: string, objects: KubeObject[]): KubeObject {
  return {
    apiVersion: API_VERSION,
    kind: 'RemoteSync',
    metadata: { name, namespace },
    spec: { kubeConfig: { secretRef: { name: secret } }, defaultNamespace: remoteNamespace, source: { inline: objects } },
  };
}

/** A local cluster's admin kubeconfig (client certificate inline), as the controlplane wrote it. */
const adminKubeconfig = (cluster: string): string => readFileSync(kubeconfigFile(cluster), 'utf8');
const tokenKubeconfig = (cluster: string, token: string, server?: string): string => tokenKubeconfigOf(adminKubeconfig(cluster), cluster, token, server);
const namespacedIdentity = (remote: KubeClient, namespace: string, sa = FLEET_SA): Promise<string> =>
  confinedIdentity(remote, namespace, { sa, partOf: PREFIX, tokenSeconds: TOKEN_SECONDS });

// ---------------------------------------------------------------- the operator, sampled

const GC_PRELOAD_SOURCE = `// Written by bench/remote.ts: on SIGUSR2, a full GC (node --expose-gc), then
// process.memoryUsage() before and after it to <this file>.<pid>.json.
const { writeFileSync } = require('node:fs');
process.on('SIGUSR2', () => {
  const before = process.memoryUsage();
  if (typeof globalThis.gc === 'function') { globalThis.gc(); globalThis.gc(); }
  const after = process.memoryUsage();
  writeFileSync(__filename + '.' + process.pid + '.json', JSON.stringify({ at: Date.now(), gc: typeof globalThis.gc === 'function', before, after }));
});
`;

interface Memory {
  /** VmRSS, kB. */
  rssKiB: number;
  /** VmHWM (peak RSS since start), kB. */
  hwmKiB: number;
  /** V8's heapUsed after the GC, bytes (only after a forced GC). */
  heapUsed?: number;
  heapTotal?: number;
  external?: number;
  arrayBuffers?: number;
}

/** Asks the operator (started with the preload) for a full GC; its memory afterwards. */
async function memoryAfterGc(op: OperatorProcess): Promise<Memory> {
  const pid = op.pid!;
  const file = `${GC_PRELOAD}.${pid}.json`;
  rmSync(file, { force: true });
  process.kill(pid, 'SIGUSR2');
  await until('the operator to report its GC', async () => existsSync(file), 30_000, 100);
  await sleep(200);
  const report = JSON.parse(readFileSync(file, 'utf8')) as { gc: boolean; after: NodeJS.MemoryUsage };
  rmSync(file, { force: true });
  if (!report.gc) throw new Error('the operator has no global gc (node --expose-gc)');
  // Give the allocator a moment to hand freed pages back before reading RSS.
  await sleep(1_000);
  const mem = memoryKiB(pid);
  return { rssKiB: mem.rss, hwmKiB: mem.hwm, heapUsed: report.after.heapUsed, heapTotal: report.after.heapTotal, external: report.after.external, arrayBuffers: report.after.arrayBuffers };
}

function memoryNow(op: OperatorProcess): Memory {
  const mem = memoryKiB(op.pid);
  return { rssKiB: mem.rss, hwmKiB: mem.hwm };
}

/** Samples of one metric, by the value of one label. */
function byLabel(metrics: string, name: string, label: string, also: Record<string, string> = {}): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of metrics.split('\n')) {
    const m = /^([a-zA-Z_:][\w:]*)(\{[^}]*\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const labels = Object.fromEntries([...(m[2] ?? '').matchAll(/(\w+)="([^"]*)"/g)].map((x) => [x[1], x[2]]));
    if (!Object.entries(also).every(([k, v]) => labels[k] === v)) continue;
    const key = labels[label] ?? '';
    out.set(key, (out.get(key) ?? 0) + Number(m[3]));
  }
  return out;
}

/** Requests counted by `syncprims_cluster_requests_total`, per (cluster, method, code). */
interface RequestCounts {
  [clusterMethodCode: string]: number;
}

function requestCounts(metrics: string): RequestCounts {
  const out: RequestCounts = {};
  for (const m of metrics.matchAll(/^syncprims_cluster_requests_total\{([^}]*)\} (\S+)$/gm)) {
    const labels = Object.fromEntries([...(m[1] ?? '').matchAll(/(\w+)="([^"]*)"/g)].map((x) => [x[1], x[2]]));
    out[`${labels.cluster}|${labels.method}|${labels.code}`] = Number(m[2]);
  }
  return out;
}

/** What a window of requests was, for one API server. */
interface ServerRequests {
  total: number;
  byMethod: Record<string, number>;
  /** Responses other than 2xx, by code (`none`: no answer). */
  errors: Record<string, number>;
}

/**
 * The change of the counts between two scrapes, grouped by API server: a
 * cluster label is mapped to its server by `serverOf` (unknown labels go to
 * `other`).
 */
function requestsByServer(before: RequestCounts, after: RequestCounts, serverOf: (cluster: string) => string | undefined): Record<string, ServerRequests> {
  const out: Record<string, ServerRequests> = {};
  for (const [key, v] of Object.entries(after)) {
    const d = v - (before[key] ?? 0);
    if (!d) continue;
    const [cluster = '', method = '', code = ''] = key.split('|');
    const server = serverOf(cluster) ?? 'other';
    const s = (out[server] ??= { total: 0, byMethod: {}, errors: {} });
    s.total += d;
    s.byMethod[method] = (s.byMethod[method] ?? 0) + d;
    if (!/^2\d\d$/.test(code)) s.errors[code] = (s.errors[code] ?? 0) + d;
  }
  return out;
}

/** The ports of the API servers, for /proc connection counts. */
type Ports = Record<string, number>;

async function connectionsNow(op: OperatorProcess, ports: Ports): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const [server, port] of Object.entries(ports)) out[server] = await tcpConnectionsTo(op.pid ?? 0, port).catch(() => NaN);
  return out;
}

/** Connections to each server and RSS every SAMPLE_EVERY_MS; keeps the peaks. */
class Sampler {
  readonly peakConnections: Record<string, number> = {};
  peakRssKiB = 0;
  private running = true;
  private readonly done: Promise<void>;

  constructor(
    private readonly op: OperatorProcess,
    private readonly ports: Ports,
  ) {
    this.done = this.loop();
  }

  private async loop(): Promise<void> {
    while (this.running) {
      const c = await connectionsNow(this.op, this.ports);
      for (const [k, v] of Object.entries(c)) if (!(v <= (this.peakConnections[k] ?? -1))) this.peakConnections[k] = v;
      this.peakRssKiB = Math.max(this.peakRssKiB, memoryKiB(this.op.pid).rss || 0);
      await sleep(SAMPLE_EVERY_MS);
    }
  }

  async stop(): Promise<void> {
    this.running = false;
    await this.done;
  }
}

/** The operator's warn and error lines since `epoch`, counted by message (and reason). */
function warnings(op: OperatorProcess, epoch: number): Record<string, number> {
  const out: Record<string, number> = {};
  for (const l of op.logsSince(epoch)) {
    const level = String(l.fields.level);
    if (level !== 'warn' && level !== 'error' && level !== 'fatal') continue;
    const reason = typeof l.fields.reason === 'string' ? ` (${l.fields.reason})` : '';
    const key = `${level}: ${l.msg}${reason}`;
    out[key] = (out[key] ?? 0) + 1;
  }
  return out;
}

// ---------------------------------------------------------------- the bench's clusters

interface Env {
  mgmt: KubeClient;
  /** Admin clients of the running remote clusters. */
  remotes: Map<string, KubeClient>;
  ports: Ports;
  tmp: string;
}

const apiserverPid = (cluster: string): number => Number(readFileSync(path.join(PLANE.dir, `${cluster}.pid`), 'utf8').trim());
const apiserverCpu = (clusters: string[]): number => clusters.reduce((a, c) => a + processCpuMs(apiserverPid(c)), 0);

async function remoteClient(env: Env, cluster: string): Promise<KubeClient> {
  let client = env.remotes.get(cluster);
  if (!client) {
    client = await KubeClient.create(cluster, loadKubeConfigFile(kubeconfigFile(cluster)), BENCH_UA);
    env.remotes.set(cluster, client);
    env.ports[cluster] = Number(client.server.port);
  }
  return client;
}

/** Deletes namespaces (of one cluster) and waits until they are gone. */
async function deleteNamespaces(client: KubeClient, names: string[], timeoutMs = 600_000): Promise<void> {
  await mapLimit(names, CREATE_CONCURRENCY, (name) => ignoreNotFound(client.request({ method: 'DELETE', path: `/api/v1/namespaces/${name}` })));
  const left = new Set(names);
  await until(
    `${names.length} namespaces of ${client.name} to be gone`,
    async () => {
      const list = await client.request<{ items: KubeObject[] }>({ path: '/api/v1/namespaces', timeoutMs: 60_000 });
      const present = new Set(list.items.map((n) => n.metadata.name ?? ''));
      for (const n of [...left]) if (!present.has(n)) left.delete(n);
      return left.size === 0;
    },
    timeoutMs,
    1_000,
  );
}

/** Deletes a mgmt namespace of RemoteSyncs (and Syncs) once no operator runs: finalizers removed first. */
async function deleteRemoteSyncNamespace(mgmt: KubeClient, namespace: string): Promise<void> {
  const list = await mgmt.request<{ items: KubeObject[] }>({ path: rsPath(namespace), timeoutMs: 60_000 }).catch(() => ({ items: [] as KubeObject[] }));
  await mapLimit(list.items, CREATE_CONCURRENCY, (rs) =>
    ignoreNotFound(
      mgmt.request({
        method: 'PATCH',
        path: rsPath(namespace, rs.metadata.name),
        contentType: 'application/merge-patch+json',
        body: { metadata: { finalizers: null } },
      }),
    ),
  );
  await deleteSyncNamespace(mgmt, namespace);
}

// ---------------------------------------------------------------- (a) fan-out

type Applier = 'operator' | 'operatorFast' | 'bare' | 'kubectl';

const APPLIER_LABEL: Record<Applier, string> = {
  operator: 'operator (default `--qps 50 --burst 100`)',
  operatorFast: `operator, \`--qps ${FAST_QPS} --burst ${2 * FAST_QPS}\``,
  bare: `bare client, ${APPLY_CONCURRENCY} in flight per cluster`,
  kubectl: '`kubectl apply --server-side`, one process per cluster',
};

interface FanoutRun {
  applier: Applier;
  k: number;
  round: number;
  order: number;
  load: number;
  /** First request (POST of the RemoteSyncs, or of the first PATCH; kubectl's start) → the last cluster done. */
  ms: number;
  /** Per cluster: → its RemoteSync Ready=True, or its PATCHes answered, or its kubectl exited. */
  perClusterMs: number[];
  /** Requests to the remote clusters (operator: its metrics; bare: its own count; kubectl: –). */
  remoteRequests?: number;
  remoteByMethod?: Record<string, number>;
  operatorCpuMs?: number;
  /** Client CPU: the bench's own process for the bare client; kubectl's user + system. */
  clientCpuMs?: number;
  apiserverCpuMs: number;
  /** ConfigMaps counted in each remote namespace afterwards. */
  objects: number[];
  connections?: Record<string, number>;
}

function fanoutOrder(round: number): Applier[] {
  const appliers: Applier[] = FAST_QPS > 0 ? ['operator', 'operatorFast', 'bare', 'kubectl'] : ['operator', 'bare', 'kubectl'];
  return round % 2 ? appliers : appliers.reverse();
}

async function countConfigMaps(client: KubeClient, namespace: string): Promise<number> {
  const list = await client.request<{ items: KubeObject[] }>({ path: cmPath(namespace), query: { labelSelector: `${LABEL_PART_OF}=${PREFIX}` }, timeoutMs: 60_000 });
  return list.items.length;
}

async function fanoutCase(env: Env, applier: Applier, k: number, round: number, order: number): Promise<FanoutRun> {
  const clusters = REMOTES.slice(0, k);
  const namespace = await createNamespace(env.mgmt, `${PREFIX}-fan${k}-${applier.toLowerCase()}`);
  const remotes = await Promise.all(clusters.map((c) => remoteClient(env, c)));
  await Promise.all(remotes.map((r) => r.request({ method: 'POST', path: '/api/v1/namespaces', body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } } })));
  const base = { applier, k, round, order, load: os.loadavg()[0] ?? NaN };
  let result: FanoutRun;
  try {
    const cpu = apiserverCpu(clusters);
    if (applier === 'operator' || applier === 'operatorFast') {
      result = { ...base, ...(await fanoutOperator(env, applier, namespace, clusters)), apiserverCpuMs: NaN, objects: [] };
    } else if (applier === 'bare') {
      result = { ...base, ...(await fanoutBare(namespace, clusters)), apiserverCpuMs: NaN, objects: [] };
    } else {
      result = { ...base, ...(await fanoutKubectl(env, namespace, clusters)), apiserverCpuMs: NaN, objects: [] };
    }
    result.apiserverCpuMs = apiserverCpu(clusters) - cpu;
    result.objects = await Promise.all(remotes.map((r) => countConfigMaps(r, namespace)));
  } finally {
    await Promise.all([deleteRemoteSyncNamespace(env.mgmt, namespace), ...remotes.map((r) => deleteNamespaces(r, [namespace]))]);
  }
  return result;
}

type Timing = Pick<FanoutRun, 'ms' | 'perClusterMs' | 'remoteRequests' | 'remoteByMethod' | 'operatorCpuMs' | 'clientCpuMs' | 'connections'>;

async function fanoutOperator(env: Env, applier: Applier, namespace: string, clusters: string[]): Promise<Timing> {
  const { mgmt } = env;
  const secret = (c: string): string => `${c}-kubeconfig`;
  for (const c of clusters) await mgmt.request({ method: 'POST', path: `/api/v1/namespaces/${namespace}/secrets`, body: secretObject(secret(c), adminKubeconfig(c)) });
  const qps = applier === 'operatorFast' ? ['--qps', String(FAST_QPS), '--burst', String(2 * FAST_QPS)] : [];
  const op = await OperatorProcess.start(OPERATOR, namespace, ['--cluster-id', CLUSTER_ID, ...qps]);
  const watch = await CollectionWatch.open(mgmt, rsPath(namespace));
  try {
    const objects = configMaps(FANOUT_M, 'cm', 'v1');
    const before = requestCounts(await op.metrics());
    const cpu = processCpuMs(op.pid);
    const t0 = performance.now();
    const tracker = new Tracker(watch, new Set(clusters), readyTrue, t0);
    await Promise.all(clusters.map((c) => mgmt.request({ method: 'POST', path: rsPath(namespace), body: remoteSync(namespace, c, secret(c), namespace, objects), timeoutMs: 60_000 })));
    await tracker.wait(`${clusters.length} RemoteSyncs to be Ready`, READY_TIMEOUT_MS);
    const ms = tracker.last;
    const operatorCpuMs = processCpuMs(op.pid) - cpu;
    const connections = await connectionsNow(op, Object.fromEntries(clusters.map((c) => [c, env.ports[c]!])));
    const servers = requestsByServer(before, requestCounts(await op.metrics()), (label) => clusters.find((c) => label === `${namespace}/${secret(c)}`));
    const remote = clusters.map((c) => servers[c]).filter((s): s is ServerRequests => s !== undefined);
    const byMethod: Record<string, number> = {};
    for (const s of remote) for (const [m, v] of Object.entries(s.byMethod)) byMethod[m] = (byMethod[m] ?? 0) + v;
    return {
      ms,
      perClusterMs: clusters.map((c) => tracker.at.get(c) ?? NaN),
      remoteRequests: remote.reduce((a, s) => a + s.total, 0),
      remoteByMethod: byMethod,
      operatorCpuMs,
      connections,
    };
  } finally {
    watch.close();
    await op.stop();
  }
}

async function fanoutBare(namespace: string, clusters: string[]): Promise<Timing> {
  const clients = await Promise.all(clusters.map((c) => KubeClient.create(`bare-${c}`, loadKubeConfigFile(kubeconfigFile(c)), `${BENCH_UA}-bare`)));
  const byMethod: Record<string, number> = {};
  for (const client of clients) client.observe((r) => void (byMethod[r.method] = (byMethod[r.method] ?? 0) + 1));
  const objects = configMaps(FANOUT_M, 'cm', 'v1', namespace, ownerLabels(namespace, 'x'));
  try {
    const cpu = process.cpuUsage();
    const t0 = performance.now();
    const perClusterMs = await Promise.all(
      clients.map(async (client) => {
        await mapLimit(objects, APPLY_CONCURRENCY, (obj) =>
          client.request({
            method: 'PATCH',
            path: cmPath(namespace, obj.metadata.name),
            query: { fieldManager: FIELD_MANAGER, force: true },
            contentType: 'application/apply-patch+yaml',
            body: obj,
          }),
        );
        return performance.now() - t0;
      }),
    );
    const used = process.cpuUsage(cpu);
    return {
      ms: Math.max(...perClusterMs),
      perClusterMs,
      remoteRequests: Object.values(byMethod).reduce((a, b) => a + b, 0),
      remoteByMethod: byMethod,
      clientCpuMs: (used.user + used.system) / 1000,
    };
  } finally {
    for (const client of clients) client.close();
  }
}

async function fanoutKubectl(env: Env, namespace: string, clusters: string[]): Promise<Timing> {
  const file = path.join(env.tmp, `${namespace}.yaml`);
  writeFileSync(file, configMaps(FANOUT_M, 'cm', 'v1', namespace, ownerLabels(namespace, 'x')).map((o) => stringify(o)).join('---\n'));
  const t0 = performance.now();
  const runs = await Promise.all(
    clusters.map(async (c) => {
      const timeFile = path.join(env.tmp, `${c}.time`);
      const cache = mkdtempSync(path.join(env.tmp, 'kubectl-cache-'));
      await run(
        '/usr/bin/time',
        ['-f', '%U %S', '-o', timeFile, KUBECTL, '--kubeconfig', kubeconfigFile(c), '--cache-dir', cache, 'apply', '--server-side', '--force-conflicts', '--field-manager', FIELD_MANAGER, '-f', file],
        { maxBuffer: 64 * 2 ** 20, timeout: READY_TIMEOUT_MS },
      ).catch((err: unknown) => {
        throw new Error(`kubectl apply to ${c}: ${(err as { stderr?: string }).stderr ?? String(err)}`);
      });
      const ms = performance.now() - t0;
      const [user = NaN, system = NaN] = readFileSync(timeFile, 'utf8').trim().split('\n').pop()!.split(' ').map(Number);
      return { ms, cpuMs: (user + system) * 1000 };
    }),
  );
  rmSync(file);
  return { ms: Math.max(...runs.map((r) => r.ms)), perClusterMs: runs.map((r) => r.ms), clientCpuMs: runs.reduce((a, r) => a + r.cpuMs, 0) };
}

async function fanout(env: Env): Promise<FanoutRun[]> {
  const results: FanoutRun[] = [];
  for (let round = 1; round <= FANOUT_ROUNDS; round++) {
    for (const k of FANOUT_CLUSTERS) {
      for (const applier of fanoutOrder(round)) {
        console.log(`fan-out, round ${round} of ${FANOUT_ROUNDS}: ${FANOUT_M} ConfigMaps to ${k} cluster${k > 1 ? 's' : ''}, ${APPLIER_LABEL[applier]}...`);
        const r = await fanoutCase(env, applier, k, round, results.length + 1);
        results.push(r);
        console.log(
          `  ${s2(r.ms)} (per cluster ${r.perClusterMs.map(s2).join(', ')}); objects ${r.objects.join(', ')}` +
            `${r.remoteRequests !== undefined ? `; remote requests ${r.remoteRequests} (${methods(r.remoteByMethod ?? {})})` : ''}` +
            `${r.operatorCpuMs !== undefined ? `; operator CPU ${ms(r.operatorCpuMs)}` : ''}${r.clientCpuMs !== undefined ? `; client CPU ${ms(r.clientCpuMs)}` : ''}; kube-apiservers CPU ${ms(r.apiserverCpuMs)}`,
        );
      }
    }
  }
  return results;
}

// ---------------------------------------------------------------- (b) the fleet

interface Identity {
  i: number;
  server: string;
  namespace: string;
  kubeconfig: string;
}

/** Creates identities 0..n-1 (those not created yet), CREATE_CONCURRENCY at a time. */
async function createIdentities(env: Env, have: Identity[], n: number): Promise<{ identities: Identity[]; ms: number }> {
  const t0 = performance.now();
  const todo = Array.from({ length: Math.max(0, n - have.length) }, (_, k) => have.length + k);
  const created = await mapLimit(todo, CREATE_CONCURRENCY, async (i): Promise<Identity> => {
    const server = fleetServer(i);
    const token = await namespacedIdentity(await remoteClient(env, server), fleetNs(i));
    return { i, server, namespace: fleetNs(i), kubeconfig: tokenKubeconfig(server, token) };
  });
  return { identities: [...have, ...created], ms: performance.now() - t0 };
}

const fleetName = (i: number): string => `fleet-${i}`;
const fleetSecret = (i: number): string => `fleet-${i}-kubeconfig`;

interface PerServer {
  /** Requests while creating (first POST → all Ready), and per second. */
  requests: number;
  rps: number;
  byMethod: Record<string, number>;
  errors: Record<string, number>;
  /** Requests over the idle window, and per second. */
  idleRequests: number;
  idleRps: number;
  connectionsAtReady: number;
  connectionsIdle: number;
  connectionsPeak: number;
  /** The kube-apiserver's CPU, first POST → all Ready. */
  apiserverCpuMs: number;
}

interface Recovery {
  server: string;
  syncs: number;
  /** `controlplane stop` (SIGTERM, up to 5 s of draining, then SIGKILL), until it returned. */
  stopMs: number;
  /** The stop returned → all its RemoteSyncs (spec changed meanwhile) Ready=False ClusterUnreachable. */
  verdictMs: number;
  verdictCount: number;
  /** Half of them ClusterUnreachable (median). */
  verdictHalfMs: number;
  /** The not-Ready reasons seen before the verdict (events). */
  verdictReasons: Record<string, number>;
  /** The median identity of that server reachable again (`up` started →). */
  reachableHalfMs: number;
  /** The spec PATCHes of its RemoteSyncs, in all. */
  patchMs: number;
  /** How long the server was stopped (stop returned → up started; at least RECOVERY_DOWN_MS). */
  downMs: number;
  /** `controlplane up` started → it returned (the server's /readyz). */
  upMs: number;
  /** `controlplane up` started → every identity of that server `syncprims_cluster_reachable` 1. */
  reachableMs: number;
  /** `controlplane up` started → every RemoteSync of that server Ready=True for its new generation. */
  readyMs: number;
  readyHalfMs: number;
  readyCount: number;
  /** The other server's RemoteSyncs seen not Ready meanwhile. */
  othersDisturbed: number;
  reasons: Record<string, number>;
  error?: string;
}

interface FleetRun {
  n: number;
  objectsPerSync: number;
  load: number;
  /** Creating the identities this size needed beyond the previous (0 when all existed). */
  identitiesMs: number;
  identitiesCreated: number;
  secretsMs: number;
  baseline: { ms: number; perServer: Record<string, ServerRequests>; rps: Record<string, number>; cpuMs: number; apiserverCpuMs: Record<string, number>; busy: number };
  /** The same requests as the operator's, from bare clients (fleetSameRequests). */
  sameRequests: { ms: number; cpuMs: number; apiserverCpuMs: Record<string, number>; busy: number };
  /** The managing cluster's kube-apiserver's CPU, and the share of the machine's CPU busy, first POST → all Ready. */
  mgmtApiserverCpuMs: number;
  busy: number;
  /** The operator before any RemoteSync, after a GC. */
  memStart: Memory;
  postsMs: number;
  readyMs: number;
  halfMs: number;
  readyCount: number;
  notReadyReasons: Record<string, number>;
  error?: string;
  operatorCpuMs: number;
  perServer: Record<string, PerServer>;
  mgmtRequests: number;
  mgmtConnections: number;
  /** Requests to labels that are neither a fleet identity nor mgmt. */
  otherRequests: number;
  atReady: Memory;
  peakRssKiB: number;
  /** VmRSS after IDLE_MS idle, before the GC. */
  idle: Memory;
  afterGc: Memory;
  clustersOpened: number;
  watchesAtIdle: number;
  warnings: Record<string, number>;
  /** At the largest N: requests over LONG_IDLE_MS idle, and the watch restarts in the operator's log meanwhile. */
  longIdle?: { windowMs: number; perServer: Record<string, ServerRequests>; restarts: Record<string, number> };
  /** Times the benchmark's own watch of the RemoteSyncs was ended by the server and resumed. */
  benchWatchRestarts: number;
  recovery?: Recovery;
  /** The RemoteSync controller's reconciles (first POST → all Ready): how many, and seconds in reconciles and waiting in the queue, summed. */
  reconciles?: ReconcileFigures;
  /** BEFORE_REF: the same size with that commit's operator, measured just before. */
  before?: FleetRun;
}

interface ReconcileFigures {
  count: number;
  reconcileSeconds: number;
  queueSeconds: number;
}

function reconcileFigures(metrics: string): ReconcileFigures {
  const sum = (name: string, label: string): number => byLabel(metrics, name, label).get('remotesync') ?? NaN;
  return {
    count: sum('controller_runtime_reconcile_total', 'controller'),
    reconcileSeconds: sum('controller_runtime_reconcile_time_seconds_sum', 'controller'),
    queueSeconds: sum('workqueue_queue_duration_seconds_sum', 'name'),
  };
}

/** REMOTE_CPU_PROF=1: where the fleet's operator spent its CPU. */
function printProfile(file: string | undefined): void {
  if (!file) return console.log('  (no CPU profile written)');
  const p = summarizeProfile(file);
  console.log(`  CPU profile: ${ms(p.totalMs)} sampled, idle ${ms(p.idleMs)}, GC ${ms(p.gcMs)}`);
  for (const [k, v] of p.byArea) console.log(`    area ${k}: ${ms(v)}`);
  for (const [k, v] of p.top) console.log(`    ${k}: ${ms(v)}`);
}

/** Bare clients, one per identity (its own kubeconfig), WORKERS identities at a time, APPLY_CONCURRENCY PATCHes each. */
async function fleetBaseline(env: Env, identities: Identity[]): Promise<FleetRun['baseline']> {
  const perServer: Record<string, ServerRequests> = {};
  const cpu = process.cpuUsage();
  const apiCpu = Object.fromEntries(FLEET_SERVERS.map((s) => [s, processCpuMs(apiserverPid(s))]));
  const machine = machineCpuMs();
  const t0 = performance.now();
  await mapLimit(identities, WORKERS, async (id) => {
    const client = await KubeClient.create(`bare-${id.i}`, kubeConfigOf(id.kubeconfig), `${BENCH_UA}-bare`);
    const s = (perServer[id.server] ??= { total: 0, byMethod: {}, errors: {} });
    client.observe((r) => {
      s.total++;
      s.byMethod[r.method] = (s.byMethod[r.method] ?? 0) + 1;
      if (!(r.status && r.status < 300)) s.errors[String(r.status ?? 'none')] = (s.errors[String(r.status ?? 'none')] ?? 0) + 1;
    });
    try {
      await mapLimit(configMaps(FLEET_OBJECTS, 'bare', 'v1', id.namespace), APPLY_CONCURRENCY, (obj) =>
        client.request({
          method: 'PATCH',
          path: cmPath(id.namespace, obj.metadata.name),
          query: { fieldManager: FIELD_MANAGER, force: true },
          contentType: 'application/apply-patch+yaml',
          body: obj,
        }),
      );
    } finally {
      client.close();
    }
  });
  const ms = performance.now() - t0;
  const used = process.cpuUsage(cpu);
  const busy = machineBusySince(machine);
  const rps = Object.fromEntries(Object.entries(perServer).map(([k, v]) => [k, v.total / (ms / 1000)]));
  const apiserverCpuMs = Object.fromEntries(FLEET_SERVERS.map((s) => [s, processCpuMs(apiserverPid(s)) - (apiCpu[s] ?? NaN)]));
  // The baseline's objects go again, so that the operator's applies start from the same state.
  await mapLimit(identities, CREATE_CONCURRENCY, async (id) =>
    (await remoteClient(env, id.server)).request({ method: 'DELETE', path: cmPath(id.namespace), query: { labelSelector: `${LABEL_PART_OF}=${PREFIX}` } }),
  );
  return { ms, perServer, rps, cpuMs: (used.user + used.system) / 1000, apiserverCpuMs, busy };
}

/**
 * The same requests as the operator's for one new RemoteSync, from a bare client per identity, 8 identities at
 * a time as the baseline: in the managing cluster the RemoteSync POSTed (as the benchmark POSTs each for the
 * operator, in its clock), its kubeconfig Secret read and its finalizer added (a JSON patch); in the remote
 * cluster a watch of the namespace's ConfigMaps with our owner label, its initial events read to the bookmark
 * that ends them (the operator's first watch), and the PATCHes, 16 in flight; then the status written (a JSON
 * patch: the Ready condition, the inventory) and an Event. The RemoteSyncs live in a namespace no operator
 * watches, deleted afterwards (their finalizers removed first) and waited for, as are the ConfigMaps.
 */
async function fleetSameRequests(env: Env, identities: Identity[], secrets: string): Promise<FleetRun['sameRequests']> {
  const { mgmt } = env;
  const namespace = await createNamespace(mgmt, `${PREFIX}-same-${identities.length}`);
  const cpu = process.cpuUsage();
  const apiCpu = Object.fromEntries([...FLEET_SERVERS, MGMT].map((s) => [s, processCpuMs(apiserverPid(s))]));
  const machine = machineCpuMs();
  const t0 = performance.now();
  await mapLimit(identities, WORKERS, async (id) => {
    const name = fleetName(id.i);
    const objects = configMaps(FLEET_OBJECTS, 'same', 'v1', id.namespace, ownerLabels(namespace, name));
    await mgmt.request({ method: 'POST', path: rsPath(namespace), body: remoteSync(namespace, name, fleetSecret(id.i), id.namespace, objects) });
    await mgmt.request({ path: `/api/v1/namespaces/${secrets}/secrets/${fleetSecret(id.i)}` });
    const patchJson = { method: 'PATCH' as const, contentType: 'application/json-patch+json', accept: METADATA_ONLY_ACCEPT };
    await mgmt.request({ ...patchJson, path: rsPath(namespace, name), body: [{ op: 'add', path: '/metadata/finalizers', value: [FINALIZER] }] });
    const client = await KubeClient.create(`same-${id.i}`, kubeConfigOf(id.kubeconfig), `${BENCH_UA}-same`);
    const abort = new AbortController();
    try {
      const watch = await client.stream({
        path: cmPath(id.namespace),
        query: { watch: 1, allowWatchBookmarks: true, sendInitialEvents: true, resourceVersionMatch: 'NotOlderThan', resourceVersion: '', labelSelector: 'syncprims.dev/owner-kind' },
        idleTimeoutMs: 60_000,
        signal: abort.signal,
      });
      for await (const e of watchEvents(watch)) if (e.type === 'BOOKMARK' && e.object.metadata.annotations?.['k8s.io/initial-events-end'] === 'true') break;
      await mapLimit(objects, APPLY_CONCURRENCY, (obj) =>
        client.request({ method: 'PATCH', path: cmPath(id.namespace, obj.metadata.name), query: { fieldManager: OPERATOR_FIELD_MANAGER, force: true }, contentType: 'application/apply-patch+yaml', body: obj }),
      );
    } finally {
      abort.abort();
      client.close();
    }
    const entries = objects.map((o) => ({ id: `${id.namespace}_${o.metadata.name}__ConfigMap`, v: 'v1' }));
    const ready = { type: 'Ready', status: 'True', reason: 'Succeeded', message: `applied revision sha256:${id.i}`, lastTransitionTime: new Date().toISOString(), observedGeneration: 1 };
    const status = { observedGeneration: 1, conditions: [ready], lastAppliedRevision: `sha256:${id.i}`, lastAttemptedRevision: `sha256:${id.i}`, inventory: { entries } };
    await mgmt.request({ ...patchJson, path: `${rsPath(namespace, name)}/status`, body: [{ op: 'add', path: '/status', value: status }] });
    await mgmt.request({
      method: 'POST',
      path: `/api/v1/namespaces/${namespace}/events`,
      body: { apiVersion: 'v1', kind: 'Event', metadata: { generateName: `${name}.` }, involvedObject: { apiVersion: API_VERSION, kind: 'RemoteSync', namespace, name }, reason: 'Applied', message: `${FLEET_OBJECTS} created`, type: 'Normal', source: { component: 'syncprims' } },
    });
  });
  const ms = performance.now() - t0;
  const used = process.cpuUsage(cpu);
  const busy = machineBusySince(machine);
  const apiserverCpuMs = Object.fromEntries([...FLEET_SERVERS, MGMT].map((s) => [s, processCpuMs(apiserverPid(s)) - (apiCpu[s] ?? NaN)]));
  // Gone before the operator's window opens (the namespace controller's deletions would run in it).
  await deleteRemoteSyncNamespace(mgmt, namespace);
  await mapLimit(identities, CREATE_CONCURRENCY, async (id) =>
    (await remoteClient(env, id.server)).request({ method: 'DELETE', path: cmPath(id.namespace), query: { labelSelector: `${LABEL_PART_OF}=${PREFIX}` } }),
  );
  return { ms, cpuMs: (used.user + used.system) / 1000, apiserverCpuMs, busy };
}

/** `earlier`: the operator of BEFORE_REF, measured without the long idle and the recovery. */
async function fleetCase(env: Env, identities: Identity[], n: number, made: { ms: number; count: number }, earlier = false): Promise<FleetRun> {
  const { mgmt } = env;
  const fleet = identities.slice(0, n);
  const load = os.loadavg()[0] ?? NaN;
  console.log(`  baseline: bare clients, one per identity...`);
  const baseline = await fleetBaseline(env, fleet);
  console.log(`  baseline: ${s2(baseline.ms)}; ${Object.entries(baseline.rps).map(([k, v]) => `${k} ${v.toFixed(0)} req/s`).join(', ')}`);
  const namespace = await createNamespace(mgmt, `${PREFIX}-fleet${n}`);
  const secretsStarted = performance.now();
  await mapLimit(fleet, CREATE_CONCURRENCY, (id) => mgmt.request({ method: 'POST', path: `/api/v1/namespaces/${namespace}/secrets`, body: secretObject(fleetSecret(id.i), id.kubeconfig) }));
  const secretsMs = performance.now() - secretsStarted;
  console.log(`  the same requests as the operator's, from bare clients...`);
  const sameRequests = await fleetSameRequests(env, fleet, namespace);
  console.log(`  the same requests: ${s2(sameRequests.ms)}`);
  const serverOfLabel = new Map(fleet.map((id) => [`${namespace}/${fleetSecret(id.i)}`, id.server]));
  const mgmtLabel = loadKubeConfigFile(kubeconfigFile(MGMT)).getCurrentContext();
  const serverOf = (label: string): string | undefined => serverOfLabel.get(label) ?? (label === mgmtLabel ? MGMT : undefined);
  if (CPU_PROF) rmSync(PROFILES, { recursive: true, force: true });
  const profiling = CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${PROFILES}`] : [];
  const op = await OperatorProcess.start(earlier ? BEFORE : OPERATOR, namespace, ['--cluster-id', CLUSTER_ID, ...OPERATOR_ARGS], ['--expose-gc', '--require', GC_PRELOAD, ...profiling]);
  const watch = await CollectionWatch.open(mgmt, rsPath(namespace));
  const ports: Ports = { [MGMT]: Number(mgmt.server.port), ...Object.fromEntries(FLEET_SERVERS.map((s) => [s, env.ports[s]!])) };
  try {
    await sleep(2_000);
    const memStart = await memoryAfterGc(op);
    const objects = configMaps(FLEET_OBJECTS, 'cm', 'v1');
    const names = new Set(fleet.map((id) => fleetName(id.i)));
    const before = requestCounts(await op.metrics());
    const cpu = processCpuMs(op.pid);
    const apiCpu = Object.fromEntries([...FLEET_SERVERS, MGMT].map((s) => [s, processCpuMs(apiserverPid(s))]));
    const machine = machineCpuMs();
    const sampler = new Sampler(op, ports);
    const epoch = Date.now();
    const t0 = performance.now();
    const tracker = new Tracker(watch, names, readyTrue, t0);
    await mapLimit(fleet, CREATE_CONCURRENCY, (id) =>
      mgmt.request({ method: 'POST', path: rsPath(namespace), body: remoteSync(namespace, fleetName(id.i), fleetSecret(id.i), id.namespace, objects), timeoutMs: 60_000 }),
    );
    const postsMs = performance.now() - t0;
    let error: string | undefined;
    await tracker.wait(`${n} RemoteSyncs to be Ready`, FLEET_TIMEOUT_MS).catch((err: unknown) => {
      error = String(err);
      console.error(`  ${error}`);
    });
    const readyMs = error ? performance.now() - t0 : tracker.last;
    const operatorCpuMs = processCpuMs(op.pid) - cpu;
    const busy = machineBusySince(machine);
    const apiserverCpuMs = Object.fromEntries([...FLEET_SERVERS, MGMT].map((s) => [s, processCpuMs(apiserverPid(s)) - (apiCpu[s] ?? NaN)]));
    const atReady = memoryNow(op);
    const connAtReady = await connectionsNow(op, ports);
    const readyMetrics = await op.metrics();
    const afterCreate = requestCounts(readyMetrics);
    const created = requestsByServer(before, afterCreate, serverOf);
    const reconciles = reconcileFigures(readyMetrics);
    console.log(`  ${tracker.at.size} of ${n} Ready in ${s2(readyMs)}; idle ${IDLE_MS / 1000} s...`);
    const idleStarted = performance.now();
    const idleEpoch = Date.now();
    await sleep(IDLE_MS);
    const idleMetrics = await op.metrics();
    const idleWindowMs = performance.now() - idleStarted;
    const idleReqs = requestsByServer(afterCreate, requestCounts(idleMetrics), serverOf);
    const idle = memoryNow(op);
    const connIdle = await connectionsNow(op, ports);
    await sampler.stop();
    const afterGc = await memoryAfterGc(op);
    let longIdle: FleetRun['longIdle'];
    if (n === FLEET_SIZES[FLEET_SIZES.length - 1] && LONG_IDLE_MS > IDLE_MS && !error && !earlier) {
      console.log(`  idle on, ${LONG_IDLE_MS / 1000} s in all...`);
      await sleep(Math.max(0, LONG_IDLE_MS - (performance.now() - idleStarted)));
      const windowMs = performance.now() - idleStarted;
      const restarts: Record<string, number> = {};
      for (const l of op.logsSince(idleEpoch)) {
        if (l.msg !== 'watch failed; reconnecting' && l.msg !== 'watch ended (server timeout): resuming') continue;
        const key = `${l.msg}${typeof l.fields.reason === 'string' ? ` (${l.fields.reason})` : ''}`;
        restarts[key] = (restarts[key] ?? 0) + 1;
      }
      longIdle = { windowMs, perServer: requestsByServer(afterCreate, requestCounts(await op.metrics()), serverOf), restarts };
    }
    const perServer: Record<string, PerServer> = {};
    for (const s of FLEET_SERVERS) {
      const c = created[s];
      perServer[s] = {
        requests: c?.total ?? 0,
        rps: (c?.total ?? 0) / (readyMs / 1000),
        byMethod: c?.byMethod ?? {},
        errors: c?.errors ?? {},
        idleRequests: idleReqs[s]?.total ?? 0,
        idleRps: (idleReqs[s]?.total ?? 0) / (idleWindowMs / 1000),
        connectionsAtReady: connAtReady[s] ?? NaN,
        connectionsIdle: connIdle[s] ?? NaN,
        connectionsPeak: sampler.peakConnections[s] ?? NaN,
        apiserverCpuMs: apiserverCpuMs[s] ?? NaN,
      };
    }
    const result: FleetRun = {
      n,
      objectsPerSync: FLEET_OBJECTS,
      load,
      identitiesMs: made.ms,
      identitiesCreated: made.count,
      secretsMs,
      baseline,
      memStart,
      postsMs,
      readyMs,
      halfMs: tracker.quantile(0.5),
      readyCount: tracker.at.size,
      notReadyReasons: tracker.reasons,
      error,
      operatorCpuMs,
      perServer,
      mgmtRequests: created[MGMT]?.total ?? 0,
      mgmtApiserverCpuMs: apiserverCpuMs[MGMT] ?? NaN,
      busy,
      sameRequests,
      mgmtConnections: connAtReady[MGMT] ?? NaN,
      otherRequests: created.other?.total ?? 0,
      atReady,
      peakRssKiB: sampler.peakRssKiB,
      idle,
      afterGc,
      clustersOpened: op.logsSince(epoch).filter((l) => l.msg === 'cluster opened').length,
      watchesAtIdle: [...byLabel(idleMetrics, 'syncprims_watches', 'cluster').values()].reduce((a, b) => a + b, 0),
      warnings: {},
      longIdle,
      benchWatchRestarts: 0,
      reconciles,
    };
    printFleet(result);
    if (!error && FLEET_RECOVERY && !earlier) result.recovery = await recovery(env, op, watch, namespace, fleet);
    result.warnings = warnings(op, epoch);
    result.benchWatchRestarts = watch.restarts;
    if (result.recovery) printRecovery(result.recovery);
    console.log(`  operator warnings and errors: ${JSON.stringify(result.warnings)}`);
    return result;
  } finally {
    watch.close();
    await op.stop();
    if (CPU_PROF) printProfile(largestProfile(PROFILES));
    console.log(`  cleaning up...`);
    await deleteRemoteSyncNamespace(mgmt, namespace);
    // The applied ConfigMaps go, so that the next size starts from the same state.
    await mapLimit(fleet, CREATE_CONCURRENCY, async (id) =>
      (await remoteClient(env, id.server)).request({ method: 'DELETE', path: cmPath(id.namespace), query: { labelSelector: `${LABEL_PART_OF}=${PREFIX}` } }),
    );
  }
}

/** Stops FLEET_SERVERS[0], changes its RemoteSyncs, starts it again: the verdict, and the recovery. */
async function recovery(env: Env, op: OperatorProcess, watch: CollectionWatch, namespace: string, fleet: Identity[]): Promise<Recovery> {
  const { mgmt } = env;
  const server = FLEET_SERVERS[0]!;
  const mine = fleet.filter((id) => id.server === server);
  const names = new Set(mine.map((id) => fleetName(id.i)));
  const labels = new Set(mine.map((id) => `${namespace}/${fleetSecret(id.i)}`));
  const r: Recovery = {
    server,
    syncs: mine.length,
    stopMs: NaN,
    verdictMs: NaN,
    verdictCount: 0,
    verdictHalfMs: NaN,
    verdictReasons: {},
    reachableHalfMs: NaN,
    patchMs: NaN,
    downMs: NaN,
    upMs: NaN,
    reachableMs: NaN,
    readyMs: NaN,
    readyHalfMs: NaN,
    readyCount: 0,
    othersDisturbed: 0,
    reasons: {},
  };
  const disturbed = new Set<string>();
  const stopListening = watch.listen(({ object }) => {
    const name = object.metadata.name ?? '';
    if (!names.has(name) && readyOf(object)?.status !== 'True') disturbed.add(name);
  });
  console.log(`  recovery: stopping ${server} (${mine.length} RemoteSyncs)...`);
  const generations = new Map<string, number>();
  let stopped = false;
  try {
    const tStop = performance.now();
    await cp(['stop', server]);
    stopped = true;
    const stoppedAt = performance.now();
    r.stopMs = stoppedAt - tStop;
    const objects = configMaps(FLEET_OBJECTS, 'cm', 'v2');
    await mapLimit(mine, CREATE_CONCURRENCY, async (id) => {
      const patched = await mgmt.request<KubeObject>({
        method: 'PATCH',
        path: rsPath(namespace, fleetName(id.i)),
        contentType: 'application/merge-patch+json',
        body: { spec: { source: { inline: objects } } },
      });
      generations.set(fleetName(id.i), patched.metadata.generation ?? 0);
    });
    r.patchMs = performance.now() - stoppedAt;
    // Created once every new generation is known: it looks at the latest objects first, then at the events to come.
    const unreachable = new Tracker(watch, names, (o) => readyFalse('ClusterUnreachable')(o) && o.metadata.generation === generations.get(o.metadata.name ?? ''), stoppedAt);
    await unreachable.wait(`${mine.length} RemoteSyncs to be ClusterUnreachable`, 300_000).catch((err: unknown) => {
      r.error = String(err);
      console.error(`  ${r.error}`);
    });
    r.verdictMs = unreachable.at.size ? unreachable.last : NaN;
    r.verdictHalfMs = unreachable.quantile(0.5);
    r.verdictCount = unreachable.at.size;
    r.verdictReasons = { ...unreachable.reasons };
    // The same outage at every size: the backoffs of probes and watch reconnects grow with it.
    await sleep(Math.max(0, RECOVERY_DOWN_MS - (performance.now() - stoppedAt)));
    // The server answers before its /readyz (which `up` waits for), and the operator may use it at once: the clock
    // starts when `up` is called.
    const tUp = performance.now();
    r.downMs = tUp - stoppedAt;
    const ready = new Tracker(watch, names, (o) => readyTrue(o) && o.metadata.generation === generations.get(o.metadata.name ?? ''), tUp);
    const reachedAt = new Map<string, number>();
    const reachable = until(
      `every identity of ${server} reachable`,
      async () => {
        const m = byLabel(await op.metrics(), 'syncprims_cluster_reachable', 'cluster');
        const now = performance.now() - tUp;
        for (const l of labels) if (m.get(l) === 1 && !reachedAt.has(l)) reachedAt.set(l, now);
        return reachedAt.size === labels.size;
      },
      300_000,
      250,
    ).then(
      () => (r.reachableMs = performance.now() - tUp),
      (err: unknown) => console.error(`  ${String(err)}`),
    );
    await up([server]);
    stopped = false;
    r.upMs = performance.now() - tUp;
    await ready.wait(`${mine.length} RemoteSyncs Ready again`, 600_000).catch((err: unknown) => {
      r.error = String(err);
      console.error(`  ${r.error}`);
    });
    await reachable;
    r.reachableHalfMs = median([...reachedAt.values()]);
    r.readyMs = ready.at.size ? ready.last : NaN;
    r.readyHalfMs = ready.quantile(0.5);
    r.readyCount = ready.at.size;
    r.reasons = { ...ready.reasons };
  } finally {
    stopListening();
    if (stopped) await up([server]);
  }
  r.othersDisturbed = disturbed.size;
  return r;
}

async function fleetPhase(env: Env): Promise<FleetRun[]> {
  const results: FleetRun[] = [];
  let identities: Identity[] = [];
  for (const n of FLEET_SIZES) {
    console.log(`fleet of ${n}: identities...`);
    const had = identities.length;
    const made = await createIdentities(env, identities, n);
    identities = made.identities;
    console.log(`  ${identities.length - had} identities created in ${s2(made.ms)}`);
    const before = BEFORE_REF ? await fleetCase(env, identities, n, { ms: 0, count: 0 }, true) : undefined;
    if (before) console.log(`  (that was the operator of ${BEFORE_REF}; now the measured one)`);
    results.push({ ...(await fleetCase(env, identities, n, { ms: made.ms, count: identities.length - had })), before });
  }
  // The fleet's namespaces go with the control plane at the end.
  return results;
}

// ---------------------------------------------------------------- (c) latencies

interface Latencies {
  /** RemoteSync POST → Ready=True, its Secret there before (a new identity each). */
  secretFirst: number[];
  /** Secret POST → Ready=True, the RemoteSync waiting for it. */
  lateSecret: number[];
  lateSecretWaiting: string;
  /** RemoteSync POST → Ready=False ClusterUnreachable naming the missing Secret. */
  missingSecretVerdict: number[];
  /** The baseline: ConfigMap POST → Ready=True, the Sync waiting for its source. */
  lateSource: number[];
  lateSourceWaiting: string;
  /** RemoteSync POST → Ready=False ClusterUnreachable: the cluster stopped (connection refused). */
  refused: number[];
  refusedMessage: string;
  /** The same behind a black hole (accepted, never answered). */
  blackHole: number[];
  blackHoleMessage: string;
  /** Ready=False reasons seen before the ClusterUnreachable verdicts. */
  verdictReasons: Record<string, number>;
}

async function latencies(env: Env): Promise<Latencies> {
  const { mgmt } = env;
  const server = REMOTES[0]!;
  const remote = await remoteClient(env, server);
  const namespace = await createNamespace(mgmt, `${PREFIX}-lat`);
  const remoteNs = namespace;
  // A new identity for each RemoteSync that reaches the cluster: each opens a cluster of its own.
  const tokens = await mapLimit(Array.from({ length: 2 * LATENCY_REPEATS }, (_, j) => j), 8, (j) => namespacedIdentity(remote, remoteNs, `sa-${j}`));
  const op = await OperatorProcess.start(OPERATOR, namespace, ['--cluster-id', CLUSTER_ID]);
  const rsWatch = await CollectionWatch.open(mgmt, rsPath(namespace));
  const syncWatch = await CollectionWatch.open(mgmt, collectionPath(SYNCS, namespace));
  const proxy = await StallingProxy.start(env.ports[server]!);
  const out: Latencies = {
    secretFirst: [],
    lateSecret: [],
    lateSecretWaiting: '',
    missingSecretVerdict: [],
    lateSource: [],
    lateSourceWaiting: '',
    refused: [],
    refusedMessage: '',
    blackHole: [],
    blackHoleMessage: '',
    verdictReasons: {},
  };
  const postRs = (name: string, secret: string): Promise<unknown> =>
    mgmt.request({ method: 'POST', path: rsPath(namespace), body: remoteSync(namespace, name, secret, remoteNs, configMaps(1, name, 'v1')) });
  const postSecret = (name: string, kubeconfig: string): Promise<unknown> => mgmt.request({ method: 'POST', path: `/api/v1/namespaces/${namespace}/secrets`, body: secretObject(name, kubeconfig) });
  /** Waits for `name` to pass `test` on `watch`; ms since t0. */
  const timed = async (watch: CollectionWatch, name: string, test: (o: KubeObject) => boolean, t0: number, what: string, ms = 120_000): Promise<{ ms: number; object: KubeObject }> => {
    const tracker = new Tracker(watch, new Set([name]), test, t0);
    await tracker.wait(what, ms);
    for (const [k, v] of Object.entries(tracker.reasons)) out.verdictReasons[k] = (out.verdictReasons[k] ?? 0) + v;
    return { ms: tracker.at.get(name)!, object: tracker.firstObject.get(name)! };
  };
  try {
    for (let j = 0; j < LATENCY_REPEATS; j++) {
      console.log(`latencies, ${j + 1} of ${LATENCY_REPEATS}...`);
      // The Secret first: POST → Ready.
      await postSecret(`first-${j}`, tokenKubeconfig(server, tokens[2 * j]!));
      let t0 = performance.now();
      await postRs(`first-${j}`, `first-${j}`);
      out.secretFirst.push((await timed(rsWatch, `first-${j}`, readyTrue, t0, `first-${j} Ready`)).ms);

      // A late Secret: the RemoteSync waits, naming it; then the Secret's POST → Ready.
      t0 = performance.now();
      await postRs(`late-${j}`, `late-${j}`);
      const waiting = await timed(rsWatch, `late-${j}`, readyFalse('ClusterUnreachable'), t0, `late-${j} waiting for its Secret`);
      out.missingSecretVerdict.push(waiting.ms);
      out.lateSecretWaiting = (readyOf(waiting.object)?.message ?? '').replaceAll(namespace, '<ns>');
      t0 = performance.now();
      await postSecret(`late-${j}`, tokenKubeconfig(server, tokens[2 * j + 1]!));
      out.lateSecret.push((await timed(rsWatch, `late-${j}`, readyTrue, t0, `late-${j} Ready`)).ms);

      // The baseline: a Sync with a late ConfigMap source.
      t0 = performance.now();
      await mgmt.request({
        method: 'POST',
        path: collectionPath(SYNCS, namespace),
        body: { apiVersion: API_VERSION, kind: 'Sync', metadata: { name: `src-${j}` }, spec: { defaultNamespace: namespace, source: { configMap: { name: `src-${j}`, key: 'app.yaml' } } } },
      });
      const srcWaiting = await timed(syncWatch, `src-${j}`, readyFalse(), t0, `Sync src-${j} waiting for its source`);
      out.lateSourceWaiting = `${readyOf(srcWaiting.object)?.reason}: ${(readyOf(srcWaiting.object)?.message ?? '').replaceAll(namespace, '<ns>')}`;
      t0 = performance.now();
      await mgmt.request({
        method: 'POST',
        path: cmPath(namespace),
        body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `src-${j}` }, data: { 'app.yaml': stringify(configMaps(1, `out-${j}`, 'v1')[0]) } },
      });
      out.lateSource.push((await timed(syncWatch, `src-${j}`, readyTrue, t0, `Sync src-${j} Ready`)).ms);

      // A stopped cluster (connection refused), a new identity (a made-up token) each time.
      const stopped = stoppedServer();
      await postSecret(`refused-${j}`, tokenKubeconfig(STOPPED, `made-up-${randomBytes(8).toString('hex')}`, stopped));
      t0 = performance.now();
      await postRs(`refused-${j}`, `refused-${j}`);
      const refused = await timed(rsWatch, `refused-${j}`, readyFalse('ClusterUnreachable'), t0, `refused-${j} ClusterUnreachable`);
      out.refused.push(refused.ms);
      out.refusedMessage = (readyOf(refused.object)?.message ?? '').replaceAll(namespace, '<ns>');
    }
    // A black hole: accepted, never answered; BLACKHOLE_REPEATS at once, each a new identity.
    console.log(`latencies: ${BLACKHOLE_REPEATS} RemoteSyncs behind a black hole, at once...`);
    proxy.blackHole();
    const holes = Array.from({ length: BLACKHOLE_REPEATS }, (_, j) => `hole-${j}`);
    for (const name of holes) await postSecret(name, tokenKubeconfig(server, `made-up-${randomBytes(8).toString('hex')}`, `https://127.0.0.1:${proxy.port}`));
    const t0 = performance.now();
    const tracker = new Tracker(rsWatch, new Set(holes), readyFalse('ClusterUnreachable'), t0);
    await Promise.all(holes.map((name) => postRs(name, name)));
    await tracker.wait('the black-holed RemoteSyncs to be ClusterUnreachable', 300_000);
    out.blackHole = holes.map((h) => tracker.at.get(h) ?? NaN);
    out.blackHoleMessage = (readyOf(tracker.firstObject.get(holes[0]!)!)?.message ?? '').replaceAll(namespace, '<ns>').replace(/:\d{4,5}/g, ':<port>');
    for (const [k, v] of Object.entries(tracker.reasons)) out.verdictReasons[k] = (out.verdictReasons[k] ?? 0) + v;
  } finally {
    await proxy.close();
    rsWatch.close();
    syncWatch.close();
    await op.stop();
    await deleteRemoteSyncNamespace(mgmt, namespace);
    await deleteNamespaces(remote, [remoteNs]);
  }
  return out;
}

/** The URL of the stopped cluster (its kubeconfig outlives it). */
function stoppedServer(): string {
  const kc = parse(adminKubeconfig(STOPPED)) as Kubeconfig;
  return String(kc.clusters[0]!.cluster.server);
}

// ---------------------------------------------------------------- main

async function main(): Promise<void> {
  const load = sampleLoad();
  const began = performance.now();
  const build = await buildOperator(OPERATOR_DIR, OPERATOR_REF);
  const beforeBuild = BEFORE_REF ? await buildOperator(BEFORE_DIR, BEFORE_REF) : undefined;
  writeFileSync(GC_PRELOAD, GC_PRELOAD_SOURCE);
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'syncprims-bench-remote-'));
  // The fan-out uses up to 4, the latencies a third one (stopped), the fleet two.
  const remotesNeeded = REMOTES.slice(0, PARTS.has('fanout') ? Math.max(3, ...FANOUT_CLUSTERS) : PARTS.has('latencies') ? 3 : 2);
  const clusters = [MGMT, ...remotesNeeded];
  let env: Env | undefined;
  try {
    // A control plane left by a run that was cut short goes first: every run starts from empty clusters.
    await cp(['down']).catch(() => undefined);
    rmSync(PLANE.dir, { recursive: true, force: true });
    console.log(`starting a control plane of its own in ${path.relative(ROOT, PLANE.dir)} (free ports): ${clusters.join(', ')}...`);
    await up(clusters);
    const mgmt = await KubeClient.create(MGMT, loadKubeConfigFile(kubeconfigFile(MGMT)), BENCH_UA);
    env = { mgmt, remotes: new Map(), ports: {}, tmp };
    for (const c of remotesNeeded) await remoteClient(env, c);
    await installCrds(mgmt);

    const fan = PARTS.has('fanout') ? await fanout(env) : [];
    // Only the fleet's two servers stay up; the third stays stopped, the target of the connection-refused verdict.
    const spare = remotesNeeded.filter((c) => !FLEET_SERVERS.includes(c));
    console.log(`stopping ${spare.join(', ')}...`);
    for (const c of spare) {
      env.remotes.get(c)?.close();
      env.remotes.delete(c);
    }
    if (spare.length) await cp(['stop', ...spare]);
    const lat = PARTS.has('latencies') ? await latencies(env) : undefined;
    if (lat) printLatencies(lat);
    const fleet = PARTS.has('fleet') ? await fleetPhase(env) : [];
    const input: ReportInput = {
      date: new Date().toISOString().slice(0, 10),
      fanout: fan,
      fleet,
      latencies: lat!,
      kubernetes: await serverVersion(mgmt),
      load: load.stop(),
      build,
      beforeBuild,
      totalMs: performance.now() - began,
      fanoutM: FANOUT_M,
      idleMs: IDLE_MS,
    };
    writeFileSync(RESULTS, JSON.stringify(input));
    if (PARTS.size === 3) writeReport(input);
    else if (fleet.length) writeFleetReport(input);
  } finally {
    load.stop();
    await stopOperators();
    env?.mgmt.close();
    for (const c of env?.remotes.values() ?? []) c.close();
    console.log(`stopping the benchmark's control plane (${clusters.join(', ')})...`);
    await cp(['down']).catch((err: unknown) => console.error(String(err)));
    // Its logs stay (until the next run); its etcd data and audit logs go.
    rmSync(path.join(PLANE.dir, 'etcd'), { recursive: true, force: true });
    for (const c of clusters) rmSync(path.join(PLANE.dir, `${c}.audit.log`), { force: true });
    rmSync(tmp, { recursive: true, force: true });
    rmSync(OPERATOR_DIR, { recursive: true, force: true });
    rmSync(BEFORE_DIR, { recursive: true, force: true });
    rmSync(GC_PRELOAD, { force: true });
  }
}

// ---------------------------------------------------------------- printing and the report

const ms = (n: number): string => `${int(n)} ms`;
const s2 = (n: number): string => `${(n / 1000).toFixed(2)} s`;
const mib = (kib: number): string => `${(kib / 1024).toFixed(0)} MiB`;
const mibBytes = (b: number | undefined): string => (b === undefined ? '–' : `${(b / 2 ** 20).toFixed(1)} MiB`);
const max = (xs: number[]): number => Math.max(...xs.filter((v) => !Number.isNaN(v)));
const min = (xs: number[]): number => Math.min(...xs.filter((v) => !Number.isNaN(v)));
const methods = (r: Record<string, number>): string =>
  Object.entries(r)
    .filter(([, v]) => v > 0)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([k, v]) => `${k} ${int(v)}`)
    .join(', ');
const counts = (r: Record<string, number>): string =>
  Object.keys(r).length
    ? Object.entries(r)
        .sort(([, a], [, b]) => b - a)
        .map(([k, v]) => `${k} × ${int(v)}`)
        .join('; ')
    : 'none';
const medMinMax = (xs: number[]): string => `${ms(median(xs))} (${ms(min(xs))} to ${ms(max(xs))})`;

function printFleet(r: FleetRun): void {
  console.log(
    `  ${r.n} RemoteSyncs: ${r.readyCount} Ready in ${s2(r.readyMs)} (half ${s2(r.halfMs)}; POSTs ${s2(r.postsMs)}); baseline ${s2(r.baseline.ms)}; ` +
      `per server: ${FLEET_SERVERS.map((s) => `${s} ${int(r.perServer[s]?.requests ?? NaN)} requests, ${(r.perServer[s]?.rps ?? NaN).toFixed(0)}/s, idle ${(r.perServer[s]?.idleRps ?? NaN).toFixed(2)}/s, connections ${r.perServer[s]?.connectionsAtReady} (peak ${r.perServer[s]?.connectionsPeak}), errors ${JSON.stringify(r.perServer[s]?.errors)}`).join('; ')}; ` +
      `RSS start ${mib(r.memStart.rssKiB)}, at Ready ${mib(r.atReady.rssKiB)}, idle ${mib(r.idle.rssKiB)}, after GC ${mib(r.afterGc.rssKiB)} (heap ${mibBytes(r.afterGc.heapUsed)}); CPU ${ms(r.operatorCpuMs)}; clusters opened ${r.clustersOpened}; watches ${r.watchesAtIdle}; ` +
      `reconciles ${int(r.reconciles?.count ?? NaN)} (in reconciles ${s2((r.reconciles?.reconcileSeconds ?? NaN) * 1000)}, queued ${s2((r.reconciles?.queueSeconds ?? NaN) * 1000)})`,
  );
}

function printRecovery(r: Recovery): void {
  console.log(
    `  recovery of ${r.server} (${r.syncs} RemoteSyncs): stop took ${s2(r.stopMs)}; ClusterUnreachable ${r.verdictCount} in ${s2(r.verdictMs)} after it; down ${s2(r.downMs)}; up took ${s2(r.upMs)}; ` +
      `reachable ${s2(r.reachableMs)} and ${r.readyCount} Ready ${s2(r.readyMs)} (half ${s2(r.readyHalfMs)}) after up started; others disturbed ${r.othersDisturbed}`,
  );
}

function printLatencies(l: Latencies): void {
  console.log(
    `latencies: Secret first ${medMinMax(l.secretFirst)}; late Secret ${medMinMax(l.lateSecret)}; late source (Sync) ${medMinMax(l.lateSource)}; ` +
      `missing Secret verdict ${medMinMax(l.missingSecretVerdict)}; refused ${medMinMax(l.refused)}; black hole ${medMinMax(l.blackHole)}`,
  );
  console.log(`  messages: late Secret "${l.lateSecretWaiting}"; late source "${l.lateSourceWaiting}"; refused "${l.refusedMessage}"; black hole "${l.blackHoleMessage}"`);
}

interface ReportInput {
  date: string;
  fanout: FanoutRun[];
  fleet: FleetRun[];
  latencies: Latencies;
  kubernetes: string;
  load: number[];
  build: string;
  /** BEFORE_REF's operator, when the fleets were measured with it too. */
  beforeBuild?: string;
  totalMs: number;
  fanoutM: number;
  idleMs: number;
}

function fanoutTable(runs: FanoutRun[]): string {
  const ks = [...new Set(runs.map((r) => r.k))].sort((a, b) => a - b);
  const appliers = (['operator', 'operatorFast', 'bare', 'kubectl'] as Applier[]).filter((a) => runs.some((r) => r.applier === a));
  const cell = (a: Applier, k: number, f: (r: FanoutRun) => number, fmt: (n: number) => string): string => {
    const rs = runs.filter((r) => r.applier === a && r.k === k);
    if (!rs.length) return '–';
    const values = rs.map(f);
    return rs.length === 1 ? fmt(values[0]!) : `${fmt(median(values))} (${values.map(fmt).join(' / ')})`;
  };
  const rows: string[] = [];
  rows.push(`| first request → all clusters done | ${ks.map((k) => `${k} cluster${k > 1 ? 's' : ''}`).join(' | ')} |`);
  rows.push(`|---|${ks.map(() => '---|').join('')}`);
  for (const a of appliers) rows.push(`| **${APPLIER_LABEL[a]}** | ${ks.map((k) => `**${cell(a, k, (r) => r.ms, s2)}**`).join(' | ')} |`);
  for (const a of appliers) {
    rows.push(`| ${APPLIER_LABEL[a]}: the slowest cluster's time − the fastest's | ${ks.map((k) => cell(a, k, (r) => max(r.perClusterMs) - min(r.perClusterMs), s2)).join(' | ')} |`);
  }
  for (const a of appliers) {
    if (!runs.some((r) => r.applier === a && r.remoteRequests !== undefined)) continue;
    rows.push(`| ${APPLIER_LABEL[a]}: requests to the remote clusters | ${ks.map((k) => cell(a, k, (r) => r.remoteRequests ?? NaN, int)).join(' | ')} |`);
  }
  for (const a of appliers) {
    rows.push(`| ${APPLIER_LABEL[a]}: ${a.startsWith('operator') ? 'operator CPU' : a === 'bare' ? "client CPU (the bench's process)" : 'kubectl CPU (user + system, all processes)'} | ${ks.map((k) => cell(a, k, (r) => (a.startsWith('operator') ? (r.operatorCpuMs ?? NaN) : (r.clientCpuMs ?? NaN)), ms)).join(' | ')} |`);
  }
  for (const a of appliers) rows.push(`| ${APPLIER_LABEL[a]}: kube-apiservers' CPU (all K) | ${ks.map((k) => cell(a, k, (r) => r.apiserverCpuMs, ms)).join(' | ')} |`);
  return rows.join('\n');
}

/** Rows of the operator before this change (BEFORE_REF), measured in the same run just before, with a baseline of its own. */
function beforeRows(): [string, (r: FleetRun) => string][] {
  const of = (f: (b: FleetRun) => string) => (r: FleetRun): string => (r.before ? f(r.before) : '–');
  const requests = (b: FleetRun): number => FLEET_SERVERS.reduce((a, s) => a + (b.perServer[s]?.requests ?? 0), 0);
  const forbidden = (b: FleetRun): number => FLEET_SERVERS.reduce((a, s) => a + (b.perServer[s]?.errors['403'] ?? 0), 0);
  return [
    ['**before this change** (`BEFORE_REF`): first POST → all Ready / its baseline / operator ÷ baseline', of((b) => `**${s2(b.readyMs)}** / ${s2(b.baseline.ms)} / **${(b.readyMs / b.baseline.ms).toFixed(2)}**`)],
    ['before: requests to the two servers per RemoteSync; answers 403', of((b) => `${(requests(b) / b.n).toFixed(1)}; ${int(forbidden(b))}`)],
    ['before: RemoteSync reconciles (seconds in them / queued, summed); operator CPU', of((b) => `${int(b.reconciles?.count ?? NaN)} (${s2((b.reconciles?.reconcileSeconds ?? NaN) * 1000)} / ${s2((b.reconciles?.queueSeconds ?? NaN) * 1000)}); ${ms(b.operatorCpuMs)}`)],
    ['before: operator RSS before any RemoteSync / after a forced GC', of((b) => `${mib(b.memStart.rssKiB)} / ${mib(b.afterGc.rssKiB)}`)],
  ];
}

function fleetTable(runs: FleetRun[]): string {
  const col = (f: (r: FleetRun) => string): string => runs.map(f).join(' | ');
  const srv = (s: string, f: (p: PerServer) => string) => (r: FleetRun): string => (r.perServer[s] ? f(r.perServer[s]!) : '–');
  const rows: [string, (r: FleetRun) => string][] = [
    ['1-minute load average when the size began', (r) => r.load.toFixed(1)],
    [`identities created for this size (namespace, ServiceAccount, Role, RoleBinding, token; ${CREATE_CONCURRENCY} at a time)`, (r) => `${int(r.identitiesCreated)} in ${s2(r.identitiesMs)}`],
    ['**first POST → all RemoteSyncs Ready=True**', (r) => `**${s2(r.readyMs)}**${r.error ? ` (only ${int(r.readyCount)} Ready)` : ''}`],
    ['RemoteSyncs Ready per second', (r) => (r.readyCount / (r.readyMs / 1000)).toFixed(1)],
    ['first POST → half Ready', (r) => s2(r.halfMs)],
    [`all POSTs answered (${CREATE_CONCURRENCY} at a time)`, (r) => s2(r.postsMs)],
    [`**baseline: bare clients, one per identity (${WORKERS} identities at a time, ${APPLY_CONCURRENCY} PATCHes in flight each)**`, (r) => `**${s2(r.baseline.ms)}**`],
    ['operator / baseline', (r) => (r.readyMs / r.baseline.ms).toFixed(2)],
    [
      `**the same requests as the operator's, from bare clients** (${WORKERS} identities at a time: the RemoteSync POSTed, its Secret read, its finalizer, a first watch to its initial events, the PATCHes, the status, an Event)`,
      (r) => `**${s2(r.sameRequests.ms)}**`,
    ],
    ['operator / the same requests', (r) => (r.readyMs / r.sameRequests.ms).toFixed(2)],
    ...(runs.some((r) => r.before) ? beforeRows() : []),
    ...FLEET_SERVERS.flatMap((s): [string, (r: FleetRun) => string][] => [
      [`${s}: operator's requests while creating (per second)`, srv(s, (p) => `${int(p.requests)} (${p.rps.toFixed(0)}/s)`)],
      [`${s}: by method`, srv(s, (p) => methods(p.byMethod))],
      [`${s}: answers other than 2xx`, srv(s, (p) => counts(p.errors))],
      [`${s}: baseline's requests (per second)`, (r) => `${int(r.baseline.perServer[s]?.total ?? NaN)} (${(r.baseline.rps[s] ?? NaN).toFixed(0)}/s)`],
      [`${s}: operator's requests per second, idle (${IDLE_MS / 1000} s after all Ready)`, srv(s, (p) => p.idleRps.toFixed(2))],
      [`${s}: operator's TCP connections at all-Ready / idle / peak`, srv(s, (p) => `${int(p.connectionsAtReady)} / ${int(p.connectionsIdle)} / ${int(p.connectionsPeak)}`)],
      [`${s}: kube-apiserver CPU while creating (operator / baseline)`, (r) => `${ms(r.perServer[s]?.apiserverCpuMs ?? NaN)} / ${ms(r.baseline.apiserverCpuMs[s] ?? NaN)}`],
    ]),
    ...FLEET_SERVERS.map((s): [string, (r: FleetRun) => string] => [
      `${s}: operator's requests per second over ${LONG_IDLE_MS / 1000} s idle (largest N only), by method`,
      (r) => (r.longIdle ? `${((r.longIdle.perServer[s]?.total ?? 0) / (r.longIdle.windowMs / 1000)).toFixed(2)} (${methods(r.longIdle.perServer[s]?.byMethod ?? {}) || 'no request'})` : '–'),
    ]),
    [`watch restarts in the operator's log over those ${LONG_IDLE_MS / 1000} s (largest N only)`, (r) => (r.longIdle ? counts(r.longIdle.restarts) : '–')],
    [`${MGMT}: operator's requests while creating / connections at all-Ready`, (r) => `${int(r.mgmtRequests)} / ${int(r.mgmtConnections)}`],
    [`${MGMT}: kube-apiserver CPU while creating (the baseline sends it nothing)`, (r) => ms(r.mgmtApiserverCpuMs)],
    [`${MGMT}: kube-apiserver CPU, the same requests from bare clients`, (r) => ms(r.sameRequests.apiserverCpuMs[MGMT] ?? NaN)],
    ...FLEET_SERVERS.map((s): [string, (r: FleetRun) => string] => [`${s}: kube-apiserver CPU, the same requests from bare clients`, (r) => ms(r.sameRequests.apiserverCpuMs[s] ?? NaN)]),
    ["the machine's CPU busy, all cores (operator, first POST → all Ready / baseline / the same requests)", (r) => `${pct(r.busy)} / ${pct(r.baseline.busy)} / ${pct(r.sameRequests.busy)}`],
    ['clusters opened (`cluster opened` log lines)', (r) => int(r.clustersOpened)],
    ["the benchmark's own watch of the RemoteSyncs ended by the server (then read again and resumed)", (r) => int(r.benchWatchRestarts ?? 0)],
    ['open watches when idle (`syncprims_watches`)', (r) => int(r.watchesAtIdle)],
    ['operator CPU, first POST → all Ready', (r) => ms(r.operatorCpuMs)],
    [
      'RemoteSync reconciles, first POST → all Ready (seconds in reconciles / keys waiting in the queue, summed)',
      (r) => (r.reconciles ? `${int(r.reconciles.count)} (${s2(r.reconciles.reconcileSeconds * 1000)} / ${s2(r.reconciles.queueSeconds * 1000)})` : '–'),
    ],
    ['operator RSS before any RemoteSync (after a GC)', (r) => mib(r.memStart.rssKiB)],
    ['operator RSS at all-Ready / peak of samples (VmHWM)', (r) => `${mib(r.atReady.rssKiB)} / ${mib(r.peakRssKiB)} (${mib(r.atReady.hwmKiB)})`],
    [`operator RSS after ${IDLE_MS / 1000} s idle`, (r) => mib(r.idle.rssKiB)],
    ['**operator RSS after a forced GC**', (r) => `**${mib(r.afterGc.rssKiB)}**`],
    ['V8 heap used after the GC (before any RemoteSync)', (r) => `${mibBytes(r.afterGc.heapUsed)} (${mibBytes(r.memStart.heapUsed)})`],
    ['external + array buffers after the GC', (r) => `${mibBytes((r.afterGc.external ?? 0) + (r.afterGc.arrayBuffers ?? 0))}`],
    ['warn and error lines in the operator log (whole size, recovery included)', (r) => counts(r.warnings)],
  ];
  return [`| | ${col((r) => `N = ${int(r.n)}`)} |`, `|---|${runs.map(() => '---|').join('')}`, ...rows.map(([label, f]) => `| ${label} | ${col(f)} |`)].join('\n');
}

function recoveryTable(runs: FleetRun[]): string {
  const rs = runs.filter((r) => r.recovery);
  if (!rs.length) return '(not measured: a fleet did not get Ready)';
  const col = (f: (r: Recovery) => string): string => rs.map((r) => f(r.recovery!)).join(' | ');
  const rows: [string, (r: Recovery) => string][] = [
    ['RemoteSyncs on the stopped server', (r) => int(r.syncs)],
    ['their spec PATCHes (while it was down), in all', (r) => s2(r.patchMs)],
    ['`controlplane stop` (SIGTERM; open watches drained up to 5 s, then SIGKILL)', (r) => s2(r.stopMs)],
    ['**the stop returned → all of them Ready=False ClusterUnreachable for the new generation** (half of them)', (r) => `**${s2(r.verdictMs)}**${r.verdictCount < r.syncs ? ` (only ${r.verdictCount})` : ''} (${s2(r.verdictHalfMs ?? NaN)})`],
    ['not-Ready reasons seen before that verdict (events)', (r) => counts(r.verdictReasons ?? {})],
    ['the server down (stop returned → up started)', (r) => s2(r.downMs)],
    ['`controlplane up` started → it returned (the server\'s /readyz)', (r) => s2(r.upMs)],
    ['**`up` started → every identity reachable again (`syncprims_cluster_reachable` 1)** (the median identity)', (r) => `**${s2(r.reachableMs)}** (${s2(r.reachableHalfMs ?? NaN)})`],
    ['**`up` started → all of them Ready=True for the new generation**', (r) => `**${s2(r.readyMs)}**${r.readyCount < r.syncs ? ` (only ${r.readyCount})` : ''}`],
    ['`up` started → half of them Ready', (r) => s2(r.readyHalfMs)],
    ["the other server's RemoteSyncs seen not Ready meanwhile", (r) => int(r.othersDisturbed)],
    ['not-Ready reasons seen on the way back (events, `up` started → all Ready)', (r) => counts(r.reasons)],
  ];
  return [`| restart of ${FLEET_SERVERS[0]} | ${rs.map((r) => `N = ${int(r.n)}`).join(' | ')} |`, `|---|${rs.map(() => '---|').join('')}`, ...rows.map(([label, f]) => `| ${label} | ${col(f)} |`)].join('\n');
}

function latencyTable(l: Latencies): string {
  const row = (label: string, xs: number[]): string => `| ${label} | ${xs.length} | **${ms(median(xs))}** | ${ms(min(xs))} | ${ms(max(xs))} |`;
  return [
    '| | n | median | min | max |',
    '|---|---|---|---|---|',
    row('RemoteSync, its Secret there first: POST → Ready=True (a new identity: opens its cluster)', l.secretFirst),
    row('**late Secret**: the Secret\'s POST → Ready=True (the RemoteSync waiting)', l.lateSecret),
    row('baseline: a Sync waiting for its ConfigMap source: the ConfigMap\'s POST → Ready=True', l.lateSource),
    row('RemoteSync without its Secret: POST → Ready=False ClusterUnreachable (the wait named)', l.missingSecretVerdict),
    row(`**stopped cluster** (connection refused): POST → Ready=False ClusterUnreachable`, l.refused),
    row(`**black hole** (accepted, never answered; ${l.blackHole.length} at once): POST → Ready=False ClusterUnreachable`, l.blackHole),
  ].join('\n');
}

/** The RSS added per idle cluster, between the smallest and the largest fleet (100 and 1,000 by default). */
function perClusterOf(fleet: FleetRun[]): { perCluster: number; small?: FleetRun; large?: FleetRun } {
  const small = fleet[0];
  const large = fleet[fleet.length - 1];
  const perCluster = small && large && large.n > small.n ? (large.afterGc.rssKiB - small.afterGc.rssKiB) / (large.n - small.n) : NaN;
  return { perCluster, small, large };
}

/** Section (b): the fleets and their recovery. */
function fleetSection(r: Pick<ReportInput, 'fleet' | 'idleMs'>, measured = ''): string {
  const fleet = [...r.fleet].sort((a, b) => a.n - b.n);
  const { perCluster, small, large } = perClusterOf(fleet);
  const perClusterIdle = small && large && large.n > small.n ? (large.idle.rssKiB - small.idle.rssKiB) / (large.n - small.n) : NaN;
  const perClusterHeap = small && large && large.n > small.n ? ((large.afterGc.heapUsed ?? NaN) - (small.afterGc.heapUsed ?? NaN)) / 1024 / (large.n - small.n) : NaN;
  const perClusterText =
    small && large && large.n > small.n
      ? `**RSS per idle cluster**: (RSS@${int(large.n)} − RSS@${int(small.n)}) / ${int(large.n - small.n)} = **${perCluster.toFixed(0)} KiB** after a forced GC
(${perClusterIdle.toFixed(0)} KiB from the RSS after ${r.idleMs / 1000} s idle, before the GC; V8 heap used: ${perClusterHeap.toFixed(0)} KiB per cluster).
The target is under 1 MiB (1,024 KiB).`
      : '(RSS per idle cluster: needs two fleet sizes.)';
  return `### (b) A simulated fleet: ${fleet.map((f) => int(f.n)).join(' and ')} identities
${measured}
Method: identity i is a namespace \`fleet-<i>\` in \`${FLEET_SERVERS[0]}\` (even i) or \`${FLEET_SERVERS[1]}\` (odd i), a ServiceAccount
\`${FLEET_SA}\` there, a Role granting every verb on every resource in that namespace only and its RoleBinding, and a token
of it (TokenRequest, ${TOKEN_SECONDS / 3600} h). Its kubeconfig (server, CA data and token inline: no file) is a Secret
\`fleet-<i>-kubeconfig\` in a fresh namespace of \`${MGMT}\`, and RemoteSync \`fleet-<i>\` (\`kubeConfig.secretRef\` to it)
applies ${fleet[0]?.objectsPerSync ?? FLEET_OBJECTS} ConfigMaps inline with \`defaultNamespace: fleet-<i>\`. So every RemoteSync is a cluster identity of its
own, which may not list cluster-wide. The identities are created once, ${CREATE_CONCURRENCY} at a time (\`mapLimit\`), for
the largest N; each size gets a fresh namespace of Secrets, a fresh operator process, and starts with no applied
ConfigMaps. The operator runs under \`node --expose-gc --require <preload>\`, the preload (written by the benchmark,
not part of the operator) running a full GC on SIGUSR2 and reporting \`process.memoryUsage()\`. Per size: the
**baseline** first (bare clients, one per identity, from its own kubeconfig, so new connections per identity, ${WORKERS}
identities at a time, ${APPLY_CONCURRENCY} PATCHes in flight each, applying ${FLEET_OBJECTS} other ConfigMaps into the same namespaces;
deleted afterwards); then **the same requests as the operator's, from bare clients** (one per identity, ${WORKERS} identities
at a time: the RemoteSync POSTed in a namespace no operator watches, its kubeconfig Secret read, its finalizer added by a
JSON patch; in the remote cluster a watch of the namespace's owned ConfigMaps read to the bookmark that ends its initial
events, and the ${FLEET_OBJECTS} PATCHes, ${APPLY_CONCURRENCY} in flight; then its status by a JSON patch and an Event; all deleted
afterwards); then the operator: started, a GC, then all N RemoteSyncs POSTed ${CREATE_CONCURRENCY} at a time and timed
to the last one Ready; then ${r.idleMs / 1000} s idle, VmRSS, and a forced GC, VmRSS again. Requests per second while creating
are the requests of that window over its length. CPU is per process (\`/proc/<pid>/stat\`) and for the machine (\`/proc/stat\`,
all cores, busy = all but idle and iowait), over each window.

Why two baselines: every party runs on this machine's ${os.cpus().length} cores (the three API servers, etcd, the operator, the
benchmark), and the bare clients' baseline sends nothing to \`${MGMT}\`. A RemoteSync is an object there: the benchmark
POSTs it, and the operator must add its finalizer and write its status (two writes of a custom resource, each a few
milliseconds of that API server's CPU), besides the Event and the Secret read. Where the machine's CPU is saturated
(the busy row of the table), those writes cost the operator's run time that the bare clients never pay; the same requests from bare
clients pay them too, and what is left between them and the operator is the operator's own work.

${fleetTable(fleet)}

${perClusterText}

Recovery after one API server restarts (on each fleet, with all its RemoteSyncs Ready and idle): \`controlplane stop
${FLEET_SERVERS[0]}\`; while it is down, the spec of every RemoteSync on it is changed (a new value in its ConfigMaps:
a new generation, which must reach the cluster); they are timed from the stop's return to Ready=False
ClusterUnreachable for that generation; the server stays down ${RECOVERY_DOWN_MS / 1000} s at least (the same outage at every size: the
backoffs of the operator's probes and watch reconnects grow with it); then \`controlplane up ${FLEET_SERVERS[0]}\` is called (it starts the kube-apiserver and returns at its
\`/readyz\`; the server answers requests before that, so the clock starts with the call), and timed to every identity
of that server \`syncprims_cluster_reachable\` 1 (the operator's \`/metrics\`, every 250 ms) and to every one of its
RemoteSyncs Ready=True for the new generation. The RemoteSyncs of \`${FLEET_SERVERS[1]}\` are watched meanwhile.

${recoveryTable(fleet)}`;
}

function writeReport(r: ReportInput): void {
  const gib = Math.round(os.totalmem() / 2 ** 30);
  const fleet = [...r.fleet].sort((a, b) => a.n - b.n);
  const m = perClusterOf(fleet);
  const ks = [...new Set(r.fanout.map((x) => x.k))].sort((a, b) => a - b);
  const fanRounds = Math.max(...r.fanout.map((x) => x.round));
  const generic = (m: string): string => m.replace(/\b(late|src|refused|hole)-\d+/g, '$1-<j>');
  const l = { ...r.latencies, lateSecretWaiting: generic(r.latencies.lateSecretWaiting), lateSourceWaiting: generic(r.latencies.lateSourceWaiting), refusedMessage: generic(r.latencies.refusedMessage), blackHoleMessage: generic(r.latencies.blackHoleMessage) };
  const report = `## RemoteSync: fan-out, a simulated fleet, latencies (bench/remote.ts)

Script: \`bench/remote.ts\`. Measured ${r.date} on ${os.availableParallelism()} cores (${os.cpus()[0]?.model.trim() ?? '?'}), ${gib} GiB,
Node ${process.version}, Kubernetes ${r.kubernetes}, etcd embedded. Clusters of a control plane of the benchmark's own
(\`.local/${PREFIX}-plane\`, its own etcd; a test run that started the shared control plane takes it down when it ends,
with every cluster added to it meanwhile), started for the benchmark and taken down at the end: \`${MGMT}\` (the
operator's), and remote clusters \`${REMOTES.slice(0, Math.max(...ks, 3)).join('`, `')}\`
(all of them for the fan-out; then only \`${FLEET_SERVERS.join('` and `')}\` run, \`${STOPPED}\` stays stopped as the target of the
connection-refused case). Every cluster is a kube-apiserver and a kube-controller-manager process of its own on one shared
etcd, all on this machine with the operator and the benchmark. The operator: ${r.build}. The machine's 1-minute load
average (everything on it, this benchmark's clusters and processes included), sampled every 10 s during the run, was
${median(r.load).toFixed(1)} (median; ${Math.min(...r.load).toFixed(1)} to ${Math.max(...r.load).toFixed(1)}) on ${os.availableParallelism()} cores. The whole benchmark took ${(r.totalMs / 60_000).toFixed(1)} min.

The operator runs as \`node dist/cli/main.js run --namespace <ns> --cluster-id ${CLUSTER_ID} --metrics-addr 127.0.0.1:0
--health-addr 127.0.0.1:0\` (default \`--concurrency ${WORKERS}\`, so ${APPLY_CONCURRENCY} applies in flight per set, at most ${WORKERS / 2} reconciles per
cluster, and \`--qps 50 --burst 100\` per remote cluster unless said), a fresh process per case, started and primed
(\`/readyz\`) before the clock starts. "Ready" is a watch on the namespace's RemoteSyncs delivering Ready=True for
the object's generation (an event's time is when the watch delivered it). Requests are the change of the operator's
\`syncprims_cluster_requests_total\` (every request: GETs include LISTs and WATCHes), grouped by API server through the
cluster label (the Secret's \`namespace/name\`); connections are the established TCP connections of the operator's pid
to each API server's port, from \`/proc/<pid>/fd\` and \`/proc/net/tcp{,6}\` (\`test/support/proc.ts\`); CPU is utime + stime
from \`/proc/<pid>/stat\`.

### (a) Fan-out: ${int(r.fanoutM)} ConfigMaps to ${ks.join(', ').replace(/, (\d+)$/, ' and $1')} clusters

Method: ${fanRounds} round${fanRounds > 1 ? 's' : ''} (every other one with the appliers in the reverse order); each case in fresh namespaces (the same name in
\`${MGMT}\` and in each remote cluster, created before the clock and deleted after). The operator: one RemoteSync per
cluster, \`kubeConfig.secretRef\` to a Secret holding that cluster's admin kubeconfig (client certificate inline), the
${int(r.fanoutM)} ConfigMaps (about 200 B each) \`inline\` with \`defaultNamespace\`; all K RemoteSyncs POSTed at once; timed
to the last one Ready=True. The baselines apply the same objects (with the operator's owner labels) to the same
clusters: a **bare client**, a new \`KubeClient\` per cluster (new connections), server-side apply PATCHes with
${APPLY_CONCURRENCY} in flight per cluster, all clusters at once, timed to the last PATCH answered; and **kubectl** (v1.36.3, from
\`.local/bin\`, a fresh \`--cache-dir\`, so its discovery is timed too), \`apply --server-side --force-conflicts -f\` of one
YAML file, one process per cluster, all at once, timed to the last process exiting. Each cell: the median of the
rounds (and each round's value).

${fanoutTable(r.fanout)}

${fleetSection(r)}

### (c) Latencies: a late Secret, and the ClusterUnreachable verdict

Method: one operator process, one namespace in \`${MGMT}\`; ${l.secretFirst.length} repetitions, one after another, each
RemoteSync applying one ConfigMap, each with an identity of its own (a ServiceAccount token of
\`${REMOTES[0]}\`, or a made-up token for the unreachable cases), so every one opens a new cluster. The **late Secret**:
the RemoteSync is POSTed first and waits (Ready=False ClusterUnreachable, \`${l.lateSecretWaiting}\`), then the
Secret is POSTed; timed from the Secret's POST to Ready=True. **Baselines**: the same RemoteSync with its Secret
there first (POST → Ready=True), and a Sync waiting for its ConfigMap source (\`${l.lateSourceWaiting}\`), timed
from the ConfigMap's POST to Ready=True: the same wake-up path (the referenced-object index and the metadata watch
of Secrets and ConfigMaps, docs/adr/0002-referenced-objects.md) without a cluster to open. The **verdict**: from
the RemoteSync's POST (its Secret there first) to Ready=False ClusterUnreachable, for \`${STOPPED}\` stopped
(connection refused; \`${l.refusedMessage}\`), and for a black hole: a TCP proxy in front of \`${REMOTES[0]}\`
(\`test/support/stalling-proxy.ts\`) that accepts connections and never answers, ${l.blackHole.length} RemoteSyncs
at once (\`${l.blackHoleMessage}\`).

${latencyTable(l)}

Not-Ready reasons seen before the verdicts (events): ${counts(l.verdictReasons)}.

Reading:
${reading(r, m)}
`;
  writeFileSync(OUT, report);
  console.log(`\n${report}`);
}

function reading(r: ReportInput, m: { perCluster: number; small?: FleetRun; large?: FleetRun }): string {
  const lines: string[] = [];
  const med = (a: Applier, k: number): number => median(r.fanout.filter((x) => x.applier === a && x.k === k).map((x) => x.ms));
  const ks = [...new Set(r.fanout.map((x) => x.k))].sort((a, b) => a - b);
  if (ks.length) {
    lines.push(
      `- Fan-out (medians): ${ks
        .map((k) => `${k} cluster${k > 1 ? 's' : ''}: operator ${s2(med('operator', k))}${FAST_QPS > 0 ? `, with \`--qps ${FAST_QPS}\` ${s2(med('operatorFast', k))}` : ''}, bare client ${s2(med('bare', k))}, kubectl ${s2(med('kubectl', k))}`)
        .join('; ')}.` +
        (ks.length > 1
          ? ` From ${min(ks)} to ${max(ks)} clusters the operator's time grows ×${(med('operator', max(ks)) / med('operator', min(ks))).toFixed(1)}, the bare client's ×${(med('bare', max(ks)) / med('bare', min(ks))).toFixed(1)}, kubectl's ×${(med('kubectl', max(ks)) / med('kubectl', min(ks))).toFixed(1)}.`
          : ''),
    );
  }
  lines.push(...fleetReading(r.fleet, m, r.beforeBuild));
  const l = r.latencies;
  lines.push(
    `- A late Secret is used ${ms(median(l.lateSecret))} after its POST (median), against ${ms(median(l.lateSource))} for a Sync's late ConfigMap source and ${ms(median(l.secretFirst))} for a RemoteSync whose Secret was there first: ` +
      `the late Secret's wake-up adds no polling: the Secret's event wakes the RemoteSync as a ConfigMap's wakes a Sync.`,
  );
  lines.push(
    `- ClusterUnreachable: ${ms(median(l.refused))} after the POST for a stopped cluster (refused), ${ms(median(l.blackHole))} for a black hole (a new connection that never completes its TLS handshake: the transport's connect deadline bounds it).` +
      (l.verdictReasons['False/CRDNotInstalled'] ? ` **Before the verdict, ${l.verdictReasons['False/CRDNotInstalled']} status updates said Ready=False CRDNotInstalled** ("the server does not serve ConfigMap in v1"): the first reconcile of a cluster that never answered reads the failed discovery as a kind not served.` : ''),
  );
  return lines.join('\n');
}

/** A fleet's line of the reading: its time against its baseline's, requests, 403s, reconciles, RSS. */
function fleetLine(f: FleetRun, label: string): string {
  const p = FLEET_SERVERS.map((s) => f.perServer[s]);
  const forbidden = p.reduce((a, x) => a + (x?.errors['403'] ?? 0), 0);
  return (
    `${label}: ${f.error ? `**not all Ready: ${int(f.readyCount)} of ${int(f.n)} within ${s2(f.readyMs)}** (${f.error})` : `all Ready in ${s2(f.readyMs)}`}, ` +
    `against ${s2(f.baseline.ms)} for the bare clients (×${(f.readyMs / f.baseline.ms).toFixed(2)}) and ${s2(f.sameRequests.ms)} for the same requests as the operator's from bare clients (×${(f.readyMs / f.sameRequests.ms).toFixed(2)}); ` +
    `${MGMT}'s kube-apiserver used ${ms(f.mgmtApiserverCpuMs)} of CPU meanwhile (the bare clients send it nothing), the machine's CPU ${pct(f.busy)} busy; ` +
    `${p.map((x, i) => `${FLEET_SERVERS[i]} got ${(x?.rps ?? NaN).toFixed(0)} requests/s (${int(x?.requests ?? NaN)}, ${((x?.requests ?? NaN) / (f.n / FLEET_SERVERS.length)).toFixed(1)} per RemoteSync) and ${(x?.idleRps ?? NaN).toFixed(2)}/s idle, over ${int(x?.connectionsIdle ?? NaN)} connections`).join('; ')}; ` +
    `${forbidden ? `**${int(forbidden)} answers 403**` : 'no answer 403'}; ` +
    `${f.reconciles ? `${int(f.reconciles.count)} reconciles, ${s2(f.reconciles.reconcileSeconds * 1000)} in them and ${s2(f.reconciles.queueSeconds * 1000)} queued (summed); ` : ''}` +
    `RSS after a GC ${mib(f.afterGc.rssKiB)} (${mib(f.memStart.rssKiB)} before any RemoteSync).`
  );
}

/** The reading lines of the fleets (section (b)): each begins `- Fleet of`, `- Idle at`, `- RSS per idle cluster` or `- Restart with`. */
function fleetReading(fleet: FleetRun[], m: { perCluster: number; small?: FleetRun; large?: FleetRun }, beforeBuild?: string): string[] {
  const lines: string[] = [];
  for (const f of fleet) lines.push(fleetLine(f, `- Fleet of ${int(f.n)}`));
  for (const f of fleet) if (f.before) lines.push(fleetLine(f.before, `- Fleet of ${int(f.n)} before this change (${beforeBuild ?? 'BEFORE_REF'}; measured just before, same run)`));
  const before = perClusterOf(fleet.flatMap((f) => (f.before ? [f.before] : [])));
  if (!Number.isNaN(before.perCluster)) lines.push(`- Fleet of ${int(before.large?.n ?? NaN)} before this change: RSS per idle cluster ${before.perCluster.toFixed(0)} KiB after a GC.`);
  for (const f of fleet) {
    if (!f.longIdle) continue;
    const li = f.longIdle;
    const total = FLEET_SERVERS.reduce((a, srv) => a + (li.perServer[srv]?.total ?? 0), 0);
    lines.push(
      `- Idle at ${int(f.n)} over ${s2(li.windowMs)}: ${(total / (li.windowMs / 1000)).toFixed(2)} requests per second to the two servers together (${FLEET_SERVERS.map((srv) => `${srv}: ${methods(li.perServer[srv]?.byMethod ?? {}) || 'no request'}`).join('; ')}); watch restarts in the log: ${counts(li.restarts)}.`,
    );
  }
  if (!Number.isNaN(m.perCluster)) {
    lines.push(
      `- RSS per idle cluster: ${m.perCluster.toFixed(0)} KiB after a GC (${m.perCluster < 1024 ? 'under' : '**over**'} the 1 MiB target); connections per identity at ${int(m.large?.n ?? NaN)}: ` +
        `${(FLEET_SERVERS.reduce((a, s) => a + (m.large?.perServer[s]?.connectionsIdle ?? NaN), 0) / (m.large?.n ?? NaN)).toFixed(2)}.`,
    );
  }
  for (const f of fleet) {
    const rec = f.recovery;
    if (!rec) continue;
    lines.push(
      `- Restart with ${int(rec.syncs)} RemoteSyncs on the server (fleet of ${int(f.n)}, down ${s2(rec.downMs)}): ClusterUnreachable for all of them ${s2(rec.verdictMs)} after the stop (half ${s2(rec.verdictHalfMs ?? NaN)})` +
        `${rec.verdictReasons?.['False/ApplyFailed'] ? `, **${rec.verdictReasons['False/ApplyFailed']} of them said ApplyFailed first** (their applies met connection refused before the cluster was known to be down; ApplyFailed is retried after 30 s)` : ''}; ` +
        `after \`up\` was called (its /readyz after ${s2(rec.upMs)}) every identity was reachable in ${s2(rec.reachableMs)} (the median one in ${s2(rec.reachableHalfMs ?? NaN)}) and every RemoteSync Ready with its new generation in ${s2(rec.readyMs)}` +
        `${rec.reasons['False/ApplyFailed'] ? ` (${rec.reasons['False/ApplyFailed']} ApplyFailed on the way)` : ''}; ${rec.othersDisturbed ? `**${rec.othersDisturbed} RemoteSyncs of the other server went not Ready**` : "none of the other server's RemoteSyncs went not Ready"}.`,
    );
  }
  return lines;
}

/** The fleet measured alone (REMOTE_PARTS=fleet): its section (b) and its reading lines replace theirs in the report; the rest stays. */
function writeFleetReport(r: ReportInput): void {
  const old = readFileSync(OUT, 'utf8');
  const b = old.indexOf('### (b) ');
  const c = old.indexOf('### (c) ');
  if (b < 0 || c < b) throw new Error(`${OUT} has no section (b) before (c): run all parts`);
  const measured = `\nMeasured apart from the rest of this report (\`REMOTE_PARTS=fleet\`) on ${r.date}, the 1-minute load average ${median(r.load).toFixed(1)} (median); the operator ${r.build}.\n`;
  const fleet = [...r.fleet].sort((x, y) => x.n - y.n);
  const section = fleetSection(r, measured);
  const fleetLine = /^- (Fleet of|Idle at|RSS per idle cluster|Restart with)\b/;
  const rest = `${old.slice(0, b)}${section}\n\n${old.slice(c)}`.split('\n');
  const at = rest.findIndex((l) => fleetLine.test(l));
  const kept = rest.filter((l) => !fleetLine.test(l));
  const reading = fleetReading(fleet, perClusterOf(fleet), r.beforeBuild);
  kept.splice(at < 0 ? kept.length : at, 0, ...reading);
  writeFileSync(OUT, kept.join('\n'));
  console.log(`\n${section}\n\n${reading.join('\n')}`);
}

/** `REPORT_FROM=<results.json>`: only writes the report again from a run's saved figures. */
async function entry(): Promise<void> {
  const from = process.env.REPORT_FROM;
  if (!from) return main();
  const input = JSON.parse(readFileSync(from, 'utf8')) as ReportInput;
  if (input.fanout.length && input.latencies) writeReport(input);
  else writeFleetReport(input);
}

// Exits explicitly: after a failure, a watch may still be open.
entry().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
