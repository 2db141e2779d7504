// The client's transport (src/kube/transport*.ts): the design before it (one
// HTTP/1.1 keep-alive agent, 128 sockets, for requests and watches alike),
// HTTP/1.1 with separate pools for requests and watches, and HTTP/2, on the
// same API server in the same run: (i) 1,000 server-side applies at
// concurrency 16 and 64, time and connections; (ii) with 0, 100 and 500
// watches open, the latency of GETs and the connections held; (iii) the
// memory that 100 and 500 open watches take in a fresh process (this script
// run again with --memory). It starts a dedicated cluster (bench-transport)
// and stops it at the end.
//
// Run it with `bench/run.sh transport`. RUNS (default 5) can be changed
// through the environment. It prints figures and writes
// docs/benchmarks/transport.md; it asserts nothing about them.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { KubeClient, type RequestOptions, type StreamOptions } from '../src/kube/client.js';
import { loadKubeConfigFile } from '../src/kube/config.js';
import { apiErrorFrom, TransportError } from '../src/kube/errors.js';
import type { KubeConfig } from '../src/kube/kubeconfig.js';
import { establishedTo } from '../test/support/proc.js';
import { controlplane, int, LOCAL, median, ROOT, serverVersion, sleep } from './support.js';

const OUT = path.join(ROOT, 'docs', 'benchmarks', 'transport.md');
const CLUSTER = 'bench-transport';
const KUBECONFIG = path.join(LOCAL, `${CLUSTER}.kubeconfig`);
const RUNS = Number(process.env.RUNS ?? 5);
const APPLIES = 1000;
const CONCURRENCIES = [16, 64];
const WATCH_COUNTS = [0, 100, 500];
const MEMORY_WATCH_COUNTS = [0, 100, 500];
/** Applies before each measured run, to open the run's connections first. */
const WARM_UP_APPLIES = 128;
const GETS = 300;
const GET_CONCURRENCY = 8;
/** A GET (or a watch being opened) that takes longer counts as starved. */
const DEADLINE_MS = 5000;
/** GETs stop after this long, starved or not. */
const GET_BUDGET_MS = 15_000;

/** What the benchmark needs of a client. */
interface Subject {
  label: string;
  request<T = unknown>(opts: RequestOptions): Promise<T>;
  stream(opts: StreamOptions): Promise<Readable>;
  /** The protocol it spoke (after use). */
  protocol(): string;
  close(): void;
}

interface ApplyRun {
  ms: number;
  peakConnections: number;
}

interface ApplyResult {
  subject: string;
  concurrency: number;
  runs: ApplyRun[];
}

interface WatchResult {
  subject: string;
  protocol: string;
  requested: number;
  opened: number;
  connections: number;
  getsAnswered: number;
  getsSent: number;
  latencies: number[];
}

/** From a fresh process holding the watches open, after gc. */
interface MemoryResult {
  subject: string;
  requested: number;
  opened: number;
  /** heapUsed + external. */
  heapBytes: number;
  rssBytes: number;
}

// ---------------------------------------------------------------- the design before

/**
 * The client as it was before the transport layer: one keep-alive agent with
 * 128 sockets for every request and watch of the cluster. Requests are sent
 * as KubeClient.send sent them then (credentials applied per request, JSON).
 */
class OneAgentClient implements Subject {
  readonly label = 'HTTP/1.1, one agent (128 sockets; before)';
  private readonly agent: https.Agent;

  constructor(
    private readonly kubeConfig: KubeConfig,
    private readonly server: URL,
    tls: https.AgentOptions,
  ) {
    this.agent = new https.Agent({ keepAlive: true, maxSockets: 128, ...tls });
  }

  static async create(kubeConfig: KubeConfig): Promise<OneAgentClient> {
    const opts: https.RequestOptions = {};
    await kubeConfig.applyToHTTPSOptions(opts);
    return new OneAgentClient(kubeConfig, new URL(kubeConfig.getCurrentCluster()?.server ?? ''), { ca: opts.ca, cert: opts.cert, key: opts.key });
  }

  async request<T>(opts: RequestOptions): Promise<T> {
    const res = await this.send(opts);
    const text = await readAll(res);
    if ((res.statusCode ?? 0) >= 300) throw apiErrorFrom(res.statusCode ?? 0, undefined, text, opts.path);
    return (text ? JSON.parse(text) : undefined) as T;
  }

  async stream(opts: StreamOptions): Promise<Readable> {
    const res = await this.send(opts);
    if ((res.statusCode ?? 0) >= 300) throw apiErrorFrom(res.statusCode ?? 0, undefined, await readAll(res), opts.path);
    return res;
  }

  protocol(): string {
    return 'http/1.1';
  }

  close(): void {
    this.agent.destroy();
  }

  private async send(opts: RequestOptions): Promise<http.IncomingMessage> {
    const auth: https.RequestOptions = { headers: {} };
    await this.kubeConfig.applyToHTTPSOptions(auth);
    const url = new URL(opts.path, this.server);
    for (const [k, v] of Object.entries(opts.query ?? {})) if (v !== undefined) url.searchParams.set(k, String(v));
    const body = opts.body === undefined ? undefined : Buffer.from(JSON.stringify(opts.body));
    const headers: http.OutgoingHttpHeaders = { ...(auth.headers as http.OutgoingHttpHeaders), accept: 'application/json' };
    if (body) {
      headers['content-type'] = opts.contentType ?? 'application/json';
      headers['content-length'] = body.length;
    }
    return new Promise((resolve, reject) => {
      const req = https.request(url, { method: opts.method ?? 'GET', headers, agent: this.agent });
      const timer = setTimeout(() => {
        // The client before only destroyed the request, and a request queued in the agent then
        // never settled (until a socket freed): here it fails at its deadline, so the run ends.
        const err = new TransportError(`no answer within ${opts.timeoutMs} ms`);
        req.destroy(err);
        reject(err);
      }, opts.timeoutMs ?? 30_000);
      req.on('response', (res) => {
        clearTimeout(timer);
        resolve(res);
      });
      req.on('error', (err) => {
        clearTimeout(timer);
        reject(err);
      });
      req.end(body);
    });
  }
}

async function readAll(res: Readable): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of res) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

function kubeClientSubject(label: string, client: KubeClient): Subject {
  return {
    label,
    request: (opts) => client.request(opts),
    stream: (opts) => client.stream(opts),
    protocol: () => client.connectionStats().protocol ?? '?',
    close: () => client.close(),
  };
}

const SUBJECTS: (() => Promise<Subject>)[] = [
  () => OneAgentClient.create(loadKubeConfigFile(KUBECONFIG)),
  async () =>
    kubeClientSubject(
      'HTTP/1.1, separate pools (64 for requests)',
      await KubeClient.create('bench-h1', loadKubeConfigFile(KUBECONFIG), undefined, { http2: false }),
    ),
  async () => kubeClientSubject('HTTP/2 (fallback HTTP/1.1, separate pools)', await KubeClient.create('bench-h2', loadKubeConfigFile(KUBECONFIG))),
];

// ---------------------------------------------------------------- (i) applies

/** Counts this process's connections to the API server every 20 ms; returns the peak when stopped. */
function peakConnections(port: number): { stop: () => number } {
  let peak = establishedTo(port);
  const timer = setInterval(() => (peak = Math.max(peak, establishedTo(port))), 20);
  return {
    stop: () => {
      clearInterval(timer);
      return Math.max(peak, establishedTo(port));
    },
  };
}

async function forEachLimit<T>(items: T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) await fn(items[next++] as T);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

/** 1,000 server-side applies of ConfigMaps (each a real change: `data.round` differs every time). */
async function applyAll(subject: Subject, namespace: string, concurrency: number, round: string, count = APPLIES): Promise<void> {
  const names = Array.from({ length: count }, (_, i) => `cm-${String(i).padStart(4, '0')}`);
  await forEachLimit(names, concurrency, async (name) => {
    await subject.request({
      method: 'PATCH',
      path: `/api/v1/namespaces/${namespace}/configmaps/${name}`,
      query: { fieldManager: 'bench-transport', force: true },
      contentType: 'application/apply-patch+yaml',
      body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace }, data: { round } },
    });
  });
}

/**
 * Round after round, every client at every concurrency in turn (so drift in
 * the machine's load spreads over all of them). Before each run the other
 * clients' connections are closed and a short warm-up opens the run's own.
 */
async function measureApplies(all: Subject[], namespace: string, port: number): Promise<ApplyResult[]> {
  const results = CONCURRENCIES.flatMap((concurrency) => all.map((subject) => ({ subject: subject.label, concurrency, runs: [] as ApplyRun[] })));
  await applyAll(all[0] as Subject, namespace, 16, 'create'); // the ConfigMaps exist from here on
  for (let run = 1; run <= RUNS; run++) {
    for (const result of results) {
      const subject = all.find((s) => s.label === result.subject) as Subject;
      for (const other of all) if (other !== subject) other.close();
      await applyAll(subject, namespace, result.concurrency, `warm-up-${run}`, WARM_UP_APPLIES);
      const peak = peakConnections(port);
      const started = performance.now();
      await applyAll(subject, namespace, result.concurrency, `run-${run}-${randomBytes(3).toString('hex')}`);
      result.runs.push({ ms: performance.now() - started, peakConnections: peak.stop() });
      console.log(`run ${run}: ${subject.label}, ${result.concurrency} in flight: ${result.runs.at(-1)?.ms.toFixed(0)} ms, ${result.runs.at(-1)?.peakConnections} connections`);
    }
  }
  return results;
}

// ---------------------------------------------------------------- (ii) watches and GETs

function memory(): { heap: number; rss: number } {
  if (typeof gc !== 'function') throw new Error('run with node --expose-gc (bench/run.sh does)');
  gc();
  const m = process.memoryUsage();
  return { heap: m.heapUsed + m.external, rss: m.rss };
}

/** Opens `n` watches on names nobody creates; those not open within DEADLINE_MS are given up. */
async function openWatches(subject: Subject, namespace: string, n: number): Promise<Readable[]> {
  const settled = await Promise.allSettled(
    Array.from({ length: n }, (_, i) =>
      subject.stream({
        path: `/api/v1/namespaces/${namespace}/configmaps`,
        query: { watch: 1, fieldSelector: `metadata.name=never-${i}` },
        idleTimeoutMs: 600_000,
        timeoutMs: DEADLINE_MS,
      }),
    ),
  );
  const open = settled.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
  for (const w of open) w.on('error', () => undefined);
  return open;
}

/** GETs of one ConfigMap, GET_CONCURRENCY at a time, until GETS are sent or GET_BUDGET_MS is over. */
async function timeGets(subject: Subject, namespace: string): Promise<{ latencies: number[]; sent: number }> {
  const latencies: number[] = [];
  let sent = 0;
  const until = performance.now() + GET_BUDGET_MS;
  const worker = async (): Promise<void> => {
    while (sent < GETS && performance.now() < until) {
      sent++;
      const started = performance.now();
      const ok = await subject
        .request({ path: `/api/v1/namespaces/${namespace}/configmaps/cm-0000`, timeoutMs: DEADLINE_MS })
        .then(() => true)
        .catch(() => false);
      if (ok) latencies.push(performance.now() - started);
    }
  };
  await Promise.all(Array.from({ length: GET_CONCURRENCY }, worker));
  return { latencies, sent };
}

async function measureWatches(subject: Subject, namespace: string, port: number): Promise<WatchResult[]> {
  const results: WatchResult[] = [];
  await timeGets(subject, namespace); // warm-up
  for (const requested of WATCH_COUNTS) {
    const watches = await openWatches(subject, namespace, requested);
    const peak = peakConnections(port);
    const gets = await timeGets(subject, namespace);
    const connections = peak.stop();
    for (const w of watches) w.destroy();
    const result: WatchResult = {
      subject: subject.label,
      protocol: subject.protocol(),
      requested,
      opened: watches.length,
      connections,
      getsAnswered: gets.latencies.length,
      getsSent: gets.sent,
      latencies: gets.latencies,
    };
    results.push(result);
    console.log(`${subject.label}, ${requested} watches (${watches.length} open): ${connections} connections, ${gets.latencies.length}/${gets.sent} GETs, median ${median(gets.latencies).toFixed(1)} ms`);
    await sleep(500);
  }
  return results;
}

// ---------------------------------------------------------------- (iii) memory

/** In a fresh process (this script with `--memory <client> <watches> <namespace>`): prints a MemoryResult. */
async function memoryChild(index: number, requested: number, namespace: string): Promise<void> {
  const subject = await (SUBJECTS[index] as () => Promise<Subject>)();
  await timeGets(subject, namespace); // connections, TLS and the JIT warm
  const watches = await openWatches(subject, namespace, requested);
  await sleep(1000);
  const held = memory();
  const result: MemoryResult = { subject: subject.label, requested, opened: watches.length, heapBytes: held.heap, rssBytes: held.rss };
  console.log(JSON.stringify(result));
}

async function measureMemory(namespace: string): Promise<MemoryResult[]> {
  const results: MemoryResult[] = [];
  for (const requested of MEMORY_WATCH_COUNTS) {
    for (let index = 0; index < SUBJECTS.length; index++) {
      const args = ['--expose-gc', fileURLToPath(import.meta.url), '--memory', String(index), String(requested), namespace];
      const { stdout } = await promisify(execFile)(process.execPath, args, { timeout: 120_000 });
      const result = JSON.parse(stdout.trim().split('\n').at(-1) ?? '{}') as MemoryResult;
      results.push(result);
      console.log(`${result.subject}, ${requested} watches (${result.opened} open): RSS ${mib(result.rssBytes)} MiB, heap+external ${mib(result.heapBytes)} MiB`);
    }
  }
  return results;
}

// ---------------------------------------------------------------- main

async function main(): Promise<void> {
  if (typeof gc !== 'function') throw new Error('run with node --expose-gc (bench/run.sh does)');
  const load = os.loadavg()[0]?.toFixed(1) ?? '?';
  console.log(`starting ${CLUSTER}...`);
  await controlplane(['up', CLUSTER]);
  const admin = await KubeClient.fromFile(CLUSTER, KUBECONFIG);
  const port = Number(admin.server.port);
  const namespace = `bench-transport-${randomBytes(3).toString('hex')}`;
  const all = await Promise.all(SUBJECTS.map((make) => make()));
  try {
    await admin.request({ method: 'POST', path: '/api/v1/namespaces', body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } } });
    const kubernetes = await serverVersion(admin);
    admin.close(); // from here on, this process's connections to the API server are the measured client's
    const applies = await measureApplies(all, namespace, port);
    const watches: WatchResult[] = [];
    for (const subject of all) {
      for (const other of all) other.close();
      watches.push(...(await measureWatches(subject, namespace, port)));
    }
    for (const subject of all) subject.close();
    const memoryResults = await measureMemory(namespace);
    writeReport({ applies, watches, memory: memoryResults }, kubernetes, load, all);
  } finally {
    for (const subject of all) subject.close();
    await admin.request({ method: 'DELETE', path: `/api/v1/namespaces/${namespace}` }).catch((err: unknown) => console.error(String(err)));
    admin.close();
    console.log(`stopping ${CLUSTER}...`);
    await controlplane(['stop', CLUSTER]).catch((err: unknown) => console.error(String(err)));
  }
}

// ---------------------------------------------------------------- report

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? NaN;
}

const ms = (v: number): string => (Number.isNaN(v) ? '–' : v < 10 ? v.toFixed(1) : int(v));
const mib = (bytes: number): string => (bytes / 2 ** 20).toFixed(1);

function applyRow(r: ApplyResult): string {
  const times = r.runs.map((run) => run.ms);
  const med = median(times);
  const conns = r.runs.map((run) => run.peakConnections);
  return `| ${r.subject} | ${r.concurrency} | ${int(med)} ms | ${times.map(int).join(', ')} | ${int((APPLIES / med) * 1000)} | ${Math.max(...conns)} |`;
}

function watchRow(r: WatchResult): string {
  const answered = `${r.getsAnswered} of ${r.getsSent}`;
  return `| ${r.subject} | ${r.protocol} | ${r.requested} | ${r.opened} | ${r.connections} | ${answered} | ${ms(median(r.latencies))} | ${ms(percentile(r.latencies, 99))} |`;
}

/** Absolute figures, and the growth over the same client's process with no watch open. */
function memoryRow(r: MemoryResult, all: MemoryResult[]): string {
  const idle = all.find((o) => o.subject === r.subject && o.requested === 0);
  const growth = (bytes: number, base: number | undefined): string =>
    base === undefined || r.requested === 0 ? '' : ` (${bytes >= base ? '+' : '−'}${mib(Math.abs(bytes - base))})`;
  const perWatch =
    idle && r.opened > 0 ? `${int((r.rssBytes - idle.rssBytes) / r.opened / 1024)} KiB, ${int((r.heapBytes - idle.heapBytes) / r.opened / 1024)} KiB` : '–';
  return `| ${r.subject} | ${r.requested} | ${r.opened} | ${mib(r.rssBytes)}${growth(r.rssBytes, idle?.rssBytes)} | ${mib(r.heapBytes)}${growth(r.heapBytes, idle?.heapBytes)} | ${perWatch} |`;
}

function writeReport(
  { applies, watches, memory: mem }: { applies: ApplyResult[]; watches: WatchResult[]; memory: MemoryResult[] },
  kubernetes: string,
  load: string,
  all: Subject[],
): void {
  const date = new Date().toISOString().slice(0, 10);
  const gib = Math.round(os.totalmem() / 2 ** 30);
  const report = `## Client transport: HTTP/1.1 (one agent, or separate pools) versus HTTP/2

Script: \`bench/transport.ts\`. Measured ${date} on ${os.availableParallelism()} cores, ${gib} GiB
(load average ${load} at the start), Node ${process.version}, Kubernetes ${kubernetes}, etcd
embedded; one cluster of the local control plane started for the benchmark (\`${CLUSTER}\`),
its API server on loopback with TLS and client certificates.

The clients: ${all.map((s) => `"${s.label}"`).join('; ')}. The first is the design before
\`src/kube/transport*.ts\`, reproduced in the script: one keep-alive \`https.Agent\` with 128
sockets for requests and watches alike. The other two are \`KubeClient\`, with
\`{ http2: false }\` and with its defaults (the API server chooses \`h2\` in ALPN). One client
runs at a time; the others' connections are closed first, so this process's established TCP
connections to the API server's port (counted from \`/proc/net/tcp\` and \`/proc/self/fd\`,
every 20 ms, the peak reported) are the measured client's. The reproduction of the design
before fails a request at its deadline; the original did not when the request was still queued
in the agent (Node's agent does not fail a queued request that is destroyed: it waited until a
socket freed).

(i) Applies: ${int(APPLIES)} server-side applies (\`PATCH\`, \`application/apply-patch+yaml\`,
\`force=true\`) of existing ConfigMaps in one namespace, each a real change, ${CONCURRENCIES.join(' and ')} in
flight at a time. ${RUNS} rounds; in each, every client at every concurrency in turn, each run
after ${WARM_UP_APPLIES} unrecorded applies that open its connections; the median is reported.

(ii) Watches: ${WATCH_COUNTS.join(', ')} watches opened at once on names nobody creates (open and
silent; a watch not open within ${DEADLINE_MS / 1000} s is given up), then ${GETS} GETs of one ConfigMap,
${GET_CONCURRENCY} at a time (a GET not answered within ${DEADLINE_MS / 1000} s fails; GETs stop after
${GET_BUDGET_MS / 1000} s). Latency is over the GETs answered. Connections: the peak during the GETs.

(iii) Memory: a fresh Node process per client and count (this script with \`--memory\`) sends
a few hundred GETs, opens ${MEMORY_WATCH_COUNTS.join(', ')} watches as in (ii), waits 1 s, calls
\`global.gc()\` and reads RSS and \`heapUsed + external\` (MiB). In brackets, the growth over the
same client's process with no watch open, and per open watch: what the watches take (sockets, TLS
buffers, streams). RSS is coarse: read it as an order of magnitude.

| client | in flight | median | runs (ms) | applies/s | peak connections |
|---|---|---|---|---|---|
${applies.map(applyRow).join('\n')}

| client | protocol | watches asked | watches open | connections | GETs answered | GET median (ms) | GET p99 (ms) |
|---|---|---|---|---|---|---|---|
${watches.map(watchRow).join('\n')}

| client | watches asked | watches open | RSS (MiB) | heap + external (MiB) | per open watch (RSS, heap) |
|---|---|---|---|---|---|
${mem.map((r) => memoryRow(r, mem)).join('\n')}
`;
  writeFileSync(OUT, report);
  console.log(`\n${report}`);
}

// Exits explicitly: a starved request of the design before may still wait for a socket.
const memoryMode = process.argv.indexOf('--memory');
const entry = memoryMode > 0 ? memoryChild(Number(process.argv[memoryMode + 1]), Number(process.argv[memoryMode + 2]), process.argv[memoryMode + 3] ?? '') : main();
entry.then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
