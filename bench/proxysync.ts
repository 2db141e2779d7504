// ProxySync (a Sync kept inside a remote cluster, its status mirrored back by
// the cluster's shared watch of Syncs: src/controllers/proxysync.ts) through
// real `syncprims run` processes, one per cluster, each figure next to a
// baseline. On dedicated clusters of a control plane of the benchmark's own
// (.local/bench-proxysync-plane, its own etcd and API servers on free ports: a test run that
// started the shared one in .local takes it down when it ends, with every
// cluster added to it meanwhile), started here and taken down at the end: the
// managing cluster `bench-psync-mgmt` (its operator keeps the
// ProxySyncs) and the edge clusters `bench-psync-a` and `bench-psync-b`, each with its own operator applying the Syncs kept there. Everything
// lives in one namespace, of the same name in the three clusters; each
// operator watches only that namespace. The ProxySyncs name their cluster with
// `clusterRef` (the Secret `<cluster>-kubeconfig` in mgmt: the edge's admin
// kubeconfig, client certificate inline).
//
// (a) Status reflection latency. ProxySync `reflect` keeps a Sync in edge A
//     (one ConfigMap). Once it is Ready, A's operator is stopped, and the
//     benchmark writes the remote Sync's status itself, REFLECT_WRITES (50)
//     times one after another (a merge PATCH of the status subresource), in a
//     cycle of three kinds: the Ready condition's message changed; Ready's
//     status flipped (True/Succeeded <-> False/HealthCheckFailed) with a new
//     message; `lastAttemptedRevision` changed. Each write is timed from the
//     PATCH's response to a watch on the ProxySyncs of mgmt delivering
//     `reflect` with that change mirrored (its own watch: no polling). Next to
//     it, the floor: the benchmark's own watch on A's Syncs delivering the
//     same change (what any watcher of the edge sees, with no operator in
//     between), and as the baseline column the peers' polling of the remote
//     status: 30 s (the figure issue 11 quotes for Open Cluster Management),
//     20 s (this project's earlier design) and 10 s (the default of OCM's work
//     agent `--status-sync-interval` in its source). With a change at a
//     uniformly random moment of the interval I, the latency is uniform on
//     [0, I]: median I/2, p90 0.9·I, worst I (the polling request itself not
//     counted). Then A's operator starts again and the benchmark looks
//     whether (and when) the ProxySync shows A's own status again instead of
//     the benchmark's last write.
// (b) A rollout of 2 waves over 2 clusters. ProxySync `wave1` keeps a Sync in
//     A, `wave2` one in B with `dependsOn: [{kind: ProxySync, name: wave1}]`,
//     each ROLLOUT_OBJECTS (20) ConfigMaps inline. A round changes the template
//     of both (a new value in every ConfigMap; two merge PATCHes, wave 1's
//     first) and is timed from the first PATCH to the last ProxySync Ready for
//     its new generation (status.observedGeneration and Ready's
//     observedGeneration equal to the generation, Ready=True; checked
//     afterwards: its lastAppliedRevision equals the remote Sync's, the
//     remote Sync observed its generation, and the 2 × ROLLOUT_OBJECTS
//     ConfigMaps in A and B carry the new value). The steps are timed from
//     the benchmark's watches on A's and B's Syncs and mgmt's ProxySyncs:
//     write → wave 1's remote Sync updated → Ready there → wave 1 Ready in
//     mgmt → wave 2's remote Sync updated (the dependency hand-off) → Ready
//     there → wave 2 Ready in mgmt. Baselines, the same two waves done by the
//     benchmark itself: "the bench as hub", a Sync in A (`direct-wave1`) and
//     one in B (`direct-wave2`) of the same content (other names) written
//     directly with a merge PATCH, A's first, waited on by a watch on A until
//     Ready for its new generation, then B's (the same edge operators, no
//     managing cluster in between); and "bare apply", the ConfigMaps
//     themselves applied with server-side apply by a bare KubeClient, 16 in
//     flight, to A and then to B (no operator at all: the floor of the
//     writes). ROLLOUT_ROUNDS (10) rounds, every other one in the reverse
//     order of the three. Besides: the CPU of the six processes (three
//     operators, three kube-apiservers) per round, the edges' `reconciled`
//     lines (`--log-level debug`), the edges' Syncs' stored size, and the
//     hub's requests to the edges. Also computed, not measured: the direct
//     rollout plus a status poll per wave (I/2 per wave on average, I at
//     worst), what a hub that polls the edges' status every I would add.
//
// Run it with `bench/run.sh proxysync` (from the repository root), or
// `npx tsc -p tsconfig.bench.json && node --expose-gc .local/bench-dist/bench/proxysync.js`.
// The operator is compiled from the committed HEAD into
// .local/bench-proxysync-operator. It prints figures and writes
// docs/benchmarks/proxysync.md (and every figure to
// .local/bench-proxysync-results.json; `REPORT_FROM=<that file>` writes the
// report again without measuring); it asserts nothing about them.
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { API_VERSION, GROUP, KIND_NAMES, VERSION } from '../src/api/kinds.js';
import { mapLimit } from '../src/apply/map-limit.js';
import { KubeClient } from '../src/kube/client.js';
import { loadKubeConfigFile } from '../src/kube/config.js';
import { collectionPath, type KubeObject, type ResourceInfo } from '../src/kube/resources.js';
import {
  buildOperator,
  controlplane,
  type ControlPlaneDir,
  createNamespace,
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
  until,
  withTimeout,
  type Condition,
} from './support.js';
import { CollectionWatch } from './collection-watch.js';

const PREFIX = 'bench-psync';
const MGMT = `${PREFIX}-mgmt`;
const EDGE_A = `${PREFIX}-a`;
const EDGE_B = `${PREFIX}-b`;
const CLUSTERS = [MGMT, EDGE_A, EDGE_B];
/** The benchmark's own control plane: its own directory and etcd. */
const PLANE: ControlPlaneDir = { dir: path.join(LOCAL, 'bench-proxysync-plane'), etcdPort: Number(process.env.ETCD_PORT ?? 0) };
const cp = (args: string[]): Promise<string> => controlplane(args, PLANE);
const kubeconfigFile = (cluster: string): string => path.join(PLANE.dir, `${cluster}.kubeconfig`);
const OPERATOR_DIR = path.join(LOCAL, 'bench-proxysync-operator');
const MAIN = path.join(OPERATOR_DIR, 'dist', 'cli', 'main.js');
const target = (cluster: string): OperatorTarget => ({ main: MAIN, kubeconfig: kubeconfigFile(cluster), log: path.join(LOCAL, `bench-proxysync-${cluster}-operator.log`) });
const OUT = path.join(ROOT, 'docs', 'benchmarks', 'proxysync.md');
const RESULTS = path.join(LOCAL, 'bench-proxysync-results.json');

const REFLECT_WRITES = Number(process.env.REFLECT_WRITES ?? 50);
/** Pause between two status writes, after the previous one was mirrored. */
const REFLECT_GAP_MS = Number(process.env.REFLECT_GAP_MS ?? 250);
const ROLLOUT_OBJECTS = Number(process.env.ROLLOUT_OBJECTS ?? 20);
const ROLLOUT_ROUNDS = Number(process.env.ROLLOUT_ROUNDS ?? 10);
/**
 * The peers' status polling intervals (the baseline of (a)): the 30 s that issue 11 quotes for Open Cluster
 * Management's status sync, the 20 s of this project's earlier design, and the 10 s default of OCM's work agent
 * `--status-sync-interval` (open-cluster-management-io/ocm, pkg/work/spoke/options.go).
 */
const POLLS = [
  { name: "Open Cluster Management's status sync, as issue 11 quotes it", ms: 30_000 },
  { name: "this project's earlier design", ms: 20_000 },
  { name: "OCM's work agent, `--status-sync-interval` default in its source", ms: 10_000 },
];
const BARE_CONCURRENCY = 16;
const CLUSTER_ID = PREFIX;
const BENCH_UA = 'syncprims-bench/proxysync';
const FIELD_MANAGER = 'bench-proxysync';
const WAIT_MS = 120_000;
const LABEL_PART_OF = 'app.kubernetes.io/part-of';

const PROXYSYNCS: ResourceInfo = { group: GROUP, version: VERSION, kind: 'ProxySync', resource: KIND_NAMES.ProxySync.plural, namespaced: true };
const psPath = (ns: string, name = ''): string => `${collectionPath(PROXYSYNCS, ns)}${name ? `/${name}` : ''}`;
const syncPath = (ns: string, name = ''): string => `${collectionPath(SYNCS, ns)}${name ? `/${name}` : ''}`;
const cmPath = (ns: string, name = ''): string => `/api/v1/namespaces/${ns}/configmaps${name ? `/${name}` : ''}`;

// ---------------------------------------------------------------- objects

/** `n` ConfigMaps `<prefix>-<k>` holding `value` (about 200 B each), in `namespace` if given. */
function configMaps(n: number, prefix: string, value: string, namespace?: string): KubeObject[] {
  return Array.from({ length: n }, (_, k) => ({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: `${prefix}-${String(k).padStart(3, '0')}`, ...(namespace ? { namespace } : {}), labels: { [LABEL_PART_OF]: PREFIX } },
    data: { index: String(k), value, 'settings.yaml': `replicas: ${k % 5}\nlevel: info\nowner: team-${k % 17}\nnote: ${'x'.repeat(64)}\n` },
  }));
}

const syncSpec = (namespace: string, objects: KubeObject[]): Record<string, unknown> => ({ defaultNamespace: namespace, source: { inline: objects } });

function proxySync(namespace: string, name: string, cluster: string, objects: KubeObject[], dependsOn?: string): KubeObject {
  return {
    apiVersion: API_VERSION,
    kind: 'ProxySync',
    metadata: { name, namespace },
    spec: {
      clusterRef: { name: cluster },
      ...(dependsOn ? { dependsOn: [{ kind: 'ProxySync', name: dependsOn }] } : {}),
      template: { spec: syncSpec(namespace, objects) },
    },
  };
}

const secretObject = (name: string, kubeconfig: string): KubeObject =>
  ({ apiVersion: 'v1', kind: 'Secret', metadata: { name }, data: { value: Buffer.from(kubeconfig).toString('base64') } }) as KubeObject;

const readyOf = (o: KubeObject): Condition | undefined => statusOf(o).conditions?.find((c) => c.type === 'Ready');
const observedGeneration = (o: KubeObject): number | undefined => (o.status as { observedGeneration?: number } | undefined)?.observedGeneration;

/** Ready=True for generation `gen` (the object's own when not given), observed as such. */
function readyFor(o: KubeObject, gen = o.metadata.generation): boolean {
  const ready = readyOf(o);
  return o.metadata.generation === gen && observedGeneration(o) === gen && ready?.status === 'True' && ready.observedGeneration === gen;
}

/** A Sync Ready for `gen` with its revision applied (lastAppliedRevision == lastAttemptedRevision). */
const syncApplied = (o: KubeObject, gen = o.metadata.generation): boolean =>
  readyFor(o, gen) && statusOf(o).lastAppliedRevision !== undefined && statusOf(o).lastAppliedRevision === statusOf(o).lastAttemptedRevision;

/** A ProxySync Ready for `gen`, mirroring a remote Sync that observed its own generation and has a revision applied. */
function proxyReadyFor(o: KubeObject, gen = o.metadata.generation): boolean {
  const remote = (o.status as { remote?: { observedGeneration?: number } } | undefined)?.remote;
  return readyFor(o, gen) && remote?.observedGeneration !== undefined && statusOf(o).lastAppliedRevision !== undefined;
}

// ---------------------------------------------------------------- the operators' logs and metrics

/** The operator's warn and error lines since `epoch`, counted by message (and reason). */
function warnings(op: OperatorProcess | undefined, epoch: number): Record<string, number> {
  const out: Record<string, number> = {};
  for (const l of op?.logsSince(epoch) ?? []) {
    const level = String(l.fields.level);
    if (level !== 'warn' && level !== 'error' && level !== 'fatal') continue;
    const reason = typeof l.fields.reason === 'string' ? ` (${l.fields.reason})` : '';
    const err = typeof l.fields.err === 'string' ? `: ${l.fields.err.slice(0, 160)}` : typeof l.fields.error === 'string' ? `: ${l.fields.error.slice(0, 160)}` : '';
    const key = `${level}: ${l.msg}${reason}${err}`;
    out[key] = (out[key] ?? 0) + 1;
  }
  return out;
}

/** `syncprims_cluster_requests_total` as `cluster|method|code` → count. */
async function requestCounts(op: OperatorProcess): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const m of (await op.metrics()).matchAll(/^syncprims_cluster_requests_total\{([^}]*)\} (\S+)$/gm)) {
    const labels = Object.fromEntries([...(m[1] ?? '').matchAll(/(\w+)="([^"]*)"/g)].map((x) => [x[1], x[2]]));
    out[`${labels.cluster}|${labels.method}|${labels.code}`] = Number(m[2]);
  }
  return out;
}

/** The hub's label of an edge cluster: its kubeconfig Secret, `<namespace>/<cluster>-kubeconfig`. */
const clusterLabel = (namespace: string, cluster: string): string => `${namespace}/${cluster}-kubeconfig`;

/** The change between two scrapes, of the cluster labelled `label`, by method. */
function requestsTo(before: Record<string, number>, after: Record<string, number>, label: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [key, v] of Object.entries(after)) {
    const [l = '', method = ''] = key.split('|');
    const d = v - (before[key] ?? 0);
    if (d && l === label) out[method] = (out[method] ?? 0) + d;
  }
  return out;
}

// ---------------------------------------------------------------- the bench's clusters

interface Env {
  namespace: string;
  mgmt: KubeClient;
  a: KubeClient;
  b: KubeClient;
  hub: OperatorProcess;
  edgeA: OperatorProcess | undefined;
  edgeB: OperatorProcess;
  /** The extra arguments of each operator. */
  hubArgs: string[];
  edgeArgs: string[];
  proxies: CollectionWatch;
  syncsA: CollectionWatch;
  syncsB: CollectionWatch;
}

// ---------------------------------------------------------------- (a) status reflection

type WriteKind = 'message' | 'status' | 'revision';
const WRITE_KINDS: WriteKind[] = ['message', 'status', 'revision'];

interface ReflectWrite {
  k: number;
  kind: WriteKind;
  /** The PATCH, sent → answered. */
  patchMs: number;
  /** The PATCH's response → the ProxySync in mgmt showing the change (a watch on mgmt's ProxySyncs). */
  mirroredMs: number;
  /** The PATCH's response → the benchmark's own watch on A's Syncs delivering the change (the floor). */
  floorMs: number;
}

interface Reflection {
  writes: ReflectWrite[];
  /** Writes not mirrored within WAIT_MS. */
  missed: number;
  /** The hub's reconciles of `reflect` meanwhile: how many, their causes, their durations (ms, from its `reconciled` lines). */
  reconciles: number;
  causes: Record<string, number>;
  reconcileMs: number[];
  /** The hub's requests to A meanwhile, by method (its metrics). */
  hubRequestsToA: Record<string, number>;
  /** The hub's CPU meanwhile. */
  hubCpuMs: number;
  /** Restarts of the benchmark's watches meanwhile. */
  watchRestarts: number;
  warnings: Record<string, number>;
  /**
   * After A's operator started again: whether (and when, from its start) the ProxySync showed a status of A's
   * operator again instead of the benchmark's last write, and what it showed after AFTER_RESTART_MS.
   */
  afterRestart?: { ms: number; ready?: Condition; lastAttemptedRevision?: string; lastAppliedRevision?: string };
}

/** How long, after A's operator starts again, the benchmark looks whether it rewrites the status the benchmark wrote. */
const AFTER_RESTART_MS = 20_000;

async function reflection(env: Env): Promise<Reflection> {
  const { namespace, a, proxies, syncsA } = env;
  console.log(`(a) stopping ${EDGE_A}'s operator; ${REFLECT_WRITES} writes of the remote Sync's status...`);
  await env.edgeA?.stop();
  env.edgeA = undefined;
  // What the setup left in flight (the last status writes of A's operator) settles first.
  await sleep(1_000);
  const name = 'reflect';
  const statusPath = `${syncPath(namespace, name)}/status`;
  const writes: ReflectWrite[] = [];
  let missed = 0;
  const epoch = Date.now();
  const before = await requestCounts(env.hub);
  const cpu = processCpuMs(env.hub.pid);
  const restarts = proxies.restarts + syncsA.restarts;
  let readyStatus = readyOf((await a.request<KubeObject>({ path: syncPath(namespace, name) })))?.status ?? 'True';
  for (let k = 0; k < REFLECT_WRITES; k++) {
    const kind = WRITE_KINDS[k % WRITE_KINDS.length]!;
    const live = await a.request<KubeObject>({ path: syncPath(namespace, name) });
    const message = `written by the benchmark, write ${k}`;
    let body: Record<string, unknown>;
    let test: (o: KubeObject) => boolean;
    if (kind === 'revision') {
      const revision = `bench-revision-${k}`;
      body = { status: { lastAttemptedRevision: revision } };
      test = (o) => statusOf(o).lastAttemptedRevision === revision;
    } else {
      if (kind === 'status') readyStatus = readyStatus === 'True' ? 'False' : 'True';
      const want = readyStatus;
      const conditions = (statusOf(live).conditions ?? []).map((c) =>
        c.type === 'Ready'
          ? { ...c, status: want, reason: want === 'True' ? 'Succeeded' : 'HealthCheckFailed', message, ...(kind === 'status' ? { lastTransitionTime: new Date().toISOString() } : {}) }
          : c,
      );
      body = { status: { conditions } };
      test = (o) => readyOf(o)?.message === message && readyOf(o)?.status === want;
    }
    const mirrored = proxies.next(name, test);
    const floor = syncsA.next(name, test);
    const t0 = performance.now();
    await a.request({ method: 'PATCH', path: statusPath, contentType: 'application/merge-patch+json', body });
    const answered = performance.now();
    let mirroredMs = NaN;
    let floorMs = NaN;
    try {
      const [m, f] = await withTimeout(`write ${k} (${kind}) mirrored`, Promise.all([mirrored.seen, floor.seen]), WAIT_MS);
      mirroredMs = m.at - answered;
      floorMs = f.at - answered;
    } catch (err) {
      missed++;
      console.error(`  ${String(err)}; the ProxySync's status: ${JSON.stringify(proxies.latestOf(name)?.object.status ?? null)}`);
    } finally {
      mirrored.cancel();
      floor.cancel();
    }
    writes.push({ k, kind, patchMs: answered - t0, mirroredMs, floorMs });
    if (k % 10 === 9) console.log(`  ${k + 1} writes; mirrored so far: median ${ms(median(writes.map((w) => w.mirroredMs)))}, worst ${ms(max(writes.map((w) => w.mirroredMs)))}`);
    await sleep(REFLECT_GAP_MS);
  }
  const hubCpuMs = processCpuMs(env.hub.pid) - cpu;
  const hubRequestsToA = requestsTo(before, await requestCounts(env.hub), clusterLabel(namespace, EDGE_A));
  // The hub's `reconciled` lines trail its status writes: give them a moment.
  await sleep(1_000);
  const lines = env.hub.logsSince(epoch).filter((l) => l.msg === 'reconciled' && l.fields.kind === 'ProxySync' && l.fields.name === name);
  const causes: Record<string, number> = {};
  for (const l of lines) for (const c of (l.fields.causes as string[] | undefined) ?? []) causes[c.replaceAll(namespace, '<ns>')] = (causes[c.replaceAll(namespace, '<ns>')] ?? 0) + 1;
  const result: Reflection = {
    writes,
    missed,
    reconciles: lines.length,
    causes,
    reconcileMs: lines.map((l) => Number(l.fields.ms)),
    hubRequestsToA,
    hubCpuMs,
    watchRestarts: proxies.restarts + syncsA.restarts - restarts,
    warnings: warnings(env.hub, epoch),
  };
  printReflection(result);
  console.log(`  starting ${EDGE_A}'s operator again...`);
  const restarted = performance.now();
  env.edgeA = await OperatorProcess.start(target(EDGE_A), namespace, env.edgeArgs);
  const own = (o: KubeObject): boolean => !(readyOf(o)?.message ?? '').startsWith('written by the benchmark') && !(statusOf(o).lastAttemptedRevision ?? '').startsWith('bench-revision-');
  let ownMs = NaN;
  await proxies.until(name, own, 'reflect to show A\'s own status again', AFTER_RESTART_MS).then(
    () => (ownMs = performance.now() - restarted),
    () => undefined,
  );
  const seen = proxies.latestOf(name)?.object;
  result.afterRestart = { ms: ownMs, ready: seen && readyOf(seen), lastAttemptedRevision: seen && statusOf(seen).lastAttemptedRevision, lastAppliedRevision: seen && statusOf(seen).lastAppliedRevision };
  console.log(`  after the restart: ${Number.isNaN(ownMs) ? `still the benchmark's status after ${AFTER_RESTART_MS / 1000} s` : `A's own status in ${ms(ownMs)}`}: ${JSON.stringify(result.afterRestart)}`);
  return result;
}

// ---------------------------------------------------------------- (b) a rollout of 2 waves

type Applier = 'proxysync' | 'direct' | 'bare';
const APPLIER_LABEL: Record<Applier, string> = {
  proxysync: 'ProxySyncs (wave 2 `dependsOn` wave 1)',
  direct: 'the bench as hub: Sync in A, watch to Ready, then Sync in B',
  bare: `bare apply: ${ROLLOUT_OBJECTS} ConfigMaps to A, then ${ROLLOUT_OBJECTS} to B (${BARE_CONCURRENCY} in flight)`,
};

interface Steps {
  /** Each from the first write (ms): wave 1's write (its PATCH) answered. */
  w1Written: number;
  /** … wave 1's remote Sync updated (new generation seen by the watch on A). */
  w1RemoteUpdated: number;
  /** … Ready there for that generation. */
  w1RemoteReady: number;
  /** … wave 1 Ready in mgmt. */
  w1Ready: number;
  w2Written: number;
  w2RemoteUpdated: number;
  w2RemoteReady: number;
  w2Ready: number;
}

interface RolloutRun {
  applier: Applier;
  round: number;
  order: number;
  load: number;
  /** First write → the last wave done. */
  ms: number;
  /** The writes of the two templates (proxysync), or of wave 1's object(s). */
  writeMs: number;
  steps?: Partial<Steps>;
  /** CPU (utime + stime, ms) over the round, of each operator (`op:<cluster>`) and each kube-apiserver (`api:<cluster>`). */
  cpuMs?: Record<string, number>;
  /** Checked afterwards: revisions match, and every ConfigMap in A and B has the new value. */
  verified: boolean;
  verifyNote?: string;
  error?: string;
}

interface Rollout {
  initialMs: number;
  runs: RolloutRun[];
  warnings: Record<string, Record<string, number>>;
  hubRequests: Record<string, Record<string, number>>;
  watchRestarts: number;
  /** The edges' reconciles of each Sync over the rounds (their `reconciled` lines): count, and the durations (ms) of those woken by the Sync's change (`updated Sync`: the applies). */
  edgeReconciles?: Record<string, { count: number; ms: number[] }>;
  /** The edges' Syncs as stored at the end (JSON bytes, and of those their managedFields). */
  syncBytes?: Record<string, { total: number; managedFields: number }>;
}

const W1_OBJECTS = 'w1';
const W2_OBJECTS = 'w2';

/** Counts the ConfigMaps `<prefix>-*` in `client`'s namespace holding `value`. */
async function countValue(client: KubeClient, namespace: string, prefix: string, value: string): Promise<number> {
  const list = await client.request<{ items: (KubeObject & { data?: Record<string, string> })[] }>({ path: cmPath(namespace), query: { labelSelector: `${LABEL_PART_OF}=${PREFIX}` } });
  return list.items.filter((c) => (c.metadata.name ?? '').startsWith(`${prefix}-`) && c.data?.value === value).length;
}

async function rolloutProxySync(env: Env, value: string): Promise<Omit<RolloutRun, 'applier' | 'round' | 'order' | 'load'>> {
  const { namespace, mgmt, a, b, proxies, syncsA, syncsB } = env;
  const genA = syncsA.latestOf('wave1')?.object.metadata.generation ?? 0;
  const genB = syncsB.latestOf('wave2')?.object.metadata.generation ?? 0;
  const steps: Partial<Steps> = {};
  const t0 = performance.now();
  // The remote Syncs' steps, from the benchmark's own watches on A and B (their new generation, then Ready for it).
  const remoteSteps = (watch: CollectionWatch, name: string, gen: number, updated: keyof Steps, ready: keyof Steps): Promise<void> => {
    const up = watch.next(name, (o) => (o.metadata.generation ?? 0) > gen);
    const done = watch.next(name, (o) => (o.metadata.generation ?? 0) > gen && syncApplied(o));
    void up.seen.then((s) => (steps[updated] = s.at - t0));
    void done.seen.then((s) => (steps[ready] = s.at - t0));
    return withTimeout(`${name} Ready in its cluster`, done.seen, WAIT_MS).then(
      () => up.cancel(),
      (err: unknown) => {
        up.cancel();
        done.cancel();
        throw err;
      },
    );
  };
  const remoteA = remoteSteps(syncsA, 'wave1', genA, 'w1RemoteUpdated', 'w1RemoteReady');
  const remoteB = remoteSteps(syncsB, 'wave2', genB, 'w2RemoteUpdated', 'w2RemoteReady');
  const patch = (name: string, prefix: string): Promise<KubeObject> =>
    mgmt.request<KubeObject>({
      method: 'PATCH',
      path: psPath(namespace, name),
      contentType: 'application/merge-patch+json',
      body: { spec: { template: { spec: { source: { inline: configMaps(ROLLOUT_OBJECTS, prefix, value) } } } } },
    });
  const w1 = await patch('wave1', W1_OBJECTS);
  steps.w1Written = performance.now() - t0;
  const w2 = await patch('wave2', W2_OBJECTS);
  steps.w2Written = performance.now() - t0;
  const writeMs = performance.now() - t0;
  let error: string | undefined;
  const proxyDone = (name: string, gen: number | undefined, key: keyof Steps): Promise<void> =>
    proxies.until(name, (o) => proxyReadyFor(o, gen), `ProxySync ${name} Ready for generation ${gen}`, WAIT_MS).then(() => {
      // until() may return the latest object without a delivery time: the steps take the delivery.
      steps[key] ??= performance.now() - t0;
    });
  const w1Seen = proxies.next('wave1', (o) => proxyReadyFor(o, w1.metadata.generation));
  const w2Seen = proxies.next('wave2', (o) => proxyReadyFor(o, w2.metadata.generation));
  void w1Seen.seen.then((s) => (steps.w1Ready = s.at - t0));
  void w2Seen.seen.then((s) => (steps.w2Ready = s.at - t0));
  try {
    await Promise.all([proxyDone('wave1', w1.metadata.generation, 'w1Ready'), proxyDone('wave2', w2.metadata.generation, 'w2Ready'), remoteA, remoteB]);
  } catch (err) {
    error = String(err);
    console.error(`  ${error}`);
  } finally {
    w1Seen.cancel();
    w2Seen.cancel();
  }
  const msDone = Math.max(steps.w1Ready ?? NaN, steps.w2Ready ?? NaN);
  // Checked afterwards, off the clock.
  const notes: string[] = [];
  for (const [name, client, gen] of [
    ['wave1', a, w1.metadata.generation],
    ['wave2', b, w2.metadata.generation],
  ] as const) {
    const ps = await mgmt.request<KubeObject>({ path: psPath(namespace, name) });
    const remote = await client.request<KubeObject>({ path: syncPath(namespace, name) });
    const mirrored = (ps.status as { remote?: { observedGeneration?: number } } | undefined)?.remote?.observedGeneration;
    if (!proxyReadyFor(ps, gen)) notes.push(`${name} not Ready for generation ${gen}: ${JSON.stringify(readyOf(ps))}`);
    if (statusOf(ps).lastAppliedRevision !== statusOf(remote).lastAppliedRevision) notes.push(`${name}: lastAppliedRevision ${statusOf(ps).lastAppliedRevision} in mgmt, ${statusOf(remote).lastAppliedRevision} in its cluster`);
    if (mirrored !== remote.metadata.generation || observedGeneration(remote) !== remote.metadata.generation) notes.push(`${name}: remote generation ${remote.metadata.generation}, observed there ${observedGeneration(remote)}, mirrored ${mirrored}`);
  }
  const inA = await countValue(a, namespace, W1_OBJECTS, value);
  const inB = await countValue(b, namespace, W2_OBJECTS, value);
  if (inA !== ROLLOUT_OBJECTS || inB !== ROLLOUT_OBJECTS) notes.push(`ConfigMaps with the new value: ${inA} in A, ${inB} in B`);
  // The dependency: wave 2's remote Sync must not change before wave 1 is Ready in mgmt.
  if ((steps.w2RemoteUpdated ?? Infinity) < (steps.w1Ready ?? -Infinity)) notes.push(`wave 2's remote Sync was updated ${ms(steps.w2RemoteUpdated ?? NaN)} after the write, before wave 1 was Ready (${ms(steps.w1Ready ?? NaN)})`);
  return { ms: error ? NaN : msDone, writeMs, steps, verified: notes.length === 0 && !error, verifyNote: notes.join('; ') || undefined, error };
}

async function rolloutDirect(env: Env, value: string): Promise<Omit<RolloutRun, 'applier' | 'round' | 'order' | 'load'>> {
  const { namespace, a, b, syncsA, syncsB } = env;
  const steps: Partial<Steps> = {};
  const wave = async (client: KubeClient, watch: CollectionWatch, name: string, prefix: string, t0: number, written: 'w1Written' | 'w2Written'): Promise<number> => {
    const patched = await client.request<KubeObject>({
      method: 'PATCH',
      path: syncPath(namespace, name),
      contentType: 'application/merge-patch+json',
      body: { spec: { source: { inline: configMaps(ROLLOUT_OBJECTS, prefix, value) } } },
    });
    steps[written] = performance.now() - t0;
    const done = watch.next(name, (o) => syncApplied(o, patched.metadata.generation));
    try {
      const latest = watch.latestOf(name)?.object;
      if (latest && syncApplied(latest, patched.metadata.generation)) return performance.now() - t0;
      return (await withTimeout(`Sync ${name} Ready`, done.seen, WAIT_MS)).at - t0;
    } finally {
      done.cancel();
    }
  };
  const t0 = performance.now();
  let error: string | undefined;
  const writeMs = NaN;
  try {
    steps.w1RemoteReady = await wave(a, syncsA, 'direct-wave1', 'd1', t0, 'w1Written');
    steps.w2RemoteReady = await wave(b, syncsB, 'direct-wave2', 'd2', t0, 'w2Written');
  } catch (err) {
    error = String(err);
    console.error(`  ${error}`);
  }
  const inA = await countValue(a, namespace, 'd1', value);
  const inB = await countValue(b, namespace, 'd2', value);
  const note = inA !== ROLLOUT_OBJECTS || inB !== ROLLOUT_OBJECTS ? `ConfigMaps with the new value: ${inA} in A, ${inB} in B` : undefined;
  return { ms: error ? NaN : (steps.w2RemoteReady ?? NaN), writeMs, steps, verified: !note && !error, verifyNote: note, error };
}

async function rolloutBare(env: Env, value: string): Promise<Omit<RolloutRun, 'applier' | 'round' | 'order' | 'load'>> {
  const { namespace, a, b } = env;
  const apply = (client: KubeClient, prefix: string): Promise<unknown> =>
    mapLimit(configMaps(ROLLOUT_OBJECTS, prefix, value, namespace), BARE_CONCURRENCY, (obj) =>
      client.request({
        method: 'PATCH',
        path: cmPath(namespace, obj.metadata.name),
        query: { fieldManager: FIELD_MANAGER, force: true },
        contentType: 'application/apply-patch+yaml',
        body: obj,
      }),
    );
  const t0 = performance.now();
  await apply(a, 'b1');
  const wave1 = performance.now() - t0;
  await apply(b, 'b2');
  const msDone = performance.now() - t0;
  const inA = await countValue(a, namespace, 'b1', value);
  const inB = await countValue(b, namespace, 'b2', value);
  const note = inA !== ROLLOUT_OBJECTS || inB !== ROLLOUT_OBJECTS ? `ConfigMaps with the new value: ${inA} in A, ${inB} in B` : undefined;
  return { ms: msDone, writeMs: wave1, steps: { w1RemoteReady: wave1, w2RemoteReady: msDone }, verified: !note, verifyNote: note };
}

const apiserverPid = (cluster: string): number => Number(readFileSync(path.join(PLANE.dir, `${cluster}.pid`), 'utf8').trim());

/** CPU so far of the operators and the kube-apiservers (ms). */
function cpuNow(env: Env): Record<string, number> {
  return {
    [`op:${MGMT}`]: processCpuMs(env.hub.pid),
    [`op:${EDGE_A}`]: processCpuMs(env.edgeA?.pid),
    [`op:${EDGE_B}`]: processCpuMs(env.edgeB.pid),
    ...Object.fromEntries(CLUSTERS.map((c) => [`api:${c}`, processCpuMs(apiserverPid(c))])),
  };
}

function rolloutOrder(round: number): Applier[] {
  const appliers: Applier[] = ['proxysync', 'direct', 'bare'];
  return round % 2 ? appliers : appliers.reverse();
}

async function rollout(env: Env, initialMs: number): Promise<Rollout> {
  const epoch = Date.now();
  const restarts = env.proxies.restarts + env.syncsA.restarts + env.syncsB.restarts;
  const before = await requestCounts(env.hub);
  const runs: RolloutRun[] = [];
  for (let round = 1; round <= ROLLOUT_ROUNDS; round++) {
    for (const applier of rolloutOrder(round)) {
      console.log(`(b) round ${round} of ${ROLLOUT_ROUNDS}: ${APPLIER_LABEL[applier]}...`);
      const value = `round-${round}-${applier}`;
      const base = { applier, round, order: runs.length + 1, load: os.loadavg()[0] ?? NaN };
      const cpu = cpuNow(env);
      const r = applier === 'proxysync' ? await rolloutProxySync(env, value) : applier === 'direct' ? await rolloutDirect(env, value) : await rolloutBare(env, value);
      const cpuAfter = cpuNow(env);
      const run: RolloutRun = { ...base, ...r, cpuMs: Object.fromEntries(Object.entries(cpuAfter).map(([k, v]) => [k, v - (cpu[k] ?? NaN)])) };
      runs.push(run);
      console.log(`  ${s2(run.ms)}${run.steps ? ` (${stepsText(run.steps)})` : ''}${run.verified ? '' : `; NOT VERIFIED: ${run.verifyNote ?? run.error}`}`);
      await sleep(500);
    }
  }
  const after = await requestCounts(env.hub);
  await sleep(1_000);
  const edgeReconciles: Rollout['edgeReconciles'] = {};
  for (const [op, names] of [
    [env.edgeA, ['wave1', 'direct-wave1']],
    [env.edgeB, ['wave2', 'direct-wave2']],
  ] as const) {
    for (const name of names) {
      const lines = (op?.logsSince(epoch) ?? []).filter((l) => l.msg === 'reconciled' && l.fields.kind === 'Sync' && l.fields.name === name);
      const applies = lines.filter((l) => ((l.fields.causes as string[] | undefined) ?? []).includes('updated Sync'));
      edgeReconciles[name] = { count: lines.length, ms: applies.map((l) => Number(l.fields.ms)) };
    }
  }
  const syncBytes: Rollout['syncBytes'] = {};
  for (const [client, name] of [
    [env.a, 'wave1'],
    [env.a, 'direct-wave1'],
    [env.b, 'wave2'],
    [env.b, 'direct-wave2'],
  ] as const) {
    const o = await client.request<KubeObject>({ path: syncPath(env.namespace, name) });
    syncBytes[name] = { total: JSON.stringify(o).length, managedFields: JSON.stringify((o.metadata as { managedFields?: unknown }).managedFields ?? []).length };
  }
  return {
    edgeReconciles,
    syncBytes,
    initialMs,
    runs,
    warnings: { [MGMT]: warnings(env.hub, epoch), [EDGE_A]: warnings(env.edgeA, epoch), [EDGE_B]: warnings(env.edgeB, epoch) },
    hubRequests: { [EDGE_A]: requestsTo(before, after, clusterLabel(env.namespace, EDGE_A)), [EDGE_B]: requestsTo(before, after, clusterLabel(env.namespace, EDGE_B)) },
    watchRestarts: env.proxies.restarts + env.syncsA.restarts + env.syncsB.restarts - restarts,
  };
}

// ---------------------------------------------------------------- main

async function setUp(namespace: string, mgmt: KubeClient, a: KubeClient, b: KubeClient): Promise<{ env: Env; initialMs: number }> {
  for (const client of [a, b]) await client.request({ method: 'POST', path: '/api/v1/namespaces', body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } } });
  for (const c of [EDGE_A, EDGE_B]) {
    await mgmt.request({ method: 'POST', path: `/api/v1/namespaces/${namespace}/secrets`, body: secretObject(`${c}-kubeconfig`, readFileSync(kubeconfigFile(c), 'utf8')) });
  }
  const hubArgs = ['--cluster-id', CLUSTER_ID, '--log-level', 'debug'];
  // debug: their `reconciled` lines (duration and causes) are read for the report.
  const edgeArgs = ['--log-level', 'debug'];
  console.log('starting the three operators...');
  const [hub, edgeA, edgeB] = await Promise.all([
    OperatorProcess.start(target(MGMT), namespace, hubArgs),
    OperatorProcess.start(target(EDGE_A), namespace, edgeArgs),
    OperatorProcess.start(target(EDGE_B), namespace, edgeArgs),
  ]);
  const proxies = await CollectionWatch.open(mgmt, psPath(namespace));
  const syncsA = await CollectionWatch.open(a, syncPath(namespace));
  const syncsB = await CollectionWatch.open(b, syncPath(namespace));
  const env: Env = { namespace, mgmt, a, b, hub, edgeA, edgeB, hubArgs, edgeArgs, proxies, syncsA, syncsB };
  console.log('creating the ProxySyncs (reflect, wave1, wave2) and the direct Syncs...');
  const t0 = performance.now();
  await mgmt.request({ method: 'POST', path: psPath(namespace), body: proxySync(namespace, 'wave1', EDGE_A, configMaps(ROLLOUT_OBJECTS, W1_OBJECTS, 'v0')) });
  await mgmt.request({ method: 'POST', path: psPath(namespace), body: proxySync(namespace, 'wave2', EDGE_B, configMaps(ROLLOUT_OBJECTS, W2_OBJECTS, 'v0'), 'wave1') });
  await Promise.all(['wave1', 'wave2'].map((n) => proxies.until(n, (o) => proxyReadyFor(o), `ProxySync ${n} Ready`, WAIT_MS)));
  const initialMs = performance.now() - t0;
  console.log(`  the first rollout (creation): ${s2(initialMs)}`);
  await mgmt.request({ method: 'POST', path: psPath(namespace), body: proxySync(namespace, 'reflect', EDGE_A, configMaps(1, 'reflect', 'v0')) });
  await a.request({ method: 'POST', path: syncPath(namespace), body: { apiVersion: API_VERSION, kind: 'Sync', metadata: { name: 'direct-wave1' }, spec: syncSpec(namespace, configMaps(ROLLOUT_OBJECTS, 'd1', 'v0')) } });
  await b.request({ method: 'POST', path: syncPath(namespace), body: { apiVersion: API_VERSION, kind: 'Sync', metadata: { name: 'direct-wave2' }, spec: syncSpec(namespace, configMaps(ROLLOUT_OBJECTS, 'd2', 'v0')) } });
  await proxies.until('reflect', (o) => proxyReadyFor(o), 'ProxySync reflect Ready', WAIT_MS);
  await syncsA.until('direct-wave1', (o) => syncApplied(o), 'Sync direct-wave1 Ready', WAIT_MS);
  await syncsB.until('direct-wave2', (o) => syncApplied(o), 'Sync direct-wave2 Ready', WAIT_MS);
  return { env, initialMs };
}

async function main(): Promise<void> {
  const load = sampleLoad();
  const began = performance.now();
  const build = await buildOperator(OPERATOR_DIR);
  const clients: KubeClient[] = [];
  let env: Env | undefined;
  try {
    // A plane left by a run that was cut short goes first: every run starts from empty clusters.
    await cp(['down']).catch(() => undefined);
    rmSync(PLANE.dir, { recursive: true, force: true });
    console.log(`starting a control plane of its own in ${path.relative(ROOT, PLANE.dir)} (free ports): ${CLUSTERS.join(', ')}...`);
    await cp(['up', ...CLUSTERS.map((c) => `${c}:0`)]);
    const [mgmt, a, b] = await Promise.all(CLUSTERS.map((c) => KubeClient.create(c, loadKubeConfigFile(kubeconfigFile(c)), BENCH_UA)));
    clients.push(mgmt!, a!, b!);
    await Promise.all([installCrds(mgmt!), installCrds(a!), installCrds(b!)]);
    const namespace = await createNamespace(mgmt!, PREFIX);
    const set = await setUp(namespace, mgmt!, a!, b!);
    env = set.env;
    const reflect = await reflection(env);
    // A's operator was restarted: `reflect` goes back to its own status, and the rollout starts from Ready ProxySyncs.
    await until('wave1 and wave2 Ready', async () => ['wave1', 'wave2'].every((n) => proxyReadyFor(env!.proxies.latestOf(n)?.object ?? ({ metadata: {} } as KubeObject))), WAIT_MS);
    const roll = await rollout(env, set.initialMs);
    const input: ReportInput = {
      date: new Date().toISOString().slice(0, 10),
      kubernetes: await serverVersion(mgmt!),
      build,
      load: load.stop(),
      totalMs: performance.now() - began,
      reflection: reflect,
      rollout: roll,
      settings: { writes: REFLECT_WRITES, gapMs: REFLECT_GAP_MS, objects: ROLLOUT_OBJECTS, rounds: ROLLOUT_ROUNDS },
    };
    writeFileSync(RESULTS, JSON.stringify(input));
    writeReport(input);
  } finally {
    load.stop();
    env?.proxies.close();
    env?.syncsA.close();
    env?.syncsB.close();
    await stopOperators();
    for (const c of clients) c.close();
    console.log(`stopping the benchmark's control plane (${CLUSTERS.join(', ')})...`);
    await cp(['down']).catch((err: unknown) => console.error(String(err)));
    // Its logs stay (until the next run); its etcd data goes.
    rmSync(path.join(PLANE.dir, 'etcd'), { recursive: true, force: true });
    rmSync(OPERATOR_DIR, { recursive: true, force: true });
  }
}

// ---------------------------------------------------------------- printing and the report

/** Milliseconds, -0 shown as 0 (a delivery a fraction of a ms before the PATCH's response was read). */
const ms = (n: number): string => `${int(Math.round(n) || 0)} ms`;
const s2 = (n: number): string => `${(n / 1000).toFixed(2)} s`;
const finite = (xs: number[]): number[] => xs.filter((v) => Number.isFinite(v));
const max = (xs: number[]): number => (finite(xs).length ? Math.max(...finite(xs)) : NaN);
const min = (xs: number[]): number => (finite(xs).length ? Math.min(...finite(xs)) : NaN);
/** Nearest-rank quantile. */
function quantile(xs: number[], q: number): number {
  const sorted = finite(xs).sort((x, y) => x - y);
  return sorted[Math.max(0, Math.ceil(sorted.length * q) - 1)] ?? NaN;
}
const counts = (r: Record<string, number>): string =>
  Object.keys(r).length
    ? Object.entries(r)
        .sort(([, x], [, y]) => y - x)
        .map(([k, v]) => `${k} × ${int(v)}`)
        .join('; ')
    : 'none';

/** The hub's own part of a ProxySync round: its hop to A, the two reflections and the hand-off to B (ms). */
const hubPart = (s: Partial<Steps>): number =>
  (s.w1RemoteUpdated ?? NaN) - (s.w1Written ?? NaN) + ((s.w1Ready ?? NaN) - (s.w1RemoteReady ?? NaN)) + ((s.w2RemoteUpdated ?? NaN) - (s.w1Ready ?? NaN)) + ((s.w2Ready ?? NaN) - (s.w2RemoteReady ?? NaN));

function stepsText(s: Partial<Steps>): string {
  const f = (v: number | undefined): string => (v === undefined ? '–' : s2(v));
  return `wave 1: written ${f(s.w1Written)}, remote updated ${f(s.w1RemoteUpdated)}, remote Ready ${f(s.w1RemoteReady)}, Ready ${f(s.w1Ready)}; wave 2: written ${f(s.w2Written)}, remote updated ${f(s.w2RemoteUpdated)}, remote Ready ${f(s.w2RemoteReady)}, Ready ${f(s.w2Ready)}`;
}

function printReflection(r: Reflection): void {
  const m = r.writes.map((w) => w.mirroredMs);
  const f = r.writes.map((w) => w.floorMs);
  console.log(
    `  mirrored in mgmt: median ${ms(median(m))}, p90 ${ms(quantile(m, 0.9))}, worst ${ms(max(m))}; the edge's own watch: median ${ms(median(f))}, worst ${ms(max(f))}; ` +
      `missed ${r.missed}; hub reconciles ${r.reconciles} (${counts(r.causes)}), median ${ms(median(r.reconcileMs))}; hub requests to A ${JSON.stringify(r.hubRequestsToA)}; warnings ${JSON.stringify(r.warnings)}`,
  );
}

interface ReportInput {
  date: string;
  kubernetes: string;
  build: string;
  load: number[];
  totalMs: number;
  reflection: Reflection;
  rollout: Rollout;
  settings: { writes: number; gapMs: number; objects: number; rounds: number };
}

function reflectionTable(r: Reflection): string {
  const row = (what: string, xs: number[]): string => `| ${what} | ${ms(median(xs))} | ${ms(quantile(xs, 0.9))} | ${ms(max(xs))} | ${finite(xs).length} |`;
  const lines = [
    '| from the PATCH of the remote Sync\'s status (its response) to … | median | p90 | worst | writes |',
    '|---|---:|---:|---:|---:|',
    row('**the ProxySync in mgmt showing it** (a watch on mgmt\'s ProxySyncs)', r.writes.map((w) => w.mirroredMs)),
    ...WRITE_KINDS.map((k) => row(`  of which: ${KIND_LABEL[k]}`, r.writes.filter((w) => w.kind === k).map((w) => w.mirroredMs))),
    row('floor: the edge\'s Sync itself, seen by the benchmark\'s own watch on A', r.writes.map((w) => w.floorMs)),
    ...POLLS.map((p) => `| baseline, status polled every ${p.ms / 1000} s (${p.name}) | ${ms(p.ms / 2)} | ${ms(0.9 * p.ms)} | ${ms(p.ms)} | computed |`),
  ];
  return lines.join('\n');
}

const KIND_LABEL: Record<WriteKind, string> = {
  message: "Ready's message changed",
  status: "Ready's status flipped",
  revision: '`lastAttemptedRevision` changed',
};

function rolloutTable(r: Rollout): string {
  const rounds = Math.max(...r.runs.map((x) => x.round));
  const row = (a: Applier): string => {
    const runs = r.runs.filter((x) => x.applier === a).sort((x, y) => x.round - y.round);
    const v = runs.map((x) => x.ms);
    const bad = runs.filter((x) => !x.verified).length;
    return `| ${APPLIER_LABEL[a]} | **${s2(median(v))}** | ${s2(min(v))} | ${s2(max(v))} | ${runs.map((x) => s2(x.ms)).join(', ')} | ${bad ? `**${bad} of ${runs.length} not verified**` : `all ${runs.length}`} |`;
  };
  const direct = median(r.runs.filter((x) => x.applier === 'direct').map((x) => x.ms));
  const polled = POLLS.map(
    (p) => `| computed: the bench-as-hub median + a status poll of ${p.ms / 1000} s per wave (${p.name}) | ${s2(direct + p.ms)} mean | ${s2(direct)} | ${s2(direct + 2 * p.ms)} | – | – |`,
  );
  return [
    `| the two waves (${rounds} round${rounds > 1 ? 's' : ''}), first write → the last wave done | median | best | worst | each round | checked |`,
    '|---|---:|---:|---:|---|---|',
    row('proxysync'),
    row('direct'),
    row('bare'),
    ...polled,
  ].join('\n');
}

function cpuTable(r: Rollout): string {
  const keys = [...CLUSTERS.map((c) => `op:${c}`), ...CLUSTERS.map((c) => `api:${c}`)];
  const label = (k: string): string => (k.startsWith('op:') ? `operator of ${k.slice(3)}` : `kube-apiserver of ${k.slice(4)}`);
  const appliers: Applier[] = ['proxysync', 'direct', 'bare'];
  const cell = (a: Applier, k: string): string => ms(median(r.runs.filter((x) => x.applier === a).map((x) => x.cpuMs?.[k] ?? NaN)));
  return [
    `| CPU per round (median, utime + stime) | ${appliers.map((a) => (a === 'proxysync' ? 'ProxySyncs' : a === 'direct' ? 'bench as hub' : 'bare apply')).join(' | ')} |`,
    `|---|${appliers.map(() => '---:').join('|')}|`,
    ...keys.map((k) => `| ${label(k)} | ${appliers.map((a) => cell(a, k)).join(' | ')} |`),
  ].join('\n');
}

function stepsTable(r: Rollout): string {
  const d = (x: number | undefined, y: number | undefined): number => (x ?? NaN) - (y ?? NaN);
  const medOf = (a: Applier, f: (s: Partial<Steps>) => number | undefined): string => ms(median(r.runs.filter((x) => x.applier === a).map((x) => f(x.steps ?? {}) ?? NaN)));
  const med = (f: (s: Partial<Steps>) => number | undefined): string => medOf('proxysync', f);
  const dmed = (f: (s: Partial<Steps>) => number | undefined): string => medOf('direct', f);
  return [
    '| step (median over the rounds) | ms |',
    '|---|---:|',
    `| **ProxySyncs**: first write → wave 1's PATCH answered by mgmt | ${med((s) => s.w1Written)} |`,
    `| → wave 1's remote Sync updated in A (the hub's hop: its watch, reconcile, apply in A) | ${med((s) => d(s.w1RemoteUpdated, s.w1Written))} |`,
    `| → Ready in A (A's operator applies ${ROLLOUT_OBJECTS} ConfigMaps; the benchmark's watch on A) | ${med((s) => d(s.w1RemoteReady, s.w1RemoteUpdated))} |`,
    `| → wave 1 Ready in mgmt (reflection) | ${med((s) => d(s.w1Ready, s.w1RemoteReady))} |`,
    `| → wave 2's remote Sync updated in B (the dependency hand-off: wave 2 woken, reconciled, applied in B) | ${med((s) => d(s.w2RemoteUpdated, s.w1Ready))} |`,
    `| → Ready in B | ${med((s) => d(s.w2RemoteReady, s.w2RemoteUpdated))} |`,
    `| → wave 2 Ready in mgmt (reflection) | ${med((s) => d(s.w2Ready, s.w2RemoteReady))} |`,
    `| the hub's own part of a round (its hop to A + the two reflections + the hand-off to B, summed per round) | ${med(hubPart)} |`,
    ...(r.edgeReconciles
      ? [
          `| the edges' reconciles over all rounds (their \`reconciled\` lines), how many, and the median duration of those woken by the Sync's change (the applies): ${['wave1', 'direct-wave1', 'wave2', 'direct-wave2']
            .map((n) => `\`${n}\` ${r.edgeReconciles?.[n]?.count ?? '?'}, ${ms(median(r.edgeReconciles?.[n]?.ms ?? []))}`)
            .join('; ')} | |`,
        ]
      : []),
    ...(r.syncBytes
      ? [
          `| the edges' Syncs as stored at the end, JSON bytes (of which managedFields): ${Object.entries(r.syncBytes)
            .map(([n, b]) => `\`${n}\` ${int(b.total)} (${int(b.managedFields)})`)
            .join('; ')} | |`,
        ]
      : []),
    `| **the bench as hub**: first write → A's Sync PATCH answered | ${dmed((s) => s.w1Written)} |`,
    `| → Ready in A (the benchmark's watch on A) | ${dmed((s) => d(s.w1RemoteReady, s.w1Written))} |`,
    `| → B's Sync PATCH answered (the benchmark's hand-off) | ${dmed((s) => d(s.w2Written, s.w1RemoteReady))} |`,
    `| → Ready in B | ${dmed((s) => d(s.w2RemoteReady, s.w2Written))} |`,
  ].join('\n');
}

/** How the edges' applies compared between the ProxySync and the bench-as-hub rounds (their `reconciled` lines). */
function edgeNote(r: Rollout): string {
  const e = r.edgeReconciles;
  if (!e) return '';
  const pairs = [
    ['wave1', 'direct-wave1', 'A'],
    ['wave2', 'direct-wave2', 'B'],
  ] as const;
  const notes = pairs.map(([p, d, c]) => {
    const mp = median(e[p]?.ms ?? []);
    const md = median(e[d]?.ms ?? []);
    return `${c}'s apply reconcile ${ms(mp)} for the ProxySync's Sync against ${ms(md)} for the bench's (×${(mp / md).toFixed(1)})`;
  });
  return ` (medians: ${notes.join(', ')}; the same requests in both: the difference is the edges' own time, which the hub's and mgmt's work beside them on the shared cores may lengthen)`;
}

function reading(r: ReportInput): string {
  const lines: string[] = [];
  const rf = r.reflection;
  const m = rf.writes.map((w) => w.mirroredMs);
  const f = rf.writes.map((w) => w.floorMs);
  const polled = POLLS.map((p) => `${ms(p.ms / 2)} on average and ${ms(p.ms)} at worst with a ${p.ms / 1000} s poll (${(p.ms / 2 / median(m)).toFixed(0)}× the median)`).join('; ');
  lines.push(
    `- Reflection: a change of the remote Sync's status shows in the ProxySync ${ms(median(m))} after the PATCH's response (median; p90 ${ms(quantile(m, 0.9))}, worst ${ms(max(m))}), ` +
      `of which the edge's own watch accounts for ${ms(median(f))} (median; worst ${ms(max(f))}); against ${polled}.` +
      (rf.missed ? ` **${rf.missed} of ${rf.writes.length} writes were not mirrored within ${WAIT_MS / 1000} s.**` : ` All ${rf.writes.length} writes were mirrored.`),
  );
  const sent = Object.entries(rf.hubRequestsToA);
  lines.push(
    `- Meanwhile the hub reconciled \`reflect\` ${rf.reconciles} times (causes: ${counts(rf.causes)}; median reconcile ${ms(median(rf.reconcileMs))}), ` +
      `used ${ms(rf.hubCpuMs)} of CPU, and sent A ${sent.length ? sent.map(([k, v]) => `${int(v)} ${k}`).join(', ') + ' (a GET may be a LIST or a watch)' : 'no request at all: the status came by its open watch'} (its \`syncprims_cluster_requests_total\`).`,
  );
  const med = (a: Applier): number => median(r.rollout.runs.filter((x) => x.applier === a).map((x) => x.ms));
  const spread = (a: Applier): string => {
    const v = r.rollout.runs.filter((x) => x.applier === a).map((x) => x.ms);
    return `${s2(min(v))} to ${s2(max(v))}`;
  };
  const ps = med('proxysync');
  const direct = med('direct');
  lines.push(
    `- Rollout of 2 waves: ${s2(ps)} through ProxySyncs (median), against ${s2(direct)} with the bench writing the edges' Syncs itself and waiting on their watches ` +
      `(ProxySyncs minus bench as hub: ${ms(ps - direct)} in the medians; the rounds ranged ${spread('proxysync')} through ProxySyncs, ${spread('direct')} for the bench as hub) ` +
      `and ${s2(med('bare'))} for the bare applies (no operator). The hub's own steps (its hop to A, the two reflections, the hand-off to B) took ${ms(median(r.rollout.runs.filter((x) => x.applier === 'proxysync').map((x) => hubPart(x.steps ?? {}))))} per round (median); the rest is the edges' operators applying${edgeNote(r.rollout)}. ` +
      `A hub polling the edges' status would add, to the direct rollout, one poll's wait per wave: ${POLLS.map((p) => `${s2(p.ms)} on average and ${s2(2 * p.ms)} at worst every ${p.ms / 1000} s`).join(', ')}.`,
  );
  const ar = rf.afterRestart;
  if (ar) {
    lines.push(
      Number.isNaN(ar.ms)
        ? `- **After A's operator started again, \`reflect\` still showed the benchmark's last write ${AFTER_RESTART_MS / 1000} s later** (Ready ${ar.ready?.status}/${ar.ready?.reason}: "${ar.ready?.message}"; lastAttemptedRevision ${ar.lastAttemptedRevision}, lastAppliedRevision ${ar.lastAppliedRevision}): A's operator did not rewrite the status the benchmark had written into its Sync (nothing in the Sync's spec had changed), so the ProxySync mirrors it faithfully.`
        : `- After A's operator started again, \`reflect\` showed A's own status again ${ms(ar.ms)} after the start (Ready ${ar.ready?.status}/${ar.ready?.reason}).`,
    );
  }
  const cpu = (a: Applier, k: string): number => median(r.rollout.runs.filter((x) => x.applier === a).map((x) => x.cpuMs?.[k] ?? NaN));
  if (r.rollout.runs.some((x) => x.cpuMs)) {
    lines.push(
      `- CPU per round (medians): through ProxySyncs the hub used ${ms(cpu('proxysync', `op:${MGMT}`))} and mgmt's API server ${ms(cpu('proxysync', `api:${MGMT}`))}, ` +
        `A's API server ${ms(cpu('proxysync', `api:${EDGE_A}`))} (${ms(cpu('direct', `api:${EDGE_A}`))} when the benchmark wrote A's Sync itself); the edges' operators ` +
        `A ${ms(cpu('proxysync', `op:${EDGE_A}`))} (bench as hub: ${ms(cpu('direct', `op:${EDGE_A}`))}) and B ${ms(cpu('proxysync', `op:${EDGE_B}`))} (${ms(cpu('direct', `op:${EDGE_B}`))}). ` +
        `Everything shares the machine's ${os.availableParallelism()} cores: the hub's and mgmt's work runs beside the edges' applies.`,
    );
  }
  const hr = r.rollout.hubRequests;
  const proxyRounds = r.rollout.runs.filter((x) => x.applier === 'proxysync').length;
  lines.push(
    `- The hub's requests to the edges over the ${proxyRounds} ProxySync rounds (and the other rounds meanwhile, in which it had nothing to do): ` +
      `A ${Object.entries(hr[EDGE_A] ?? {}).map(([k, v]) => `${int(v)} ${k}`).join(', ') || 'none'}; B ${Object.entries(hr[EDGE_B] ?? {}).map(([k, v]) => `${int(v)} ${k}`).join(', ') || 'none'} (its \`syncprims_cluster_requests_total\`; a GET may be a LIST or a watch).`,
  );
  const bad = r.rollout.runs.filter((x) => !x.verified);
  lines.push(bad.length ? `- **Not verified**: ${bad.map((x) => `${x.applier} round ${x.round}: ${x.verifyNote ?? x.error}`).join('; ')}.` : `- Every round verified (revisions, generations, ${2 * r.settings.objects} ConfigMaps with the new value; wave 2's remote Sync never changed before wave 1 was Ready).`);
  const warned = Object.entries(r.rollout.warnings).filter(([, w]) => Object.keys(w).length);
  const reflectWarned = Object.keys(rf.warnings).length;
  lines.push(
    warned.length || reflectWarned
      ? `- Operator warnings and errors: ${reflectWarned ? `during (a), the hub's: ${counts(rf.warnings)}; ` : ''}${warned.map(([c, w]) => `during (b), ${c}'s: ${counts(w)}`).join('; ')}.`
      : '- No operator logged a warning or an error during the measurements.',
  );
  lines.push(`- The benchmark's watches were restarted ${rf.watchRestarts + r.rollout.watchRestarts} times (a restart re-lists and may delay a delivery).`);
  return lines.join('\n');
}

function writeReport(r: ReportInput): void {
  const gib = Math.round(os.totalmem() / 2 ** 30);
  const rounds = r.settings.rounds;
  const report = `## ProxySync: status reflection and a 2-wave rollout (bench/proxysync.ts)

Script: \`bench/proxysync.ts\`. Measured ${r.date} on ${os.availableParallelism()} cores (${os.cpus()[0]?.model.trim() ?? '?'}), ${gib} GiB,
Node ${process.version}, Kubernetes ${r.kubernetes}, etcd embedded. Clusters of a control plane of the benchmark's own
(\`.local/bench-proxysync-plane\`, its own etcd), started for the benchmark and taken down at the end: \`${MGMT}\` (the
managing cluster) and the edges \`${EDGE_A}\` (A) and \`${EDGE_B}\` (B), each a kube-apiserver and a kube-controller-manager
process of its own on one shared etcd, all on this machine with the operators and the benchmark. Three operator processes,
one per cluster, each \`node dist/cli/main.js run --namespace <ns>\` on its cluster's admin kubeconfig (the hub's also
\`--cluster-id ${CLUSTER_ID} --log-level debug\`; defaults otherwise); the operator: ${r.build}. The ProxySyncs name their
cluster with \`clusterRef\` (the Secret \`<cluster>-kubeconfig\` in mgmt, the edge's admin kubeconfig). The machine's 1-minute
load average (everything on it, other work included), sampled every 10 s during the run, was ${median(r.load).toFixed(1)} (median;
${Math.min(...r.load).toFixed(1)} to ${Math.max(...r.load).toFixed(1)}) on ${os.availableParallelism()} cores. The whole benchmark took ${(r.totalMs / 60_000).toFixed(1)} min.

### (a) Status reflection: a change of the remote Sync's status, to the ProxySync

Method: ProxySync \`reflect\` keeps a Sync (one ConfigMap) in A. With it Ready, A's operator is stopped, and the benchmark
writes the remote Sync's status itself, ${r.settings.writes} times one after another (${r.settings.gapMs} ms apart once the previous one was
mirrored), a merge PATCH of its status subresource, in a cycle of three kinds: Ready's message changed, Ready's status flipped
(True/Succeeded ↔ False/HealthCheckFailed, a new message), \`lastAttemptedRevision\` changed. Each is timed from the PATCH's
response to a watch on mgmt's ProxySyncs delivering \`reflect\` with that change (time of delivery). The floor: the same change
delivered by the benchmark's own watch on A's Syncs (it may be a fraction of a millisecond before the PATCH's response is
read: shown as 0). The baseline rows are computed for a status poll every I: 30 s (the figure issue 11 quotes for Open Cluster
Management), 20 s (this project's earlier design), 10 s (the default of OCM's work agent \`--status-sync-interval\` in
open-cluster-management-io/ocm, \`pkg/work/spoke/options.go\`): with the change at a uniformly random moment of the interval, the latency is uniform on [0, I] (median I/2, p90 0.9·I,
worst I; the poll's own request not counted).

${reflectionTable(r.reflection)}

### (b) A rollout of 2 waves over 2 clusters

Method: ProxySync \`wave1\` keeps a Sync in A, \`wave2\` one in B with \`dependsOn: [{kind: ProxySync, name: wave1}]\`, each
${r.settings.objects} ConfigMaps (about 200 B each) inline with \`defaultNamespace\`; both Ready before the clock (created and Ready in
${s2(r.rollout.initialMs)}, the first rollout). A round changes the template of both (a new value in every ConfigMap: two merge
PATCHes, wave 1's first) and is timed from the first PATCH to the last ProxySync Ready for its new generation (Ready=True,
\`status.observedGeneration\` and Ready's \`observedGeneration\` equal to the generation), delivered by a watch on mgmt's
ProxySyncs; checked off the clock: its \`lastAppliedRevision\` equals the remote Sync's, the remote Sync observed its
generation, all ${2 * r.settings.objects} ConfigMaps in A and B have the new value, and wave 2's remote Sync did not change before
wave 1 was Ready. Baselines, the same two waves done by the benchmark, on the same clusters and edge operators: **the bench as
hub** merge-PATCHes a Sync in A (\`direct-wave1\`, the same ConfigMaps under other names), waits on its watch of A's Syncs until
Ready for the new generation with its revision applied, then does the same in B (\`direct-wave2\`); **bare apply**
server-side-applies the ConfigMaps themselves (other names), ${BARE_CONCURRENCY} in flight, to A and then to B, through the benchmark's
connected \`KubeClient\`s, timed to the last response. ${rounds} round${rounds === 1 ? '' : 's'}, every other one in the reverse order of the three.

${rolloutTable(r.rollout)}

${stepsTable(r.rollout)}

${r.rollout.runs.some((x) => x.cpuMs) ? cpuTable(r.rollout) : ''}

Reading:
${reading(r)}
`;
  writeFileSync(OUT, report);
  console.log(`\n${report}`);
}

/** `REPORT_FROM=<results.json>`: only writes the report again from a run's saved figures. */
async function entry(): Promise<void> {
  const from = process.env.REPORT_FROM;
  if (!from) return main();
  writeReport(JSON.parse(readFileSync(from, 'utf8')) as ReportInput);
}

// Exits explicitly: after a failure, a watch may still be open.
entry().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
