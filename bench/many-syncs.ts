// Many Syncs created at once from a few Flux artifacts, next to one Sync of as
// many objects, through a real `syncprims run` process (issue 14). On a
// control plane of the benchmark's own (.local/bench-many-plane, its own etcd
// on ETCD_PORT and the API server on PORT, free ports unless set: a test run
// that started the shared one in .local takes it down when it ends), and each
// case on a fresh cluster `bench-many` (started for the case, stopped after it),
// so that no case inherits another's objects, watches or audit log.
//
// Cases (SIZES, default 300,1000; OBJECTS, default 10; BASELINE, default 10000):
//   - N Syncs x OBJECTS ConfigMaps: ARTIFACTS (10) ExternalArtifacts (Flux's
//     source.toolkit.fluxcd.io/v1; a stand-in CRD, their status.artifact
//     written here as an artifact generator would, with the file's digest)
//     point at one YAML file of
//     OBJECTS ConfigMaps served over loopback HTTP; Sync i reads artifact
//     i mod ARTIFACTS with `defaultNamespace: t-<i>` (namespaces created
//     before the clock). All N POSTed at once (32 in flight), timed from the
//     first POST to the last Sync Ready=True for its generation (a watch).
//   - the baseline: one Sync of BASELINE ConfigMaps from one ExternalArtifact,
//     timed the same way, in the same run.
// Measured per case: time to all Ready; the operator's writes (audit log:
// create/update/patch/delete, dry runs apart, Lease renewals excluded) and its
// requests (`syncprims_cluster_requests_total`), per sync; 409 and 429
// answers; the operator's CPU time and peak RSS (VmHWM, /proc) and the API
// server's CPU time; reconciles per sync and their causes (`--log-level
// debug` lines); the work queue's waiting (`workqueue_queue_duration_seconds`)
// and working (`workqueue_work_duration_seconds`) time, and its retries. Then
// a restart: the operator is stopped (SIGTERM) and a new one started, and its
// requests, writes and dry runs in the RESTART_MS (60 s) after its start are
// counted. The case PROFILE (default 300 Syncs) runs the operator with
// `node --cpu-prof`; the report lists where its CPU time went, by function (the
// profile stays in .local/bench-many-profiles, for Chrome DevTools).
//
// BUILDS (default `head`) says which operators are measured, each in every
// case: `head` is compiled from the committed HEAD (`git archive`, as the other
// benchmarks do), `worktree` from the working tree's src/ (uncommitted changes
// included), so `BUILDS=head,worktree` measures a change against HEAD in one run.
//
// Run it with `bench/run.sh many-syncs` (from the repository root). It prints
// figures and writes docs/benchmarks/many-syncs.md (every figure also to
// .local/bench-many-results.json; `REPORT_FROM=<that file>` writes the report
// again without measuring); it asserts nothing about them.
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';
import { API_VERSION } from '../src/api/kinds.js';
import { mapLimit } from '../src/apply/map-limit.js';
import { KubeClient } from '../src/kube/client.js';
import { loadKubeConfigFile } from '../src/kube/config.js';
import { ApiError } from '../src/kube/errors.js';
import { collectionPath, type KubeObject } from '../src/kube/resources.js';
import { sampleValue } from '../test/support/prometheus.js';
import { CollectionWatch } from './collection-watch.js';
import { largestProfile, summarizeProfile, type ProfileSummary } from './cpu-profile.js';
import { summarizeHeapSnapshot, type HeapSummary } from './heap-snapshot.js';
import {
  buildOperator,
  controlplane,
  type ControlPlaneDir,
  installCrds,
  int,
  LOCAL,
  OperatorProcess,
  type OperatorTarget,
  machineBusySince,
  machineCpuMs,
  pct,
  processCpuMs,
  ROOT,
  sampleLoad,
  serverVersion,
  sleep,
  stopOperators,
  SYNCS,
  until,
  withTimeout,
} from './support.js';

const run = promisify(execFile);

const PREFIX = 'bench-many';
const CLUSTER = PREFIX;
const PLANE: ControlPlaneDir = { dir: path.join(LOCAL, `${PREFIX}-plane`), etcdPort: Number(process.env.ETCD_PORT ?? 0) };
const PORT = Number(process.env.PORT ?? 0);
const KUBECONFIG = path.join(PLANE.dir, `${CLUSTER}.kubeconfig`);
const AUDIT_LOG = path.join(PLANE.dir, `${CLUSTER}.audit.log`);
const OPERATOR_LOG = path.join(LOCAL, `${PREFIX}-operator.log`);
const PROFILES = path.join(LOCAL, `${PREFIX}-profiles`);
const SNAPSHOTS = path.join(LOCAL, `${PREFIX}-heap`);
const OUT = path.join(ROOT, 'docs', 'benchmarks', 'many-syncs.md');
const RESULTS = path.join(LOCAL, `${PREFIX}-results.json`);

const SIZES = (process.env.SIZES ?? '300,1000').split(',').map(Number).filter((n) => n > 0);
const OBJECTS = Number(process.env.OBJECTS ?? 10);
const BASELINE = Number(process.env.BASELINE ?? 10_000);
const ARTIFACTS = Number(process.env.ARTIFACTS ?? 10);
const PROFILE = Number(process.env.PROFILE ?? 300);
/** The case (by its number of Syncs) whose operator's heap is snapshotted once all are Ready (0: none). */
const HEAP_SNAPSHOT = Number(process.env.HEAP_SNAPSHOT ?? Math.max(0, ...SIZES));
const RESTART_MS = Number(process.env.RESTART_MS ?? 60_000);
const BUILDS = (process.env.BUILDS ?? 'head').split(',').filter(Boolean) as Build[];
/** More flags for the operator (e.g. `--concurrency 16`), in every case. */
const OPERATOR_ARGS = (process.env.OPERATOR_ARGS ?? '').split(' ').filter(Boolean);
/** Flags for node itself when it runs the operator (e.g. `--max-semi-space-size=4`), in every case. */
const OPERATOR_NODE_ARGS = (process.env.OPERATOR_NODE_ARGS ?? '').split(' ').filter(Boolean);
const READY_TIMEOUT_MS = Number(process.env.READY_TIMEOUT_MS ?? 900_000);

type Build = 'head' | 'worktree';
const BENCH_UA = 'syncprims-bench/many-syncs';
const OPERATOR_UA = 'syncprims-operator';
const SYNC_NS = 'many';
const CREATE_CONCURRENCY = 32;
const FLUX_GROUP = 'source.toolkit.fluxcd.io';
const FLUX_API_VERSION = `${FLUX_GROUP}/v1`;
const ARTIFACT_RESOURCE = 'externalartifacts';
const artifactPath = (name = ''): string => `/apis/${FLUX_API_VERSION}/namespaces/${SYNC_NS}/${ARTIFACT_RESOURCE}${name ? `/${name}` : ''}`;
const syncsPath = (): string => collectionPath(SYNCS, SYNC_NS);
const operatorDir = (build: Build): string => path.join(LOCAL, `${PREFIX}-operator-${build}`);
/** The version of the API servers measured (for the report). */
let kubernetes = '?';
const target = (build: Build): OperatorTarget => ({ main: path.join(operatorDir(build), 'dist', 'cli', 'main.js'), kubeconfig: KUBECONFIG, log: OPERATOR_LOG });

// ---------------------------------------------------------------- cases and results

interface Case {
  /** Syncs created at once. */
  syncs: number;
  /** ConfigMaps per Sync. */
  objects: number;
  /** Artifacts they share. */
  artifacts: number;
}

const cases = (): Case[] => [{ syncs: 1, objects: BASELINE, artifacts: 1 }, ...SIZES.map((n) => ({ syncs: n, objects: OBJECTS, artifacts: Math.min(ARTIFACTS, n) }))];
const caseName = (c: Case): string => (c.syncs === 1 ? `1 Sync x ${int(c.objects)} ConfigMaps` : `${int(c.syncs)} Syncs x ${int(c.objects)} ConfigMaps`);

interface Writes {
  total: number;
  dryRuns: number;
  /** `verb resource[/subresource]` -> count (dry runs apart). */
  byKind: Record<string, number>;
  /** Answers by status code (every write, dry runs included). */
  codes: Record<string, number>;
}

interface QueueFigures {
  reconciles: number;
  /** Seconds keys waited in the queue for a worker, summed. */
  queueSeconds: number;
  /** Seconds workers held keys, summed. */
  workSeconds: number;
  retries: number;
  errors: number;
}

interface CaseResult {
  build: Build;
  c: Case;
  readyMs: number;
  /** First POST → the first ConfigMap applied (a watch on the first target namespace). */
  firstObjectMs: number;
  writes: Writes;
  requests: Record<string, number>;
  operatorCpuMs: number;
  apiserverCpuMs: number;
  /** The share of the machine's CPU (all cores) busy from the first POST to all Ready. */
  machineBusy: number;
  peakRssKiB: number;
  /** The V8 heap's most used and most reserved bytes, sampled from the operator's metrics every 500 ms. */
  peakHeap: { usedBytes: number; totalBytes: number };
  queue: QueueFigures;
  causes: Record<string, number>;
  /** Files the artifact server served from the first POST until the counts were read. */
  fetched?: number;
  restart?: { ms: number; requests: Record<string, number>; writes: Writes; fetched?: number };
  profile?: ProfileSummary;
  /** The live heap once all were Ready (a snapshot). */
  heap?: HeapSummary;
}

// ---------------------------------------------------------------- the artifact server

const cmYaml = (names: string[]): string =>
  names.map((n) => `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${n}\n  labels:\n    app.kubernetes.io/part-of: many-syncs\ndata:\n  value: "v1"\n  more: "${'x'.repeat(64)}"\n`).join('---\n');

const sets = new Map<number, string>();
/** The file of n ConfigMaps `cm-<k>` (no namespace: each Sync's defaultNamespace places them). */
function setFile(n: number): string {
  let body = sets.get(n);
  if (body === undefined) sets.set(n, (body = cmYaml(Array.from({ length: n }, (_, k) => `cm-${k}`))));
  return body;
}

/** Serves `/set-<n>.yaml` (setFile), counting what it served. */
class ArtifactServer {
  served = 0;
  private readonly server = http.createServer((req, res) => {
    const n = /^\/set-(\d+)\.yaml/.exec(req.url ?? '')?.[1];
    if (!n) return void res.writeHead(404).end('not found');
    this.served++;
    res.writeHead(200, { 'content-type': 'application/yaml' }).end(setFile(Number(n)));
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

// ---------------------------------------------------------------- the cluster of a case

async function freshCluster(): Promise<{ client: KubeClient; apiserverPid: number }> {
  await controlplane(['down'], PLANE).catch(() => undefined);
  rmSync(PLANE.dir, { recursive: true, force: true });
  await controlplane(['up', `${CLUSTER}:${PORT}`], PLANE);
  const client = await KubeClient.create(CLUSTER, loadKubeConfigFile(KUBECONFIG), BENCH_UA);
  const pidFile = path.join(PLANE.dir, `${CLUSTER}.pid`);
  const apiserverPid = existsSync(pidFile) ? Number(readFileSync(pidFile, 'utf8').trim()) : NaN;
  await installCrds(client);
  await installExternalArtifactCrd(client);
  return { client, apiserverPid };
}

async function installExternalArtifactCrd(client: KubeClient): Promise<void> {
  const crd = {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${ARTIFACT_RESOURCE}.${FLUX_GROUP}` },
    spec: {
      group: FLUX_GROUP,
      scope: 'Namespaced',
      names: { plural: ARTIFACT_RESOURCE, singular: 'externalartifact', kind: 'ExternalArtifact', listKind: 'ExternalArtifactList' },
      versions: [{ name: 'v1', served: true, storage: true, subresources: { status: {} }, schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } }],
    },
  };
  await client.request({ method: 'POST', path: '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', body: crd });
  await until('ExternalArtifacts to be served', async () => {
    await client.request({ path: `/apis/${FLUX_API_VERSION}/${ARTIFACT_RESOURCE}`, query: { limit: 1 } });
    return true;
  });
}

async function createNamespace(client: KubeClient, name: string): Promise<void> {
  await client.request({ method: 'POST', path: '/api/v1/namespaces', body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name } } }).catch((err: unknown) => {
    if (!(err instanceof ApiError && err.conflict)) throw err;
  });
}

/**
 * ExternalArtifact `art-<j>`, its status.artifact pointing at
 * `<base>/set-<objects>.yaml` (revision `art-<j>@v1`), with the file's digest
 * and size, as Flux's source-controller writes them.
 */
async function createArtifact(client: KubeClient, j: number, base: string, objects: number): Promise<void> {
  const name = `art-${j}`;
  const created = await client.request<KubeObject>({
    method: 'POST',
    path: artifactPath(),
    body: { apiVersion: FLUX_API_VERSION, kind: 'ExternalArtifact', metadata: { name }, spec: { sourceRef: { apiVersion: 'example.test/v1', kind: 'Generator', name } } },
  });
  const now = new Date().toISOString();
  await client.request({
    method: 'PUT',
    path: `${artifactPath(name)}/status`,
    body: {
      ...created,
      status: {
        artifact: {
          path: `externalartifact/${SYNC_NS}/${name}/set.yaml`,
          url: `${base}/set-${objects}.yaml?artifact=${j}`,
          revision: `${name}@v1`,
          digest: `sha256:${createHash('sha256').update(setFile(objects)).digest('hex')}`,
          size: Buffer.byteLength(setFile(objects)),
          lastUpdateTime: now,
        },
        conditions: [{ type: 'Ready', status: 'True', reason: 'Succeeded', message: 'stored artifact', lastTransitionTime: now }],
      },
    },
  });
}

const syncObject = (i: number, c: Case): KubeObject => ({
  apiVersion: API_VERSION,
  kind: 'Sync',
  metadata: { name: `s-${i}`, namespace: SYNC_NS },
  spec: { source: { artifact: { apiVersion: FLUX_API_VERSION, kind: 'ExternalArtifact', name: `art-${i % c.artifacts}` } }, defaultNamespace: `t-${i}` },
});

const readyForGeneration = (o: KubeObject): boolean => {
  const s = (o.status ?? {}) as { observedGeneration?: number; conditions?: { type: string; status: string }[] };
  return s.observedGeneration === o.metadata.generation && (s.conditions ?? []).some((x) => x.type === 'Ready' && x.status === 'True');
};

// ---------------------------------------------------------------- audit log and metrics

interface AuditEvent {
  verb: string;
  requestURI: string;
  userAgent?: string;
  objectRef?: { resource?: string; subresource?: string };
  responseStatus?: { code?: number };
  requestReceivedTimestamp: string;
}

/** The operator's write requests (the audit policy logs writes only) received in [from, to] (epoch ms). */
function auditWrites(from: number, to: number): Writes {
  const out: Writes = { total: 0, dryRuns: 0, byKind: {}, codes: {} };
  if (!existsSync(AUDIT_LOG)) return out;
  for (const e of operatorEvents(from, to)) {
    const code = String(e.responseStatus?.code ?? '?');
    out.codes[code] = (out.codes[code] ?? 0) + 1;
    if (/[?&]dryRun=/.test(e.requestURI)) {
      out.dryRuns++;
      continue;
    }
    out.total++;
    const kind = `${e.verb} ${e.objectRef?.resource ?? '?'}${e.objectRef?.subresource ? `/${e.objectRef.subresource}` : ''}`;
    out.byKind[kind] = (out.byKind[kind] ?? 0) + 1;
  }
  return out;
}

/** The operator's audit events (Lease renewals apart) received in [from, to]. */
function operatorEvents(from: number, to: number): AuditEvent[] {
  return readFileSync(AUDIT_LOG, 'utf8')
    .split('\n')
    .filter((line) => line.includes(OPERATOR_UA))
    .map((line) => JSON.parse(line) as AuditEvent)
    .filter((e) => {
      const t = Date.parse(e.requestReceivedTimestamp);
      return t >= from && t <= to && (e.userAgent ?? '').startsWith(OPERATOR_UA) && e.objectRef?.resource !== 'leases';
    });
}

const diff = (after: Record<string, number>, before: Record<string, number>): Record<string, number> =>
  Object.fromEntries(Object.entries(after).map(([k, v]) => [k, v - (before[k] ?? 0)]).filter(([, v]) => (v as number) > 0));
const total = (counts: Record<string, number>): number => Object.values(counts).reduce((a, b) => a + b, 0);

async function queueFigures(op: OperatorProcess): Promise<QueueFigures> {
  const text = await op.metrics();
  const value = (name: string, labels: Record<string, string>): number => {
    const v = sampleValue(text, name, labels);
    return Number.isNaN(v) ? 0 : v;
  };
  let reconciles = 0;
  for (const result of ['success', 'requeue_after', 'error']) reconciles += value('controller_runtime_reconcile_total', { controller: 'sync', result });
  return {
    reconciles,
    queueSeconds: value('workqueue_queue_duration_seconds_sum', { name: 'sync' }),
    workSeconds: value('workqueue_work_duration_seconds_sum', { name: 'sync' }),
    retries: value('workqueue_retries_total', { name: 'sync' }),
    errors: value('controller_runtime_reconcile_errors_total', { controller: 'sync' }),
  };
}

/** Why the Syncs were reconciled (the `causes` of the `reconciled` debug lines), from `epoch` on. */
function causesSince(op: OperatorProcess, epoch: number): Record<string, number> {
  const out: Record<string, number> = {};
  for (const l of op.logsSince(epoch)) {
    if (l.msg !== 'reconciled' || l.fields.kind !== 'Sync') continue;
    for (const cause of (l.fields.causes as string[] | undefined) ?? []) {
      const k = cause.replace(/ [\w.-]+\/[\w.-]+ changed \(resourceVersion \d+\)$/, ' changed').replace(/^(owned object \w+): .*$/, '$1');
      out[k] = (out[k] ?? 0) + 1;
    }
  }
  return out;
}

/** The operator's V8 heap, used and reserved, at its highest (metrics read every 500 ms). */
class HeapSampler {
  private readonly peak = { usedBytes: 0, totalBytes: 0 };
  private readonly running: Promise<void>;
  private stopped = false;

  constructor(private readonly op: OperatorProcess) {
    this.running = this.loop();
  }

  async stop(): Promise<HeapSampler['peak']> {
    this.stopped = true;
    await this.running;
    return this.peak;
  }

  private async loop(): Promise<void> {
    while (!this.stopped) {
      const text = await this.op.metrics().catch(() => '');
      this.peak.usedBytes = Math.max(this.peak.usedBytes, sampleValue(text, 'nodejs_heap_size_used_bytes') || 0);
      this.peak.totalBytes = Math.max(this.peak.totalBytes, sampleValue(text, 'nodejs_heap_size_total_bytes') || 0);
      await sleep(500);
    }
  }
}

/** SIGUSR2 (`--heapsnapshot-signal`): the operator writes a snapshot of its heap into SNAPSHOTS; its summary. */
async function snapshotHeap(op: OperatorProcess): Promise<HeapSummary | undefined> {
  if (op.pid === undefined) return undefined;
  process.kill(op.pid, 'SIGUSR2');
  // Written synchronously on the operator's main thread: once it answers again, the file is complete.
  let file = '';
  await until('the heap snapshot', async () => {
    const found = existsSync(SNAPSHOTS) ? readdirSync(SNAPSHOTS).find((f) => f.endsWith('.heapsnapshot')) : undefined;
    if (!found || !(await op.metrics().then(() => true).catch(() => false))) return false;
    file = path.join(SNAPSHOTS, found);
    return true;
  });
  console.log(`   heap snapshot: ${path.relative(ROOT, file)}`);
  return summarizeHeapSnapshot(file);
}

function peakRssKiB(pid: number | undefined): number {
  try {
    return Number(/^VmHWM:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? NaN);
  } catch {
    return NaN;
  }
}

// ---------------------------------------------------------------- one case

async function runCase(build: Build, c: Case, artifacts: ArtifactServer, base: string): Promise<CaseResult> {
  console.log(`-- ${build}: ${caseName(c)}: a fresh cluster...`);
  const { client, apiserverPid } = await freshCluster();
  kubernetes = await serverVersion(client);
  try {
    await createNamespace(client, SYNC_NS);
    await mapLimit(Array.from({ length: c.syncs }, (_, i) => `t-${i}`), CREATE_CONCURRENCY, (ns) => createNamespace(client, ns));
    for (let j = 0; j < c.artifacts; j++) await createArtifact(client, j, base, c.objects);
    const profiled = c.syncs === PROFILE;
    rmSync(PROFILES, { recursive: true, force: true });
    const snapshotted = c.syncs === HEAP_SNAPSHOT;
    rmSync(SNAPSHOTS, { recursive: true, force: true });
    mkdirSync(SNAPSHOTS, { recursive: true });
    const nodeArgs = [
      ...OPERATOR_NODE_ARGS,
      ...(profiled ? ['--cpu-prof', `--cpu-prof-dir=${PROFILES}`] : []),
      ...(snapshotted ? ['--heapsnapshot-signal=SIGUSR2', `--diagnostic-dir=${SNAPSHOTS}`] : []),
    ];
    const op = await OperatorProcess.start(target(build), SYNC_NS, ['--log-level', 'debug', ...OPERATOR_ARGS], nodeArgs);
    const watch = await CollectionWatch.open(client, syncsPath());
    const firstObjects = await CollectionWatch.open(client, '/api/v1/namespaces/t-0/configmaps');
    let firstObjectAt = NaN;
    firstObjects.listen((s) => (firstObjectAt = Number.isNaN(firstObjectAt) ? s.at : firstObjectAt));
    try {
      const ready = new Set<string>();
      let allReady: () => void = () => {};
      const done = new Promise<void>((resolve) => (allReady = resolve));
      let lastAt = NaN;
      watch.listen((s) => {
        if (!readyForGeneration(s.object) || ready.has(s.object.metadata.name ?? '')) return;
        ready.add(s.object.metadata.name ?? '');
        lastAt = s.at;
        if (ready.size === c.syncs) allReady();
      });
      const requests = await op.requests();
      const heapSampler = new HeapSampler(op);
      const [cpu, apiCpu, machine] = [processCpuMs(op.pid), processCpuMs(apiserverPid), machineCpuMs()];
      const epoch = Date.now();
      const servedBefore = artifacts.served;
      const sentAt = performance.now();
      await mapLimit(Array.from({ length: c.syncs }, (_, i) => i), CREATE_CONCURRENCY, (i) =>
        client.request({ method: 'POST', path: syncsPath(), body: syncObject(i, c) }),
      );
      await withTimeout(`${c.syncs} Syncs to be Ready`, done, READY_TIMEOUT_MS);
      const readyMs = lastAt - sentAt;
      const operatorCpuMs = processCpuMs(op.pid) - cpu;
      const apiserverCpuMs = processCpuMs(apiserverPid) - apiCpu;
      const machineBusy = machineBusySince(machine);
      // Echoes of the last writes (owned objects' events) settle before the counts are read.
      await sleep(2_000);
      const peakHeap = await heapSampler.stop();
      const result: CaseResult = {
        build,
        c,
        readyMs,
        firstObjectMs: firstObjectAt - sentAt,
        writes: auditWrites(epoch - 5, Date.now()),
        requests: diff(await op.requests(), requests),
        operatorCpuMs,
        apiserverCpuMs,
        machineBusy,
        peakRssKiB: peakRssKiB(op.pid),
        peakHeap,
        queue: await queueFigures(op),
        causes: causesSince(op, epoch),
        fetched: artifacts.served - servedBefore,
      };
      // After the figures above: writing a snapshot takes memory of its own.
      if (snapshotted) result.heap = await snapshotHeap(op);
      await op.stop();
      if (profiled) {
        const file = largestProfile(PROFILES);
        if (file) result.profile = summarizeProfile(file);
      }
      if (c.syncs > 1) result.restart = await restart(build, artifacts);
      printCase(result);
      return result;
    } finally {
      watch.close();
      firstObjects.close();
      await stopOperators();
    }
  } finally {
    client.close();
  }
}

/** A new operator over the reconciled Syncs: what it sends in the RESTART_MS after it started. */
async function restart(build: Build, artifacts: ArtifactServer): Promise<CaseResult['restart']> {
  console.log(`   restart: counting the new operator's requests for ${RESTART_MS / 1000} s...`);
  const epoch = Date.now();
  const servedBefore = artifacts.served;
  const started = performance.now();
  const op = await OperatorProcess.start(target(build), SYNC_NS, OPERATOR_ARGS, OPERATOR_NODE_ARGS);
  await sleep(Math.max(0, RESTART_MS - (performance.now() - started)));
  const requests = await op.requests();
  const writes = auditWrites(epoch, Date.now());
  await op.stop();
  return { ms: RESTART_MS, requests, writes, fetched: artifacts.served - servedBefore };
}

// ---------------------------------------------------------------- operators

/** The working tree's src/ compiled into the build's directory (uncommitted changes included). */
async function buildWorktree(dir: string): Promise<string> {
  console.log(`compiling the operator from the working tree into ${path.relative(ROOT, dir)}...`);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  for (const f of ['src', 'package.json', 'tsconfig.json', 'tsconfig.build.json']) cpSync(path.join(ROOT, f), path.join(dir, f), { recursive: true });
  await run(process.execPath, [path.join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', path.join(dir, 'tsconfig.build.json')], { cwd: ROOT, maxBuffer: 16 * 2 ** 20 });
  const { stdout } = await run('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT });
  return `compiled from the working tree (HEAD ${stdout.trim()} and its uncommitted changes under \`src/\`)`;
}

// ---------------------------------------------------------------- main

interface ReportInput {
  date: string;
  kubernetes: string;
  builds: Record<string, string>;
  results: CaseResult[];
  operatorArgs: string[];
  load: number[];
  totalMs: number;
}

async function main(): Promise<void> {
  const load = sampleLoad();
  const began = performance.now();
  const builds: Record<string, string> = {};
  for (const b of BUILDS) builds[b] = b === 'head' ? await buildOperator(operatorDir(b)) : await buildWorktree(operatorDir(b));
  const artifacts = new ArtifactServer();
  const base = await artifacts.listen();
  const results: CaseResult[] = [];
  try {
    console.log(`a control plane of its own in ${path.relative(ROOT, PLANE.dir)} (ports: ${PORT ? `API server ${PORT}` : 'free ones'})`);
    for (const c of cases()) {
      for (const b of results.length % 2 ? [...BUILDS].reverse() : BUILDS) results.push(await runCase(b, c, artifacts, base));
    }
  } finally {
    load.stop();
    await stopOperators();
    await artifacts.close();
    await controlplane(['down'], PLANE).catch((err: unknown) => console.error(String(err)));
    rmSync(path.join(PLANE.dir, 'etcd'), { recursive: true, force: true });
    rmSync(AUDIT_LOG, { force: true });
    for (const b of BUILDS) rmSync(operatorDir(b), { recursive: true, force: true });
  }
  const input: ReportInput = { date: new Date().toISOString().slice(0, 10), kubernetes, builds, results, operatorArgs: OPERATOR_ARGS, load: load.stop(), totalMs: performance.now() - began };
  writeFileSync(RESULTS, JSON.stringify(input));
  writeReport(input);
}

// ---------------------------------------------------------------- printing and the report

const s2 = (ms: number): string => `${(ms / 1000).toFixed(2)} s`;
/** A share as a percentage (older results have none). */
const mib = (kib: number): string => `${(kib / 1024).toFixed(0)} MiB`;
const per = (n: number, syncs: number, digits = 1): string => (n / syncs).toFixed(digits);

function printCase(r: CaseResult): void {
  const n = r.c.syncs;
  const objects = n * r.c.objects;
  console.log(
    `   ${r.build}: ${caseName(r.c)}: all Ready in ${s2(r.readyMs)} (${int((objects / r.readyMs) * 1000)} objects/s; first object ${int(r.firstObjectMs)} ms); ` +
      `writes/sync ${per(r.writes.total, n)} (${JSON.stringify(r.writes.byKind)}), requests/sync ${per(total(r.requests), n)}; ` +
      `operator CPU ${s2(r.operatorCpuMs)}, API server CPU ${s2(r.apiserverCpuMs)}, machine CPU busy ${pct(r.machineBusy)}, peak RSS ${mib(r.peakRssKiB)}, peak heap ${heapFigure(r)}; ` +
      `artifact files fetched ${r.fetched ?? '?'} (${r.c.artifacts} artifacts); reconciles/sync ${per(r.queue.reconciles, n)}, queue wait ${per(r.queue.queueSeconds * 1000, r.queue.reconciles, 0)} ms/reconcile, work ${per(r.queue.workSeconds * 1000, r.queue.reconciles, 0)} ms/reconcile, retries ${r.queue.retries}`,
  );
  if (r.restart) console.log(`   restart: ${total(r.restart.requests)} requests (${JSON.stringify(r.restart.requests)}), ${r.restart.writes.total} writes, ${r.restart.writes.dryRuns} dry runs, ${r.restart.fetched ?? '?'} artifact files fetched in ${r.restart.ms / 1000} s`);
  if (r.profile) for (const [f, ms] of r.profile.top.slice(0, 8)) console.log(`   cpu: ${int(ms)} ms ${f}`);
  if (r.heap) console.log(`   live heap once Ready: ${mib(r.heap.totalBytes / 1024)} (${r.heap.groups.slice(0, 4).map((g) => `${g.what} ${mib(g.bytes / 1024)}`).join(', ')})`);
}

/** Peak heap used / reserved (older results have none). */
function heapFigure(r: CaseResult): string {
  return r.peakHeap ? `${mib(r.peakHeap.usedBytes / 1024)} / ${mib(r.peakHeap.totalBytes / 1024)}` : '?';
}

function caseRows(results: CaseResult[]): string[] {
  const rows = [
    '| case | operator | all Ready | objects/s | first object applied | writes/sync | requests/sync | 409s | operator CPU | API server CPU | machine CPU busy | peak RSS | peak heap (used / reserved) | reconciles/sync | queue wait/reconcile | work/reconcile | retries |',
    '|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|',
  ];
  for (const r of results) {
    const n = r.c.syncs;
    rows.push(
      `| ${caseName(r.c)} | ${r.build} | ${s2(r.readyMs)} | ${int((n * r.c.objects * 1000) / r.readyMs)} | ${int(r.firstObjectMs)} ms | ${per(r.writes.total, n)} | ${per(total(r.requests), n)} | ${r.writes.codes['409'] ?? 0} | ${s2(r.operatorCpuMs)} | ${s2(r.apiserverCpuMs)} | ${pct(r.machineBusy)} | ${mib(r.peakRssKiB)} | ${heapFigure(r)} | ${per(r.queue.reconciles, n)} | ${per(r.queue.queueSeconds * 1000, r.queue.reconciles, 0)} ms | ${per(r.queue.workSeconds * 1000, r.queue.reconciles, 0)} ms | ${int(r.queue.retries)} |`,
    );
  }
  return rows;
}

/** `--concurrency` of the measured operators (default 8). */
function workers(input: ReportInput): number {
  const at = (input.operatorArgs ?? []).indexOf('--concurrency');
  return at >= 0 ? Number(input.operatorArgs[at + 1]) : 8;
}

function loadRange(load: number[]): string {
  const sorted = [...load].filter((l) => !Number.isNaN(l)).sort((a, b) => a - b);
  if (sorted.length === 0) return '?';
  return `${sorted[0]!.toFixed(1)} to ${sorted.at(-1)!.toFixed(1)}, median ${(sorted[Math.floor(sorted.length / 2)] ?? NaN).toFixed(1)}`;
}

function writeReport(input: ReportInput): void {
  const { results } = input;
  const lines: string[] = [];
  const baseline = (b: Build): CaseResult | undefined => results.find((r) => r.build === b && r.c.syncs === 1);
  lines.push('## Many Syncs from a few artifacts (`bench/many-syncs.ts`)', '');
  lines.push(
    `Measured ${input.date} on Kubernetes ${input.kubernetes} (the local control plane: no pods), ${int(input.totalMs / 60_000)} min in all, on ${os.cpus().length} cores; load average (1 min, every 10 s) ${loadRange(input.load)}.`,
    `Operators: ${Object.entries(input.builds).map(([b, d]) => `\`${b}\`: ${d}`).join('; ')}${input.operatorArgs?.length ? `; run with \`${input.operatorArgs.join(' ')}\`` : ''}.`,
    '',
    'Method: each case on a fresh cluster of the benchmark\'s own control plane (`.local/bench-many-plane`, its own etcd). ' +
      `N Syncs, each reading one of ${ARTIFACTS} \`ExternalArtifact\`s (\`source.artifact\`; the stand-in CRD's \`status.artifact\` written by the benchmark with the file's \`digest\` as Flux's source-controller writes it, the file of ConfigMaps served over loopback HTTP) with \`defaultNamespace: t-<i>\`, ` +
      'are POSTed at once (32 in flight); the clock runs from the first POST to the last Sync seen `Ready=True` for its generation by a watch. ' +
      'The baseline is one Sync of as many ConfigMaps from one artifact, in the same run. The operator runs with `--log-level debug` (its `reconciled` lines give the reconciles and their causes). ' +
      'Writes come from the API server\'s audit log (create/update/patch/delete; dry runs and Lease renewals apart), requests from `syncprims_cluster_requests_total`, CPU from `/proc/<pid>/stat`, peak RSS from `VmHWM`, peak heap from `nodejs_heap_size_used_bytes` and `nodejs_heap_size_total_bytes` read every 500 ms; queue wait and work time from `workqueue_queue_duration_seconds` and `workqueue_work_duration_seconds`.',
    '',
  );
  lines.push(...caseRows(results), '');
  for (const r of results.filter((x) => x.c.syncs > 1)) {
    const b = baseline(r.build);
    if (!b) continue;
    const perObject = r.readyMs / (r.c.syncs * r.c.objects) / (b.readyMs / b.c.objects);
    const busy = (r.queue.workSeconds * 1000) / (workers(input) * r.readyMs);
    lines.push(
      `- \`${r.build}\`, ${caseName(r.c)}${r.profile ? ' (its operator under `--cpu-prof` for the profile below, whose sampling takes CPU in the run)' : ''}: ${s2(r.readyMs)} to all Ready, ${perObject.toFixed(2)}x the baseline's time per object (${caseName(b.c)}: ${s2(b.readyMs)}); ` +
        `its ${workers(input)} workers busy ${(busy * 100).toFixed(0)}% of that time (reconciles x work / workers / all Ready); writes per sync: ${Object.entries(r.writes.byKind).map(([k, v]) => `${k} ${per(v, r.c.syncs, 2)}`).join(', ')}; ` +
        `artifact files fetched: ${r.fetched ?? '?'} for ${int(r.c.syncs)} Syncs of ${r.c.artifacts} artifacts.`,
    );
  }
  lines.push('', '**Restart** over the reconciled Syncs (a new operator; its requests, writes, dry runs and artifact files fetched in the minute after it started):', '');
  lines.push('| case | operator | requests | by method | writes | dry runs | artifact files fetched |', '|---|---|---|---|---|---|---|');
  for (const r of results.filter((x) => x.restart)) {
    const rs = r.restart!;
    lines.push(`| ${caseName(r.c)} | ${r.build} | ${int(total(rs.requests))} | ${Object.entries(rs.requests).map(([k, v]) => `${k} ${int(v)}`).join(', ')} | ${int(rs.writes.total)} | ${int(rs.writes.dryRuns)} | ${rs.fetched ?? '?'} |`);
  }
  lines.push('', '**Why the Syncs were reconciled** (causes of the `reconciled` lines, per sync; a reconcile can have several):', '');
  for (const r of results.filter((x) => x.c.syncs > 1)) {
    lines.push(`- \`${r.build}\`, ${caseName(r.c)}: ${Object.entries(r.causes).sort((a, b) => b[1] - a[1]).map(([k, v]) => `${k} ${per(v, r.c.syncs, 2)}`).join(', ')}`);
  }
  for (const r of results.filter((x) => x.profile)) {
    const p = r.profile!;
    lines.push('', `**Where the operator's CPU time went** (\`node --cpu-prof\`, \`${r.build}\`, ${caseName(r.c)}, from its start to its stop: ${s2(p.totalMs)} profiled, ${s2(p.idleMs)} idle, ${s2(p.gcMs)} in GC):`, '');
    lines.push('| area | self time |', '|---|---|', ...p.byArea.map(([a, ms]) => `| ${a} | ${int(ms)} ms |`), '');
    lines.push('| function | self time |', '|---|---|', ...p.top.map(([f, ms]) => `| \`${f.replace(/\|/g, '\\|')}\` | ${int(ms)} ms |`));
  }
  for (const r of results.filter((x) => x.heap)) {
    const h = r.heap!;
    lines.push(
      '',
      `**What the operator's heap held once all were Ready** (\`${r.build}\`, ${caseName(r.c)}: a heap snapshot, \`--heapsnapshot-signal\`, taken 2 s after the last Ready; live objects only: ${mib(h.totalBytes / 1024)} in ${int(h.nodes)} heap objects, by what they are, self sizes):`,
      '',
      '| what | count | size |',
      '|---|---|---|',
      ...h.groups.map((g) => `| ${g.what} | ${int(g.count)} | ${(g.bytes / 2 ** 20).toFixed(1)} MiB |`),
    );
  }
  lines.push('', ...ANALYSIS);
  mkdirSync(path.dirname(OUT), { recursive: true });
  writeFileSync(OUT, `${lines.join('\n')}\n`);
  console.log(`wrote ${path.relative(ROOT, OUT)}`);
}

/** Runs of 1,000 x 10 after the last changes, besides the table's (filled in from those runs). */
const AFTER_RUNS =
  'two runs of the 1,000 x 10 case alone at 1.59x and 1.36x (load medians 3.1 and 3.0) on 2026-11-26; on 2026-11-27, four runs of the 1,000 x 10 case alone with its baseline (`SIZES=1000`), at 1.31x, 1.32x, 1.22x and 1.41x, the machine 94 to 98% busy in each';

/** What the figures say and what was changed (kept with the code that measures it). */
const ANALYSIS = [
  '**Where the time goes.** Every Sync is reconciled once. Until 2026-11-26 it was reconciled twice: its own',
  "finalizer patch and its ConfigMaps came back as watch events and queued a second reconcile that re-read health from",
  'the cache and sent nothing; now the addition of our own finalizer queues nothing, and the watch\'s echo of an apply',
  'whose answer health was read from wakes nobody (docs/runtime.md). Retries, 409 conflicts and 429s are zero, and no',
  "timer brings a reconcile. The operator's CPU is spread thin (the profile: HTTP/2 and socket writes, JSON, GC; no hot",
  "spot of ours). A new Sync's reconcile is a chain of round trips (the finalizer patch alongside the fetch of the file,",
  'the applies in parallel, the status; the Event is not waited for), `--concurrency` (8) reconciles are in flight, the',
  'workers are busy all the time (the bullets above), and the keys wait seconds in the queue for one while each',
  'reconcile works a couple of hundred ms. But the bound is the machine, not the queue: from the first POST to all Ready',
  "its 2 cores are busy 98% of the time (the column \"machine CPU busy\", from /proc/stat; the baseline's 94 to 95%),",
  'shared by the API server (its CPU the largest figure of every case), etcd (in the control plane\'s supervisor), the',
  "kube-controller-manager and the operator, so a reconcile's round trips are mostly waiting for CPU. More workers only",
  'queue more requests at the API server: measured separately on 2026-11-23 (the working tree, `OPERATOR_ARGS="--concurrency 32"`, a shared 2-core machine',
  'under load 7 to 8), 1,000 x 10 took 44.8 s against 25.8 s for the 10,000-object baseline of that run (1.74x per',
  'object, against 2.09x with 8 workers in a run under load 7 to 14 earlier that day), with the work per reconcile up',
  'from about 250 ms to 712 ms; at 300 x 10',
  '(load 4 to 6) 8, 32 and 64 workers gave 12.2 s, 11.2 s and 11.7 s, the work per reconcile 161, 577 and 1,199 ms:',
  'each round trip takes longer as more are in flight. The default `--concurrency` (8, API.md) is',
  'left as it is. So what is won is requests, writes and reconciles per Sync: a Sync of 10 objects costs 13 requests',
  "and 13 writes (the finalizer, its 10 objects, the Event, the status) where one Sync of many objects costs about one",
  'per object. On 2026-11-26: a new Sync\'s finalizer patch goes out alongside the fetch of its source (it lands before',
  'the first apply; the writer holds a status write of the Sync until it has), the Event of what it applied is not',
  'waited for (sent 16 at a time by the recorder), an artifact revision parsed a moment ago is not fetched and parsed',
  'again (docs/source.md: 1,000 Syncs of 10 artifacts fetch 10 files), the ExternalArtifact is read from the watch that',
  'woke the Sync instead of a GET each (Flux source objects are cached whole: docs/adr/0002-referenced-objects.md; 14',
  'requests per Sync before, 13 now), and the second reconcile is gone (1 per Sync, from 2).',
  '',
  'The ratio to the baseline moves a lot with the machine: the baseline itself (one Sync of 10,000) took 28 to 30 s on',
  '2026-11-23 and 11.8 to 19 s on 2026-11-26, and both cases keep the machine busy, so the ratio is that of the CPU',
  'each spends per object (bench/writes.ts: what the writes of a Sync cost the API server) and of what else runs. Before the last two',
  "changes (the ExternalArtifact's GET, the second reconcile), runs of 2026-11-26 gave 1,000 x 10 at 1.39x, 1.41x,",
  '1.50x, 1.60x, 1.61x and 1.83x the baseline\'s time per object; after them, the table above (the last full run) and',
  `${AFTER_RUNS}. The same working tree gave 1,000 x 10 at 2.09x in a run under load 7 to 14 on 2026-11-23 and at`,
  '0.87x in a quieter one. Compare within a run.',
  '',
  "**Memory.** The peak RSS at 1,000 x 10 was 225 to 233 MiB before 2026-11-26 (this benchmark, that day, the",
  "commit before: 233 MiB) against a live heap of 51 MiB once all were Ready (a heap snapshot). The rest was V8 letting",
  "its old generation grow up to 4x past what its last full GC kept while the operator allocates fast: the state of",
  "in-flight requests (HTTP/2 streams, bodies, promises; a sampling heap profile that kept objects collected by full GCs",
  'put 80 of its 279 MiB under our HTTP/2 send) outlives a young-generation GC or two and dies in the old one. Three',
  'changes (docs/runtime.md, Memory): `syncprims run` sets V8\'s heap growing factor to 1.3 (233 -> about 150 MiB',
  'alone, no change in time beyond the noise; 1.2x and 1.5x gave the same within 5 MiB); each Sync no longer keeps',
  'the answers of its last apply (full managedFields) next to the cached copies, and equal managedFields field sets',
  'are kept once (live heap 51 -> 32 MiB); and a KubeConfig of our own instead of client-node\'s, which loaded its',
  'generated API, node-fetch, proxy agents and a module-hooks thread (the operator\'s modules: 99 -> 68 MiB of RSS,',
  'bench/module-memory.ts). Tried and not kept: `--optimize-for-size` (132 MiB, twice the CPU), smaller semi-spaces',
  '(`--max-semi-space-size=4`: 189 MiB alone; a start-up flag, not settable by the operator itself).',
];

async function entry(): Promise<void> {
  if (process.env.REPORT_FROM) {
    writeReport(JSON.parse(readFileSync(process.env.REPORT_FROM, 'utf8')) as ReportInput);
    return;
  }
  await main();
}

entry().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
