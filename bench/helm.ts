// Helm charts (issue 47, docs/adr/0013-helm-charts.md): a large chart (a
// parent with two vendored subcharts, 300 rendered objects through helpers,
// ranges, tpl and toYaml) rendered by the sandboxed helper the operator uses
// (src/source/helm.ts, one process per render, as a sync does) against
// `helm template` (v4.3.2, built from the same Go module) on the same folder,
// first render and warm; the helper's peak RSS; and what the chart code costs
// a process that renders no chart (the idle operator). Writes
// docs/benchmarks/helm.md; asserts nothing.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { ArchiveFiles } from '../src/source/archive.js';
import { renderChart, type ChartRenderRequest } from '../src/source/helm.js';
import { firstAndWarm, median, ROOT } from './support.js';

const OUT = path.join(ROOT, 'docs/benchmarks/helm.md');
const HELM = path.join(ROOT, '.local', 'bin', 'helm');
const RUNS = Number(process.env.RUNS ?? 10);
const APPS = 50;
/** What the operator loads for charts (the helper itself is another process). */
const CHART_MODULES = ['./dist/source/helm.js', './dist/source/chart-set.js', './dist/source/chart-source.js', './dist/source/chart-values.js', './dist/kube/capabilities.js', './dist/apply/chart-hooks.js'];
// The helper `make build` built (this script runs from .local/bench-dist, not dist/).
process.env.SYNCPRIMS_HELM_HELPER ??= path.join(ROOT, 'dist', 'helm', 'syncprims-helm');

const HELPERS = `{{- define "app.labels" -}}
app.kubernetes.io/name: {{ .name }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
helm.sh/chart: {{ .root.Chart.Name }}-{{ .root.Chart.Version }}
{{- end -}}
`;

const APP = `{{- range $i, $app := .Values.apps }}
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ $app.name }}
  labels: {{- include "app.labels" (dict "name" $app.name "root" $) | nindent 4 }}
spec:
  replicas: {{ $app.replicas | default $.Values.replicas }}
  selector:
    matchLabels: {{- include "app.labels" (dict "name" $app.name "root" $) | nindent 6 }}
  template:
    metadata:
      labels: {{- include "app.labels" (dict "name" $app.name "root" $) | nindent 8 }}
      annotations:
        checksum/config: {{ toYaml $app.env | sha256sum }}
    spec:
      containers:
      - name: app
        image: "{{ $.Values.image.repository }}:{{ $.Values.image.tag }}"
        env:
        {{- range $k, $v := $app.env }}
        - name: {{ $k }}
          value: {{ tpl (toString $v) $ | quote }}
        {{- end }}
---
apiVersion: v1
kind: Service
metadata:
  name: {{ $app.name }}
spec:
  selector: {{- include "app.labels" (dict "name" $app.name "root" $) | nindent 4 }}
  ports:
  - port: 80
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ $app.name }}-settings
data: {{- toYaml $app.env | nindent 2 }}
{{- end }}
`;

function values(prefix: string): string {
  const apps = Array.from({ length: APPS }, (_, i) => `- name: ${prefix}-${i}\n  env:\n    MODE: prod\n    INDEX: "${i}"\n    RELEASE: "{{ .Release.Name }}"`);
  return `replicas: 2\nimage:\n  repository: registry.local/app\n  tag: "1.2.3"\napps:\n${apps.join('\n')}\n`;
}

/** A parent chart with two subcharts, 300 objects in all, written to `dir` and returned as the helper's files. */
function chart(dir: string): ArchiveFiles {
  const files: ArchiveFiles = new Map();
  const put = (p: string, text: string): void => void files.set(p, Buffer.from(text));
  const one = (root: string, name: string): void => {
    put(`${root}/Chart.yaml`, `apiVersion: v2\nname: ${name}\nversion: 1.0.0\n`);
    put(`${root}/values.yaml`, values(name));
    put(`${root}/templates/_helpers.tpl`, HELPERS);
    put(`${root}/templates/apps.yaml`, APP);
  };
  one('big', 'big');
  one('big/charts/left', 'left');
  one('big/charts/right', 'right');
  put('big/Chart.yaml', 'apiVersion: v2\nname: big\nversion: 1.0.0\ndependencies:\n- name: left\n  version: 1.0.0\n- name: right\n  version: 1.0.0\n');
  for (const [p, data] of files) {
    mkdirSync(path.dirname(path.join(dir, p)), { recursive: true });
    writeFileSync(path.join(dir, p), data);
  }
  return files;
}

const series = (f: () => unknown): Promise<{ first: number; warm: number }> => firstAndWarm(f, RUNS);

/** A fresh process importing `modules` (dist/), after two GCs: its RSS in MiB. */
function rssWith(modules: string[]): number {
  const script = `${modules.map((m) => `await import(${JSON.stringify(m)});`).join('\n')}\nglobal.gc(); global.gc();\nconsole.log(process.memoryUsage().rss / 1048576);`;
  return Number(execFileSync(process.execPath, ['--expose-gc', '--input-type=module', '-e', script], { cwd: ROOT, encoding: 'utf8' }).trim().split('\n').pop());
}

/** The helper's peak RSS (GNU time's maximum resident set) for one render, in MiB. */
function helperPeakMiB(files: ArchiveFiles, request: ChartRenderRequest): number {
  const input = JSON.stringify({ ...request, kubeVersion: '', apiVersions: [], maxOutputBytes: 64 << 20, files: Object.fromEntries([...files].map(([p, d]) => [p.slice('big/'.length), d.toString('base64')])) });
  const run = spawnSync('/usr/bin/time', ['-f', '%M', process.env.SYNCPRIMS_HELM_HELPER!, '-memory', String(512 << 20), '-timeout', '30s'], { input, stdio: ['pipe', 'ignore', 'pipe'] });
  return Number(run.stderr.toString().trim().split('\n').pop()) / 1024;
}

async function main(): Promise<void> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'bench-helm-'));
  try {
    const files = chart(dir);
    const request: ChartRenderRequest = { chart: 'big', releaseName: 'bench', namespace: 'apps', values: [], includeCRDs: true };
    const ours = () => renderChart(files, request, { label: 'bench', maxOutputBytes: 64 << 20 });
    const objects = (await ours()).manifests.reduce((n, f) => n + f.data.split(/^---$/m).filter((d) => d.trim() !== '').length, 0);
    const native = await series(ours);
    const helm = await series(() => execFileSync(HELM, ['template', 'bench', path.join(dir, 'big'), '--namespace', 'apps', '--include-crds'], { stdio: ['ignore', 'ignore', 'inherit'], env: { HOME: dir, HELM_CACHE_HOME: dir, HELM_CONFIG_HOME: dir, HELM_DATA_HOME: dir } }));
    const peak = median(Array.from({ length: 5 }, () => helperPeakMiB(files, { ...request, chart: '' })));
    const plain = median([0, 1, 2].map(() => rssWith([])));
    const withCharts = median([0, 1, 2].map(() => rssWith(CHART_MODULES)));
    const ms = (n: number): string => `${n.toFixed(0)} ms`;
    const report = [
      '## Helm charts (bench/helm.ts)',
      '',
      `A parent chart with two vendored subcharts, ${objects} objects (${APPS * 3} Deployments, Services and ConfigMaps each through helpers, \`range\`, \`tpl\`, \`toYaml | sha256sum\`),`,
      `rendered ${RUNS + 1} times each way; "first" is the first render of the run, "warm" the median of the next ${RUNS}. ${os.availableParallelism()} CPUs, load ${os.loadavg()[0]?.toFixed(1)}, ${new Date().toISOString().slice(0, 10)}.`,
      '',
      '| how | first | warm |',
      '|---|---|---|',
      `| the sandboxed helper (what the operator runs: src/source/helm.ts, one process per render, walls up) | ${ms(native.first)} | ${ms(native.warm)} |`,
      `| \`helm template\` v4.3.2 (built from the same Go module) on the same folder | ${ms(helm.first)} | ${ms(helm.warm)} |`,
      `| ratio (ours / helm template, warm) | | ${(native.warm / helm.warm).toFixed(2)}x |`,
      '',
      'The first `helm template` run reads its 65 MB binary from disk; the warm figures are the ones to compare.',
      '',
      `Memory: the helper's peak RSS for this render is ${peak.toFixed(0)} MiB, in its own process, gone when it exits. The operator loads no Helm code:`,
      `what it holds for charts is the TypeScript that spawns the helper (${CHART_MODULES.length} modules: ${CHART_MODULES.map((m) => m.slice('./dist/'.length)).join(', ')}),`,
      `${(withCharts - plain).toFixed(1)} MiB over a bare Node process (${plain.toFixed(1)} -> ${withCharts.toFixed(1)} MiB RSS after two GCs, medians of 3; most of it the source and kube modules they share with the rest of the operator),`,
      'loaded whether or not a sync uses Helm; no helper process runs while no chart renders.',
      '',
    ].join('\n');
    console.log(report);
    mkdirSync(path.dirname(OUT), { recursive: true });
    writeFileSync(OUT, report);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
