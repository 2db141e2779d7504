// The shared informer (src/runtime/informer.ts): how long priming its cache
// takes with WatchList and with LIST+WATCH, for 1,000 and 10,000 objects, next
// to a bare paginated LIST of the same objects; and the heap that 10,000
// cached objects take. It starts two dedicated clusters on the local control
// plane (bench-informer with WatchList, bench-nowl without), fills them with
// Syncs, and deletes the objects and stops both clusters at the end.
//
// Run it with `bench/run.sh informer` (from the repository root: it compiles
// this file and runs it with --expose-gc). RUNS (default 3) and SIZES (default
// 1000,10000) can be changed through the environment. It prints figures and
// writes docs/benchmarks/informer.md; it asserts nothing about them.
import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { API_VERSION } from '../src/api/kinds.js';
import { KubeClient } from '../src/kube/client.js';
import { ApiError } from '../src/kube/errors.js';
import { collectionPath, type KubeObject } from '../src/kube/resources.js';
import { Informer } from '../src/runtime/informer.js';
import { controlplane, installCrds, LOCAL, median, processCpuMs, ROOT, serverVersion, SYNCS, until } from './support.js';


const OUT = path.join(ROOT, 'docs', 'benchmarks', 'informer.md');
const RUNS = Number(process.env.RUNS ?? 3);
const SIZES = (process.env.SIZES ?? '1000,10000').split(',').map(Number);
/** The memory is measured on the largest set. */
const MEMORY_SIZE = Math.max(...SIZES);
const CREATE_CONCURRENCY = 32;
const LIST_PAGE_SIZE = 500;
const GATE_ON = 'bench-informer';
const GATE_OFF = 'bench-nowl';

/** A cluster of the benchmark, with one namespace per set size. */
interface Cluster {
  name: string;
  client: KubeClient;
  apiserverPid: number;
  namespaces: Map<number, string>;
}

/** One way of reading the whole set: an informer (with its WatchList setting) or a bare LIST. */
interface Method {
  label: string;
  cluster: string;
  watchList?: 'auto' | 'never';
}

interface Sample {
  ms: number;
  clientCpuMs: number;
  apiserverCpuMs: number;
  /** What the informer reported it used; `LIST` for the bare list. */
  protocol: string;
}

interface Timing {
  method: Method;
  size: number;
  samples: Sample[];
}

interface Memory {
  method: Method;
  /** heapUsed primed minus heapUsed before, per run. */
  bytes: number[];
  /** heapUsed primed minus heapUsed once the informer is stopped and dropped, per run: a cross-check. */
  freed: number[];
  jsonBytesPerObject: number;
}

const METHODS: Method[] = [
  { label: "informer, WatchList (`watchList: 'auto'`)", cluster: GATE_ON, watchList: 'auto' },
  { label: "informer, LIST+WATCH (`watchList: 'never'`)", cluster: GATE_ON, watchList: 'never' },
  { label: "informer, LIST+WATCH (`watchList: 'never'`)", cluster: GATE_OFF, watchList: 'never' },
  { label: "informer, `watchList: 'auto'`: refused, then LIST+WATCH", cluster: GATE_OFF, watchList: 'auto' },
  { label: `bare paginated LIST (\`limit=${LIST_PAGE_SIZE}\`), nothing stored`, cluster: GATE_ON },
  { label: `bare paginated LIST (\`limit=${LIST_PAGE_SIZE}\`), nothing stored`, cluster: GATE_OFF },
];

const MEMORY_METHODS = METHODS.filter((m) => m.cluster === GATE_ON && m.watchList !== undefined);

// ---------------------------------------------------------------- main

async function main(): Promise<void> {
  if (typeof gc !== 'function') throw new Error('run with node --expose-gc (bench/run.sh does)');
  const load = os.loadavg()[0]?.toFixed(1) ?? '?';
  let clusters: Cluster[] = [];
  try {
    clusters = await startClusters();
    const createRate = await fill(clusters);
    const timings = await measurePriming(clusters);
    const memory = await measureMemory(clusterNamed(clusters, GATE_ON));
    const kubernetes = await serverVersion(clusters[0]!.client);
    writeReport(timings, memory, createRate, kubernetes, load);
  } finally {
    await cleanUp(clusters);
    await stopClusters();
  }
}

// ---------------------------------------------------------------- clusters


async function startClusters(): Promise<Cluster[]> {
  console.log(`starting ${GATE_ON} (WatchList on) and ${GATE_OFF} (WatchList=false)...`);
  await controlplane(['up', GATE_ON, GATE_OFF, '--feature-gates', `${GATE_OFF}=WatchList=false`]);
  return Promise.all([GATE_ON, GATE_OFF].map(connect));
}

async function connect(name: string): Promise<Cluster> {
  const client = await KubeClient.fromFile(name, path.join(LOCAL, `${name}.kubeconfig`));
  const apiserverPid = Number(readFileSync(path.join(LOCAL, `${name}.pid`), 'utf8').trim());
  return { name, client, apiserverPid, namespaces: new Map() };
}

async function stopClusters(): Promise<void> {
  console.log(`stopping ${GATE_ON} and ${GATE_OFF}...`);
  await controlplane(['stop', GATE_ON, GATE_OFF]).catch((err: unknown) => console.error(String(err)));
}

function clusterNamed(clusters: Cluster[], name: string): Cluster {
  const found = clusters.find((c) => c.name === name);
  if (!found) throw new Error(`no cluster ${name}`);
  return found;
}


// ---------------------------------------------------------------- objects

/** Installs the CRDs and creates the Syncs of every size; returns the creation rate (objects/s). */
async function fill(clusters: Cluster[]): Promise<number> {
  let created = 0;
  let seconds = 0;
  for (const cluster of clusters) {
    await installCrds(cluster.client);
    for (const size of SIZES) {
      const namespace = await createNamespace(cluster.client, `bench-informer-${size}`);
      cluster.namespaces.set(size, namespace);
      console.log(`${cluster.name}: creating ${size} Syncs in ${namespace}...`);
      const started = performance.now();
      await createSyncs(cluster.client, namespace, size);
      seconds += (performance.now() - started) / 1000;
      created += size;
    }
  }
  return created / seconds;
}




async function createNamespace(client: KubeClient, prefix: string): Promise<string> {
  const name = `${prefix}-${randomBytes(3).toString('hex')}`;
  await client.request({
    method: 'POST',
    path: '/api/v1/namespaces',
    body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name } },
  });
  return name;
}

/** A small valid Sync: one inline ConfigMap (spec defaults are filled in by the API server). */
function syncObject(namespace: string, name: string): KubeObject {
  return {
    apiVersion: API_VERSION,
    kind: 'Sync',
    metadata: { name, namespace, labels: { 'app.kubernetes.io/part-of': 'bench' } },
    spec: {
      source: {
        inline: [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { greeting: 'hello' } }],
      },
    },
  };
}

async function createSyncs(client: KubeClient, namespace: string, count: number): Promise<void> {
  const names = Array.from({ length: count }, (_, i) => `sync-${String(i).padStart(5, '0')}`);
  await forEachLimit(names, CREATE_CONCURRENCY, async (name) => {
    await client
      .request({ method: 'POST', path: collectionPath(SYNCS, namespace), body: syncObject(namespace, name) })
      .catch((err: unknown) => {
        if (!(err instanceof ApiError && err.conflict)) throw err;
      });
  });
}

async function forEachLimit<T>(items: T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) await fn(items[next++] as T);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

/** Deletes the Syncs (one request per namespace) and the namespaces, so etcd does not keep them. */
async function cleanUp(clusters: Cluster[]): Promise<void> {
  for (const cluster of clusters) {
    for (const namespace of cluster.namespaces.values()) {
      console.log(`${cluster.name}: deleting ${namespace}...`);
      await deleteNamespace(cluster.client, namespace).catch((err: unknown) => console.error(String(err)));
    }
    cluster.client.close();
  }
}

async function deleteNamespace(client: KubeClient, namespace: string): Promise<void> {
  await client.request({ method: 'DELETE', path: collectionPath(SYNCS, namespace), timeoutMs: 600_000 });
  await client.request({ method: 'DELETE', path: `/api/v1/namespaces/${namespace}` });
  await until(`namespace ${namespace} to be gone`, async () => {
    try {
      await client.request({ path: `/api/v1/namespaces/${namespace}` });
      return false;
    } catch (err) {
      return err instanceof ApiError && err.notFound;
    }
  });
}

// ---------------------------------------------------------------- priming

/**
 * Every method on every size, round after round (so drift in the machine's
 * load spreads over all of them), after one unrecorded round on the smallest set.
 */
async function measurePriming(clusters: Cluster[]): Promise<Timing[]> {
  const timings = SIZES.flatMap((size) => METHODS.map((method) => ({ method, size, samples: [] as Sample[] })));
  console.log('warm-up round...');
  for (const method of METHODS) await primeOnce(clusterNamed(clusters, method.cluster), method, Math.min(...SIZES));
  for (let round = 1; round <= RUNS; round++) {
    for (const timing of timings) {
      const sample = await primeOnce(clusterNamed(clusters, timing.method.cluster), timing.method, timing.size);
      timing.samples.push(sample);
      console.log(`run ${round}: ${describe(timing.method)}, ${timing.size} objects: ${sample.ms.toFixed(0)} ms (${sample.protocol})`);
    }
  }
  return timings;
}

async function primeOnce(cluster: Cluster, method: Method, size: number): Promise<Sample> {
  const namespace = cluster.namespaces.get(size) ?? '';
  const cpu = process.cpuUsage();
  const apiserverCpu = processCpuMs(cluster.apiserverPid);
  const started = performance.now();
  const { count, protocol, done } =
    method.watchList === undefined
      ? await listAll(cluster.client, namespace)
      : await primeInformer(cluster.client, namespace, method.watchList);
  const ms = performance.now() - started;
  const used = process.cpuUsage(cpu);
  const sample = {
    ms,
    clientCpuMs: (used.user + used.system) / 1000,
    apiserverCpuMs: processCpuMs(cluster.apiserverPid) - apiserverCpu,
    protocol,
  };
  await done();
  if (count !== size) throw new Error(`${describe(method)}: read ${count} objects, expected ${size}`);
  return sample;
}

interface Primed {
  count: number;
  protocol: string;
  /** Releases what was read (stops the informer). */
  done: () => Promise<void>;
}

async function primeInformer(client: KubeClient, namespace: string, watchList: 'auto' | 'never'): Promise<Primed> {
  const informer = new Informer<KubeObject>({ client, resource: SYNCS, namespace, watchList });
  await informer.start();
  return { count: informer.store.size, protocol: informer.protocol ?? '?', done: () => informer.stop() };
}

async function listAll(client: KubeClient, namespace: string): Promise<Primed> {
  let count = 0;
  let token: string | undefined;
  do {
    const page = await client.request<{ metadata: { continue?: string }; items: unknown[] }>({
      path: collectionPath(SYNCS, namespace),
      query: { limit: LIST_PAGE_SIZE, continue: token },
      timeoutMs: 60_000,
    });
    count += page.items.length;
    token = page.metadata.continue || undefined;
  } while (token);
  return { count, protocol: 'LIST', done: async () => undefined };
}


/** User plus system CPU time of a process, from /proc (Linux; 10 ms resolution). */

// ---------------------------------------------------------------- memory

/** The heap an informer holds once primed with the largest set, per protocol. */
async function measureMemory(cluster: Cluster): Promise<Memory[]> {
  const namespace = cluster.namespaces.get(MEMORY_SIZE) ?? '';
  const results: Memory[] = [];
  for (const method of MEMORY_METHODS) {
    const result: Memory = { method, bytes: [], freed: [], jsonBytesPerObject: 0 };
    for (let round = 1; round <= RUNS; round++) {
      const primed = await cachedHeap(cluster.client, namespace, method.watchList ?? 'auto');
      const stopped = await settledHeap();
      result.bytes.push(primed.heap - primed.before);
      result.freed.push(primed.heap - stopped);
      result.jsonBytesPerObject = primed.jsonBytesPerObject;
      const line = `${mib(primed.heap - primed.before)} MiB (freed on stop: ${mib(primed.heap - stopped)} MiB)`;
      console.log(`memory run ${round}: ${describe(method)}: ${line} for ${MEMORY_SIZE} objects`);
    }
    results.push(result);
  }
  return results;
}

async function cachedHeap(
  client: KubeClient,
  namespace: string,
  watchList: 'auto' | 'never',
): Promise<{ before: number; heap: number; jsonBytesPerObject: number }> {
  const before = await settledHeap();
  const informer = new Informer<KubeObject>({ client, resource: SYNCS, namespace, watchList });
  await informer.start();
  const after = await settledHeap();
  // The informer is still referenced here, so its store was alive when measured.
  const objects = informer.store.list();
  const json = objects.reduce((n, o) => n + Buffer.byteLength(JSON.stringify(o)), 0);
  await informer.stop();
  if (objects.length !== MEMORY_SIZE) throw new Error(`cached ${objects.length} objects, expected ${MEMORY_SIZE}`);
  // Returning leaves no reference to the informer behind (a local of a suspended
  // async function would keep it alive for the caller's next measurement).
  return { before, heap: after, jsonBytesPerObject: json / objects.length };
}

/** heapUsed after full collections, once pending callbacks have run. */
async function settledHeap(): Promise<number> {
  for (let i = 0; i < 2; i++) {
    await new Promise((resolve) => setImmediate(resolve));
    gc?.();
  }
  return process.memoryUsage().heapUsed;
}

// ---------------------------------------------------------------- report


const int = (n: number): string => Math.round(n).toLocaleString('en-US');
const mib = (bytes: number): string => (bytes / 2 ** 20).toFixed(1);
const gate = (cluster: string): string => (cluster === GATE_ON ? 'on' : 'off');
const describe = (m: Method): string => `${m.label.replace(/`/g, '')} [WatchList gate ${gate(m.cluster)}]`;

function timingRow({ method, size, samples }: Timing): string {
  const ms = median(samples.map((s) => s.ms));
  const protocols = [...new Set(samples.map((s) => s.protocol))].join(', ');
  return [
    method.label,
    gate(method.cluster),
    int(size),
    `${int(ms)} ms`,
    samples.map((s) => int(s.ms)).join(', '),
    int(size / (ms / 1000)),
    `${int(median(samples.map((s) => s.clientCpuMs)))} ms`,
    `${int(median(samples.map((s) => s.apiserverCpuMs)))} ms`,
    protocols,
  ].join(' | ');
}

function memoryRows(memory: Memory[]): string[] {
  const per10k = (bytes: number): string => mib((bytes / MEMORY_SIZE) * 10_000);
  return memory.map(({ method, bytes, freed, jsonBytesPerObject }) => {
    const perObject = median(bytes) / MEMORY_SIZE;
    const note = [
      `${int(perObject)} B per object (${int(jsonBytesPerObject)} B as JSON)`,
      `runs: ${bytes.map(per10k).join(', ')} MiB`,
      `freed on stop: ${freed.map(per10k).join(', ')} MiB`,
    ].join('; ');
    return `| heap per 10,000 cached Syncs, ${method.label} (median of ${bytes.length}) | ${per10k(median(bytes))} MiB | ${note} |`;
  });
}

function writeReport(timings: Timing[], memory: Memory[], createRate: number, kubernetes: string, load: string): void {
  const date = new Date().toISOString().slice(0, 10);
  const gib = Math.round(os.totalmem() / 2 ** 30);
  const report = `## Informer cache priming: WatchList versus LIST+WATCH

Script: \`bench/informer.ts\`. Measured ${date} on ${os.availableParallelism()} cores, ${gib} GiB
(load average ${load} at the start), Node ${process.version}, Kubernetes ${kubernetes}, etcd
embedded. Two clusters of the local control plane, started for the benchmark: \`${GATE_ON}\`
(WatchList on, the default) and \`${GATE_OFF}\` (\`--feature-gates ${GATE_OFF}=WatchList=false\`).

Method: the objects are Syncs, the operator's own kind (a CRD with CEL rules, installed from
\`src/api\` by server-side apply), each with one inline ConfigMap; ${SIZES.map(int).join(' and ')} of
them, each size in a namespace of its own, in both clusters (created ${CREATE_CONCURRENCY} at a time, at
${int(createRate)} objects/s). A prime is timed from \`new Informer({namespace, watchList}).start()\`
until \`start()\` resolves, that is until the store holds the whole set (the informer is then
stopped). The bare LIST reads the same namespace in pages of ${LIST_PAGE_SIZE} with \`KubeClient.request\`
(JSON parsed, nothing kept): the floor for any LIST-based prime. One unrecorded round on the
smallest set warms up connections and the JIT; then ${RUNS} rounds run every row in turn, and the
median is reported, with every run in milliseconds. Client CPU is this process's user + system
time during the prime (\`process.cpuUsage\`); apiserver CPU is the cluster's kube-apiserver
process's, from \`/proc\` (10 ms resolution; it includes the apiserver's background work).

Memory: \`global.gc()\`, \`heapUsed\`, prime an informer on the ${int(MEMORY_SIZE)} Syncs, \`global.gc()\`
with the informer alive, \`heapUsed\` again; the difference is what the primed cache holds (the
objects without \`managedFields\`, which the informer drops, the store's map, and whatever else
the informer keeps), scaled to 10,000 objects. "Freed on stop" is what \`heapUsed\` drops by once
the informer is stopped and dropped: a cross-check.

| how the cache is primed | WatchList gate | objects | median | runs (ms) | objects/s | client CPU | apiserver CPU | protocol used |
|---|---|---|---|---|---|---|---|---|
${timings.map((t) => `| ${timingRow(t)} |`).join('\n')}

| measure | value | note |
|---|---|---|
${memoryRows(memory).join('\n')}
`;
  writeFileSync(OUT, report);
  console.log(`\n${report}`);
}

// Exits explicitly: after a failure, an informer may still hold a watch open.
main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
