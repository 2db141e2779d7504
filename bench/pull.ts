// Pull mode (docs/pull.md, ADR 0012) at fleet size, against push in the same
// run, on a control plane of the benchmark's own (.local/bench-pull-plane, its
// own etcd): the managing cluster `bench-pull-mgmt` and one downstream API
// server `bench-pull-edge`, started for each size and stopped at the end.
//
// For each N of PULL_SIZES (default 1000), two cases, each with a fresh
// managing operator (a real `syncprims run`, every namespace, compiled from
// the committed HEAD) and first an idle window with none of its clusters
// (the baseline of the same processes):
//   push (the baseline, first): N identities on bench-pull-edge as in
//     bench/fleet.ts (a namespace `fleet-<i>`, a ServiceAccount confined to
//     it, a token), their kubeconfigs in Secrets of mgmt labelled as an
//     inventory, and one FleetSync of kind RemoteSync over them (one
//     ConfigMap into `${namespace}`, substituted from each Secret's value).
//   pull: N pull clusters `p-<i>` registered in mgmt by the code of `syncprims
//     cluster add --pull` (addPullCluster: the registration Secret, the
//     assignments namespace, the ServiceAccount with its Role, a token and a
//     join bundle each), N real agents (bench/pull-agents.ts: PullUpstream,
//     as `run --upstream-kubeconfig` starts it, in AGENT_HOSTS processes,
//     each agent's home one namespace `p-<i>` of bench-pull-edge), one real
//     `syncprims run` on bench-pull-edge reconciling the Syncs the agents
//     write there, and one FleetSync of kind ProxySync over the N (the remote
//     Sync `${cluster_name}/app`, the same ConfigMap).
// Measured in each case: the FleetSync's POST → all N children Ready; an idle
// window (IDLE_MS, 60 s) once all are Ready: requests per second to each API
// server (its own apiserver_request_total, from /metrics), its open watches
// (apiserver_longrunning_requests), the CPU (/proc, utime+stime) over the
// window and RSS at its end of each kube-apiserver process (one process per
// cluster; etcd is shared, in the supervisor, not counted), of the operators
// and of the agents' processes; then one template change (the ConfigMap's
// value) → all N children Ready=True for their new generation with a new
// lastAppliedRevision (a watch of the children, not polling).
//
// Run it with `bench/run.sh pull`. It writes docs/benchmarks/pull.md (and the
// figures to .local/bench-pull-results.json; REPORT_FROM=<that file> writes
// the report again without measuring).
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { API_VERSION } from '../src/api/kinds.js';
import { mapLimit } from '../src/apply/map-limit.js';
import type { KubeClient } from '../src/kube/client.js';
import { collectionPath, type KubeObject } from '../src/kube/resources.js';
import { CollectionWatch } from './collection-watch.js';
import { benchPlaces, createIdentities, onOwnPlane, resource, runOrReport, type Identity } from './fleet-setup.js';
import { configMaps, secretObject } from './identities.js';
import type { AgentHostSpec } from './pull-agents.js';
import { buildOperator, deleteSyncNamespace, installCrds, int, LOCAL, OperatorProcess, processCpuMs, ROOT, sec, serverVersion, sleep, statusOf } from './support.js';
import { memoryKiB, readyTrue, Tracker } from './tracker.js';

const PREFIX = 'bench-pull';
const { mgmt: MGMT, plane: PLANE, kubeconfigFile, results: RESULTS, operatorDir: OPERATOR_DIR, operator: OPERATOR } = benchPlaces(PREFIX);
const EDGE = `${PREFIX}-edge`;
const SIZES = (process.env.PULL_SIZES ?? '1000').split(',').map(Number).filter((n) => n > 0);
const IDLE_MS = Number(process.env.IDLE_MS ?? 60_000);
const AGENT_HOSTS = Number(process.env.AGENT_HOSTS ?? 2);
const TIMEOUT_MS = Number(process.env.PULL_TIMEOUT_MS ?? 900_000);
const REGISTER_CONCURRENCY = 16;
const CREATE_CONCURRENCY = 32;
const INVENTORY = { push: 'bench-push', pull: 'bench-pull' } as const;
const FLEET_NAME = { push: 'push', pull: 'pull' } as const;
const CLUSTER_LABEL = 'syncprims.dev/cluster';
const NAMESPACE_VALUE = 'values.syncprims.dev/namespace';
const JOIN_DIR = path.join(LOCAL, `${PREFIX}-join`);
const EDGE_OPERATOR = { ...OPERATOR, kubeconfig: kubeconfigFile(EDGE), log: path.join(LOCAL, `${PREFIX}-edge-operator.log`) };
const AGENTS_LOG = path.join(LOCAL, `${PREFIX}-agents.log`);
const OUT = path.join(ROOT, 'docs', 'benchmarks', 'pull.md');
const HERE = path.dirname(fileURLToPath(import.meta.url));

type CaseKind = 'push' | 'pull';

/** One API server's requests over a window, from its own apiserver_request_total. */
interface ServerWindow {
  requests: number;
  rps: number;
  /** By `VERB resource[/subresource]`. */
  byKind: Record<string, number>;
  /** apiserver_longrunning_requests (WATCH) at the window's end. */
  watches: number;
  cpuMs: number;
  rssKiB: number;
}

interface Window {
  ms: number;
  servers: Record<string, ServerWindow>;
  /** CPU ms over the window and RSS at its end of the other processes measured (operators, agents). */
  procs: Record<string, { cpuMs: number; rssKiB: number }>;
}

interface Timing {
  ms: number;
  halfMs: number;
  ready: number;
  reasons: Record<string, number>;
  error?: string;
}

interface CaseResult {
  kind: CaseKind;
  n: number;
  /** Identities (push) or registrations (pull), and the agents' start (pull). */
  setupMs: number;
  agentsMs?: number;
  before: Window;
  rollout: Timing;
  rest: Window;
  change: Timing;
}

interface Report {
  date: string;
  build: string;
  kubernetes: string;
  cpus: number;
  memGiB: number;
  load: number;
  idleMs: number;
  agentHosts: number;
  runs: { n: number; push: CaseResult; pull: CaseResult }[];
}

// ---------------------------------------------------------------- measuring

const range = (n: number): number[] => Array.from({ length: n }, (_, i) => i);
const apiserverPid = (cluster: string): number => Number(readFileSync(path.join(PLANE.dir, `${cluster}.pid`), 'utf8').trim());
const cpuOf = (pids: (number | undefined)[]): number => pids.reduce<number>((a, pid) => a + processCpuMs(pid), 0);
const rssOf = (pids: (number | undefined)[]): number => pids.reduce<number>((a, pid) => a + memoryKiB(pid).rss, 0);
const joinFile = (i: number): string => path.join(JOIN_DIR, `p-${i}.join.yaml`);

/** apiserver_request_total summed by `VERB resource[/subresource]` (requests for no resource, /metrics among them, left out), and the open watches. */
async function serverCounts(client: KubeClient): Promise<{ byKind: Record<string, number>; watches: number }> {
  const text = await client.request<string>({ path: '/metrics', accept: 'text/plain', maxBytes: 256 * 2 ** 20, timeoutMs: 60_000 });
  const byKind: Record<string, number> = {};
  let watches = 0;
  for (const line of text.split('\n')) {
    const m = /^(apiserver_request_total|apiserver_longrunning_requests)\{([^}]*)\} (\S+)$/.exec(line);
    if (!m) continue;
    const label = (k: string): string => new RegExp(`(?:^|,)${k}="([^"]*)"`).exec(m[2] ?? '')?.[1] ?? '';
    if (m[1] === 'apiserver_longrunning_requests') {
      if (label('verb') === 'WATCH') watches += Number(m[3]);
      continue;
    }
    if (!label('resource')) continue;
    const kind = `${label('verb')} ${label('resource')}${label('subresource') ? `/${label('subresource')}` : ''}`;
    byKind[kind] = (byKind[kind] ?? 0) + Number(m[3]);
  }
  return { byKind, watches };
}

/** The processes measured besides the API servers: name → pids. */
type Procs = Record<string, (number | undefined)[]>;

/** An idle window: the API servers' own request counts, their and the other processes' CPU over it and RSS at its end. */
async function idleWindow(clients: Map<string, KubeClient>, procs: Procs, label: string): Promise<Window> {
  const servers = [MGMT, EDGE];
  console.log(`  ${label}: idle for ${IDLE_MS / 1000} s...`);
  const counts0 = await Promise.all(servers.map((s) => serverCounts(clients.get(s)!)));
  const cpu0 = servers.map((s) => processCpuMs(apiserverPid(s)));
  const procCpu0 = Object.fromEntries(Object.entries(procs).map(([k, pids]) => [k, cpuOf(pids)]));
  const t0 = performance.now();
  await sleep(IDLE_MS);
  const counts1 = await Promise.all(servers.map((s) => serverCounts(clients.get(s)!)));
  const ms = performance.now() - t0;
  const window: Window = { ms, servers: {}, procs: {} };
  for (const [k, s] of servers.entries()) {
    const byKind: Record<string, number> = {};
    for (const [kind, v] of Object.entries(counts1[k]!.byKind)) if (v - (counts0[k]!.byKind[kind] ?? 0) > 0) byKind[kind] = v - (counts0[k]!.byKind[kind] ?? 0);
    const requests = Object.values(byKind).reduce((a, b) => a + b, 0);
    const pid = apiserverPid(s);
    window.servers[s] = { requests, rps: requests / (ms / 1000), byKind, watches: counts1[k]!.watches, cpuMs: processCpuMs(pid) - cpu0[k]!, rssKiB: memoryKiB(pid).rss };
  }
  for (const [k, pids] of Object.entries(procs)) window.procs[k] = { cpuMs: cpuOf(pids) - (procCpu0[k] ?? 0), rssKiB: rssOf(pids) };
  console.log(`  ${label}: ${servers.map((s) => `${s} ${window.servers[s]!.rps.toFixed(1)} requests/s, ${int(window.servers[s]!.watches)} watches, CPU ${((window.servers[s]!.cpuMs / ms) * 100).toFixed(1)}%`).join('; ')}`);
  return window;
}

// ---------------------------------------------------------------- the fleets

/** The FleetSync of a case: every cluster of its inventory, one ConfigMap holding `value`. */
function fleetSpec(kind: CaseKind, value: string): Record<string, unknown> {
  const inline = configMaps(PREFIX, 1, 'cm', value);
  const clusters = { selector: { matchLabels: { bench: kind } } };
  if (kind === 'push') return { kind: 'RemoteSync', clusters, substitute: {}, template: { spec: { defaultNamespace: '${namespace}', source: { inline } } } };
  // Each pull cluster's Sync goes to its agent's home: the namespace named as the cluster.
  return { kind: 'ProxySync', clusters, substitute: {}, template: { metadata: { name: 'app', namespace: '${cluster_name}' }, spec: { defaultNamespace: '${cluster_name}', source: { inline } } } };
}

/** Ready=True for a generation after the one seen now, with another lastAppliedRevision: the change carried out. */
function changedAndReady(watch: CollectionWatch, names: string[]): (o: KubeObject) => boolean {
  const before = new Map(
    names.map((name) => {
      const o = watch.latestOf(name)?.object;
      return [name, { generation: o?.metadata.generation ?? 0, revision: o ? statusOf(o).lastAppliedRevision : undefined }] as const;
    }),
  );
  return (o) => {
    const b = before.get(o.metadata.name ?? '');
    return b !== undefined && (o.metadata.generation ?? 0) > b.generation && readyTrue(o) && statusOf(o).lastAppliedRevision !== b.revision;
  };
}

/** From just before `write` until every one of `names` passes `test` on the watch. */
async function timed(watch: CollectionWatch, names: string[], test: (o: KubeObject) => boolean, write: () => Promise<unknown>, what: string): Promise<Timing> {
  const t0 = performance.now();
  const tracker = new Tracker(watch, new Set(names), test, t0);
  await write();
  let error: string | undefined;
  await tracker.wait(what, TIMEOUT_MS).catch((err: unknown) => {
    error = String(err);
    console.error(`  ${error}`);
  });
  const timing: Timing = { ms: error ? performance.now() - t0 : tracker.last, halfMs: tracker.quantile(0.5), ready: tracker.at.size, reasons: tracker.reasons, error };
  console.log(`  ${what}: ${sec(timing.ms)} (half ${sec(timing.halfMs)}), ${int(timing.ready)} of ${int(names.length)}`);
  return timing;
}

/** The FleetSync POSTed (→ all children Ready), an idle window, then one template change (→ all Ready for it). */
async function rolloutRestChange(clients: Map<string, KubeClient>, kind: CaseKind, n: number, procs: Procs): Promise<Pick<CaseResult, 'rollout' | 'rest' | 'change'>> {
  const mgmt = clients.get(MGMT)!;
  const childKind = kind === 'push' ? 'RemoteSync' : 'ProxySync';
  const fleets = collectionPath(resource('FleetSync'), INVENTORY[kind]);
  const watch = await CollectionWatch.open(mgmt, collectionPath(resource(childKind), INVENTORY[kind]));
  try {
    const names = range(n).map((i) => `${FLEET_NAME[kind]}-${kind === 'push' ? 'c' : 'p'}-${i}`);
    const body = { apiVersion: API_VERSION, kind: 'FleetSync', metadata: { name: FLEET_NAME[kind] }, spec: fleetSpec(kind, 'v1') };
    const rollout = await timed(watch, names, readyTrue, () => mgmt.request({ method: 'POST', path: fleets, body }), `${kind}: the FleetSync's POST → ${n} ${childKind}s Ready`);
    await sleep(5_000); // the last status writes settle
    const rest = await idleWindow(clients, procs, `${kind}: at rest`);
    const patch = { spec: { template: (fleetSpec(kind, 'v2') as { template: unknown }).template } };
    const change = await timed(
      watch,
      names,
      changedAndReady(watch, names),
      () => mgmt.request({ method: 'PATCH', path: `${fleets}/${FLEET_NAME[kind]}`, contentType: 'application/merge-patch+json', body: patch }),
      `${kind}: the template change → ${n} ${childKind}s Ready for it`,
    );
    return { rollout, rest, change };
  } finally {
    watch.close();
  }
}

/** A fresh managing operator, every namespace. */
const startOperator = (n: number): Promise<OperatorProcess> => OperatorProcess.start(OPERATOR, undefined, ['--cluster-id', PREFIX, '--fleet-max-clusters', String(Math.max(1000, n))]);

async function pushCase(clients: Map<string, KubeClient>, n: number): Promise<CaseResult> {
  const mgmt = clients.get(MGMT)!;
  const op = await startOperator(n);
  try {
    const procs: Procs = { operator: [op.pid] };
    const before = await idleWindow(clients, procs, 'push: before (no cluster)');
    const t0 = performance.now();
    console.log(`  push: ${n} identities on ${EDGE}, their Secrets in ${MGMT}...`);
    const ids = await createIdentities(clients, { n, servers: [EDGE], partOf: PREFIX, kubeconfigFile });
    await mapLimit(ids, CREATE_CONCURRENCY, (id: Identity) => mgmt.request({ method: 'POST', path: `/api/v1/namespaces/${INVENTORY.push}/secrets`, body: pushSecret(id) }));
    const setupMs = performance.now() - t0;
    return { kind: 'push', n, setupMs, before, ...(await rolloutRestChange(clients, 'push', n, procs)) };
  } finally {
    await op.stop();
  }
}

/** Identity `id` as a push cluster `c-<i>` of the inventory, with the value `namespace` its identity may write in. */
function pushSecret(id: Identity): KubeObject {
  const s = secretObject(`c-${id.i}-kubeconfig`, id.kubeconfig, { [CLUSTER_LABEL]: `c-${id.i}`, bench: 'push' });
  s.metadata.annotations = { [NAMESPACE_VALUE]: id.namespace };
  return s;
}

async function pullCase(clients: Map<string, KubeClient>, n: number): Promise<CaseResult> {
  const [op, edgeOp] = await Promise.all([startOperator(n), OperatorProcess.start(EDGE_OPERATOR, undefined, ['--cluster-id', EDGE])]);
  let agents: AgentHosts | undefined;
  try {
    const before = await idleWindow(clients, { operator: [op.pid], 'edge operator': [edgeOp.pid] }, 'pull: before (no cluster)');
    const t0 = performance.now();
    await registerPull(n);
    const setupMs = performance.now() - t0;
    console.log(`  pull: ${n} clusters registered in ${sec(setupMs)} s; starting their agents (${AGENT_HOSTS} processes)...`);
    const t1 = performance.now();
    agents = await AgentHosts.start(n);
    const agentsMs = performance.now() - t1;
    console.log(`  pull: ${n} agents serving after ${sec(agentsMs)} s`);
    const procs: Procs = { operator: [op.pid], 'edge operator': [edgeOp.pid], agents: agents.pids };
    return { kind: 'pull', n, setupMs, agentsMs, before, ...(await rolloutRestChange(clients, 'pull', n, procs)) };
  } finally {
    await agents?.stop();
    await Promise.all([op.stop(), edgeOp.stop()]);
  }
}

/** N pull clusters `p-<i>` registered by the code of `syncprims cluster add p-<i> --pull -n bench-pull --label bench=pull --join-file ...` (from the operator's build). */
async function registerPull(n: number): Promise<void> {
  mkdirSync(JOIN_DIR, { recursive: true });
  console.log(`  pull: registering ${n} clusters (cluster add --pull, ${REGISTER_CONCURRENCY} at a time)...`);
  // The CLI's code as the operator's build has it (the commit measured; its package.json beside it, for the User-Agent).
  const cli = pathToFileURL(path.join(OPERATOR_DIR, 'dist', 'cli', 'cluster', 'cluster-pull.js')).href;
  const { addPullCluster } = (await import(cli)) as typeof import('../src/cli/cluster/cluster-pull.js');
  const say = console.log;
  console.log = () => undefined; // its line per cluster
  try {
    await mapLimit(range(n), REGISTER_CONCURRENCY, (i) =>
      addPullCluster(`p-${i}`, { label: ['bench=pull'], value: [], namespace: INVENTORY.pull, joinFile: joinFile(i), mgmtKubeconfig: kubeconfigFile(MGMT) }),
    );
  } finally {
    console.log = say;
  }
}

/** The processes of the agents (bench/pull-agents.ts), identity i in process i % AGENT_HOSTS. */
class AgentHosts {
  private constructor(private readonly children: ChildProcess[]) {}

  static async start(n: number): Promise<AgentHosts> {
    const log = createWriteStream(AGENTS_LOG, { flags: 'a' });
    const hosts = Math.max(1, Math.min(AGENT_HOSTS, n));
    const children: ChildProcess[] = [];
    try {
      await Promise.all(range(hosts).map((h) => AgentHosts.host(h, hosts, n, log, children)));
    } catch (err) {
      await new AgentHosts(children).stop();
      throw err;
    }
    return new AgentHosts(children);
  }

  private static host(h: number, hosts: number, n: number, log: NodeJS.WritableStream, children: ChildProcess[]): Promise<void> {
    const agents = range(n)
      .filter((i) => i % hosts === h)
      .map((i) => ({ joinFile: joinFile(i), home: `p-${i}` }));
    const spec: AgentHostSpec = { edgeKubeconfig: kubeconfigFile(EDGE), userAgent: 'syncprims-bench/pull-agent', agents };
    const file = path.join(JOIN_DIR, `host-${h}.json`);
    writeFileSync(file, JSON.stringify(spec));
    const child = spawn(process.execPath, [path.join(HERE, 'pull-agents.js'), file], { stdio: ['ignore', 'pipe', 'pipe'] });
    children.push(child);
    return new Promise((resolve, reject) => {
      createInterface({ input: child.stdout! }).on('line', (line) => {
        log.write(`${line}\n`);
        const m = /^BENCH-(READY|DONE) (\d+)$/.exec(line);
        if (m) console.log(`  agents process ${h}: ${m[2]} of ${agents.length} serving`);
        if (m?.[1] === 'DONE') resolve();
      });
      createInterface({ input: child.stderr! }).on('line', (line) => log.write(`stderr ${h}: ${line}\n`));
      child.on('exit', (code) => reject(new Error(`agents process ${h} exited with ${code} (see ${AGENTS_LOG})`)));
    });
  }

  get pids(): (number | undefined)[] {
    return this.children.map((c) => c.pid);
  }

  async stop(): Promise<void> {
    await Promise.all(
      this.children.map(
        (c) =>
          new Promise<void>((resolve) => {
            if (c.exitCode !== null || c.signalCode !== null) return resolve();
            c.once('exit', () => resolve());
            c.kill('SIGTERM');
          }),
      ),
    );
  }
}

/** The push case's objects gone from mgmt (its operator stopped: their finalizers are taken off first), so that the pull case's operator does not take them up. */
async function clearPush(mgmt: KubeClient): Promise<void> {
  console.log(`  removing the push case's FleetSync and RemoteSyncs from ${MGMT}...`);
  await deleteSyncNamespace(mgmt, INVENTORY.push, [resource('RemoteSync'), resource('FleetSync')]);
}

// ---------------------------------------------------------------- the run

async function prepare(clients: Map<string, KubeClient>): Promise<void> {
  for (const [name, c] of clients) {
    await installCrds(c);
    const namespaces = name === MGMT ? ['syncprims-system', INVENTORY.push, INVENTORY.pull] : ['syncprims-system'];
    for (const ns of namespaces) {
      await c.request({ method: 'POST', path: '/api/v1/namespaces', body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } } }).catch(() => undefined);
    }
  }
}

async function main(): Promise<void> {
  const build = await buildOperator(OPERATOR_DIR);
  const report: Report = { date: new Date().toISOString().slice(0, 10), build, kubernetes: '?', cpus: os.cpus().length, memGiB: os.totalmem() / 2 ** 30, load: os.loadavg()[0] ?? NaN, idleMs: IDLE_MS, agentHosts: AGENT_HOSTS, runs: [] };
  for (const n of SIZES) {
    // A control plane of its own per size: each size starts from empty API servers.
    await onOwnPlane({ plane: PLANE, clusters: [MGMT, EDGE], kubeconfigFile, userAgent: `${PREFIX}/bench`, operatorDir: path.join(OPERATOR_DIR, '.unused') }, async (clients) => {
      await prepare(clients);
      report.kubernetes = await serverVersion(clients.get(MGMT)!);
      console.log(`== N = ${n}: push (the baseline)`);
      const push = await pushCase(clients, n);
      await clearPush(clients.get(MGMT)!);
      console.log(`== N = ${n}: pull`);
      const pull = await pullCase(clients, n);
      report.runs.push({ n, push, pull });
      writeFileSync(RESULTS, JSON.stringify(report));
    });
  }
  rmSync(OPERATOR_DIR, { recursive: true, force: true });
  writeReport(report);
}

// ---------------------------------------------------------------- report

const s2 = (ms: number): string => `${sec(ms)} s`;
const mib = (kib: number): string => (Number.isNaN(kib) ? '?' : `${(kib / 1024).toFixed(0)} MiB`);
const core = (cpuMs: number, w: Window): string => `${((cpuMs / w.ms) * 100).toFixed(1)}%`;
const leaseRequests = (s: ServerWindow | undefined): number => Object.entries(s?.byKind ?? {}).reduce((a, [k, v]) => a + (k.endsWith(' leases') ? v : 0), 0);
const topKinds = (s: ServerWindow | undefined, w: Window, top = 8): string =>
  Object.entries(s?.byKind ?? {})
    .sort((a, b) => b[1] - a[1])
    .slice(0, top)
    .map(([k, v]) => `${k} ${(v / (w.ms / 1000)).toFixed(2)}/s`)
    .join(', ') || 'none';

/** The idle windows' rows: one column per (case, window). */
function idleRows(run: Report['runs'][number]): string[] {
  const cols: [string, Window][] = [
    ['push: before (no cluster)', run.push.before],
    [`push: ${int(run.n)} RemoteSyncs at rest`, run.push.rest],
    ['pull: before (no cluster)', run.pull.before],
    [`pull: ${int(run.n)} agents at rest`, run.pull.rest],
  ];
  const row = (title: string, cell: (w: Window) => string): string => `| ${title} | ${cols.map(([, w]) => cell(w)).join(' | ')} |`;
  const srv = (name: string, f: (s: ServerWindow, w: Window) => string) => (w: Window) => (w.servers[name] ? f(w.servers[name]!, w) : '–');
  const proc = (name: string) => (w: Window) => (w.procs[name] ? `${core(w.procs[name]!.cpuMs, w)}; ${mib(w.procs[name]!.rssKiB)}` : '–');
  return [
    `| | ${cols.map(([t]) => t).join(' | ')} |`,
    `|---|${cols.map(() => '---').join('|')}|`,
    row('window', (w) => s2(w.ms)),
    row(`**${MGMT}: requests/s** (its apiserver_request_total)`, srv(MGMT, (s) => `**${s.rps.toFixed(1)}**`)),
    row(`${MGMT}: of them Leases (GET, PUT, PATCH)`, srv(MGMT, (s, w) => (leaseRequests(s) / (w.ms / 1000)).toFixed(1))),
    row(`${MGMT}: open watches at the end`, srv(MGMT, (s) => int(s.watches))),
    row(`**${MGMT}: kube-apiserver CPU** (of one core)`, srv(MGMT, (s, w) => `**${core(s.cpuMs, w)}**`)),
    row(`**${MGMT}: kube-apiserver RSS** at the end`, srv(MGMT, (s) => `**${mib(s.rssKiB)}**`)),
    row(`${EDGE}: requests/s`, srv(EDGE, (s) => s.rps.toFixed(1))),
    row(`${EDGE}: open watches at the end`, srv(EDGE, (s) => int(s.watches))),
    row(`${EDGE}: kube-apiserver CPU; RSS`, srv(EDGE, (s, w) => `${core(s.cpuMs, w)}; ${mib(s.rssKiB)}`)),
    row('managing operator: CPU; RSS', proc('operator')),
    row(`operator on ${EDGE} (pull): CPU; RSS`, proc('edge operator')),
    row(`the agents' processes (pull, ${AGENT_HOSTS}): CPU; RSS`, proc('agents')),
  ];
}

function timingRows(run: Report['runs'][number]): string[] {
  const t = (x: Timing): string => `${s2(x.ms)} (half: ${s2(x.halfMs)})${x.error ? `; **${int(x.ready)} of ${int(run.n)} only**` : ''}`;
  return [
    `| | push: FleetSync of kind RemoteSync | pull: FleetSync of kind ProxySync |`,
    '|---|---|---|',
    `| set-up: push identities and their Secrets; pull registrations (\`cluster add --pull\`) | ${s2(run.push.setupMs)} | ${s2(run.pull.setupMs)} |`,
    `| the pull agents started, all serving | – | ${s2(run.pull.agentsMs ?? NaN)} |`,
    `| the FleetSync's POST → all ${int(run.n)} children Ready | ${t(run.push.rollout)} | ${t(run.pull.rollout)} |`,
    `| **a template change → all ${int(run.n)} children Ready for it** (new generation, new lastAppliedRevision) | **${t(run.push.change)}** | **${t(run.pull.change)}** |`,
  ];
}

function readingOf(run: Report['runs'][number]): string[] {
  const { push, pull, n } = run;
  const m = (w: Window): ServerWindow => w.servers[MGMT]!;
  const e = (w: Window): ServerWindow => w.servers[EDGE]!;
  const perIdentity = (m(pull.rest).rps - m(pull.before).rps) / n;
  const cpuDelta = (m(pull.rest).cpuMs / pull.rest.ms - m(pull.before).cpuMs / pull.before.ms) * 100;
  const pushEdgeDelta = (e(push.rest).cpuMs / push.rest.ms - e(push.before).cpuMs / push.before.ms) * 100;
  return [
    `- At rest, ${int(n)} pull agents cost ${MGMT} ${(m(pull.rest).rps - m(pull.before).rps).toFixed(1)} requests/s over its idle baseline (${perIdentity.toFixed(3)} per agent; ` +
      `${(leaseRequests(m(pull.rest)) / (pull.rest.ms / 1000)).toFixed(1)}/s of them Lease renewals, one merge PATCH per agent every 10 s), ${int(m(pull.rest).watches - m(pull.before).watches)} more open watches, ` +
      `${cpuDelta.toFixed(1)} points more of one core and ${mib(m(pull.rest).rssKiB - m(pull.before).rssKiB)} more RSS for its kube-apiserver. ` +
      `${int(n)} push RemoteSyncs cost ${MGMT} ${(m(push.rest).rps - m(push.before).rps).toFixed(1)} requests/s (their load is on the clusters: ${EDGE} ${(e(push.rest).rps - e(push.before).rps).toFixed(1)} requests/s and ${pushEdgeDelta.toFixed(1)} points of a core more, ${int(e(push.rest).watches - e(push.before).watches)} more watches).`,
    `- A template change reached all ${int(n)} pull clusters in ${s2(pull.change.ms)} against ${s2(push.change.ms)} for the push RemoteSyncs (×${(pull.change.ms / push.change.ms).toFixed(2)}); the first rollout ${s2(pull.rollout.ms)} against ${s2(push.rollout.ms)}.`,
    ...baselineNotes(run),
    `- Requests at rest by kind: pull, ${MGMT}: ${topKinds(m(pull.rest), pull.rest)}; push, ${EDGE}: ${topKinds(e(push.rest), push.rest)}; push, ${MGMT}: ${topKinds(m(push.rest), push.rest)}.`,
  ];
}

/** What else the API servers' own counts hold in a window (found in this run's audit logs: not the operators' or agents' requests). */
function baselineNotes(run: Report['runs'][number]): string[] {
  const notes: string[] = [];
  const rate = (w: Window, server: string, kind: string): number => (w.servers[server]?.byKind[kind] ?? 0) / (w.ms / 1000);
  const sa = rate(run.push.rest, EDGE, 'POST serviceaccounts');
  if (sa > 0) notes.push(`push at rest, ${EDGE}: ${sa.toFixed(2)}/s POST serviceaccounts are kube-controller-manager's, the \`default\` ServiceAccount of each new namespace \`fleet-<i>\` (its audit log), not the operator's: without them ${(run.push.rest.servers[EDGE]!.rps - sa).toFixed(2)}/s`);
  const cleanup = rate(run.pull.before, MGMT, 'GET remotesyncs');
  if (cleanup > 0) notes.push(`pull before, ${MGMT}: ${cleanup.toFixed(2)}/s GET remotesyncs are the push case's clean-up (its namespace being deleted), not pull's: without them ${(run.pull.before.servers[MGMT]!.rps - cleanup).toFixed(2)}/s, so the pull agents' cost is ${(run.pull.rest.servers[MGMT]!.rps - run.pull.before.servers[MGMT]!.rps + cleanup).toFixed(1)}/s over it (${((run.pull.rest.servers[MGMT]!.rps - run.pull.before.servers[MGMT]!.rps + cleanup) / run.n).toFixed(3)} per agent)`);
  const rss = run.pull.before.servers[MGMT]!.rssKiB - run.push.before.servers[MGMT]!.rssKiB;
  if (rss > 0) notes.push(`${MGMT}'s RSS before pull is ${mib(rss)} above its RSS before push: the push case's objects and watches, not all given back (a Go heap); pull's RSS is read against its own before`);
  return notes.length ? [`- In the baselines: ${notes.join('; ')}.`] : [];
}

const METHOD = [
  `Method (\`bench/pull.ts\`, \`bench/pull-agents.ts\`): a control plane of the benchmark's own (its own etcd), two API servers: \`${MGMT}\` (the managing cluster) and \`${EDGE}\`; each kube-apiserver is a process of its own ` +
    `(its pid from the control plane's \`<cluster>.pid\`), etcd runs in the control plane's supervisor and is not counted. Requests are each API server's own \`apiserver_request_total\` (from its /metrics, summed over verbs and codes, ` +
    `requests for no resource such as /metrics itself left out; a watch counts when it ends), open watches its \`apiserver_longrunning_requests\`; CPU is utime+stime of the process over the window (/proc), RSS its VmRSS at the window's end. ` +
    `The cases run one after the other on the same servers, push first, each with a fresh managing operator (\`syncprims run\`, every namespace, built from the commit) and its own idle window before any of its clusters exist (its baseline); ` +
    `between them the push case's objects are deleted from ${MGMT} (what it applied in ${EDGE} stays).`,
  '',
  `**What is real.** Push: ${'`'}N${'`'} identities of ${EDGE} as in \`bench/fleet.ts\` (a namespace \`fleet-<i>\`, a ServiceAccount confined to it, a token), their kubeconfig Secrets in ${MGMT} labelled as an inventory, one FleetSync of kind RemoteSync ` +
    `(one ConfigMap into \`\${namespace}\`): the managing operator opens one client per identity and applies to ${EDGE} itself. Pull: N clusters \`p-<i>\` registered by the code of \`syncprims cluster add --pull\` (\`addPullCluster\`, ` +
    `${REGISTER_CONCURRENCY} at a time: each its registration Secret, assignments namespace, ServiceAccount, Role, RoleBinding, token and join bundle), one FleetSync of kind ProxySync over them (the remote Sync \`\${cluster_name}/app\`, the same ConfigMap). ` +
    `Each of the N agents is the real downstream agent, \`PullUpstream\` (src/controllers/pull-upstream.ts) opened on its own join bundle and started as \`syncprims run --upstream-kubeconfig\` starts it: its own client, token and connections to ${MGMT}, ` +
    `its three informers there (its assignments, their ConfigMap and Secret copies), its Lease renewed every 10 s, its controller holding the finalizer and writing status back. The Syncs it writes at home are real Syncs of ${EDGE}, ` +
    `reconciled by a real \`syncprims run\` on ${EDGE}, whose status the agent carries back.`,
  '',
  `**What is not as in production.** The agents run in ${AGENT_HOSTS > 1 ? `${AGENT_HOSTS} processes` : 'one process'} (identity i in process i mod ${AGENT_HOSTS}), not one operator per cluster, and they share one downstream cluster: each agent's home is one namespace \`p-<i>\` of ${EDGE}, ` +
    `and the home informers (Syncs, ConfigMaps and Secrets labelled \`syncprims.dev/pull-assignment\`, every namespace, as the agent asks for them) are one per selector for all the agents of a process, each agent seeing only its namespace's objects ` +
    `(\`bench/pull-agents.ts\` gives the agent that view in place of a Manager's cache; no change to src/). So ${EDGE}'s figures in the pull case are one cluster's for N pull clusters, and the downstream operator is one for N. ` +
    `What the managing cluster sees of each agent (its identity, requests, watches, Lease, status writes) is what one pull cluster's operator sends. The agents are compiled from the working tree with \`tsconfig.bench.json\`; the operators from the commit.`,
];

function writeReport(r: Report): void {
  const lines = [
    '## Pull mode at fleet size, against push (`bench/pull.ts`)',
    '',
    `Measured ${r.date}, Kubernetes ${r.kubernetes}, the operator ${r.build}; ${r.cpus} CPUs, ${r.memGiB.toFixed(0)} GiB, the 1-minute load ${r.load.toFixed(1)} at the start (a machine shared with other work). ` +
      `Idle windows of ${s2(r.idleMs)}.`,
  ];
  for (const run of r.runs) {
    lines.push('', `### ${int(run.n)} clusters`, '', ...timingRows(run), '', ...idleRows(run), '', 'Reading:', ...readingOf(run));
    const errors = [run.push.rollout, run.push.change, run.pull.rollout, run.pull.change].map((t) => t.error).filter(Boolean);
    if (errors.length) lines.push('', `Errors: ${errors.join('; ')}`);
  }
  lines.push('', ...METHOD);
  writeFileSync(OUT, `${lines.join('\n')}\n`);
  console.log(`wrote ${path.relative(ROOT, OUT)}`);
  console.log(lines.join('\n'));
}

runOrReport<Report>(main, writeReport);
