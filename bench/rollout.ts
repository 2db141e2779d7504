// A FleetSync's rollout in waves (docs/fleet.md, issue 35) over the simulated
// fleet of bench/fleet.ts, on a control plane of the benchmark's own
// (.local/bench-rollout-plane): the managing cluster `bench-rollout-mgmt` and
// the API servers `bench-rollout-1` and `bench-rollout-2` that hold the
// identities (ROLLOUT_N, default 1000, each a namespace `fleet-<i>`, a
// ServiceAccount confined to it and its kubeconfig in a Secret of mgmt,
// labelled `syncprims.dev/cluster: c-<i>` and `ring: 1..4`, a quarter each).
//
// One FleetSync (kind RemoteSync, ROLLOUT_OBJECTS ConfigMaps, default 10) over
// them all, one operator; its children are given their namespace at admission
// (a MutatingAdmissionPolicy, as the `admitted` case of bench/fleet.ts). Once
// every cluster is Ready with revision v1, in this order:
//   all at once: the template's value v1 → v2, without spec.rollout;
//   in waves: v2 → v3 with four waves (ring 1, 2, 3, 4), soak 0;
//   broken: v3 → v4 with one more ConfigMap, which every cluster of ring 2
//     already holds, owned by another sync (OwnershipConflict): wave 1 takes
//     it, wave 2 fails and the rollout halts; then every cluster of waves 3
//     and 4 is checked: its child still at v3's revision, its ConfigMaps at
//     v3 and without the new one.
// Each timed from the write of the FleetSync to the FleetSync Complete (every
// cluster Ready with the revision), or Halted; the waves' ends from its
// status (polled every 200 ms). REPORT_FROM=results.json only writes the report.
//
// Run it with `bench/run.sh rollout`. It writes docs/benchmarks/rollout.md.
import { writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { API_VERSION } from '../src/api/kinds.js';
import { mapLimit } from '../src/apply/map-limit.js';
import { KubeClient } from '../src/kube/client.js';
import { collectionPath, type KubeObject } from '../src/kube/resources.js';
import { admitPlaced, benchPlaces, createIdentities, onOwnPlane, resource, runOrReport, type Identity, type RunFacts } from './fleet-setup.js';
import { configMaps, secretObject } from './identities.js';
import { buildOperator, createNamespace, installCrds, int, OperatorProcess, processCpuMs, ROOT, serverVersion, until } from './support.js';
import { readyOf } from './tracker.js';

const PREFIX = 'bench-rollout';
const { mgmt: MGMT, servers: SERVERS, plane: PLANE, kubeconfigFile, results: RESULTS, operatorDir: OPERATOR_DIR, operator: OPERATOR } = benchPlaces(PREFIX);
const N = Number(process.env.ROLLOUT_N ?? 1000);
const OBJECTS = Number(process.env.ROLLOUT_OBJECTS ?? 10);
const TIMEOUT_MS = Number(process.env.ROLLOUT_TIMEOUT_MS ?? 1_200_000);
const RINGS = 4;
const CREATE_CONCURRENCY = 32;
const FLEET = 'all';
const REVISION_ANNOTATION = 'syncprims.dev/fleet-revision';
const OUT = path.join(ROOT, 'docs', 'benchmarks', 'rollout.md');
/** The ring (wave) of identity i: the first quarter 1, ... */
const ringOf = (i: number): number => Math.floor((i * RINGS) / N) + 1;
const WAVES = Array.from({ length: RINGS }, (_, k) => ({ name: `ring-${k + 1}`, selector: { matchLabels: { ring: String(k + 1) } } }));

interface WaveStatus {
  name: string;
  clusters: number;
  updated: number;
  ready: number;
  failed: number;
}
type Fleet = KubeObject & { status?: { observedGeneration?: number; phase?: string; currentRevision?: string; updateRevision?: string; readyClusters?: string; message?: string; waves?: WaveStatus[] } };

interface CaseResult {
  /** The write of the FleetSync → Complete (or Halted). */
  ms: number;
  phase: string;
  /** Per wave, ms from the write until every cluster of it was Ready with the revision (or, halted, until it failed). */
  waveMs: Record<string, number>;
  operatorCpuMs: number;
  load: [number, number];
  message?: string;
}

interface Report extends RunFacts {
  setupMs: number;
  allAtOnce: CaseResult;
  waves: CaseResult;
  broken: CaseResult & { updated: Record<string, number>; checked: number; stillOld: number; wrong: string[] };
}

/** The ConfigMap that the broken revision adds, and that ring 2 already holds, owned by another sync. */
const [BROKEN] = configMaps(PREFIX, 1, 'broken', 'v4');
/** A revision: OBJECTS ConfigMaps holding `value`, and BROKEN with them if `broken`. */
interface Revision {
  value: string;
  waves: boolean;
  broken?: boolean;
}

/** The FleetSync at revision `rev`, in four waves if `rev.waves`, server-side applied. */
async function writeFleet(mgmt: KubeClient, namespace: string, rev: Revision): Promise<Fleet> {
  const spec = {
    kind: 'RemoteSync',
    clusters: { selector: { matchLabels: { bench: 'rollout' } } },
    template: { spec: { source: { inline: [...configMaps(PREFIX, OBJECTS, 'cm', rev.value), ...(rev.broken ? [BROKEN!] : [])] } } },
    ...(rev.waves ? { rollout: { soak: '0s', waves: WAVES } } : {}),
  };
  return mgmt.request<Fleet>({
    method: 'PATCH',
    path: `${collectionPath(resource('FleetSync'), namespace)}/${FLEET}`,
    query: { fieldManager: PREFIX, force: true },
    contentType: 'application/apply-patch+yaml',
    body: { apiVersion: API_VERSION, kind: 'FleetSync', metadata: { name: FLEET, namespace }, spec },
    timeoutMs: 60_000,
  });
}

/** Writes the FleetSync and follows its status until it settles on `until` (Complete, or Halted), noting when each wave finished. */
async function rollTo(mgmt: KubeClient, namespace: string, op: OperatorProcess, rev: Revision, settle: 'Complete' | 'Halted'): Promise<CaseResult> {
  const cpu0 = processCpuMs(op.pid);
  const load0 = os.loadavg()[0] ?? NaN;
  const t0 = performance.now();
  const written = await writeFleet(mgmt, namespace, rev);
  const waveMs: Record<string, number> = {};
  let last: Fleet = written;
  await until(
    `the FleetSync ${settle} at ${rev.value}`,
    async () => {
      last = await mgmt.request<Fleet>({ path: `${collectionPath(resource('FleetSync'), namespace)}/${FLEET}` });
      const s = last.status ?? {};
      if (s.observedGeneration !== written.metadata.generation) return false;
      for (const w of s.waves ?? []) if (waveMs[w.name] === undefined && (w.ready === w.clusters || w.failed > 0)) waveMs[w.name] = performance.now() - t0;
      if (settle === 'Halted') return s.phase === 'Halted';
      return s.phase === 'Complete' && s.currentRevision === s.updateRevision && readyOf(last)?.status === 'True' && s.readyClusters === `${N}/${N}`;
    },
    TIMEOUT_MS,
    200,
  );
  const ms = performance.now() - t0;
  return { ms, phase: last.status?.phase ?? '?', waveMs, operatorCpuMs: processCpuMs(op.pid) - cpu0, load: [load0, os.loadavg()[0] ?? NaN], message: last.status?.message };
}

/**
 * In every namespace of `ring`, the ConfigMap BROKEN already there, owned by
 * another sync: a child there given the broken revision cannot take it
 * (OwnershipConflict), which fails it.
 */
async function breakRing(clients: Map<string, KubeClient>, fleet: Identity[], ring: number): Promise<void> {
  // Of this managing cluster (its origin label): the operator caches a remote cluster's owned objects of its own origin only.
  const [theirs] = configMaps(PREFIX, 1, 'broken', 'someone-else', undefined, {
    'syncprims.dev/origin': PREFIX,
    'syncprims.dev/owner-kind': 'Sync',
    'syncprims.dev/owner-namespace': 'elsewhere',
    'syncprims.dev/owner-name': 'someone-else',
  });
  await mapLimit(
    fleet.filter((id) => ringOf(id.i) === ring),
    CREATE_CONCURRENCY,
    (id) => clients.get(id.server)!.request({ method: 'POST', path: `/api/v1/namespaces/${id.namespace}/configmaps`, body: theirs }),
  );
}

/** Every cluster of the rings after the broken one: its child still at `revision`, and every ConfigMap in its namespace still at `value`. */
async function checkUntouched(clients: Map<string, KubeClient>, mgmt: KubeClient, namespace: string, fleet: Identity[], rings: number[], revision: string, value: string): Promise<{ checked: number; stillOld: number; wrong: string[] }> {
  const wrong: string[] = [];
  const ids = fleet.filter((id) => rings.includes(ringOf(id.i)));
  await mapLimit(ids, CREATE_CONCURRENCY, async (id) => {
    const child = await mgmt.request<KubeObject>({ path: `${collectionPath(resource('RemoteSync'), namespace)}/${FLEET}-c-${id.i}` });
    const at = child.metadata.annotations?.[REVISION_ANNOTATION];
    if (at !== revision) wrong.push(`c-${id.i}: child at ${at}`);
    const cms = await clients.get(id.server)!.request<{ items: { metadata: { name: string }; data?: { value?: string } }[] }>({ path: `/api/v1/namespaces/${id.namespace}/configmaps` });
    const ours = cms.items.filter((c) => c.metadata.name.startsWith('cm-'));
    if (ours.length !== OBJECTS || ours.some((c) => c.data?.value !== value)) wrong.push(`c-${id.i}: ConfigMaps ${ours.map((c) => c.data?.value).join(',')}`);
    if (cms.items.some((c) => c.metadata.name === BROKEN!.metadata.name)) wrong.push(`c-${id.i}: has ${BROKEN!.metadata.name}`);
  });
  return { checked: ids.length, stillOld: ids.length - new Set(wrong.map((w) => w.split(':')[0])).size, wrong: wrong.slice(0, 10) };
}

/** How many children of each ring carry `revision`. */
async function updatedByRing(mgmt: KubeClient, namespace: string, revision: string): Promise<Record<string, number>> {
  const list = await mgmt.request<{ items: KubeObject[] }>({ path: collectionPath(resource('RemoteSync'), namespace), query: { labelSelector: `syncprims.dev/fleetsync=${FLEET}` } });
  const out: Record<string, number> = {};
  for (const child of list.items) {
    const i = Number((child.metadata.labels?.['syncprims.dev/cluster'] ?? '').slice(2));
    if (child.metadata.annotations?.[REVISION_ANNOTATION] === revision) out[`ring-${ringOf(i)}`] = (out[`ring-${ringOf(i)}`] ?? 0) + 1;
  }
  return out;
}

async function run(clients: Map<string, KubeClient>, build: string): Promise<Report> {
  const mgmt = clients.get(MGMT)!;
  await installCrds(mgmt);
  console.log(`creating ${N} identities...`);
  const fleet = await createIdentities(clients, { n: N, servers: SERVERS, partOf: PREFIX, kubeconfigFile });
  const load = os.loadavg()[0] ?? NaN;
  const namespace = await createNamespace(mgmt, PREFIX);
  await admitPlaced(mgmt, namespace, `${PREFIX}-namespace`);
  const secret = (id: Identity): KubeObject => secretObject(`c-${id.i}-kubeconfig`, id.kubeconfig, { 'syncprims.dev/cluster': `c-${id.i}`, bench: 'rollout', ring: String(ringOf(id.i)) });
  await mapLimit(fleet, CREATE_CONCURRENCY, (id) => mgmt.request({ method: 'POST', path: `/api/v1/namespaces/${namespace}/secrets`, body: secret(id) }));
  const op = await OperatorProcess.start(OPERATOR, namespace, ['--cluster-id', PREFIX]);
  try {
    console.log(`v1: the FleetSync over ${N} clusters...`);
    const setup = await rollTo(mgmt, namespace, op, { value: 'v1', waves: false }, 'Complete');
    console.log(`all at once: v1 → v2...`);
    const allAtOnce = await rollTo(mgmt, namespace, op, { value: 'v2', waves: false }, 'Complete');
    console.log(`  ${JSON.stringify(allAtOnce)}`);
    console.log(`in ${RINGS} waves, soak 0: v2 → v3...`);
    const waves = await rollTo(mgmt, namespace, op, { value: 'v3', waves: true }, 'Complete');
    console.log(`  ${JSON.stringify(waves)}`);
    const good = (await mgmt.request<Fleet>({ path: `${collectionPath(resource('FleetSync'), namespace)}/${FLEET}` })).status?.currentRevision ?? '?';
    console.log(`broken in ring 2: v3 → v4...`);
    await breakRing(clients, fleet, 2);
    const broken = await rollTo(mgmt, namespace, op, { value: 'v4', waves: true, broken: true }, 'Halted');
    const bad = (await mgmt.request<Fleet>({ path: `${collectionPath(resource('FleetSync'), namespace)}/${FLEET}` })).status?.updateRevision ?? '?';
    const updated = await updatedByRing(mgmt, namespace, bad);
    const untouched = await checkUntouched(clients, mgmt, namespace, fleet, [3, 4], good, 'v3');
    console.log(`  ${JSON.stringify({ ...broken, updated, ...untouched })}`);
    return { date: new Date().toISOString().slice(0, 10), n: N, objects: OBJECTS, build, kubernetes: await serverVersion(mgmt), load, setupMs: setup.ms, allAtOnce, waves, broken: { ...broken, updated, ...untouched } };
  } finally {
    await op.stop();
  }
}

async function main(): Promise<void> {
  const build = await buildOperator(OPERATOR_DIR);
  await onOwnPlane({ plane: PLANE, clusters: [MGMT, ...SERVERS], kubeconfigFile, userAgent: `${PREFIX}/bench`, operatorDir: OPERATOR_DIR }, async (clients) => {
    const report = await run(clients, build);
    writeFileSync(RESULTS, JSON.stringify(report));
    writeReport(report);
  });
}

const s2 = (ms: number): string => `${(ms / 1000).toFixed(2)} s`;
/** A message that names many clusters, cut after its first ten names. */
const shortened = (message: string): string => {
  const [head, names] = message.split(/: (?=[^:]*$)/);
  const list = names?.split(', ') ?? [];
  return list.length > 10 ? `${head}: ${list.slice(0, 10).join(', ')} and ${list.length - 10} more` : message;
};
const waveEnds = (c: CaseResult): string =>
  Object.entries(c.waveMs)
    .map(([w, ms]) => `${w} ${s2(ms)}`)
    .join(', ') || '–';

function writeReport(r: Report): void {
  const { allAtOnce: a, waves: w, broken: b } = r;
  const row = (title: string, cell: (c: CaseResult) => string): string => `| ${title} | ${[a, w, b].map(cell).join(' | ')} |`;
  const lines = [
    `## A FleetSync's rollout in waves (\`bench/rollout.ts\`)`,
    '',
    `Measured ${r.date}, Kubernetes ${r.kubernetes}, the operator ${r.build}; ${os.cpus().length} CPUs, load ${r.load.toFixed(1)} at the start. ` +
      `${int(r.n)} identities as in the FleetSync benchmark (namespaces \`fleet-<i>\` on two local API servers), ${r.objects} ConfigMaps each, one FleetSync ` +
      `(kind RemoteSync, children placed at admission) and one operator; every cluster Ready with v1 first (${s2(r.setupMs)}), then in this order:`,
    '',
    `| | all at once (v1 → v2, no \`spec.rollout\`) | in 4 waves, soak 0 (v2 → v3) | broken in ring 2 (v3 → v4) |`,
    `|---|---|---|---|`,
    row('the write of the FleetSync → Complete (broken: → Halted)', (c) => `${s2(c.ms)} (${c.phase})`),
    row('the time / all at once', (c) => (c === a ? '1' : c === b ? '–' : `**${(c.ms / a.ms).toFixed(2)}x**`)),
    row('each wave done (every cluster Ready with the revision; broken: a failure), from the write', waveEnds),
    row('operator CPU', (c) => s2(c.operatorCpuMs)),
    row('load (1 min) at the write; at the end', (c) => c.load.map((x) => x.toFixed(1)).join('; ')),
    '',
    `In waves / all at once: **${(w.ms / a.ms).toFixed(2)}x** (the target: at most 1.3x; one run of each on a shared machine, the load row says how busy it was).`,
    '',
    `**The broken revision:** ${shortened(b.message ?? '')}. Children given it, by ring: ${
      Object.entries(b.updated)
        .sort()
        .map(([k, v]) => `${k} ${int(v)}`)
        .join(', ') || 'none'
    }. Every cluster of waves 3 and 4 checked after the halt: ${int(b.stillOld)} of ${int(b.checked)} still at the old revision (the child's \`${REVISION_ANNOTATION}\`, all ${r.objects} ConfigMaps at v3, and not the ConfigMap the broken revision adds)` +
      `${b.wrong.length > 0 ? `; not: ${b.wrong.join('; ')}` : ''}.`,
    '',
    ...METHOD,
  ];
  writeFileSync(OUT, `${lines.join('\n')}\n`);
  console.log(`wrote ${path.relative(ROOT, OUT)}`);
}

const METHOD = [
  `Method: the identities, Secrets and admission as in \`bench/fleet.ts\` (its \`admitted\` case), each Secret also labelled \`ring: 1..4\` (a quarter each, ` +
    `by index; both API servers in every ring). A new revision is the same template with the ConfigMaps' value changed, written by server-side apply; ` +
    `all at once is the FleetSync without \`spec.rollout\`, in waves four waves selecting the rings, \`soak: 0s\`, no \`maxInFlight\` (a whole wave at once). ` +
    `Timed by polling the FleetSync's status every 200 ms, from the write to its phase Complete, every cluster Ready with the revision (Ready=True, N/N), ` +
    `for the generation written. Broken: the revision adds a ConfigMap which, before the write, every namespace of ring 2 holds, owned by another sync, so ` +
    `those children fail (OwnershipConflict) and the rollout halts at wave 2 (\`maxFailures\` 0); then every child of rings 3 and 4 is read, and every ConfigMap in its namespace. ` +
    `One run on a shared machine.`,
];

runOrReport<Report>(main, writeReport);
