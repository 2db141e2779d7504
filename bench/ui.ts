// The web view (docs/ui.md) with many syncs in one namespace: how long the
// page takes to first show the whole graph, and what it holds in the browser,
// at N = 1,000 Syncs (UI_SYNCS) against a baseline of 10 in the same run, and
// `syncprims graph` (the CLI's text of the same graph) as a second baseline.
// On a control plane of its own (bench/ui-support.ts). Writes
// docs/benchmarks/ui.md.
//
// Per size: a fresh namespace; the Syncs, in chains of 10 (`s-<c>-<i>`
// depends on `s-<c>-<i-1>`), each applying one ConfigMap; one operator (the
// working tree's dist/, `--ui-addr 127.0.0.1:0`) on the namespace; all Ready
// first. Then ROUNDS (3) fresh browser pages (headless Chromium, 1280×900):
// - first render: from navigation start to the graph holding every node
//   (performance.now() in the page, polled each animation frame);
// - browser memory after a forced GC (DevTools HeapProfiler.collectGarbage,
//   then Performance.getMetrics: JSHeapUsedSize, and the page's DOM Nodes);
// - update: from the PATCH that suspends (or, next round, resumes) the last
//   Sync of the first chain to the page showing it so (pushed by the event
//   stream; no reload);
// and, outside the browser, the size of the view (GET /api/view) and the time
// to serve it, and `syncprims graph -n <ns>` wall time (a process; reads the
// API server).
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import type { Browser } from 'playwright-core';
import { launchChromium } from '../test/support/browser.js';
import { API_VERSION } from '../src/api/kinds.js';
import type { KubeClient } from '../src/kube/client.js';
import { createNamespace, median, ROOT, sampleLoad, serverVersion, stopOperators } from './support.js';
import { applySyncs, configMap, KUBECONFIG, MAIN, operatorWithUi, startPlane, stopPlane, waitAllReady, type SyncSpec } from './ui-support.js';

const run = promisify(execFile);
const SIZES = [10, Number(process.env.UI_SYNCS ?? 1000)];
const ROUNDS = Number(process.env.UI_ROUNDS ?? 3);
const CHAIN = 10;

interface Round {
  firstRenderMs: number;
  heapMiB: number;
  domNodes: number;
  updateMs: number;
}

interface SizeResult {
  n: number;
  rounds: Round[];
  viewBytes: number;
  viewMs: number[];
  graphCliMs: number[];
}

function chains(namespace: string, n: number): SyncSpec[] {
  return Array.from({ length: n }, (_, k) => {
    const c = Math.floor(k / CHAIN);
    const i = k % CHAIN;
    const name = `s-${c}-${i}`;
    return { name, spec: { source: { inline: [configMap(namespace, `cm-${name}`)] }, ...(i > 0 ? { dependsOn: [{ name: `s-${c}-${i - 1}` }] } : {}) } };
  });
}

async function pageRound(browser: Browser, url: string, n: number, client: KubeClient, namespace: string, round: number): Promise<Round> {
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  try {
    await page.goto(url);
    const firstRenderMs = await page.evaluate(
      (want) =>
        new Promise<number>((resolve) => {
          const g = globalThis as unknown as { document: { querySelectorAll(s: string): { length: number } }; requestAnimationFrame(f: () => void): void; performance: { now(): number } };
          const check = (): void => (g.document.querySelectorAll('#graph .node').length >= want ? resolve(g.performance.now()) : g.requestAnimationFrame(check));
          check();
        }),
      n,
    );
    const cdp = await page.context().newCDPSession(page);
    await cdp.send('HeapProfiler.enable');
    await cdp.send('HeapProfiler.collectGarbage');
    await cdp.send('Performance.enable');
    const { metrics } = (await cdp.send('Performance.getMetrics')) as { metrics: { name: string; value: number }[] };
    const metric = (name: string): number => metrics.find((m) => m.name === name)?.value ?? NaN;
    // The last Sync of the first chain, suspended (even rounds) or resumed (odd): timed until the page shows it.
    const target = `s-0-${CHAIN - 1}`;
    const suspend = round % 2 === 0;
    const want = { key: `Sync/${namespace}/${target}`, state: suspend ? 'suspended' : 'ready' };
    const t0 = Date.now();
    await client.request({ method: 'PATCH', path: `/apis/${API_VERSION}/namespaces/${namespace}/syncs/${target}`, contentType: 'application/merge-patch+json', body: { spec: { suspend } } });
    await page.waitForFunction((w) => (globalThis as unknown as { document: { querySelector(s: string): { getAttribute(a: string): string } | null } }).document.querySelector(`#graph [data-key="${w.key}"]`)?.getAttribute('data-state') === w.state, want, { polling: 'raf', timeout: 60_000 });
    const updateMs = Date.now() - t0;
    return { firstRenderMs, heapMiB: metric('JSHeapUsedSize') / 2 ** 20, domNodes: metric('Nodes'), updateMs };
  } finally {
    await page.close();
  }
}

async function measureSize(client: KubeClient, browser: Browser, n: number): Promise<SizeResult> {
  const namespace = await createNamespace(client, `bench-ui-${n}`);
  console.log(`${n} Syncs in ${namespace}...`);
  const { op, url } = await operatorWithUi(namespace, `bench-ui-${n}-operator`);
  try {
    await applySyncs(client, namespace, chains(namespace, n));
    await waitAllReady(client, namespace, n);
    const rounds: Round[] = [];
    for (let r = 0; r < ROUNDS; r++) rounds.push(await pageRound(browser, url, n, client, namespace, r));
    const viewMs: number[] = [];
    let viewBytes = 0;
    for (let r = 0; r < ROUNDS; r++) {
      const t0 = performance.now();
      viewBytes = (await (await fetch(new URL('/api/view', url))).arrayBuffer()).byteLength;
      viewMs.push(performance.now() - t0);
    }
    const graphCliMs: number[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      const t0 = performance.now();
      await run(process.execPath, [MAIN, 'graph', '--kubeconfig', KUBECONFIG, '-n', namespace], { maxBuffer: 64 * 2 ** 20 });
      graphCliMs.push(performance.now() - t0);
    }
    const result = { n, rounds, viewBytes, viewMs, graphCliMs };
    console.log(JSON.stringify(result));
    return result;
  } finally {
    await op.stop();
  }
}

const ms = (v: number): string => `${Math.round(v).toLocaleString('en-US')} ms`;
const mib = (v: number): string => `${v.toFixed(1)} MiB`;

function report(results: SizeResult[], env: { date: string; k8s: string; load: number[] }): string {
  const [base, big] = results as [SizeResult, SizeResult];
  const m = (r: SizeResult, f: (x: Round) => number): number => median(r.rounds.map(f));
  const row = (what: string, f: (r: SizeResult) => string): string => `| ${what} | ${f(base)} | ${f(big)} |`;
  const loads = env.load.length > 0 ? `${median(env.load).toFixed(1)} (median; ${Math.min(...env.load).toFixed(1)} to ${Math.max(...env.load).toFixed(1)})` : 'not sampled';
  return `## The web view (bench/ui.ts)

Script: \`bench/ui.ts\`. Measured ${env.date} on ${os.cpus().length} cores (${os.cpus()[0]?.model ?? '?'}), ${Math.round(os.totalmem() / 2 ** 30)} GiB,
Node ${process.version}, Kubernetes ${env.k8s}, Chromium (Debian's package, headless, driven by playwright-core). A control plane
of the benchmark's own (\`.local/bench-ui-plane\`, cluster \`bench-ui\`), started for it and stopped at the end. The operator:
the working tree's build (\`dist/\`, \`make build\`). The machine's 1-minute load average during the run: ${loads}.

Method: per size, a fresh namespace with its Syncs in chains of ${CHAIN} (each depends on the one before; each applies one
ConfigMap), one operator on it (\`--namespace\`, \`--ui-addr 127.0.0.1:0\`), everything Ready first. Then ${ROUNDS} fresh pages,
1280×900 (the medians are shown): **first render** is the page's own clock (\`performance.now()\`, from navigation start)
when the graph holds every node, polled each animation frame; **memory** is V8's used heap of the page after a forced GC
(DevTools \`HeapProfiler.collectGarbage\`, then \`Performance.getMetrics\` \`JSHeapUsedSize\`) and its DOM node count;
**update** is from the PATCH suspending (or resuming, every other round) the last Sync of a chain to the page showing it so (the event stream
pushes the whole view again; the page redraws). Outside the browser: the view's JSON size and the time to GET it, and
\`syncprims graph -n <ns>\` (a process that lists the namespace's syncs from the API server and prints Mermaid), the
CLI's text of the same graph, as a baseline.

| measure | ${base.n} Syncs (baseline) | ${big.n} Syncs |
|---|---|---|
${row('first render (navigation start → every node drawn)', (r) => ms(m(r, (x) => x.firstRenderMs)))}
${row('browser JS heap after GC', (r) => mib(m(r, (x) => x.heapMiB)))}
${row('DOM nodes', (r) => Math.round(m(r, (x) => x.domNodes)).toLocaleString('en-US'))}
${row('update: PATCH → shown in the page', (r) => ms(m(r, (x) => x.updateMs)))}
${row('view JSON (GET /api/view)', (r) => `${(r.viewBytes / 1024).toFixed(0)} KiB in ${ms(median(r.viewMs))}`)}
${row('baseline: syncprims graph -n (a process, wall time)', (r) => ms(median(r.graphCliMs)))}

Per round (first render / heap / update): ${results.map((r) => `${r.n}: ${r.rounds.map((x) => `${ms(x.firstRenderMs)} / ${mib(x.heapMiB)} / ${ms(x.updateMs)}`).join('; ')}`).join(' — ')}.
`;
}

async function main(): Promise<void> {
  let client: KubeClient | undefined;
  let browser: Browser | undefined;
  const load = sampleLoad();
  try {
    client = await startPlane();
    const k8s = await serverVersion(client);
    browser = await launchChromium();
    const results: SizeResult[] = [];
    for (const n of SIZES) results.push(await measureSize(client, browser, n));
    const text = report(results, { date: new Date().toISOString().slice(0, 10), k8s, load: load.stop() });
    writeFileSync(path.join(ROOT, 'docs', 'benchmarks', 'ui.md'), text);
    console.log(text);
  } finally {
    load.stop();
    await browser?.close();
    await stopOperators();
    await stopPlane(client);
  }
}

await main();
