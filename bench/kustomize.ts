// Kustomize builds (issue 36, docs/adr/0006-kustomize-native-helper.md): a
// 100-object overlay built by the native helper the operator uses (through
// src/source/kustomize.ts, as a sync does) against `kubectl kustomize` on the
// same folder, first build and warm; the same helper compiled to WebAssembly
// (GOOS=wasip1) under node:wasi, the road not taken; the helper's peak RSS and
// this process's RSS (the operator's code path) before and after. Writes
// docs/benchmarks/kustomize.md; asserts nothing.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, openSync, closeSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { WASI } from 'node:wasi';
import type { ArchiveFiles } from '../src/source/archive.js';
import { buildKustomization, helperPath } from '../src/source/kustomize.js';
import { memoryKiB } from './tracker.js';
import { firstAndWarm, median, ROOT } from './support.js';

const OUT = path.join(ROOT, 'docs/benchmarks/kustomize.md');
const KUBECTL = path.join(ROOT, '.local', 'bin', 'kubectl');
const WASM = path.join(ROOT, '.local', 'kustomize', 'syncprims-kustomize.wasm');
const RUNS = Number(process.env.RUNS ?? 10);
const OPTS = { maxObjects: 10_000, maxOutputBytes: 64 << 20 };
// The helper `make build` built (this script runs from .local/bench-dist, not dist/).
process.env.SYNCPRIMS_KUSTOMIZE_HELPER ??= path.join(ROOT, 'dist', 'kustomize', 'syncprims-kustomize');

/** base/ with 50 Deployments and 50 Services, overlays/prod patching, re-imaging, prefixing and labelling them all. */
function overlay(dir: string): ArchiveFiles {
  const files: ArchiveFiles = new Map();
  const resources: string[] = [];
  for (let i = 0; i < 50; i++) {
    files.set(`base/deploy-${i}.yaml`, Buffer.from(`apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: app-${i}\nspec:\n  replicas: 1\n  selector:\n    matchLabels:\n      app: app-${i}\n  template:\n    metadata:\n      labels:\n        app: app-${i}\n    spec:\n      containers:\n      - name: app\n        image: nginx:1.25\n        envFrom:\n        - configMapRef:\n            name: settings\n`));
    files.set(`base/service-${i}.yaml`, Buffer.from(`apiVersion: v1\nkind: Service\nmetadata:\n  name: app-${i}\nspec:\n  selector:\n    app: app-${i}\n  ports:\n  - port: 80\n`));
    resources.push(`deploy-${i}.yaml`, `service-${i}.yaml`);
  }
  files.set('base/kustomization.yaml', Buffer.from(`resources:\n${resources.map((r) => `- ${r}`).join('\n')}\nconfigMapGenerator:\n- name: settings\n  literals:\n  - MODE=base\n`));
  files.set(
    'overlays/prod/kustomization.yaml',
    Buffer.from(
      'resources:\n- ../../base\nnamePrefix: prod-\nlabels:\n- pairs:\n    env: prod\nimages:\n- name: nginx\n  newTag: "1.27"\n' +
        'patches:\n- target:\n    kind: Deployment\n  patch: |-\n    - op: replace\n      path: /spec/replicas\n      value: 3\n' +
        'configMapGenerator:\n- name: settings\n  behavior: merge\n  literals:\n  - MODE=prod\n',
    ),
  );
  for (const [p, data] of files) {
    mkdirSync(path.dirname(path.join(dir, p)), { recursive: true });
    writeFileSync(path.join(dir, p), data);
  }
  return files;
}

/** The WebAssembly API of Node (not in the TypeScript libraries this project compiles with). */
interface WasmApi {
  compile(bytes: Buffer): Promise<unknown>;
  instantiate(module: unknown, imports: unknown): Promise<object>;
}
const wasmApi = (globalThis as unknown as { WebAssembly: WasmApi }).WebAssembly;

const series = (f: () => unknown): Promise<{ first: number; warm: number }> => firstAndWarm(f, RUNS);

/** The helper's peak RSS (GNU time's maximum resident set), in MiB. */
function helperPeakMiB(input: string): number {
  const run = spawnSync('/usr/bin/time', ['-f', '%M', helperPath()], { input: readFileSync(input), stdio: ['pipe', 'ignore', 'pipe'] });
  return Number(run.stderr.toString().trim().split('\n').pop()) / 1024;
}

/** The same program as WebAssembly under node:wasi (compiled on first use, cached by Go): first run and warm, and the RSS it adds. */
async function wasi(input: string): Promise<{ compileMs: number; first: number; warm: number; rssMiB: number } | undefined> {
  try {
    mkdirSync(path.dirname(WASM), { recursive: true });
    execFileSync('go', ['build', '-trimpath', '-ldflags', '-s -w', '-o', WASM, '.'], { cwd: path.join(ROOT, 'kustomize'), env: { ...process.env, GOOS: 'wasip1', GOARCH: 'wasm' }, stdio: 'inherit' });
  } catch {
    return undefined;
  }
  const before = memoryKiB(process.pid).rss;
  const t = performance.now();
  const module = await wasmApi.compile(readFileSync(WASM));
  const compileMs = performance.now() - t;
  const run = async (): Promise<void> => {
    const stdin = openSync(input, 'r');
    const stdout = openSync('/dev/null', 'w');
    const w = new WASI({ version: 'preview1', args: ['kustomize'], env: {}, stdin, stdout, returnOnExit: true });
    const instance = await wasmApi.instantiate(module, w.getImportObject());
    w.start(instance);
    closeSync(stdin);
    closeSync(stdout);
  };
  const { first, warm } = await series(run);
  return { compileMs, first, warm, rssMiB: (memoryKiB(process.pid).rss - before) / 1024 };
}

async function main(): Promise<void> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'bench-kustomize-'));
  try {
    const files = overlay(dir);
    const input = path.join(dir, 'input.json');
    writeFileSync(input, JSON.stringify({ dir: 'overlays/prod', files: Object.fromEntries([...files].map(([p, d]) => [p, d.toString('base64')])) }));
    const rssBefore = memoryKiB(process.pid).rss / 1024;
    const native = await series(() => buildKustomization(files, 'overlays/prod', 'bench', OPTS));
    const rssAfter = memoryKiB(process.pid).rss / 1024;
    const objects = (await buildKustomization(files, 'overlays/prod', 'bench', OPTS)).split('\n---\n').length;
    const kubectl = await series(() => execFileSync(KUBECTL, ['kustomize', path.join(dir, 'overlays/prod')], { stdio: ['ignore', 'ignore', 'inherit'] }));
    const peak = median(Array.from({ length: 5 }, () => helperPeakMiB(input)));
    const w = await wasi(input);
    const ms = (n: number): string => `${n.toFixed(0)} ms`;
    const report = [
      '## Kustomize builds (bench/kustomize.ts)',
      '',
      `A ${objects}-object overlay (base/ of 50 Deployments and 50 Services and a generated ConfigMap; overlays/prod re-images, patches, prefixes and labels them),`,
      `built ${RUNS + 1} times each way; "first" is the first build of the run, "warm" the median of the next ${RUNS}. ${os.cpus().length} CPUs, load ${os.loadavg()[0]?.toFixed(1)}.`,
      '',
      '| how | first | warm |',
      '|---|---|---|',
      `| native helper (what the operator runs: src/source/kustomize.ts, one process per build) | ${ms(native.first)} | ${ms(native.warm)} |`,
      `| \`kubectl kustomize\` (v1.36) on the same folder | ${ms(kubectl.first)} | ${ms(kubectl.warm)} |`,
      w ? `| the same program as WebAssembly under node:wasi (module compiled in ${ms(w.compileMs)} first) | ${ms(w.first)} | ${ms(w.warm)} |` : '| WebAssembly: not measured (GOOS=wasip1 build failed) | | |',
      '',
      `Memory: the helper's peak RSS for this build is ${peak.toFixed(0)} MiB, in its own process, gone when it exits; this process (the operator's code path) went from ${rssBefore.toFixed(0)} to ${rssAfter.toFixed(0)} MiB RSS over the ${RUNS + 1} native builds` +
        (w ? `, and the WebAssembly module added ${w.rssMiB.toFixed(0)} MiB to it while loaded.` : '.'),
      '',
    ].join('\n');
    mkdirSync(path.dirname(OUT), { recursive: true });
    writeFileSync(OUT, report);
    console.log(report);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
