// What the soak stages (`make soak`, soak/run.sh) share: a control plane of
// their own on free ports (not the shared clusters), a snapshot of the built
// operator (so a rebuild of dist/ during a long stage changes nothing), what
// a process holds read from /proc, the API server's and the operator's
// /metrics and least-squares slopes. Each stage's result file: soak-result.ts.
// Built on bench/support.ts, as the benchmarks are (no jest here).
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, readlinkSync, rmSync } from 'node:fs';
import path from 'node:path';
import { controlplane, installCrds, ROOT, until, type ControlPlaneDir, type OperatorTarget } from '../../bench/support.js';
import { KubeClient } from '../../src/kube/client.js';
import { loadKubeConfigFile } from '../../src/kube/config.js';
import { auditLogText } from './audit-files.js';
import { SCALE, SOAK_DIR } from './soak-result.js';

export const scaled = (n: number, min = 1): number => Math.max(min, Math.round(n * SCALE));

export interface Plane {
  plane: ControlPlaneDir;
  clusters: Record<string, { client: KubeClient; kubeconfig: string; auditLog: string; apiserverPid: number }>;
  down(): Promise<void>;
}

/**
 * A control plane of the stage's own in .local/soak/<name>-plane: its own
 * etcd and API servers on free ports (`--etcd-port 0`, `NAME:0`), fresh, with
 * syncprims' CRDs installed in each cluster.
 */
export async function ownPlane(name: string, clusters: string[]): Promise<Plane> {
  const plane: ControlPlaneDir = { dir: path.join(SOAK_DIR, `${name}-plane`), etcdPort: 0 };
  await controlplane(['down'], plane).catch(() => undefined);
  rmSync(plane.dir, { recursive: true, force: true });
  mkdirSync(plane.dir, { recursive: true });
  await controlplane(['up', ...clusters.map((c) => `${c}:0`)], plane);
  const out: Plane['clusters'] = {};
  for (const c of clusters) {
    const kubeconfig = path.join(plane.dir, `${c}.kubeconfig`);
    const client = await KubeClient.create(c, loadKubeConfigFile(kubeconfig), `syncprims-soak/${name}`);
    const pidFile = path.join(plane.dir, `${c}.pid`);
    const apiserverPid = existsSync(pidFile) ? Number(readFileSync(pidFile, 'utf8').trim()) : NaN;
    await installCrds(client);
    out[c] = { client, kubeconfig, auditLog: path.join(plane.dir, `${c}.audit.log`), apiserverPid };
  }
  return {
    plane,
    clusters: out,
    down: async () => {
      for (const c of Object.values(out)) c.client.close();
      await controlplane(['down'], plane).catch((err: unknown) => console.error(String(err)));
      rmSync(path.join(plane.dir, 'etcd'), { recursive: true, force: true });
    },
  };
}

/** The built operator (dist/), copied with package.json into .local/soak/operator: a stage measures one build. */
export function snapshotOperator(kubeconfig: string, log: string): OperatorTarget {
  const dir = path.join(SOAK_DIR, 'operator');
  if (!existsSync(path.join(ROOT, 'dist', 'cli', 'main.js'))) throw new Error('dist/ is not built: run `make build` (make soak does)');
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  cpSync(path.join(ROOT, 'dist'), path.join(dir, 'dist'), { recursive: true });
  cpSync(path.join(ROOT, 'package.json'), path.join(dir, 'package.json'));
  return { main: path.join(dir, 'dist', 'cli', 'main.js'), kubeconfig, log };
}

// ---------------------------------------------------------------- /proc

function status(pid: number): string {
  return readFileSync(`/proc/${pid}/status`, 'utf8');
}

/** Resident memory now (VmRSS) and at its peak (VmHWM), in KiB. */
export function memoryKiB(pid: number): { rss: number; peak: number } {
  const text = status(pid);
  const field = (name: string): number => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(text)?.[1] ?? NaN);
  return { rss: field('VmRSS'), peak: field('VmHWM') };
}

/** Open file descriptors of a process, and how many of them are sockets. */
export function openFds(pid: number): { fds: number; sockets: number } {
  let fds = 0;
  let sockets = 0;
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    fds++;
    try {
      if (readlinkSync(`/proc/${pid}/fd/${fd}`).startsWith('socket:')) sockets++;
    } catch {
      // closed meanwhile
    }
  }
  return { fds, sockets };
}

// ---------------------------------------------------------------- figures

/** Slope of y over x by least squares (NaN with fewer than 3 points). */
export function slope(points: [number, number][]): number {
  const n = points.length;
  if (n < 3) return NaN;
  const mx = points.reduce((a, [x]) => a + x, 0) / n;
  const my = points.reduce((a, [, y]) => a + y, 0) / n;
  let sxy = 0;
  let sxx = 0;
  for (const [x, y] of points) {
    sxy += (x - mx) * (y - my);
    sxx += (x - mx) ** 2;
  }
  return sxx === 0 ? NaN : sxy / sxx;
}

interface AuditEvent {
  verb: string;
  requestURI: string;
  userAgent?: string;
  objectRef?: { resource?: string; subresource?: string };
  requestReceivedTimestamp: string;
}

const counted = (e: AuditEvent, from: number, to: number, userAgent: string): boolean => {
  const t = Date.parse(e.requestReceivedTimestamp);
  return t >= from && t <= to && (e.userAgent ?? '').startsWith(userAgent) && e.objectRef?.resource !== 'leases' && !/[?&]dryRun=/.test(e.requestURI);
};

/** The operator's write requests in the audit log of a cluster (dry runs and Lease renewals apart), received in [from, to] (epoch ms), by `verb resource`. */
export function auditWrites(auditLog: string, from: number, to: number, userAgent = 'syncprims-operator'): { total: number; byKind: Record<string, number> } {
  const out = { total: 0, byKind: {} as Record<string, number> };
  for (const line of auditLogText(auditLog, from).split('\n')) {
    if (!line.includes(userAgent)) continue;
    const e = JSON.parse(line) as AuditEvent;
    if (!counted(e, from, to, userAgent)) continue;
    const kind = `${e.verb} ${e.objectRef?.resource ?? '?'}${e.objectRef?.subresource ? `/${e.objectRef.subresource}` : ''}`;
    out.byKind[kind] = (out.byKind[kind] ?? 0) + 1;
    out.total++;
  }
  return out;
}

/** Whether `condition` comes to hold within `timeoutMs` (polled): for a check, where a timeout is a failed check, not a crash. */
export async function holds(condition: () => Promise<boolean>, timeoutMs: number): Promise<boolean> {
  return until('a check to hold', condition, timeoutMs, 500).then(
    () => true,
    () => false,
  );
}

export const mib = (kib: number): string => `${(kib / 1024).toFixed(0)} MiB`;
