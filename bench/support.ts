// What the TypeScript benchmarks share: the local control plane, the CRDs,
// namespaces, waiting, the operator built from HEAD and run as a process, and
// the small statistics and formats they report.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createWriteStream, mkdirSync, readFileSync, rmSync, type WriteStream } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { promisify } from 'node:util';
import { approverPolicy } from '../src/api/approval.js';
import { customResourceDefinitions } from '../src/api/crds.js';
import { GROUP, KIND_NAMES, VERSION } from '../src/api/kinds.js';
import { FIELD_MANAGER } from '../src/api/marks.js';
import { mapLimit } from '../src/apply/map-limit.js';
import { serverSideApply } from '../src/kube/apply.js';
import type { KubeClient } from '../src/kube/client.js';
import { Discovery } from '../src/kube/discovery.js';
import { ApiError } from '../src/kube/errors.js';
import { collectionPath, type KubeObject, type ResourceInfo } from '../src/kube/resources.js';

const run = promisify(execFile);
/** USER_HZ: the unit of utime and stime in /proc/<pid>/stat. */
const CLOCK_TICKS_PER_SECOND = 100;

export const ROOT = process.cwd();
export const LOCAL = path.join(ROOT, '.local');
export const CONTROLPLANE = path.join(LOCAL, 'bin', 'controlplane');
export const SYNCS: ResourceInfo = { group: GROUP, version: VERSION, kind: 'Sync', resource: KIND_NAMES.Sync.plural, namespaced: true };

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Where a control plane lives: the shared one in .local (default), or an independent one (own directory and etcd). */
export interface ControlPlaneDir {
  dir: string;
  etcdPort?: number;
}

export async function controlplane(args: string[], plane: ControlPlaneDir = { dir: LOCAL }): Promise<string> {
  const flags = ['--dir', plane.dir, ...(plane.etcdPort !== undefined ? ['--etcd-port', String(plane.etcdPort)] : [])];
  const { stdout } = await run(CONTROLPLANE, [...flags, ...args], { timeout: 300_000 });
  return stdout;
}

export async function serverVersion(client: KubeClient): Promise<string> {
  const v = await client.request<{ gitVersion: string }>({ path: '/version' });
  return v.gitVersion;
}

export async function until(what: string, check: () => Promise<boolean>, timeoutMs = 300_000, everyMs = 200): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const ok = await check().catch(() => false);
    if (ok) return;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(everyMs);
  }
}

export function median(values: number[]): number {
  const sorted = values.filter((v) => !Number.isNaN(v)).sort((a, b) => a - b);
  if (sorted.length === 0) return NaN;
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? (sorted[mid] ?? NaN) : ((sorted[mid - 1] ?? NaN) + (sorted[mid] ?? NaN)) / 2;
}

export function processCpuMs(pid: number | undefined): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS_PER_SECOND;
  } catch {
    return NaN;
  }
}

/** The machine's CPU time so far, all cores, in ms: busy (everything but idle and iowait) and in all (/proc/stat). */
export function machineCpuMs(): { busy: number; total: number } {
  try {
    const fields = (readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '').trim().split(/\s+/).slice(1).map(Number);
    const total = fields.reduce((a, b) => a + b, 0);
    const idle = (fields[3] ?? 0) + (fields[4] ?? 0);
    return { busy: ((total - idle) * 1000) / CLOCK_TICKS_PER_SECOND, total: (total * 1000) / CLOCK_TICKS_PER_SECOND };
  } catch {
    return { busy: NaN, total: NaN };
  }
}

/** The share of the machine's CPU (all cores) busy since `from` (machineCpuMs). */
export function machineBusySince(from: { busy: number; total: number }): number {
  const now = machineCpuMs();
  return (now.busy - from.busy) / (now.total - from.total);
}

/** A share as a whole percentage ('?' when unknown). */
export const pct = (share: number | undefined): string => (share === undefined || Number.isNaN(share) ? '?' : `${Math.round(share * 100)}%`);

export async function installCrds(client: KubeClient): Promise<void> {
  const discovery = new Discovery(client);
  for (const crd of customResourceDefinitions()) {
    await serverSideApply(client, discovery, crd, { fieldManager: FIELD_MANAGER, force: true });
  }
  for (const crd of customResourceDefinitions()) {
    await until(`CRD ${crd.metadata.name} to be Established`, () => crdEstablished(client, crd.metadata.name));
  }
  // As crds/ ships it: without it the operator counts no RolloutApproval.
  for (const obj of approverPolicy()) await serverSideApply(client, discovery, obj, { fieldManager: FIELD_MANAGER, force: true });
  await until('Syncs to be served', async () => {
    await client.request({ path: collectionPath(SYNCS), query: { limit: 1 } });
    return true;
  });
}

export async function crdEstablished(client: KubeClient, name: string): Promise<boolean> {
  const crd = await client.request<{ status?: { conditions?: { type: string; status: string }[] } }>({
    path: `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${name}`,
  });
  return crd.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True') ?? false;
}

// ---------------------------------------------------------------- namespaces and waiting

/** The 1-minute load average every 10 s, for the report. */
export function sampleLoad(): { stop: () => number[] } {
  const samples = [os.loadavg()[0] ?? NaN];
  const timer = setInterval(() => samples.push(os.loadavg()[0] ?? NaN), 10_000);
  return {
    stop: () => {
      clearInterval(timer);
      return samples;
    },
  };
}

export async function withTimeout<T>(what: string, promise: Promise<T>, ms = 600_000): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms / 1000} s waiting for ${what}`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

export async function ignoreNotFound(promise: Promise<unknown>): Promise<void> {
  try {
    await promise;
  } catch (err) {
    if (!(err instanceof ApiError && err.notFound)) throw err;
  }
}

export async function exists(client: KubeClient, apiPath: string): Promise<boolean> {
  try {
    await client.request({ path: apiPath });
    return true;
  } catch (err) {
    if (err instanceof ApiError && err.notFound) return false;
    throw err;
  }
}

/** A new namespace named `<prefix>-<6 hex digits>`. */
export async function createNamespace(client: KubeClient, prefix: string): Promise<string> {
  const name = `${prefix}-${randomBytes(3).toString('hex')}`;
  await client.request({ method: 'POST', path: '/api/v1/namespaces', body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name } } });
  return name;
}

export async function deleteNamespace(client: KubeClient, namespace: string): Promise<void> {
  await ignoreNotFound(client.request({ method: 'DELETE', path: `/api/v1/namespaces/${namespace}` }));
  await until(`namespace ${namespace} to be gone`, async () => !(await exists(client, `/api/v1/namespaces/${namespace}`)));
}

/** Deletes a namespace holding Syncs (or the kinds of `resources`) once no operator runs: their finalizers are removed first. */
export async function deleteSyncNamespace(client: KubeClient, namespace: string, resources: ResourceInfo[] = [SYNCS]): Promise<void> {
  for (const r of resources) {
    const syncs = await client.request<{ items: KubeObject[] }>({ path: collectionPath(r, namespace), timeoutMs: 60_000 }).catch(() => ({ items: [] as KubeObject[] }));
    await mapLimit(syncs.items, 16, (sync) =>
      ignoreNotFound(
        client.request({
          method: 'PATCH',
          path: `${collectionPath(r, namespace)}/${sync.metadata.name}`,
          contentType: 'application/merge-patch+json',
          body: { metadata: { finalizers: null } },
        }),
      ),
    );
  }
  await deleteNamespace(client, namespace);
}

// ---------------------------------------------------------------- Sync status

export interface Condition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
  observedGeneration?: number;
}

export interface SyncStatus {
  conditions?: Condition[];
  observedGeneration?: number;
  lastHandledReconcileAt?: string;
  lastAttemptedRevision?: string;
  lastAppliedRevision?: string;
  inventory?: { entries?: unknown[] };
}

export const statusOf = (o: KubeObject): SyncStatus => (o.status ?? {}) as SyncStatus;

// ---------------------------------------------------------------- the operator

/**
 * Compiles the operator from the committed HEAD (`git archive`, then tsc with
 * the project's tsconfig.build.json) into `dir` (under .local/), so that what
 * is measured is one commit, whatever others do to src/ and dist/ during the
 * run. Returns a description for the report.
 */
export async function buildOperator(dir: string, ref = 'HEAD'): Promise<string> {
  const git = async (args: string[]): Promise<string> => (await run('git', args, { cwd: ROOT })).stdout.trim();
  const commit = await git(['rev-parse', '--short', ref]);
  const dirty = (await git(['status', '--porcelain', '--', 'src'])).split('\n').filter(Boolean).length;
  console.log(`compiling the operator from commit ${commit} into ${path.relative(ROOT, dir)}...`);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const files = ['src', 'package.json', 'tsconfig.json', 'tsconfig.build.json'];
  await run('bash', ['-c', `git archive ${commit} ${files.join(' ')} | tar -x -C "${dir}"`], { cwd: ROOT });
  // Inside the repository, so node_modules (and @types) are found by walking up.
  await run(process.execPath, [path.join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', path.join(dir, 'tsconfig.build.json')], {
    cwd: ROOT,
    maxBuffer: 16 * 2 ** 20,
  });
  const left = ref === 'HEAD' && dirty > 0 ? `; ${dirty} file${dirty === 1 ? '' : 's'} under \`src/\` had uncommitted changes, not measured` : '';
  return `compiled by the benchmark from commit ${commit} (\`git archive ${ref === 'HEAD' ? 'HEAD' : commit}\`, \`tsconfig.build.json\`)${left}`;
}

/** Which operator to run, against which cluster, and where its output goes. */
export interface OperatorTarget {
  /** dist/cli/main.js of a build from buildOperator(). */
  main: string;
  kubeconfig: string;
  /** Appended to: every line the process prints. */
  log: string;
}

export interface LogLine {
  msg: string;
  /** Epoch ms. */
  time: number;
  /** The whole JSON line. */
  fields: Record<string, unknown>;
}

const operators = new Set<OperatorProcess>();
const operatorLogs = new Map<string, WriteStream>();

/** `syncprims run` as a real process, watching one namespace. */
export class OperatorProcess {
  ports: { metrics?: number; health?: number } = {};
  private readonly logs: LogLine[] = [];
  private readonly exited: Promise<number | null>;
  private exitCode: number | null | undefined;

  private constructor(
    private readonly child: ChildProcess,
    log: WriteStream,
  ) {
    createInterface({ input: child.stdout! }).on('line', (line) => {
      log.write(`${line}\n`);
      try {
        const parsed = JSON.parse(line) as { msg?: string; time?: string; ports?: OperatorProcess['ports'] };
        if (parsed.msg === 'endpoints listening' && parsed.ports) this.ports = parsed.ports;
        if (parsed.msg && parsed.time) this.logs.push({ msg: parsed.msg, time: Date.parse(parsed.time), fields: parsed as Record<string, unknown> });
      } catch {
        // not a log line
      }
    });
    createInterface({ input: child.stderr! }).on('line', (line) => log.write(`stderr: ${line}\n`));
    this.exited = new Promise((resolve) =>
      child.on('exit', (code) => {
        this.exitCode = code;
        operators.delete(this);
        resolve(code);
      }),
    );
    operators.add(this);
  }

  /**
   * Starts `node <main> run --kubeconfig ... --namespace <namespace> --metrics-addr
   * 127.0.0.1:0 --health-addr 127.0.0.1:0 <extraArgs>` and resolves once /readyz answers.
   * `nodeArgs` go to node itself, before `<main>` (e.g. `--expose-gc`).
   */
  static async start(target: OperatorTarget, namespace: string | undefined, extraArgs: string[] = [], nodeArgs: string[] = []): Promise<OperatorProcess> {
    // No namespace: every namespace (on a cluster of the benchmark's own).
    const watched = namespace === undefined ? [] : ['--namespace', namespace];
    const args = ['run', '--kubeconfig', target.kubeconfig, ...watched, '--metrics-addr', '127.0.0.1:0', '--health-addr', '127.0.0.1:0', ...extraArgs];
    let log = operatorLogs.get(target.log);
    if (!log) operatorLogs.set(target.log, (log = createWriteStream(target.log, { flags: 'a' })));
    log.write(`--- ${new Date().toISOString()} node ${[...nodeArgs, path.relative(ROOT, target.main)].join(' ')} ${args.join(' ')}\n`);
    const op = new OperatorProcess(spawn(process.execPath, [...nodeArgs, target.main, ...args], { stdio: ['ignore', 'pipe', 'pipe'] }), log);
    const deadline = Date.now() + 60_000;
    for (;;) {
      if (op.exitCode !== undefined) throw new Error(`the operator exited with ${op.exitCode} (see ${target.log})`);
      if (Date.now() > deadline) throw new Error(`the operator was not ready within 60 s (see ${target.log})`);
      if (op.ports.health !== undefined && (await op.readyz())) return op;
      await sleep(50);
    }
  }

  private async readyz(): Promise<boolean> {
    const res = await fetch(`http://127.0.0.1:${this.ports.health}/readyz`).catch(() => undefined);
    await res?.text();
    return res?.ok ?? false;
  }

  /** Its log lines from `epoch` on. */
  logsSince(epoch: number): LogLine[] {
    return this.logs.filter((l) => l.time >= epoch);
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  /** The text of /metrics. */
  async metrics(): Promise<string> {
    return (await fetch(`http://127.0.0.1:${this.ports.metrics}/metrics`)).text();
  }

  /** syncprims_cluster_requests_total by method. */
  async requests(): Promise<Record<string, number>> {
    const text = await this.metrics();
    const counts: Record<string, number> = {};
    for (const line of text.split('\n')) {
      const m = /^syncprims_cluster_requests_total\{([^}]*)\} (\S+)$/.exec(line);
      const method = m && /method="([^"]*)"/.exec(m[1] ?? '')?.[1];
      if (m && method) counts[method] = (counts[method] ?? 0) + Number(m[2]);
    }
    return counts;
  }

  async stop(): Promise<void> {
    if (this.exitCode !== undefined) return;
    this.child.kill('SIGTERM');
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 30_000);
    await this.exited;
    clearTimeout(timer);
  }
}

/** Stops every operator process started here and closes their logs. */
export async function stopOperators(): Promise<void> {
  await Promise.all([...operators].map((op) => op.stop()));
  for (const log of operatorLogs.values()) log.end();
  operatorLogs.clear();
}


// ---------------------------------------------------------------- report

export const int = (n: number): string => (Number.isNaN(n) ? '?' : Math.round(n).toLocaleString('en-US'));
export const sec = (ms: number): string => (ms / 1000).toFixed(2);

/** How long `f` takes, in ms. */
export async function timed(f: () => unknown): Promise<number> {
  const t = performance.now();
  await f();
  return performance.now() - t;
}

/** `f` timed once ("first") and then `runs` times more, their median ("warm"), in ms. */
export async function firstAndWarm(f: () => unknown, runs: number): Promise<{ first: number; warm: number }> {
  const first = await timed(f);
  const rest: number[] = [];
  for (let i = 0; i < runs; i++) rest.push(await timed(f));
  return { first, warm: median(rest) };
}
