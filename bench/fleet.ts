// FleetSync (docs/fleet.md) over the simulated fleet of bench/remote.ts (b),
// against the same RemoteSyncs created directly, measured in one run, on a
// control plane of the benchmark's own (.local/bench-fleet-plane): the managing
// cluster `bench-fleet-mgmt` and the two API servers `bench-fleet-1` and
// `bench-fleet-2` that hold the identities.
//
// The fleet: FLEET_N identities (default 1000), each a namespace `fleet-<i>` in
// bench-fleet-1 (even i) or bench-fleet-2 (odd i), a ServiceAccount confined to
// it and a token; its kubeconfig (everything inline) in a Secret of mgmt.
//   direct: in a fresh namespace, the N Secrets, a fresh operator, then N
//     RemoteSyncs POSTed (32 at a time), each applying FLEET_OBJECTS (10)
//     ConfigMaps into its `fleet-<i>`: first POST → all Ready=True.
//   fleet: in another fresh namespace, the N Secrets labelled
//     `syncprims.dev/cluster: c-<i>` (the inventory), a fresh operator, then one
//     FleetSync (kind RemoteSync, selecting them all, the same 10 ConfigMaps):
//     its POST → all N children Ready=True, and → the FleetSync Ready=True
//     with N/N clusters.
// A FleetSync's template is the same for every cluster, and each identity may
// write in its own namespace only: the template names no defaultNamespace, and
// the benchmark gives each child its `spec.defaultNamespace: fleet-<i>` as soon
// as the child is seen (a server-side apply of that one field, field manager
// bench-fleet, 16 in flight; the FleetSync does not fight a field it does not
// set). A child's first reconcile before that fails (no namespace) and its
// second applies: the fleet case pays that, the direct case does not.
// Measured in each case: the time; the operator's writes to mgmt from mgmt's
// audit log (by verb and resource, and those with fieldManager=syncprims-fleet,
// the FleetSync's own); the operator's RSS at all-Ready and its peak (VmHWM).
// Between the cases the ConfigMaps applied go, and the first operator stops.
//
// Run it with `bench/run.sh fleet`. It writes docs/benchmarks/fleet.md.
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { API_VERSION, GROUP, KIND_NAMES, VERSION } from '../src/api/kinds.js';
import { mapLimit } from '../src/apply/map-limit.js';
import { KubeClient } from '../src/kube/client.js';
import { loadKubeConfigFile } from '../src/kube/config.js';
import { collectionPath, type KubeObject, type ResourceInfo } from '../src/kube/resources.js';
import { CollectionWatch } from './collection-watch.js';
import { configMaps, confinedIdentity, LABEL_PART_OF, secretObject, tokenKubeconfig } from './identities.js';
import { buildOperator, controlplane, type ControlPlaneDir, createNamespace, installCrds, int, LOCAL, OperatorProcess, processCpuMs, ROOT, serverVersion, sleep, stopOperators, until } from './support.js';
import { memoryKiB, readyOf, readyTrue, Tracker } from './tracker.js';

const PREFIX = 'bench-fleet';
const MGMT = `${PREFIX}-mgmt`;
const SERVERS = [`${PREFIX}-1`, `${PREFIX}-2`];
const PLANE: ControlPlaneDir = { dir: path.join(LOCAL, `${PREFIX}-plane`), etcdPort: Number(process.env.ETCD_PORT ?? 0) };
const N = Number(process.env.FLEET_N ?? 1000);
const FLEET_OBJECTS = Number(process.env.FLEET_OBJECTS ?? 10);
const TIMEOUT_MS = Number(process.env.FLEET_TIMEOUT_MS ?? 1_200_000);
const CREATE_CONCURRENCY = 32;
const PATCH_CONCURRENCY = 16;
const CLUSTER_LABEL = 'syncprims.dev/cluster';
const FLEET_FIELD_MANAGER = 'syncprims-fleet';
const OUT = path.join(ROOT, 'docs', 'benchmarks', 'fleet.md');
const RESULTS = path.join(LOCAL, `${PREFIX}-results.json`);
const OPERATOR_DIR = path.join(LOCAL, `${PREFIX}-operator`);
const kubeconfigFile = (cluster: string): string => path.join(PLANE.dir, `${cluster}.kubeconfig`);
const AUDIT_LOG = path.join(PLANE.dir, `${MGMT}.audit.log`);
const OPERATOR = { main: path.join(OPERATOR_DIR, 'dist', 'cli', 'main.js'), kubeconfig: kubeconfigFile(MGMT), log: path.join(LOCAL, `${PREFIX}-operator.log`) };

const resource = (kind: 'RemoteSync' | 'FleetSync'): ResourceInfo => ({ group: GROUP, version: VERSION, kind, resource: KIND_NAMES[kind].plural, namespaced: true });
const cp = (args: string[]): Promise<string> => controlplane(args, PLANE);

interface Identity {
  i: number;
  server: string;
  namespace: string;
  kubeconfig: string;
}

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
  writes: Writes;
  error?: string;
}

async function createIdentities(clients: Map<string, KubeClient>): Promise<Identity[]> {
  return mapLimit(
    Array.from({ length: N }, (_, i) => i),
    CREATE_CONCURRENCY,
    async (i) => {
      const server = SERVERS[i % SERVERS.length]!;
      const namespace = `fleet-${i}`;
      const token = await confinedIdentity(clients.get(server)!, namespace, { sa: 'syncer', partOf: PREFIX, tokenSeconds: 86_400 });
      return { i, server, namespace, kubeconfig: tokenKubeconfig(readFileSync(kubeconfigFile(server), 'utf8'), server, token) };
    },
  );
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

async function runCase(mgmt: KubeClient, fleet: Identity[], kind: 'direct' | 'fleet'): Promise<CaseResult> {
  const namespace = await createNamespace(mgmt, `${PREFIX}-${kind}`);
  const objects = configMaps(PREFIX, FLEET_OBJECTS, 'cm', 'v1');
  const secret = (id: Identity): KubeObject =>
    kind === 'direct' ? secretObject(`fleet-${id.i}-kubeconfig`, id.kubeconfig) : secretObject(`c-${id.i}-kubeconfig`, id.kubeconfig, { [CLUSTER_LABEL]: `c-${id.i}`, bench: 'fleet' });
  await mapLimit(fleet, CREATE_CONCURRENCY, (id) => mgmt.request({ method: 'POST', path: `/api/v1/namespaces/${namespace}/secrets`, body: secret(id) }));
  const op = await OperatorProcess.start(OPERATOR, namespace, ['--cluster-id', PREFIX]);
  const rsPath = collectionPath(resource('RemoteSync'), namespace);
  const watch = await CollectionWatch.open(mgmt, rsPath);
  try {
    await sleep(2_000);
    const names = new Set(fleet.map((id) => (kind === 'direct' ? `fleet-${id.i}` : `all-c-${id.i}`)));
    const epoch = Date.now();
    const cpu0 = processCpuMs(op.pid);
    const t0 = performance.now();
    const tracker = new Tracker(watch, names, readyTrue, t0);
    let patches: Promise<number> | undefined;
    let fleetReady: Promise<number> | undefined;
    if (kind === 'direct') {
      await mapLimit(fleet, CREATE_CONCURRENCY, (id) =>
        mgmt.request({
          method: 'POST',
          path: rsPath,
          body: { apiVersion: API_VERSION, kind: 'RemoteSync', metadata: { name: `fleet-${id.i}` }, spec: { kubeConfig: { secretRef: { name: `fleet-${id.i}-kubeconfig` } }, defaultNamespace: id.namespace, source: { inline: objects } } },
          timeoutMs: 60_000,
        }),
      );
    } else {
      patches = placeChildren(mgmt, watch, rsPath, fleet.length);
      await mgmt.request({
        method: 'POST',
        path: collectionPath(resource('FleetSync'), namespace),
        body: { apiVersion: API_VERSION, kind: 'FleetSync', metadata: { name: 'all' }, spec: { kind: 'RemoteSync', clusters: { selector: { matchLabels: { bench: 'fleet' } } }, template: { spec: { source: { inline: objects } } } } },
      });
      fleetReady = fleetReadyAt(mgmt, namespace, fleet.length, t0);
    }
    let error: string | undefined;
    await tracker.wait(`${fleet.length} RemoteSyncs to be Ready (${kind})`, TIMEOUT_MS).catch((err: unknown) => {
      error = String(err);
      console.error(`  ${error}`);
    });
    const ms = error ? performance.now() - t0 : tracker.last;
    const fleetReadyMs = fleetReady ? await fleetReady.catch(() => NaN) : undefined;
    const mem = memoryKiB(op.pid);
    const operatorCpuMs = processCpuMs(op.pid) - cpu0;
    await sleep(1_000);
    return { ms, halfMs: tracker.quantile(0.5), ready: tracker.at.size, fleetReadyMs, benchPatches: patches ? await patches : undefined, rssKiB: mem.rss, hwmKiB: mem.hwm, operatorCpuMs, writes: auditWrites(epoch), error };
  } finally {
    watch.close();
    await op.stop();
  }
}

/** Gives each child, as it is seen, the namespace its identity may write in: `c-<i>` → `fleet-<i>`. */
function placeChildren(mgmt: KubeClient, watch: CollectionWatch, rsPath: string, n: number): Promise<number> {
  const placed = new Set<string>();
  const queue: string[] = [];
  let running = 0;
  let done = 0;
  return new Promise((resolve, reject) => {
    const pump = (): void => {
      while (running < PATCH_CONCURRENCY && queue.length > 0) {
        const name = queue.shift()!;
        running++;
        const i = /^all-c-(\d+)$/.exec(name)![1];
        mgmt
          .request({
            method: 'PATCH',
            path: `${rsPath}/${name}`,
            query: { fieldManager: PREFIX, force: true },
            contentType: 'application/apply-patch+yaml',
            body: { apiVersion: API_VERSION, kind: 'RemoteSync', metadata: { name }, spec: { defaultNamespace: `fleet-${i}` } },
          })
          .then(() => {
            running--;
            if (++done === n) {
              stop();
              resolve(done);
            }
            pump();
          }, reject);
      }
    };
    const stop = watch.listen(({ object }) => {
      const name = object.metadata.name ?? '';
      if (placed.has(name) || !/^all-c-\d+$/.test(name)) return;
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

interface Report {
  date: string;
  n: number;
  objects: number;
  build: string;
  kubernetes: string;
  load: number;
  identitiesMs: number;
  direct: CaseResult;
  fleet: CaseResult;
}

async function main(): Promise<void> {
  const build = await buildOperator(OPERATOR_DIR);
  const clients = new Map<string, KubeClient>();
  try {
    await cp(['down']).catch(() => undefined);
    rmSync(PLANE.dir, { recursive: true, force: true });
    console.log(`starting a control plane of its own in ${path.relative(ROOT, PLANE.dir)}: ${[MGMT, ...SERVERS].join(', ')}...`);
    await cp(['up', ...[MGMT, ...SERVERS].map((c) => `${c}:0`)]);
    for (const c of [MGMT, ...SERVERS]) clients.set(c, await KubeClient.create(c, loadKubeConfigFile(kubeconfigFile(c)), `${PREFIX}/bench`));
    const mgmt = clients.get(MGMT)!;
    await installCrds(mgmt);
    console.log(`creating ${N} identities...`);
    const t0 = performance.now();
    const fleet = await createIdentities(clients);
    const identitiesMs = performance.now() - t0;
    const load = os.loadavg()[0] ?? NaN;
    console.log(`direct: ${N} RemoteSyncs...`);
    const direct = await runCase(mgmt, fleet, 'direct');
    console.log(`  ${JSON.stringify(direct)}`);
    await clearRemote(clients, fleet);
    console.log(`fleet: one FleetSync over ${N} clusters...`);
    const fleetRun = await runCase(mgmt, fleet, 'fleet');
    console.log(`  ${JSON.stringify(fleetRun)}`);
    const report: Report = { date: new Date().toISOString().slice(0, 10), n: N, objects: FLEET_OBJECTS, build, kubernetes: await serverVersion(mgmt), load, identitiesMs, direct, fleet: fleetRun };
    writeFileSync(RESULTS, JSON.stringify(report));
    writeReport(report);
  } finally {
    await stopOperators();
    for (const c of clients.values()) c.close();
    await cp(['down']).catch((err: unknown) => console.error(String(err)));
    rmSync(path.join(PLANE.dir, 'etcd'), { recursive: true, force: true });
    rmSync(OPERATOR_DIR, { recursive: true, force: true });
  }
}

const s2 = (ms: number): string => `${(ms / 1000).toFixed(2)} s`;
const mib = (kib: number): string => `${(kib / 1024).toFixed(0)} MiB`;
const perCluster = (count: number, n: number): string => (count / n).toFixed(2);
const kinds = (w: Writes): string =>
  Object.entries(w.byKind)
    .sort((a, b) => b[1] - a[1])
    .map(([k, v]) => `${k} ${int(v)}`)
    .join(', ');

function writeReport(r: Report): void {
  const { direct: d, fleet: f, n } = r;
  const ratio = f.ms / d.ms;
  const lines = [
    `## FleetSync over the simulated fleet (\`bench/fleet.ts\`)`,
    '',
    `Measured ${r.date}, Kubernetes ${r.kubernetes}, the operator ${r.build}; ${os.cpus().length} CPUs, load ${r.load.toFixed(1)} at the start. ` +
      `${int(n)} identities (namespaces \`fleet-<i>\` on two local API servers, each a ServiceAccount confined to its namespace; created in ${s2(r.identitiesMs)}), ` +
      `${r.objects} ConfigMaps each. Both cases in one run, each with a fresh operator watching its own namespace of mgmt.`,
    '',
    '| | direct: N RemoteSyncs | FleetSync (RemoteSync kind) |',
    '|---|---|---|',
    `| all N Ready (from the first POST) | ${s2(d.ms)} (${int(d.ready)}) | ${s2(f.ms)} (${int(f.ready)}); the FleetSync Ready with ${n}/${n}: ${f.fleetReadyMs === undefined ? '–' : s2(f.fleetReadyMs)} |`,
    `| half Ready | ${s2(d.halfMs)} | ${s2(f.halfMs)} |`,
    `| operator RSS at all-Ready; peak (VmHWM) | ${mib(d.rssKiB)}; ${mib(d.hwmKiB)} | ${mib(f.rssKiB)}; ${mib(f.hwmKiB)} |`,
    `| operator CPU | ${s2(d.operatorCpuMs)} | ${s2(f.operatorCpuMs)} |`,
    `| the operator's writes to mgmt (audit), per cluster | ${perCluster(d.writes.total, n)} | ${perCluster(f.writes.total, n)} |`,
    `| of which the FleetSync's: children (fieldManager ${FLEET_FIELD_MANAGER}) and fleetsyncs, per cluster | – | ${perCluster(f.writes.fleetManager, n)} and ${perCluster(f.writes.fleetSyncs, n)} |`,
    '',
    `FleetSync / direct: **${ratio.toFixed(2)}x** (the target: at most 1.3x). Writes by kind, direct: ${kinds(d.writes)}; FleetSync: ${kinds(f.writes)}. ` +
      `The benchmark's own PATCHes of the children's defaultNamespace: ${f.benchPatches ?? '–'} (not counted above: another user agent).`,
    ...(d.error || f.error ? ['', `Errors: ${[d.error, f.error].filter(Boolean).join('; ')}`] : []),
    ...(ratio > 1.3 ? ['', slower(r)] : []),
    '',
    `Method: the identities as in \`bench/remote.ts\` (b). direct: N Secrets and N RemoteSyncs POSTed 32 at a time; fleet: N Secrets labelled ` +
      `\`syncprims.dev/cluster\` (the inventory) and one FleetSync selecting them. Timed with a watch of the RemoteSyncs, to Ready=True for their generation. ` +
      `**What differs:** a FleetSync's template is the same for every cluster, and each simulated identity may write in its own namespace only, so the ` +
      `template names no defaultNamespace and the benchmark gives each child its \`spec.defaultNamespace\` once it is seen (server-side apply of that ` +
      `field, ${PATCH_CONCURRENCY} in flight): each child's first reconcile fails for want of a namespace, and the second applies. On a real fleet ` +
      `(one namespace name on every cluster) no such step exists. Writes are counted from mgmt's audit log (the operator's user agent; Leases and Events apart).`,
  ];
  writeFileSync(OUT, `${lines.join('\n')}\n`);
  console.log(`wrote ${path.relative(ROOT, OUT)}`);
}

/** Where the FleetSync's extra time goes, as far as these figures say. */
function slower(r: Report): string {
  const { direct: d, fleet: f, n } = r;
  return (
    `**Over the target.** The FleetSync's operator used ${s2(f.operatorCpuMs)} of CPU against ${s2(d.operatorCpuMs)} (on ${os.cpus().length} CPUs shared with the API servers, CPU is the bottleneck), ` +
    `and it wrote the FleetSync's status ${int(f.writes.byKind['patch fleetsyncs/status'] ?? 0)} times for ${int(n)} clusters: every event of a child wakes the FleetSync, and each of its ` +
    `reconciles walks all ${int(n)} clusters (the child it wants, compared with the live one) and counts them all again. The children's writes themselves are ` +
    `${perCluster(f.writes.fleetManager, n)} per cluster (written 16 at once: not the cost). Half were Ready at ${s2(f.halfMs)} against ${s2(d.halfMs)}: ` +
    `the whole run is slower, not its tail. Part of the gap is this benchmark's own (each child's first reconcile fails for want of its namespace).`
  );
}

async function entry(): Promise<void> {
  const from = process.env.REPORT_FROM;
  if (!from) return main();
  writeReport(JSON.parse(readFileSync(from, 'utf8')) as Report);
}

// Exits explicitly: after a failure, a watch may still be open.
entry().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
