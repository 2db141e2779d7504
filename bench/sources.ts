// Syncs that read a source object (a ConfigMap, a Secret, a Flux
// ExternalArtifact) through a real `syncprims run` process: referenced objects
// are followed through one index and one metadata-only watch per kind
// (src/runtime/referenced-objects.ts, docs/adr/0002-referenced-objects.md),
// not one watch per object. On one dedicated cluster of the local control
// plane (bench-sources, started here and stopped at the end), each case in a
// fresh namespace with its own operator process (`--log-level debug`):
//
// 1. create: N Syncs, each reading a source object of its own (ConfigMaps for
//    N = 100, 300, 1,000; Secrets and ExternalArtifacts for N = 300), or N
//    Syncs reading one shared ConfigMap (each its own key of it: see
//    `sharedConfigMap`). From the first POST to the last Sync Ready=True seen
//    by a watch on the namespace's Syncs; the operator's TCP connections to
//    the API server (from /proc), its open watches (`syncprims_watches`), its
//    peak RSS (VmHWM) and CPU time.
// 2. edits: with the 300 distinct ConfigMaps up and Ready, EDITS sources
//    edited one after another: from the PATCH of the source to a watch on the
//    namespace's ConfigMaps delivering the applied ConfigMap with the new value;
//    then the reconciles of the other Syncs meanwhile (should be none) and the
//    causes of the edited Syncs' reconciles (the operator's `reconciled` lines).
//
// Run it with `bench/run.sh sources` (from the repository root). The operator
// is compiled from the committed HEAD into .local/bench-sources-operator.
// ROUNDS (default 2; every other round in the reverse order), SIZES (default
// 100,300,1000), KINDS_N (default 300) and EDITS (default 50) can be changed
// through the environment. It prints figures and writes
// docs/benchmarks/sources.md (and every figure to .local/bench-sources-results.json;
// `REPORT_FROM=<that file>` writes the report again without measuring); it
// asserts nothing about them.
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { API_VERSION } from '../src/api/kinds.js';
import { mapLimit } from '../src/apply/map-limit.js';
import { KubeClient } from '../src/kube/client.js';
import { loadKubeConfigFile } from '../src/kube/config.js';
import { ApiError } from '../src/kube/errors.js';
import { collectionPath, type KubeObject } from '../src/kube/resources.js';
import { watchEvents } from '../src/kube/watch-stream.js';
import { sampleValue } from '../test/support/prometheus.js';
import { tcpConnectionsTo } from '../test/support/proc.js';
import { memoryKiB } from './tracker.js';
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
  until,
  withTimeout,
} from './support.js';

const CLUSTER = 'bench-sources';
const KUBECONFIG = path.join(LOCAL, `${CLUSTER}.kubeconfig`);
const OPERATOR_LOG = path.join(LOCAL, `${CLUSTER}-operator.log`);
/** The operator measured: compiled here from the committed HEAD (others may rebuild dist/ meanwhile). */
const OPERATOR_DIR = path.join(LOCAL, `${CLUSTER}-operator`);
const OPERATOR: OperatorTarget = { main: path.join(OPERATOR_DIR, 'dist', 'cli', 'main.js'), kubeconfig: KUBECONFIG, log: OPERATOR_LOG };
const OUT = path.join(ROOT, 'docs', 'benchmarks', 'sources.md');
/** Every figure of the last run, so that `REPORT_FROM=<this file>` can write the report again without measuring. */
const RESULTS = path.join(LOCAL, `${CLUSTER}-results.json`);
const SIZES = (process.env.SIZES ?? '100,300,1000').split(',').map(Number);
const KINDS_N = Number(process.env.KINDS_N ?? 300);
const EDITS = Number(process.env.EDITS ?? 50);
const ROUNDS = Number(process.env.ROUNDS ?? 2);
/** GETs of a source object timed by the bench's own client, per case. */
const READS = 20;
const BENCH_UA = 'syncprims-bench/sources';
/** Every namespace of the benchmark: `bench-sources-<case>-<6 hex digits>`. */
const NS_PREFIX = 'bench-sources-';
/** Syncs and source objects created this many at a time (as the integration test does). */
const CREATE_CONCURRENCY = 32;
/** After the last Ready (and after the last edit), how long reconciles are still counted. */
const SETTLE_MS = 2_000;
const SAMPLE_EVERY_MS = 500;
const READY_TIMEOUT_MS = 300_000;
const EDIT_TIMEOUT_MS = 30_000;
const FLUX_GROUP = 'source.toolkit.fluxcd.io';
const FLUX_API_VERSION = `${FLUX_GROUP}/v1`;
const ARTIFACTS = 'externalartifacts';
/** The key every source holds its manifest under (the shared ConfigMap: one key per Sync). */
const KEY = 'app.yaml';

type SourceKind = 'configMap' | 'secret' | 'artifact' | 'shared';

interface Case {
  source: SourceKind;
  n: number;
  /** Run the edit phase once this case is Ready. */
  edits: boolean;
}

const SOURCE_LABEL: Record<SourceKind, string> = {
  configMap: 'distinct ConfigMaps',
  secret: 'distinct Secrets',
  artifact: 'distinct ExternalArtifacts',
  shared: 'one shared ConfigMap',
};

/**
 * The order of the cases: distinct and shared alternate (which goes first
 * alternates with N), the other kinds sit between the two 300s, and the edits
 * run on the 300 distinct ConfigMaps.
 */
function cases(): Case[] {
  const out: Case[] = [];
  SIZES.forEach((n, i) => {
    const pair: Case[] = [
      { source: 'configMap', n, edits: n === KINDS_N },
      { source: 'shared', n, edits: false },
    ];
    if (i % 2 === 1) pair.reverse();
    out.push(pair[0]!);
    if (n === KINDS_N) out.push({ source: 'secret', n, edits: false }, { source: 'artifact', n, edits: false });
    out.push(pair[1]!);
  });
  if (!SIZES.includes(KINDS_N)) out.push({ source: 'configMap', n: KINDS_N, edits: true }, { source: 'secret', n: KINDS_N, edits: false }, { source: 'artifact', n: KINDS_N, edits: false });
  return out;
}

// ---------------------------------------------------------------- the objects

const outName = (i: number): string => `out-${i}`;
const srcName = (i: number): string => `src-${i}`;
const syncName = (i: number): string => `s-${i}`;
const SHARED = 'src-shared';
/** The one ConfigMap a Sync applies: `out-<i>`, its value `v1` until edited. */
const cmYaml = (name: string, value: string): string => `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\ndata:\n  value: "${value}"\n`;
const sharedKey = (i: number): string => `${outName(i)}.yaml`;
const cmPath = (ns: string, name = ''): string => `/api/v1/namespaces/${ns}/configmaps${name ? `/${name}` : ''}`;
const artifactPath = (ns: string, name = ''): string => `/apis/${FLUX_API_VERSION}/namespaces/${ns}/${ARTIFACTS}${name ? `/${name}` : ''}`;

function sourceSpec(c: Case, i: number): Record<string, unknown> {
  switch (c.source) {
    case 'configMap':
      return { configMap: { name: srcName(i), key: KEY } };
    case 'secret':
      return { secret: { name: srcName(i), key: KEY } };
    case 'artifact':
      return { artifact: { apiVersion: FLUX_API_VERSION, kind: 'ExternalArtifact', name: srcName(i) } };
    case 'shared':
      return { configMap: { name: SHARED, key: sharedKey(i) } };
  }
}

function syncObject(namespace: string, c: Case, i: number): KubeObject {
  return { apiVersion: API_VERSION, kind: 'Sync', metadata: { name: syncName(i), namespace }, spec: { defaultNamespace: namespace, source: sourceSpec(c, i) } };
}

/** Writes (server-side apply) a source ConfigMap holding `out-<i>` with `value`; returns its resourceVersion. */
async function writeSourceConfigMap(client: KubeClient, ns: string, i: number, value: string): Promise<string> {
  const written = await client.request<KubeObject>({
    method: 'PATCH',
    path: cmPath(ns, srcName(i)),
    query: { fieldManager: 'bench-sources', force: true },
    contentType: 'application/apply-patch+yaml',
    body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: srcName(i), namespace: ns }, data: { [KEY]: cmYaml(outName(i), value) } },
  });
  return written.metadata.resourceVersion ?? '';
}

/**
 * The shared source: one ConfigMap with one key per Sync (`out-<i>.yaml`,
 * holding ConfigMap `out-<i>`), so each Sync reads the one shared object and
 * applies an object of its own. Returns its size (JSON bytes).
 */
async function sharedConfigMap(client: KubeClient, ns: string, n: number): Promise<number> {
  const data = Object.fromEntries(Array.from({ length: n }, (_, i) => [sharedKey(i), cmYaml(outName(i), 'v1')]));
  const body = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: SHARED, namespace: ns }, data };
  await client.request({ method: 'POST', path: cmPath(ns), body, timeoutMs: 60_000 });
  return JSON.stringify(body).length;
}

/** Creates the case's source objects; returns the size (JSON bytes) of the object one Sync reads. */
async function createSources(client: KubeClient, ns: string, c: Case, artifactBase: string): Promise<number> {
  const indices = Array.from({ length: c.n }, (_, i) => i);
  const one = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: srcName(0), namespace: ns }, data: { [KEY]: cmYaml(outName(0), 'v1') } };
  switch (c.source) {
    case 'shared':
      return sharedConfigMap(client, ns, c.n);
    case 'configMap':
      await mapLimit(indices, CREATE_CONCURRENCY, (i) => writeSourceConfigMap(client, ns, i, 'v1'));
      return JSON.stringify(one).length;
    case 'secret':
      await mapLimit(indices, CREATE_CONCURRENCY, (i) =>
        client.request({
          method: 'POST',
          path: `/api/v1/namespaces/${ns}/secrets`,
          body: { apiVersion: 'v1', kind: 'Secret', metadata: { name: srcName(i) }, data: { [KEY]: Buffer.from(cmYaml(outName(i), 'v1')).toString('base64') } },
        }),
      );
      return JSON.stringify({ ...one, kind: 'Secret', data: { [KEY]: Buffer.from(cmYaml(outName(0), 'v1')).toString('base64') } }).length;
    case 'artifact':
      await mapLimit(indices, CREATE_CONCURRENCY, (i) => createArtifact(client, ns, i, artifactBase));
      return cmYaml(outName(0), 'v1').length;
  }
}

// ---------------------------------------------------------------- Flux ExternalArtifact stand-in

/** Just enough of Flux's ExternalArtifact CRD (as test/support/flux.ts): namespaced, status subresource, any fields. */
async function installExternalArtifactCrd(client: KubeClient): Promise<void> {
  const crd = {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${ARTIFACTS}.${FLUX_GROUP}` },
    spec: {
      group: FLUX_GROUP,
      scope: 'Namespaced',
      names: { plural: ARTIFACTS, singular: 'externalartifact', kind: 'ExternalArtifact', listKind: 'ExternalArtifactList' },
      versions: [
        { name: 'v1', served: true, storage: true, subresources: { status: {} }, schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } },
      ],
    },
  };
  await client.request({ method: 'POST', path: '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', body: crd }).catch((err: unknown) => {
    if (!(err instanceof ApiError && err.conflict)) throw err;
  });
  await until('ExternalArtifacts to be served', async () => {
    await client.request({ path: `/apis/${FLUX_API_VERSION}/${ARTIFACTS}`, query: { limit: 1 } });
    return true;
  });
}

/** An ExternalArtifact `src-<i>` whose status.artifact (written as an artifact generator would) points at `<base>/out-<i>.yaml`. */
async function createArtifact(client: KubeClient, ns: string, i: number, base: string): Promise<void> {
  const name = srcName(i);
  const created = await client.request<KubeObject>({
    method: 'POST',
    path: artifactPath(ns),
    body: { apiVersion: FLUX_API_VERSION, kind: 'ExternalArtifact', metadata: { name }, spec: { sourceRef: { apiVersion: 'example.test/v1', kind: 'Generator', name } } },
  });
  const now = new Date().toISOString();
  await client.request({
    method: 'PUT',
    path: `${artifactPath(ns, name)}/status`,
    body: {
      ...created,
      status: {
        artifact: { path: `externalartifact/${ns}/${name}/x.yaml`, url: `${base}/${outName(i)}.yaml`, revision: `${name}@v1`, lastUpdateTime: now },
        conditions: [{ type: 'Ready', status: 'True', reason: 'Succeeded', message: 'stored artifact', lastTransitionTime: now }],
      },
    },
  });
}

/** Serves `/out-<i>.yaml` (ConfigMap `out-<i>`, value `v1`) for the artifacts; counts what it served. */
class ArtifactServer {
  served = 0;
  private readonly server = http.createServer((req, res) => {
    const name = /^\/(out-\d+)\.yaml$/.exec(req.url ?? '')?.[1];
    if (!name) return void res.writeHead(404).end('not found');
    this.served++;
    res.writeHead(200, { 'content-type': 'application/yaml' }).end(cmYaml(name, 'v1'));
  });

  async listen(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

// ---------------------------------------------------------------- watching

interface Seen {
  /** performance.now() when the watch delivered it. */
  at: number;
  object: KubeObject;
}

/**
 * A watch on one collection of one namespace, from its current
 * resourceVersion: keeps the latest object per name, tells `onEvent` of each
 * ADDED or MODIFIED event, and resolves waiters on the first object (the
 * latest, or one to come) that passes their test.
 */
class CollectionWatch {
  onEvent: ((seen: Seen) => void) | undefined;
  private readonly latest = new Map<string, Seen>();
  private readonly waiters = new Set<{ name: string; test: (o: KubeObject) => boolean; resolve: (s: Seen) => void; reject: (e: Error) => void }>();
  private failure: Error | undefined;

  private constructor(private readonly close_: () => void) {}

  static async open(client: KubeClient, collection: string): Promise<CollectionWatch> {
    const list = await client.request<{ metadata: { resourceVersion: string } }>({ path: collection, query: { limit: 1 } });
    const res = await client.stream({ path: collection, query: { watch: 1, resourceVersion: list.metadata.resourceVersion }, idleTimeoutMs: 900_000 });
    const watch = new CollectionWatch(() => res.destroy());
    void watch.pump(watchEvents(res));
    return watch;
  }

  private async pump(events: AsyncGenerator<{ type: string; object: KubeObject }>): Promise<void> {
    try {
      for await (const event of events) {
        if (event.type === 'ERROR') throw new Error(`watch: ${JSON.stringify(event.object)}`);
        if (event.type === 'ADDED' || event.type === 'MODIFIED') this.deliver({ at: performance.now(), object: event.object });
      }
      this.fail(new Error('the watch ended'));
    } catch (err) {
      this.fail(err as Error);
    }
  }

  private deliver(seen: Seen): void {
    const name = seen.object.metadata.name ?? '';
    this.latest.set(name, seen);
    this.onEvent?.(seen);
    for (const w of [...this.waiters]) {
      if (w.name !== name || !w.test(seen.object)) continue;
      this.waiters.delete(w);
      w.resolve(seen);
    }
  }

  private fail(err: Error): void {
    this.failure ??= err;
    for (const w of this.waiters) w.reject(err);
    this.waiters.clear();
  }

  /** The latest object of `name` if it passes `test`, else the first one to come that does. */
  first(name: string, test: (o: KubeObject) => boolean): Promise<Seen> {
    const hit = this.latest.get(name);
    if (hit && test(hit.object)) return Promise.resolve(hit);
    if (this.failure) return Promise.reject(this.failure);
    const promise = new Promise<Seen>((resolve, reject) => this.waiters.add({ name, test, resolve, reject }));
    promise.catch(() => undefined);
    return promise;
  }

  latestOf(name: string): KubeObject | undefined {
    return this.latest.get(name)?.object;
  }

  get failed(): Error | undefined {
    return this.failure;
  }

  close(): void {
    this.close_();
  }
}

const readyOf = (o: KubeObject) => statusOf(o).conditions?.find((c) => c.type === 'Ready');

/** Ready=True for the current generation. */
function readyTrue(o: KubeObject): boolean {
  const ready = readyOf(o);
  return ready?.status === 'True' && ready.observedGeneration === o.metadata.generation;
}

/**
 * From a watch on the namespace's Syncs: when each Sync was first seen
 * Ready=True (ms from `t0`), and the not-Ready reasons seen on the way.
 */
class ReadyTracker {
  readonly readyAt = new Map<string, number>();
  readonly reasons: Record<string, number> = {};
  t0 = 0;
  private resolveAll: (() => void) | undefined;
  readonly all: Promise<void>;

  constructor(
    watch: CollectionWatch,
    private readonly n: number,
  ) {
    this.all = new Promise((resolve) => (this.resolveAll = resolve));
    watch.onEvent = (seen) => this.see(seen);
  }

  private see({ at, object }: Seen): void {
    const name = object.metadata.name ?? '';
    if (this.readyAt.has(name)) return;
    if (readyTrue(object)) {
      this.readyAt.set(name, at - this.t0);
      if (this.readyAt.size === this.n) this.resolveAll?.();
      return;
    }
    const ready = readyOf(object);
    if (ready && ready.status !== 'True') this.reasons[`${ready.status}/${ready.reason ?? '?'}`] = (this.reasons[`${ready.status}/${ready.reason ?? '?'}`] ?? 0) + 1;
  }

  /** ms from t0 until `fraction` of the Syncs were Ready. */
  quantile(fraction: number): number {
    const times = [...this.readyAt.values()].sort((a, b) => a - b);
    return times[Math.max(0, Math.ceil(times.length * fraction) - 1)] ?? NaN;
  }
}

// ---------------------------------------------------------------- sampling the operator

interface Probe {
  /** Established TCP connections of the operator's pid to the API server's port (/proc). */
  connections: number;
  /** Sum of `syncprims_connections`, when the build exports it. */
  connectionsMetric: number | undefined;
  /** `syncprims_watches`, by resource. */
  watches: Record<string, number>;
  rssKiB: number;
  hwmKiB: number;
}


function watchesOf(metrics: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const m of metrics.matchAll(/^syncprims_watches\{([^}]*)\} (\S+)$/gm)) {
    const resource = /resource="([^"]*)"/.exec(m[1] ?? '')?.[1] ?? '?';
    const v = Number(m[2]);
    if (v) out[resource] = (out[resource] ?? 0) + v;
  }
  return out;
}

async function probe(op: OperatorProcess, port: number): Promise<Probe> {
  const pid = op.pid ?? 0;
  const [connections, metrics] = await Promise.all([tcpConnectionsTo(pid, port).catch(() => NaN), op.metrics().catch(() => '')]);
  const mem = memoryKiB(pid);
  const hasConnections = /^syncprims_connections[{ ]/m.test(metrics);
  return {
    connections,
    connectionsMetric: hasConnections ? sampleValue(metrics, 'syncprims_connections') : undefined,
    watches: watchesOf(metrics),
    rssKiB: mem.rss,
    hwmKiB: mem.hwm,
  };
}

const sumOf = (r: Record<string, number>): number => Object.values(r).reduce((a, b) => a + b, 0);

/** Probes the operator every SAMPLE_EVERY_MS and keeps the peaks. */
class Sampler {
  peakConnections = 0;
  peakConnectionsMetric: number | undefined;
  peakWatches = 0;
  peakWatchesBy: Record<string, number> = {};
  samples = 0;
  private running = true;
  private readonly done: Promise<void>;

  constructor(
    private readonly op: OperatorProcess,
    private readonly port: number,
  ) {
    this.done = this.loop();
  }

  private async loop(): Promise<void> {
    while (this.running) {
      this.take(await probe(this.op, this.port));
      await sleep(SAMPLE_EVERY_MS);
    }
  }

  take(p: Probe): void {
    this.samples++;
    if (p.connections > this.peakConnections) this.peakConnections = p.connections;
    if (p.connectionsMetric !== undefined) this.peakConnectionsMetric = Math.max(this.peakConnectionsMetric ?? 0, p.connectionsMetric);
    const watches = sumOf(p.watches);
    if (watches > this.peakWatches) [this.peakWatches, this.peakWatchesBy] = [watches, p.watches];
  }

  async stop(): Promise<void> {
    this.running = false;
    await this.done;
  }
}

// ---------------------------------------------------------------- one case

interface EditResult {
  /** Per edit: PATCH of the source → the watch delivering the applied ConfigMap with the new value. */
  applyMs: number[];
  /** Per edit: PATCH → the watch delivering the Sync Ready=True with a new lastAppliedRevision. */
  readyMs: number[];
  /** `reconciled` lines of the Syncs not edited, during the edits (and SETTLE_MS after). */
  otherReconciles: number;
  otherSyncs: string[];
  /** `reconcile failed` lines, all Syncs, during the edits. */
  failures: number;
  /** `reconciled` lines per edited Sync during the edits. */
  editedReconciles: number[];
  /** Edited Syncs with a reconcile whose causes name their own edit (kind, name and the PATCH's resourceVersion). */
  causeMatched: number;
  /** The causes in the edited Syncs' reconciles, classified and counted. */
  causes: Record<string, number>;
  /** Per cause (as in `causes`), the `ms` of the reconciles it was among the causes of. */
  causeMs: Record<string, number[]>;
  /** The change of `syncprims_reference_wakes_total`. */
  referenceWakes: number;
  operatorCpuMs: number;
  windowMs: number;
}

interface CaseResult {
  c: Case;
  /** 1-based: the round, and the position in the whole run. */
  round: number;
  order: number;
  /** The machine's 1-minute load average when the case began. */
  loadAtStart: number;
  namespace: string;
  /** The bench's own GET of the object one Sync reads (median of READS, before the operator starts). */
  readMs: number;
  /** Bytes (JSON) of the object one Sync reads (the artifact: the file served). */
  sourceBytes: number;
  /** The operator process: spawn → /readyz. */
  startMs: number;
  /** First POST → last POST answered. */
  postsMs: number;
  /** First POST → last Ready=True seen. */
  readyMs: number;
  halfMs: number;
  /** Per Sync: first POST → its Ready=True seen. */
  perSyncMedianMs: number;
  operatorCpuMs: number;
  apiserverCpuMs: number;
  atReady: Probe;
  peakConnections: number;
  peakConnectionsMetric: number | undefined;
  peakWatches: number;
  peakWatchesBy: Record<string, number>;
  samples: number;
  /** `reconciled` lines per Sync, until SETTLE_MS after the last Ready. */
  reconciles: number[];
  /** Per Sync: the `ms` of its first `reconciled` line (the one that applied). */
  firstReconcileMs: number[];
  /** The `ms` of every later `reconciled` line. */
  laterReconcileMs: number[];
  /** `applied` lines (an apply that created or changed something), all Syncs. */
  appliedLines: number;
  /** The causes in those lines (namespace, index and resourceVersion elided), counted. */
  causes: Record<string, number>;
  failures: number;
  notReadyReasons: Record<string, number>;
  /** The change of syncprims_cluster_requests_total over the create phase, by method. */
  requests: Record<string, number>;
  referenceWakes: number;
  artifactFetches: number;
  edits?: EditResult;
}

interface Env {
  client: KubeClient;
  port: number;
  apiserverPid: number;
  artifacts: ArtifactServer;
  artifactBase: string;
}

async function requestsByMethod(op: OperatorProcess): Promise<Record<string, number>> {
  return op.requests().catch(() => ({}));
}

function diffCounts(after: Record<string, number>, before: Record<string, number>): Record<string, number> {
  return Object.fromEntries(Object.entries(after).map(([k, v]) => [k, v - (before[k] ?? 0)]));
}

const isSyncLine = (ns: string, msg: string) => (f: Record<string, unknown>) => f.msg === msg && f.kind === 'Sync' && f.namespace === ns;

/** How long the bench's own client takes to GET the object one Sync reads: the median of READS, one after another. */
async function readTime(client: KubeClient, namespace: string, c: Case): Promise<number> {
  const apiPath = c.source === 'shared' ? cmPath(namespace, SHARED) : c.source === 'secret' ? `/api/v1/namespaces/${namespace}/secrets/${srcName(0)}` : c.source === 'artifact' ? artifactPath(namespace, srcName(0)) : cmPath(namespace, srcName(0));
  const times: number[] = [];
  for (let k = 0; k < READS; k++) {
    const t = performance.now();
    await client.request({ path: apiPath });
    times.push(performance.now() - t);
  }
  return median(times);
}

async function runCase(env: Env, c: Case, round: number, order: number): Promise<CaseResult> {
  const { client } = env;
  const loadAtStart = os.loadavg()[0] ?? NaN;
  const namespace = await createNamespace(client, `${NS_PREFIX}${c.source.toLowerCase()}-${c.n}`);
  const sourceBytes = await createSources(client, namespace, c, env.artifactBase);
  const readMs = await readTime(client, namespace, c);
  const spawned = performance.now();
  const op = await OperatorProcess.start(OPERATOR, namespace, ['--log-level', 'debug']);
  const startMs = performance.now() - spawned;
  const watch = await CollectionWatch.open(client, collectionPath(SYNCS, namespace));
  const tracker = new ReadyTracker(watch, c.n);
  const sampler = new Sampler(op, env.port);
  const fetchesBefore = env.artifacts.served;
  try {
    const requestsBefore = await requestsByMethod(op);
    const wakesBefore = sampleValue(await op.metrics(), 'syncprims_reference_wakes_total');
    const [cpu, apiCpu] = [processCpuMs(op.pid), processCpuMs(env.apiserverPid)];
    const epoch = Date.now();
    tracker.t0 = performance.now();
    await mapLimit(
      Array.from({ length: c.n }, (_, i) => i),
      CREATE_CONCURRENCY,
      (i) => client.request({ method: 'POST', path: collectionPath(SYNCS, namespace), body: syncObject(namespace, c, i), timeoutMs: 60_000 }),
    );
    const postsMs = performance.now() - tracker.t0;
    await withTimeout(`${c.n} Syncs (${SOURCE_LABEL[c.source]}) to be Ready`, Promise.race([tracker.all, watchFailure(watch)]), READY_TIMEOUT_MS).catch((err: unknown) => {
      throw new Error(`${String(err)}; ${tracker.readyAt.size} Ready; not-Ready reasons seen: ${JSON.stringify(tracker.reasons)}`);
    });
    const readyMs = performance.now() - tracker.t0;
    const operatorCpuMs = processCpuMs(op.pid) - cpu;
    const apiserverCpuMs = processCpuMs(env.apiserverPid) - apiCpu;
    const atReady = await probe(op, env.port);
    sampler.take(atReady);
    await sampler.stop();
    await sleep(SETTLE_MS);
    const logs = op.logsSince(epoch).map((l) => l.fields);
    const reconciled = logs.filter(isSyncLine(namespace, 'reconciled'));
    const perSync = new Map<string, number>();
    const firstMs = new Map<string, number>();
    const laterMs: number[] = [];
    for (const f of reconciled) {
      perSync.set(String(f.name), (perSync.get(String(f.name)) ?? 0) + 1);
      if (firstMs.has(String(f.name))) laterMs.push(Number(f.ms));
      else firstMs.set(String(f.name), Number(f.ms));
    }
    const result: CaseResult = {
      c,
      round,
      order,
      loadAtStart,
      namespace,
      readMs,
      sourceBytes,
      startMs,
      postsMs,
      readyMs,
      halfMs: tracker.quantile(0.5),
      perSyncMedianMs: median([...tracker.readyAt.values()]),
      operatorCpuMs,
      apiserverCpuMs,
      atReady,
      peakConnections: sampler.peakConnections,
      peakConnectionsMetric: sampler.peakConnectionsMetric,
      peakWatches: sampler.peakWatches,
      peakWatchesBy: sampler.peakWatchesBy,
      samples: sampler.samples,
      reconciles: Array.from({ length: c.n }, (_, i) => perSync.get(syncName(i)) ?? 0),
      firstReconcileMs: [...firstMs.values()],
      laterReconcileMs: laterMs,
      appliedLines: logs.filter(isSyncLine(namespace, 'applied')).length,
      causes: countCauses(reconciled, namespace),
      failures: logs.filter(isSyncLine(namespace, 'reconcile failed; retrying')).length,
      notReadyReasons: tracker.reasons,
      requests: diffCounts(await requestsByMethod(op), requestsBefore),
      referenceWakes: sampleValue(await op.metrics(), 'syncprims_reference_wakes_total') - wakesBefore,
      artifactFetches: env.artifacts.served - fetchesBefore,
    };
    if (c.edits) result.edits = await runEdits(client, op, watch, namespace, c.n);
    return result;
  } finally {
    await sampler.stop();
    watch.close();
    await op.stop();
  }
}

/** The causes of `reconciled` lines, counted, with the namespace, the source's index and the resourceVersion elided. */
function countCauses(lines: Record<string, unknown>[], namespace: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const cause of lines.flatMap((f) => (f.causes ?? []) as string[])) {
    const general = cause
      .replaceAll(`${namespace}/`, '<ns>/')
      .replace(/src-\d+/g, 'src-<i>')
      .replace(/resourceVersion \d+/g, 'resourceVersion <rv>');
    out[general] = (out[general] ?? 0) + 1;
  }
  return out;
}

function watchFailure(watch: CollectionWatch): Promise<never> {
  return new Promise((_, reject) => {
    const timer = setInterval(() => {
      if (!watch.failed) return;
      clearInterval(timer);
      reject(watch.failed);
    }, 1_000);
    timer.unref();
  });
}

// ---------------------------------------------------------------- the edits

/** Which sources are edited: EDITS of them, spread over the n. */
function editedIndices(n: number): number[] {
  const step = Math.max(1, Math.floor(n / EDITS));
  return Array.from({ length: Math.min(EDITS, n) }, (_, k) => (k * step) % n);
}

async function runEdits(client: KubeClient, op: OperatorProcess, syncs: CollectionWatch, namespace: string, n: number): Promise<EditResult> {
  const configMaps = await CollectionWatch.open(client, cmPath(namespace));
  const indices = editedIndices(n);
  const expected = new Map<string, string>();
  const applyMs: number[] = [];
  const readyMs: number[] = [];
  const wakesBefore = sampleValue(await op.metrics(), 'syncprims_reference_wakes_total');
  const cpu = processCpuMs(op.pid);
  const epoch = Date.now();
  const started = performance.now();
  try {
    for (const [k, i] of indices.entries()) {
      const value = `v2-${k}`;
      const before = statusOf(syncs.latestOf(syncName(i)) ?? ({ metadata: {} } as KubeObject)).lastAppliedRevision;
      const applied = configMaps.first(outName(i), (o) => (o as { data?: { value?: string } }).data?.value === value);
      const ready = syncs.first(syncName(i), (o) => readyTrue(o) && statusOf(o).lastAppliedRevision !== before);
      const sentAt = performance.now();
      const resourceVersion = await writeSourceConfigMap(client, namespace, i, value);
      expected.set(syncName(i), `ConfigMap ${namespace}/${srcName(i)} changed (resourceVersion ${resourceVersion})`);
      applyMs.push((await withTimeout(`${outName(i)} to hold ${value}`, applied, EDIT_TIMEOUT_MS)).at - sentAt);
      readyMs.push((await withTimeout(`Sync ${syncName(i)} Ready with the new revision`, ready, EDIT_TIMEOUT_MS)).at - sentAt);
    }
  } finally {
    configMaps.close();
  }
  const operatorCpuMs = processCpuMs(op.pid) - cpu;
  const windowMs = performance.now() - started;
  await sleep(SETTLE_MS);
  const logs = op.logsSince(epoch).map((l) => l.fields);
  const reconciled = logs.filter(isSyncLine(namespace, 'reconciled'));
  const others = reconciled.filter((f) => !expected.has(String(f.name)));
  const causes: Record<string, number> = {};
  const causeMs: Record<string, number[]> = {};
  let causeMatched = 0;
  for (const [name, cause] of expected) {
    const mine = reconciled.filter((f) => f.name === name);
    if (mine.some((f) => ((f.causes ?? []) as string[]).includes(cause))) causeMatched++;
    for (const line of mine) {
      for (const c of (line.causes ?? []) as string[]) {
        const kind = c === cause ? 'its own edit (that ConfigMap, that resourceVersion)' : c.replaceAll(`${namespace}/`, '<ns>/');
        causes[kind] = (causes[kind] ?? 0) + 1;
        (causeMs[kind] ??= []).push(Number(line.ms));
      }
    }
  }
  return {
    applyMs,
    readyMs,
    otherReconciles: others.length,
    otherSyncs: [...new Set(others.map((f) => String(f.name)))],
    failures: logs.filter(isSyncLine(namespace, 'reconcile failed; retrying')).length,
    editedReconciles: [...expected.keys()].map((name) => reconciled.filter((f) => f.name === name).length),
    causeMatched,
    causes,
    causeMs,
    referenceWakes: sampleValue(await op.metrics(), 'syncprims_reference_wakes_total') - wakesBefore,
    operatorCpuMs,
    windowMs,
  };
}

// ---------------------------------------------------------------- namespaces

/** Deletes a namespace of Syncs once no operator runs: their finalizers removed first, 16 at a time. */

/** Namespaces left by an earlier run that was cut short (the cluster's data outlives it). */
async function cleanLeftovers(client: KubeClient): Promise<void> {
  const list = await client.request<{ items: KubeObject[] }>({ path: '/api/v1/namespaces' });
  for (const ns of list.items.map((n) => n.metadata.name ?? '').filter((n) => n.startsWith(NS_PREFIX))) {
    console.log(`deleting ${ns}, left by an earlier run...`);
    await deleteSyncNamespace(client, ns);
  }
}

// ---------------------------------------------------------------- main

async function main(): Promise<void> {
  const load = sampleLoad();
  const began = performance.now();
  const build = await buildOperator(OPERATOR_DIR);
  const artifacts = new ArtifactServer();
  const artifactBase = await artifacts.listen();
  let client: KubeClient | undefined;
  try {
    console.log(`starting ${CLUSTER}...`);
    await controlplane(['up', CLUSTER]);
    client = await KubeClient.create(CLUSTER, loadKubeConfigFile(KUBECONFIG), BENCH_UA);
    const apiserverPid = Number(readFileSync(path.join(LOCAL, `${CLUSTER}.pid`), 'utf8').trim());
    await installCrds(client);
    await installExternalArtifactCrd(client);
    await cleanLeftovers(client);
    const env: Env = { client, port: Number(client.server.port), apiserverPid, artifacts, artifactBase };
    const results: CaseResult[] = [];
    for (let round = 1; round <= ROUNDS; round++) {
      // Every other round runs the cases in the reverse order, so that no case always comes first or last.
      const list = round % 2 ? cases() : cases().reverse();
      for (const c of list) {
        console.log(`round ${round} of ${ROUNDS}: ${c.n} Syncs, ${SOURCE_LABEL[c.source]}${c.edits ? `, then ${EDITS} edits` : ''}...`);
        const r = await runCase(env, c, round, results.length + 1);
        results.push(r);
        printCase(r);
        await deleteSyncNamespace(client, r.namespace);
      }
    }
    const input: ReportInput = { date: new Date().toISOString().slice(0, 10), results, kubernetes: await serverVersion(client), load: load.stop(), build, totalMs: performance.now() - began };
    writeFileSync(RESULTS, JSON.stringify(input));
    writeReport(input);
  } finally {
    load.stop();
    await stopOperators();
    await artifacts.close();
    client?.close();
    console.log(`stopping ${CLUSTER}...`);
    await controlplane(['stop', CLUSTER]).catch((err: unknown) => console.error(String(err)));
    rmSync(OPERATOR_DIR, { recursive: true, force: true });
  }
}

// ---------------------------------------------------------------- report

const ms = (n: number): string => `${int(n)} ms`;
const s2 = (n: number): string => `${(n / 1000).toFixed(2)} s`;
const mib = (kib: number): string => `${(kib / 1024).toFixed(0)} MiB`;
const max = (xs: number[]): number => Math.max(...xs.filter((v) => !Number.isNaN(v)));
const mean = (xs: number[]): number => xs.reduce((a, b) => a + b, 0) / xs.length;
const minMedMax = (xs: number[]): string => `${int(Math.min(...xs))} / ${int(median(xs))} / ${int(max(xs))}`;
const caseName = (c: Case): string => `${int(c.n)} × ${SOURCE_LABEL[c.source]}`;
const caseKey = (c: Case): string => `${c.source}|${c.n}`;
const watchList = (w: Record<string, number>): string =>
  Object.entries(w)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([k, v]) => `${k} ${v}`)
    .join(', ');
const methods = (r: Record<string, number>): string =>
  Object.entries(r)
    .filter(([, v]) => v > 0)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([k, v]) => `${k} ${int(v)}`)
    .join(', ');
const causeList = (r: Record<string, number>): string =>
  Object.entries(r)
    .sort(([, a], [, b]) => b - a)
    .map(([k, v]) => `${k} ${int(v)}`)
    .join('; ');
const connectionsMetric = (r: CaseResult): string =>
  r.atReady.connectionsMetric === undefined ? 'not exported' : `${int(r.atReady.connectionsMetric)} (peak ${int(r.peakConnectionsMetric ?? NaN)})`;

function printCase(r: CaseResult): void {
  console.log(
    `  ${caseName(r.c)}: all Ready ${s2(r.readyMs)} after the first POST (POSTs took ${s2(r.postsMs)}; load ${r.loadAtStart.toFixed(1)}; source GET ${ms(r.readMs)}); ` +
      `connections ${r.atReady.connections} at Ready, peak ${r.peakConnections}; watches ${sumOf(r.atReady.watches)} (${watchList(r.atReady.watches)}), peak ${r.peakWatches}; ` +
      `VmHWM ${mib(r.atReady.hwmKiB)}; CPU ${ms(r.operatorCpuMs)}, kube-apiserver ${ms(r.apiserverCpuMs)}; reconciles per Sync ${minMedMax(r.reconciles)}, ` +
      `first ${ms(median(r.firstReconcileMs))} median; failures ${r.failures}; requests ${methods(r.requests)}`,
  );
  const e = r.edits;
  if (e) {
    console.log(
      `  ${e.applyMs.length} edits: edit → applied median ${ms(median(e.applyMs))}, worst ${ms(max(e.applyMs))}; edit → Ready median ${ms(median(e.readyMs))}, worst ${ms(max(e.readyMs))}; ` +
        `other Syncs reconciled ${e.otherReconciles}; edited Syncs' reconciles ${minMedMax(e.editedReconciles)}; causes ${JSON.stringify(e.causes)}`,
    );
  }
}

interface ReportInput {
  /** YYYY-MM-DD of the measurement. */
  date: string;
  results: CaseResult[];
  kubernetes: string;
  load: number[];
  build: string;
  totalMs: number;
}

/** One case's runs, one per round. */
interface Group {
  c: Case;
  runs: CaseResult[];
}

function groupsOf(results: CaseResult[]): Group[] {
  const groups = new Map<string, Group>();
  for (const r of results) {
    const g = groups.get(caseKey(r.c)) ?? { c: r.c, runs: [] };
    g.runs.push(r);
    groups.set(caseKey(r.c), g);
  }
  const rank = (c: Case): number => c.n * 10 + Object.keys(SOURCE_LABEL).indexOf(c.source);
  return [...groups.values()].sort((a, b) => rank(a.c) - rank(b.c));
}

/** A cell: the rounds' values in round order, or one value when they agree. */
function cell(g: Group, f: (r: CaseResult) => string): string {
  const values = g.runs.map(f);
  return new Set(values).size === 1 ? (values[0] ?? '') : values.join(' / ');
}

/** The same for a list item: `round 1: ...; round 2: ...` unless every round agrees. */
function item(g: Group, f: (r: CaseResult) => string): string {
  const values = g.runs.map(f);
  return new Set(values).size === 1 ? (values[0] ?? '') : g.runs.map((r, i) => `round ${r.round}: ${values[i]}`).join('; ');
}

type Row = [label: string, f: (r: CaseResult) => string];

function createTable(groups: Group[]): string {
  const rows: Row[] = [
    ['position in the run (of all cases, all rounds)', (r) => String(r.order)],
    ['1-minute load average when the case began', (r) => r.loadAtStart.toFixed(1)],
    ['bytes of the object one Sync reads', (r) => int(r.sourceBytes)],
    [`GET of that object by the benchmark's client (median of ${READS}, before the operator starts)`, (r) => ms(r.readMs)],
    ['**first POST → all Ready=True**', (r) => `**${s2(r.readyMs)}**`],
    ['Syncs Ready per second', (r) => (r.c.n / (r.readyMs / 1000)).toFixed(0)],
    ['first POST → half Ready', (r) => s2(r.halfMs)],
    ['all POSTs answered', (r) => s2(r.postsMs)],
    ['TCP connections to the API server at all-Ready (/proc)', (r) => int(r.atReady.connections)],
    ['TCP connections, peak of samples', (r) => int(r.peakConnections)],
    ['`syncprims_connections` at all-Ready', connectionsMetric],
    ['open watches at all-Ready (`syncprims_watches`)', (r) => int(sumOf(r.atReady.watches))],
    ['open watches, peak of samples', (r) => int(r.peakWatches)],
    ['peak RSS (VmHWM) at all-Ready', (r) => mib(r.atReady.hwmKiB)],
    ['operator CPU, first POST → all Ready', (r) => ms(r.operatorCpuMs)],
    ['kube-apiserver CPU, same span', (r) => ms(r.apiserverCpuMs)],
    ['reconciles per Sync: median', (r) => int(median(r.reconciles))],
    ['reconciles per Sync: max', (r) => int(max(r.reconciles))],
    ["a Sync's first reconcile (`ms` in its log line): median", (r) => ms(median(r.firstReconcileMs))],
    ["a Sync's first reconcile: max", (r) => ms(max(r.firstReconcileMs))],
    ['its later reconciles (`ms`): median', (r) => (r.laterReconcileMs.length ? ms(median(r.laterReconcileMs)) : '–')],
    ['its later reconciles: max', (r) => (r.laterReconcileMs.length ? ms(max(r.laterReconcileMs)) : '–')],
    ['`applied` lines (applies that created or changed objects), all Syncs', (r) => int(r.appliedLines)],
    ['reconciles that failed (retried)', (r) => int(r.failures)],
    ['`syncprims_reference_wakes_total`, change', (r) => int(r.referenceWakes)],
    ['operator requests by method', (r) => methods(r.requests)],
    ["artifact downloads (the benchmark's HTTP server)", (r) => (r.c.source === 'artifact' ? int(r.artifactFetches) : '–')],
  ];
  const header = [`| | ${groups.map((g) => caseName(g.c)).join(' | ')} |`, `|---|${groups.map(() => '---|').join('')}`];
  return [...header, ...rows.map(([label, f]) => `| ${label} | ${groups.map((g) => cell(g, f)).join(' | ')} |`)].join('\n');
}

function writeReport(r: ReportInput): void {
  const { date } = r;
  const gib = Math.round(os.totalmem() / 2 ** 30);
  const groups = groupsOf(r.results);
  const rounds = ROUNDS > 1 ? `${ROUNDS} rounds` : 'one round';
  const report = `## Referenced sources (bench/sources.ts)

Script: \`bench/sources.ts\`. Measured ${date} on ${os.availableParallelism()} cores (${os.cpus()[0]?.model.trim() ?? '?'}), ${gib} GiB,
Node ${process.version}, Kubernetes ${r.kubernetes}, etcd embedded. One cluster of the local control plane,
\`${CLUSTER}\`, started for the benchmark and stopped at the end. The operator: ${r.build}. The machine's
1-minute load average (everything on it, this benchmark's own cluster and processes included), sampled every
10 s during the run, was ${median(r.load).toFixed(1)} (median; ${Math.min(...r.load).toFixed(1)} to ${Math.max(...r.load).toFixed(1)}) on ${os.availableParallelism()} cores.
The whole benchmark took ${(r.totalMs / 60_000).toFixed(1)} min.

Method: ${rounds} of ${groups.length} cases (${ROUNDS > 1 ? 'the second round in the reverse order of the first' : 'in the order below'}); each case in a fresh namespace with its own operator process (\`node dist/cli/main.js run
--namespace <ns> --metrics-addr 127.0.0.1:0 --health-addr 127.0.0.1:0 --log-level debug\`, default
\`--concurrency 8\`), started and primed (\`/readyz\`) after the case's source objects were created, so the
clock covers only the Syncs. Every Sync \`s-<i>\` applies one ConfigMap \`out-<i>\` (about 80 B of YAML) into its
own namespace, with the default \`wait: true\`; the N Syncs are POSTed ${CREATE_CONCURRENCY} at a time.
- **distinct sources**: Sync \`s-<i>\` reads \`src-<i>\`, a ConfigMap or Secret holding \`out-<i>\`'s manifest under
  the key \`${KEY}\` (\`source.configMap/secret: {name: src-<i>, key: ${KEY}}\`), or an \`ExternalArtifact\` \`src-<i>\`
  (a stand-in CRD of Flux's, \`source.toolkit.fluxcd.io/v1\`) whose \`status.artifact.url\` points at a small HTTP
  server in the benchmark process serving \`out-<i>.yaml\`.
- **one shared source**: the N Syncs all read the same ConfigMap, \`${SHARED}\`, which holds N keys
  \`out-<i>.yaml\`, one manifest each; Sync \`s-<i>\` reads its own key (\`source.configMap: {name: ${SHARED},
  key: out-<i>.yaml}\`). This is the fair comparison: every Sync still applies one object of its own (the same N
  \`out-<i>\` as the distinct case, so no two Syncs own the same object and each case ends with the same N
  objects applied), in one namespace, with the same spec shape; only the number of source objects differs (one
  against N). Applying the same manifest from every Sync would make them fight over one object, and a namespace
  per Sync would change what is measured. Its cost: a key cannot be read alone, so every reconcile GETs the whole
  shared ConfigMap (N keys; its size is in the table), and any edit of it wakes all N Syncs (not measured here).
- **timing**: from the first POST to the last Sync seen Ready=True for its generation by a single watch on the
  namespace's Syncs, opened before the first POST (an event's time is when the watch delivered it).
- **connections**: established TCP connections of the operator's pid to the API server's port, counted from
  \`/proc/<pid>/fd\` and \`/proc/net/tcp{,6}\` (\`test/support/proc.ts\`), at all-Ready and sampled every
  ${SAMPLE_EVERY_MS} ms during the case (peak); \`syncprims_connections\` from \`/metrics\` where the build exports it.
  **Watches**: the sum of \`syncprims_watches\` from \`/metrics\`, at all-Ready and sampled (peak). **Memory**: VmHWM
  (peak resident set, since the process started) from \`/proc/<pid>/status\` at all-Ready. **CPU**: utime + stime of the
  operator (and of the cluster's kube-apiserver) from \`/proc/<pid>/stat\`, first POST → all Ready. **Reconciles**: the
  operator's \`reconciled\` debug lines per Sync, until ${SETTLE_MS / 1000} s after all Ready; requests: the change of
  \`syncprims_cluster_requests_total\` over the same span (every request: GETs include LISTs and WATCHes).
- **edits** (every round): with the ${int(KINDS_N)} distinct ConfigMap sources up and Ready (and ${SETTLE_MS / 1000} s quiet), a watch on the namespace's
  ConfigMaps is opened, then ${EDITS} sources (\`src-<i>\`, every ${Math.max(1, Math.floor(KINDS_N / EDITS))}th) are edited one after another by a
  server-side apply that gives \`out-<i>\` a new value. Each is timed from sending the PATCH to the ConfigMap watch
  delivering \`out-<i>\` with the new value (**edit → applied**), and to the Sync watch delivering the Sync
  Ready=True with a new \`lastAppliedRevision\` (**edit → Ready**); the next edit starts after that. Then, from the
  operator's log over the edits and ${SETTLE_MS / 1000} s after: \`reconciled\` lines of the Syncs that were not edited, and
  the causes listed in the edited Syncs' \`reconciled\` lines (the cause of the edit itself is
  \`ConfigMap <ns>/src-<i> changed (resourceVersion <the PATCH's>)\`).

Cases in run order: ${r.results.map((x) => `${x.order}. ${caseName(x.c)}${x.edits ? ' (then the edits)' : ''}`).join('; ')}.
${ROUNDS > 1 ? `Where a cell holds ${ROUNDS} values, they are round 1 / round 2${ROUNDS > 2 ? ' / …' : ''}; one value means every round gave it.` : ''}

${createTable(groups)}

Open watches at all-Ready, by resource (every round):
${groups.map((g) => `- ${caseName(g.c)}: ${item(g, (x) => watchList(x.atReady.watches))}`).join('\n')}

Causes listed in the \`reconciled\` lines, first POST → ${SETTLE_MS / 1000} s after all Ready (a line may list several; every round):
${groups.map((g) => `- ${caseName(g.c)}: ${item(g, (x) => causeList(x.causes))}`).join('\n')}
${editSection(r.results.filter((x) => x.edits))}
Reading:
${reading(groups, r.results)}
`;
  writeFileSync(OUT, report);
  console.log(`\n${report}`);
}

function editSection(runs: CaseResult[]): string {
  const edits = runs.flatMap((x) => (x.edits ? [x.edits] : []));
  if (!edits.length) return '';
  const all = (f: (e: EditResult) => number[]): number[] => edits.flatMap(f);
  const causes = (e: EditResult): string =>
    Object.entries(e.causes)
      .sort(([, a], [, b]) => b - a)
      .map(([k, v]) => `${k}: ${v} (took ${ms(median(e.causeMs[k] ?? []))} median)`)
      .join('; ');
  const rows: [string, (e: EditResult) => string, string][] = [
    ['**edit → applied: median**', (e) => `**${ms(median(e.applyMs))}**`, `**${ms(median(all((e) => e.applyMs)))}**`],
    ['edit → applied: worst', (e) => ms(max(e.applyMs)), ms(max(all((e) => e.applyMs)))],
    ['edit → Sync Ready=True with the new revision: median', (e) => ms(median(e.readyMs)), ms(median(all((e) => e.readyMs)))],
    ['edit → Sync Ready=True with the new revision: worst', (e) => ms(max(e.readyMs)), ms(max(all((e) => e.readyMs)))],
    [`**reconciles of the ${int(KINDS_N - EDITS)} Syncs not edited**`, (e) => `**${e.otherReconciles}**${e.otherSyncs.length ? ` (${e.otherSyncs.slice(0, 5).join(', ')})` : ''}`, `**${int(mean(edits.map((e) => e.otherReconciles)) * edits.length)}**`],
    ['reconciles per edited Sync: min / median / max', (e) => minMedMax(e.editedReconciles), minMedMax(all((e) => e.editedReconciles))],
    ['edited Syncs with a reconcile caused by their own edit (that ConfigMap, that resourceVersion)', (e) => `${e.causeMatched} of ${e.applyMs.length}`, `${edits.reduce((a, e) => a + e.causeMatched, 0)} of ${all((e) => e.applyMs).length}`],
    ["causes in the edited Syncs' `reconciled` lines", causes, ''],
    ['reconciles that failed (retried), all Syncs', (e) => int(e.failures), int(edits.reduce((a, e) => a + e.failures, 0))],
    ['`syncprims_reference_wakes_total`, change', (e) => int(e.referenceWakes), int(edits.reduce((a, e) => a + e.referenceWakes, 0))],
    ['the edits, one after another, in all', (e) => s2(e.windowMs), ''],
    ['operator CPU over the edits', (e) => ms(e.operatorCpuMs), ''],
  ];
  const header = `| ${EDITS} edits on ${int(KINDS_N)} × ${SOURCE_LABEL.configMap}, and ${SETTLE_MS / 1000} s after | ${runs.map((x) => `round ${x.round}`).join(' | ')} | all rounds |`;
  return `
${header}
|---|${runs.map(() => '---|').join('')}---|
${rows.map(([label, f, total]) => `| ${label} | ${edits.map(f).join(' | ')} | ${total} |`).join('\n')}

Edit → applied, every edit in order (ms): ${runs.map((x) => `round ${x.round}: ${x.edits?.applyMs.map(int).join(', ')}`).join('; ')}.
`;
}

function reading(groups: Group[], results: CaseResult[]): string {
  const lines: string[] = [];
  const find = (source: SourceKind, n: number) => groups.find((g) => g.c.source === source && g.c.n === n);
  const avg = (g: Group, f: (r: CaseResult) => number): number => mean(g.runs.map(f));
  for (const n of SIZES) {
    const d = find('configMap', n);
    const s = find('shared', n);
    if (!d || !s) continue;
    const ratios = d.runs.map((x, i) => (s.runs[i]?.readyMs ?? NaN) / x.readyMs);
    const verdict = ratios.every((x) => Math.abs(x - 1) < 0.1)
      ? 'within 10 % of each other in every round'
      : ratios.some((x) => x < 1) && ratios.some((x) => x > 1)
        ? 'the rounds disagree on which is faster, so the difference is within the noise'
        : `shared is ${ratios.every((x) => x > 1) ? 'slower' : 'faster'} in every round`;
    lines.push(
      `- ${int(n)} Syncs: distinct ConfigMaps all Ready in ${s2(avg(d, (x) => x.readyMs))}, one shared ConfigMap in ${s2(avg(s, (x) => x.readyMs))} ` +
        `(means over the rounds; shared / distinct per round: ${ratios.map((x) => x.toFixed(2)).join(', ')}: ${verdict}). ` +
        `Computed: one GET of the shared source per Sync (the GETs above are N + 3) × its size is ${int(n)} × ${int(avg(s, (x) => x.sourceBytes))} B ≈ ${((n * avg(s, (x) => x.sourceBytes)) / 1e6).toFixed(1)} MB read by the operator. ` +
        `A Sync's first reconcile took ${ms(avg(d, (x) => median(x.firstReconcileMs)))} ` +
        `against ${ms(avg(s, (x) => median(x.firstReconcileMs)))} (median); the benchmark's own GET of the source, ${ms(avg(d, (x) => x.readMs))} against ${ms(avg(s, (x) => x.readMs))} ` +
        `(${int(avg(s, (x) => x.sourceBytes))} bytes); operator CPU ${ms(avg(d, (x) => x.operatorCpuMs))} against ${ms(avg(s, (x) => x.operatorCpuMs))}, ` +
        `kube-apiserver CPU ${ms(avg(d, (x) => x.apiserverCpuMs))} against ${ms(avg(s, (x) => x.apiserverCpuMs))}; peak RSS ${mib(avg(d, (x) => x.atReady.hwmKiB))} against ${mib(avg(s, (x) => x.atReady.hwmKiB))}.`,
    );
  }
  const kinds = (['configMap', 'secret', 'artifact'] as const).map((k) => find(k, KINDS_N)).filter((g): g is Group => g !== undefined);
  if (kinds.length > 1) {
    lines.push(`- ${int(KINDS_N)} Syncs by kind of source (mean over the rounds): ${kinds.map((g) => `${SOURCE_LABEL[g.c.source]} ${s2(avg(g, (x) => x.readyMs))}`).join(', ')}.`);
  }
  const later = results.flatMap((x) => x.laterReconcileMs);
  const perSync = results.flatMap((x) => x.reconciles);
  const extraApplies = results.filter((x) => x.appliedLines !== x.c.n);
  lines.push(
    `- Reconciles per Sync while creating: ${minMedMax(perSync)} (min / median / max, every case and round). The first applied ` +
      `(${extraApplies.length ? `\`applied\` lines other than one per Sync in: ${extraApplies.map((x) => `${caseName(x.c)} round ${x.round}: ${x.appliedLines}`).join('; ')}` : 'one `applied` line per Sync in every case'}); ` +
      `the later ones took ${later.length ? `${ms(median(later))} (median; max ${ms(max(later))})` : '–'}; their causes are in the list above.`,
  );
  const conns = results.map((x) => x.peakConnections);
  const watches = results.map((x) => sumOf(x.atReady.watches));
  lines.push(
    `- Connections to the API server: ${Math.min(...conns)} to ${max(conns)} (peak of the samples, every case and round), whatever N; ` +
      `open watches at all-Ready: ${Math.min(...watches)} to ${max(watches)} (peak of the samples: up to ${max(results.map((x) => x.peakWatches))}), one per kind, not one per source object.`,
  );
  const retried = results.filter((x) => x.failures > 0);
  if (retried.length) {
    lines.push(`- Reconciles that failed and were retried: ${retried.map((x) => `${caseName(x.c)} (round ${x.round}) ${x.failures}`).join('; ')} (not-Ready reasons seen by the watch: ${retried.map((x) => JSON.stringify(x.notReadyReasons)).join('; ')}).`);
  }
  const edits = results.flatMap((x) => (x.edits ? [x.edits] : []));
  if (edits.length) {
    const apply = edits.flatMap((e) => e.applyMs);
    const others = edits.reduce((a, e) => a + e.otherReconciles, 0);
    const matched = edits.reduce((a, e) => a + e.causeMatched, 0);
    lines.push(
      `- An edit of one source reached its applied ConfigMap in ${ms(median(apply))} (median of ${apply.length}; worst ${ms(max(apply))}); ` +
        `${others === 0 ? 'no other Sync was reconciled meanwhile' : `other Syncs were reconciled ${others} times meanwhile`}, and ` +
        `${matched} of ${apply.length} edited Syncs were reconciled with their own edit (that resourceVersion) as the cause.`,
    );
  }
  return lines.join('\n');
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
