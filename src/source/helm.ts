import type { ArchiveFiles } from './archive.js';
import type { BudgetLease } from './budget.js';
import { SourceError } from './errors.js';
import { helperBinary, helperExitMessage, runHelper } from './helper-process.js';

/**
 * Charts rendered as `helm template` (helm v4.3.2) renders them, by the Helm
 * helper (helm/, built by `make build` into dist/helm/;
 * docs/adr/0013-helm-charts.md), in a sandbox the kernel holds: no socket,
 * no file opened, no program run. It is given the chart's files and the
 * values on its stdin (helm/PROTOCOL.md: one JSON object) and
 * prints the rendered chart as one JSON object. Its memory (32 MiB and 16
 * times what it is given) is taken from the source's lease while it runs.
 */

/** One layer of values, merged in order (later wins, maps deeply): a YAML document, one string at a path, or an object. */
export type ValuesLayer =
  | { from: string; yaml: string }
  | { from: string; targetPath: string; value: string }
  | { from: string; object: Record<string, unknown> };

/** What to render, beside the files. */
export interface ChartRenderRequest {
  /** The folder holding Chart.yaml (`''`: the root). */
  chart: string;
  releaseName: string;
  /** `.Release.Namespace`. */
  namespace: string;
  values: ValuesLayer[];
  includeCRDs: boolean;
  /** `.Capabilities.KubeVersion`; `''` or undefined: helm template's default. */
  kubeVersion?: string;
  /** Added to `.Capabilities.APIVersions` (group/version, group/version/Kind). */
  apiVersions?: string[];
}

export interface ChartRenderOptions {
  /** Names the source in messages (its URL, `ConfigMap ns/name`, ...). */
  label: string;
  /** Bytes of rendered YAML the chart may print. */
  maxOutputBytes: number;
  /** Charged with the helper's memory and its output while it runs. */
  lease?: BudgetLease;
  signal?: AbortSignal;
  /** Default HELM_TIME_LIMIT_MS. */
  timeoutMs?: number;
}

/** One rendered file of the chart (several YAML documents, maybe). */
export interface RenderedFile {
  /** `<chart>/templates/x.yaml`, `<chart>/charts/<sub>/crds/y.yaml`. */
  path: string;
  data: string;
}

export interface RenderedHookFile extends RenderedFile {
  /** helm.sh/hook: pre-install, post-upgrade, test, ... */
  events: string[];
  /** helm.sh/hook-weight. */
  weight: number;
  /** helm.sh/hook-delete-policy, as given. */
  deletePolicies: string[];
}

/** The walls the helper stood behind (PROTOCOL.md `walls`). */
export interface SandboxWalls {
  noNewPrivs: boolean;
  seccomp: boolean;
  /** The Landlock ABI applied; 0: none. */
  landlock: number;
  landlockNet: boolean;
}

/** What `helm template` rendered: the chart's name and versions, its CRDs, manifests and hooks in Helm's order. */
export interface RenderedChart {
  chart: { name: string; version: string; appVersion?: string };
  crds: RenderedFile[];
  manifests: RenderedFile[];
  /** Every hook, test hooks included: the caller chooses. */
  hooks: RenderedHookFile[];
  walls: SandboxWalls;
}

/** How long one chart may take to render. */
export const HELM_TIME_LIMIT_MS = 30_000;

/** The helper's memory beside what it is given. */
export const HELM_BASE_MEMORY = 32 * 1024 * 1024;

/** The helper's memory per byte it is given (the files held, loaded as a chart, the values parsed, the templates rendered). */
export const HELM_MEMORY_PER_INPUT_BYTE = 16;


/** Stdout is JSON: the YAML it carries may take up to twice its bytes once escaped, beside the rest. */
const STDOUT_SLACK = 1024 * 1024;

/** Renders the chart at `request.chart` of `files` (only that folder's files are sent). Every failure is a SourceError. */
export async function renderChart(files: ArchiveFiles, request: ChartRenderRequest, opts: ChartRenderOptions): Promise<RenderedChart> {
  const chartFiles = filesUnder(files, request.chart);
  const rest = JSON.stringify({ ...request, kubeVersion: request.kubeVersion ?? '', apiVersions: request.apiVersions ?? [], maxOutputBytes: opts.maxOutputBytes });
  let inputBytes = rest.length;
  for (const data of chartFiles.values()) inputBytes += data.length;
  const where = `${opts.label}: helm template ${request.chart || '.'}`;
  const stdout = await runHelper({
    name: 'helm',
    path: helmHelperPath(),
    memory: HELM_BASE_MEMORY + HELM_MEMORY_PER_INPUT_BYTE * inputBytes,
    timeoutMs: opts.timeoutMs ?? HELM_TIME_LIMIT_MS,
    maxOutputBytes: 2 * opts.maxOutputBytes + STDOUT_SLACK,
    where,
    input: inputOf(chartFiles, rest),
    exitMessage: (code, said) =>
      helperExitMessage(code, said, { refused: (s) => `${opts.label}: ${s}; refused (charts render in a sandbox: docs/source.md, Helm)`, failed: where, limit: where }),
    lease: opts.lease,
    signal: opts.signal,
  });
  return parseAnswer(stdout, where);
}

/** The files at or below `folder` (`''`: all), with their paths as they are. */
export function filesUnder(files: ArchiveFiles, folder: string): ArchiveFiles {
  if (folder === '') return files;
  const under: ArchiveFiles = new Map();
  for (const [p, data] of files) if (p.startsWith(`${folder}/`)) under.set(p, data);
  return under;
}


/** The input as JSON: the files one at a time (as base64), then the request (`rest`, a JSON object's text). */
function* inputOf(files: ArchiveFiles, rest: string): Generator<string> {
  yield '{"files":{';
  let first = true;
  for (const [p, data] of files) {
    yield `${first ? '' : ','}${JSON.stringify(p)}:"${data.toString('base64')}"`;
    first = false;
  }
  yield `},${rest.slice(1)}`;
}

function isFile(v: unknown): v is RenderedFile {
  const f = v as Partial<RenderedFile> | null;
  return typeof f?.path === 'string' && typeof f.data === 'string';
}

function isHook(v: unknown): v is RenderedHookFile {
  const h = v as Partial<RenderedHookFile>;
  return isFile(v) && Array.isArray(h.events) && typeof h.weight === 'number' && Array.isArray(h.deletePolicies);
}

/** The helper's answer, checked for its shape (a helper of another version says something else). */
function parseAnswer(stdout: string, where: string): RenderedChart {
  let answer: Partial<RenderedChart> | null;
  try {
    answer = JSON.parse(stdout) as Partial<RenderedChart> | null;
  } catch {
    answer = null;
  }
  const chart = answer?.chart;
  const ok =
    typeof chart?.name === 'string' &&
    typeof chart.version === 'string' &&
    Array.isArray(answer?.crds) && answer.crds.every(isFile) &&
    Array.isArray(answer.manifests) && answer.manifests.every(isFile) &&
    Array.isArray(answer.hooks) && answer.hooks.every(isHook);
  if (!ok || !answer) throw new SourceError(`${where}: the helm helper answered something other than a rendered chart (is dist/helm/syncprims-helm of this version? make build builds it)`);
  return answer as RenderedChart;
}

/** Where the helper is: SYNCPRIMS_HELM_HELPER, else dist/helm/ of this package (`make build`). */
export const helmHelperPath = (): string => helperBinary('SYNCPRIMS_HELM_HELPER', 'helm/syncprims-helm');
