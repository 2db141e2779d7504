// Soak stage `leaks` (issue 15, item 5): one operator in steady state for
// DURATION (15 min x SOAK_SCALE) on a control plane of the stage's own (two
// clusters: home and remote): STEADY Syncs resynced every 10 s, while Syncs
// come and go, and so do remote clusters: each few seconds a RemoteSync with
// a kubeconfig Secret of a new identity (a new ServiceAccount token: a new
// cluster in the operator's registry) is created, and an older one deleted
// with its Secret. Sampled every SAMPLE (10 s): the operator's RSS (/proc),
// heap in use (nodejs_heap_size_used_bytes), open sockets (/proc/<pid>/fd),
// its watches (syncprims_watches) and connections (syncprims_connections),
// and the WATCH requests both API servers serve (apiserver_longrunning_requests;
// apiserver_registered_watchers is gone from 1.36). Reported:
// each one's slope per minute by least squares over the second half (of each
// minute's floor for memory, median for counts), with a verdict against a tolerance.
// Checked (the stage fails, exit 1, with leaks.failed.json instead of leaks.json,
// unless all hold): every slope within its tolerance, the last RemoteSync Ready,
// and the churn's deletions done (only the last LIVE churned Syncs and RemoteSyncs left).
// Run by soak/run.sh.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { API_VERSION } from '../../src/api/kinds.js';
import type { KubeClient } from '../../src/kube/client.js';
import { OperatorProcess, sleep, stopOperators } from '../../bench/support.js';
import { sampleValue } from './prometheus.js';
import { bindRole } from './rbac.js';
import { check, finishStage, provenance, SOAK_DIR, type Check } from './soak-result.js';
import { holds, memoryKiB, openFds, ownPlane, scaled, slope, snapshotOperator, type Plane } from './soak-support.js';

const STAGE = 'leaks';
const DURATION_MS = scaled(15 * 60_000, 60_000);
const SAMPLE_MS = 10_000;
const CHURN_MS = 5_000;
const STEADY = scaled(40, 10);
/** How many of the churned Syncs and RemoteSyncs live at once. */
const LIVE = 4;
const NS = 'soak';
const HOME = 'soak-home';
const REMOTE = 'soak-remote';

/**
 * Growth per minute (over the second half) under which a figure is called
 * flat: a leak of one socket or watch per churn cycle would be 12 per minute,
 * of one remote cluster's cache several MiB per minute.
 */
const TOLERANCE: Record<Figure, number> = {
  rssMiB: 1,
  heapMiB: 0.5,
  externalMiB: 0.5,
  sockets: 0.2,
  fds: 0.2,
  watches: 0.2,
  connections: 0.2,
  homeWatchRequests: 0.2,
  remoteWatchRequests: 0.2,
};

interface Sample {
  minute: number;
  rssMiB: number;
  heapMiB: number;
  /** Memory outside the JS heap that V8 tracks (buffers, TLS): nodejs_external_memory_bytes. */
  externalMiB: number;
  sockets: number;
  fds: number;
  watches: number;
  connections: number;
  homeWatchRequests: number;
  remoteWatchRequests: number;
}
type Figure = Exclude<keyof Sample, 'minute'>;

const configMaps = (owner: string, n: number) =>
  Array.from({ length: n }, (_, k) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `${owner}-cm-${k}`, namespace: NS }, data: { value: 'v1' } }));

const syncPath = (plural: string, name = ''): string => `/apis/${API_VERSION}/namespaces/${NS}/${plural}${name ? `/${name}` : ''}`;

async function post(client: KubeClient, path: string, body: Record<string, unknown>): Promise<void> {
  await client.request({ method: 'POST', path, body });
}

async function remove(client: KubeClient, path: string): Promise<void> {
  await client.request({ method: 'DELETE', path }).catch(() => undefined);
}

/** A kubeconfig of the remote cluster whose user is a new token of the ServiceAccount `tenant`: a new identity each time. */
async function freshKubeconfig(remote: KubeClient, server: string, ca: string): Promise<string> {
  const req = await remote.request<{ status: { token: string } }>({
    method: 'POST',
    path: `/api/v1/namespaces/${NS}/serviceaccounts/tenant/token`,
    body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: 7200 } },
  });
  return JSON.stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'remote', cluster: { server, 'certificate-authority-data': ca } }],
    users: [{ name: 'tenant', user: { token: req.status.token } }],
    contexts: [{ name: 'remote', context: { cluster: 'remote', user: 'tenant' } }],
    'current-context': 'remote',
  });
}

/** One churn cycle: a Sync and a RemoteSync (with its Secret) created, the ones LIVE cycles older deleted. */
async function churn(home: KubeClient, k: number, kubeconfig: () => Promise<string>): Promise<void> {
  await post(home, syncPath('syncs'), { apiVersion: API_VERSION, kind: 'Sync', metadata: { name: `c-${k}` }, spec: { interval: '10s', source: { inline: configMaps(`c-${k}`, 2) } } });
  await post(home, `/api/v1/namespaces/${NS}/secrets`, { apiVersion: 'v1', kind: 'Secret', metadata: { name: `kc-${k}` }, stringData: { value: await kubeconfig() } });
  await post(home, syncPath('remotesyncs'), {
    apiVersion: API_VERSION,
    kind: 'RemoteSync',
    metadata: { name: `r-${k}` },
    spec: { interval: '10s', kubeConfig: { secretRef: { name: `kc-${k}` } }, source: { inline: configMaps(`r-${k}`, 2) } },
  });
  if (k >= LIVE) {
    await remove(home, syncPath('syncs', `c-${k - LIVE}`));
    await remove(home, syncPath('remotesyncs', `r-${k - LIVE}`));
  }
  // The Secret goes once its RemoteSync has had time to prune with it.
  if (k >= LIVE + 2) await remove(home, `/api/v1/namespaces/${NS}/secrets/kc-${k - LIVE - 2}`);
}

/** The WATCH requests an API server is serving (its controllers' and the operator's). */
async function apiserverWatches(client: KubeClient): Promise<number> {
  const text = await client.request<string>({ path: '/metrics', accept: 'text/plain' });
  return sampleValue(text, 'apiserver_longrunning_requests', { verb: 'WATCH' });
}

async function sample(op: OperatorProcess, home: KubeClient, remote: KubeClient, began: number): Promise<Sample> {
  const metrics = await op.metrics();
  const [h, r] = await Promise.all([apiserverWatches(home), apiserverWatches(remote)]);
  const { sockets, fds } = openFds(op.pid!);
  return {
    minute: (Date.now() - began) / 60_000,
    rssMiB: memoryKiB(op.pid!).rss / 1024,
    heapMiB: sampleValue(metrics, 'nodejs_heap_size_used_bytes') / 2 ** 20,
    externalMiB: sampleValue(metrics, 'nodejs_external_memory_bytes') / 2 ** 20,
    sockets,
    fds,
    watches: sampleValue(metrics, 'syncprims_watches'),
    connections: sampleValue(metrics, 'syncprims_connections'),
    homeWatchRequests: h,
    remoteWatchRequests: r,
  };
}

/**
 * Judged by minute, not by sample: memory by its floor (the least of each
 * minute's samples: a leak raises the floor, garbage only the peaks), counts
 * by each minute's median (a watch that is being re-established, or a
 * connection being replaced, shows in one sample, not in the median).
 */
const FLOORED: Figure[] = ['rssMiB', 'heapMiB', 'externalMiB'];

function perMinute(samples: Sample[], key: Figure): [number, number][] {
  const byMinute = new Map<number, number[]>();
  for (const s of samples) byMinute.set(Math.floor(s.minute), [...(byMinute.get(Math.floor(s.minute)) ?? []), s[key]]);
  return [...byMinute].map(([minute, values]) => {
    const sorted = values.sort((a, b) => a - b);
    return [minute + 0.5, FLOORED.includes(key) ? sorted[0]! : sorted[Math.floor(sorted.length / 2)]!];
  });
}

function verdicts(samples: Sample[]): Record<string, { slopePerMinute: number; tolerance: number; first: number; last: number; flat: boolean }> {
  const half = samples.filter((s) => s.minute >= samples[samples.length - 1]!.minute / 2);
  return Object.fromEntries(
    (Object.keys(TOLERANCE) as Figure[]).map((key) => {
      // With fewer than 3 minutes in the second half (a shortened run), every sample counts.
      const minutes = perMinute(half, key);
      const perMin = slope(minutes.length >= 3 ? minutes : half.map((s) => [s.minute, s[key]]));
      return [key, { slopePerMinute: Number(perMin.toFixed(4)), tolerance: TOLERANCE[key], first: samples[0]![key], last: samples[samples.length - 1]![key], flat: perMin <= TOLERANCE[key] }];
    }),
  );
}

async function setUp(home: KubeClient, remote: KubeClient): Promise<void> {
  for (const c of [home, remote]) await post(c, '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
  await post(remote, `/api/v1/namespaces/${NS}/serviceaccounts`, { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'tenant' } });
  await bindRole(remote, NS, 'tenant', [{ apiGroups: [''], resources: ['configmaps'], verbs: ['*'] }], { name: 'tenant', namespace: NS });
  for (let i = 0; i < STEADY; i++) {
    await post(home, syncPath('syncs'), { apiVersion: API_VERSION, kind: 'Sync', metadata: { name: `steady-${i}` }, spec: { interval: '10s', source: { inline: configMaps(`steady-${i}`, 3) } } });
  }
}

/** The churn and the sampling, for DURATION_MS; returns the samples and the number of churn cycles. */
async function soak(op: OperatorProcess, home: Plane['clusters'][string], remote: Plane['clusters'][string]): Promise<{ samples: Sample[]; cycles: number }> {
  const remoteKc = parse(readFileSync(remote.kubeconfig, 'utf8')) as { clusters: { cluster: { server: string; 'certificate-authority-data': string } }[] };
  const { server, 'certificate-authority-data': ca } = remoteKc.clusters[0]!.cluster;
  const began = Date.now();
  const samples: Sample[] = [];
  let cycles = 0;
  let nextSample = began;
  while (Date.now() - began < DURATION_MS) {
    await churn(home.client, cycles++, () => freshKubeconfig(remote.client, server, ca));
    if (Date.now() >= nextSample) {
      const s = await sample(op, home.client, remote.client, began);
      samples.push(s);
      nextSample += SAMPLE_MS;
      console.log(
        `  ${s.minute.toFixed(1)} min: RSS ${s.rssMiB.toFixed(0)} MiB, heap ${s.heapMiB.toFixed(0)} MiB, external ${s.externalMiB.toFixed(1)} MiB, sockets ${s.sockets}, watches ${s.watches},` +
          ` connections ${s.connections}, WATCH requests served (home/remote) ${s.homeWatchRequests}/${s.remoteWatchRequests}`,
      );
    }
    await sleep(CHURN_MS);
  }
  return { samples, cycles };
}

const readyOf = (o: { status?: { conditions?: { type: string; status: string }[] } }): boolean => (o.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');

/** What the churn left: the last RemoteSync Ready (the remote cluster was used to the end), and only the last LIVE churned objects of each kind. */
async function churnChecks(home: KubeClient, cycles: number): Promise<Check[]> {
  let lastReady = false;
  await holds(async () => (lastReady = readyOf(await home.request({ path: syncPath('remotesyncs', `r-${cycles - 1}`) }))), 120_000);
  const left = { syncs: -1, remotesyncs: -1 };
  const expected = Math.min(cycles, LIVE);
  await holds(async () => {
    for (const plural of ['syncs', 'remotesyncs'] as const) {
      const list = await home.request<{ items: { metadata: { name: string } }[] }>({ path: syncPath(plural) });
      left[plural] = list.items.filter((o) => /^[cr]-\d+$/.test(o.metadata.name)).length;
    }
    return left.syncs === expected && left.remotesyncs === expected;
  }, 120_000);
  return [
    check(`the last RemoteSync (r-${cycles - 1}) Ready`, lastReady, String(lastReady)),
    check(`the churn's deletions done: ${expected} churned Syncs left of ${cycles}`, left.syncs === expected, left.syncs),
    check(`the churn's deletions done: ${expected} churned RemoteSyncs left of ${cycles}`, left.remotesyncs === expected, left.remotesyncs),
  ];
}

async function main(): Promise<void> {
  console.log(`stage leaks: ${DURATION_MS / 60_000} min of steady state (${STEADY} Syncs resynced every 10 s) with Syncs and remote clusters coming and going`);
  const ran = provenance();
  const plane = await ownPlane(STAGE, [HOME, REMOTE]);
  try {
    const home = plane.clusters[HOME]!;
    const remote = plane.clusters[REMOTE]!;
    await setUp(home.client, remote.client);
    const op = await OperatorProcess.start(snapshotOperator(home.kubeconfig, path.join(SOAK_DIR, 'leaks-operator.log')), NS);
    const { samples, cycles } = await soak(op, home, remote);
    const checks = await churnChecks(home.client, cycles);
    const slopes = verdicts(samples);
    for (const [key, v] of Object.entries(slopes)) {
      checks.push(check(`${key} flat: at most +${v.tolerance}/min over the second half`, v.flat, `${v.slopePerMinute >= 0 ? '+' : ''}${v.slopePerMinute.toFixed(3)}/min; ${v.first.toFixed(1)} -> ${v.last.toFixed(1)}`));
    }
    const flat = Object.values(slopes).every((v) => v.flat);
    console.log(`verdict: ${flat ? 'no growth' : 'growth found'} (${cycles} churn cycles: ${cycles} Syncs and ${cycles} remote clusters created, ${Math.max(0, cycles - LIVE)} of each deleted)`);
    // A stage whose checks do not all hold is not done: its figures go to leaks.failed.json, and a second run tries again.
    finishStage(STAGE, ran, checks, { durationMs: DURATION_MS, steady: STEADY, cycles, verdict: flat ? 'no growth' : 'growth found', slopes, samples });
    await op.stop();
  } finally {
    await stopOperators();
    await plane.down();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
