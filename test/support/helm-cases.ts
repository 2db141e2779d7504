// The Helm conformance cases (test/fixtures/helm/conformance/<case>/, issue 47):
// reading a case, rendering it with the `helm` CLI (`helm template`, built from
// the helper's own Go module) and with our helper (PROTOCOL.md), and reading both
// outputs as objects with their file and hook facts, to compare them.
//
// A case folder is a source: its files (less case.json) are the helper's
// `files`, and the chart is its `chart` subfolder (default the root).
// case.json (optional): { chart?, releaseName, namespace, values?: [layer],
// includeCRDs?, kubeVersion?, apiVersions?, expectError?: regex | {helm, ours},
// expectExit? (default 11) }, a layer being PROTOCOL.md's ({yaml} | {object} |
// {targetPath, value}, `from` optional). The CLI gets the yaml and object
// layers as -f files in order, then the targetPath layers as --set-string in
// order: a case must list its targetPath layers last (Helm's CLI applies
// --set-string after every -f), which readCase checks.
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseAllDocuments } from 'yaml';
import { KUBECTL_YAML } from '../../src/kube/kubectl-yaml.js';
import { ROOT } from './controlplane.js';

export const CASES_DIR = path.join(ROOT, 'test', 'fixtures', 'helm', 'conformance');

export type Layer = { from?: string } & ({ yaml: string } | { object: Record<string, unknown> } | { targetPath: string; value: string });

export interface HelmCase {
  name: string;
  dir: string;
  chart: string;
  releaseName: string;
  namespace: string;
  values: Layer[];
  includeCRDs: boolean;
  kubeVersion: string;
  apiVersions: string[];
  expectError?: { helm: RegExp; ours: RegExp };
  expectExit: number;
}

interface CaseFile {
  chart?: string;
  releaseName?: string;
  namespace?: string;
  values?: Layer[];
  includeCRDs?: boolean;
  kubeVersion?: string;
  apiVersions?: string[];
  expectError?: string | { helm: string; ours: string };
  expectExit?: number;
}

function errorOf(given: CaseFile['expectError']): HelmCase['expectError'] {
  if (given === undefined) return undefined;
  if (typeof given === 'string') return { helm: new RegExp(given), ours: new RegExp(given) };
  return { helm: new RegExp(given.helm), ours: new RegExp(given.ours) };
}

export function readCase(name: string): HelmCase {
  const dir = path.join(CASES_DIR, name);
  const file = path.join(dir, 'case.json');
  const given = (existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')) : {}) as CaseFile;
  const values = (given.values ?? []).map((l, i) => ({ from: `${name}/case.json values[${i}]`, ...l }));
  const firstSet = values.findIndex((l) => 'targetPath' in l);
  if (firstSet >= 0 && values.slice(firstSet).some((l) => !('targetPath' in l))) {
    throw new Error(`${file}: a yaml or object layer after a targetPath layer cannot be given to the helm CLI (--set-string comes after every -f)`);
  }
  return {
    name,
    dir,
    chart: given.chart ?? '',
    releaseName: given.releaseName ?? name,
    namespace: given.namespace ?? 'conformance',
    values,
    includeCRDs: given.includeCRDs ?? false,
    kubeVersion: given.kubeVersion ?? '',
    apiVersions: given.apiVersions ?? [],
    expectError: errorOf(given.expectError),
    expectExit: given.expectExit ?? 11,
  };
}

export function caseNames(): string[] {
  return readdirSync(CASES_DIR).filter((n) => statSync(path.join(CASES_DIR, n)).isDirectory()).sort();
}

/** The case's source files by path (case.json is the test's, not the source's). */
export function sourceFiles(dir: string, prefix = ''): Map<string, Buffer> {
  const files = new Map<string, Buffer>();
  for (const name of readdirSync(path.join(dir, prefix)).sort()) {
    const rel = prefix ? `${prefix}/${name}` : name;
    if (rel === 'case.json') continue;
    if (statSync(path.join(dir, rel)).isDirectory()) for (const [p, b] of sourceFiles(dir, rel)) files.set(p, b);
    else files.set(rel, readFileSync(path.join(dir, rel)));
  }
  return files;
}

/** The helper's stdin (PROTOCOL.md) for a case. */
export function helperInput(c: HelmCase, maxOutputBytes = 32 << 20): Record<string, unknown> {
  const files: Record<string, string> = {};
  for (const [p, b] of sourceFiles(c.dir)) files[p] = b.toString('base64');
  const { chart, releaseName, namespace, values, includeCRDs, kubeVersion, apiVersions } = c;
  return { files, chart, releaseName, namespace, values, includeCRDs, kubeVersion, apiVersions, maxOutputBytes };
}

/** Where the helm CLI is: HELM_CLI, else the checkout's .local/bin/helm (the Makefile builds it). */
export function helmCliPath(): string {
  return process.env.HELM_CLI || path.join(ROOT, '.local', 'bin', 'helm');
}

export function assertHelmCli(): void {
  if (!existsSync(helmCliPath())) {
    throw new Error(`the helm CLI ${helmCliPath()} is missing: \`make test\` builds it (the helm tool of the helper's Go module, helm/)`);
  }
}

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** `helm template` of a case, run on a copy of its source in a temporary folder, with an empty environment but for HOME and Helm's own folders there. */
export async function helmTemplate(c: HelmCase): Promise<CliRun> {
  const tmp = mkdtempSync(path.join(os.tmpdir(), `helm-case-${c.name}-`));
  try {
    for (const [p, b] of sourceFiles(c.dir)) {
      mkdirSync(path.dirname(path.join(tmp, 'src', p)), { recursive: true });
      writeFileSync(path.join(tmp, 'src', p), b);
    }
    const args = ['template', c.releaseName, path.join(tmp, 'src', c.chart), '--namespace', c.namespace];
    if (c.includeCRDs) args.push('--include-crds');
    c.values.forEach((l, i) => {
      if ('targetPath' in l) return;
      const file = path.join(tmp, `layer-${i}.${'yaml' in l ? 'yaml' : 'json'}`);
      writeFileSync(file, 'yaml' in l ? l.yaml : JSON.stringify(l.object));
      args.push('-f', file);
    });
    for (const l of c.values) if ('targetPath' in l) args.push('--set-string', `${l.targetPath}=${l.value}`);
    if (c.kubeVersion) args.push('--kube-version', c.kubeVersion);
    for (const v of c.apiVersions) args.push('--api-versions', v);
    const env = { HOME: tmp, HELM_CACHE_HOME: `${tmp}/cache`, HELM_CONFIG_HOME: `${tmp}/config`, HELM_DATA_HOME: `${tmp}/data`, KUBECONFIG: `${tmp}/no-kubeconfig` };
    return await new Promise<CliRun>((resolve) => {
      execFile(helmCliPath(), args, { env, cwd: tmp, maxBuffer: 64 << 20 }, (err, stdout, stderr) => {
        resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
      });
    });
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

/** How Helm reads a hook's annotations (pkg/release/v1/util/manifest_sorter.go). */
export interface HookFacts {
  events: string[];
  weight: number;
  deletePolicies: string[];
}

/** One rendered object: the file it came from, and for a hook its facts. */
export interface Rendered {
  path: string;
  object: Record<string, unknown>;
  hook?: HookFacts;
}

/** The objects of a YAML text (YAML 1.1, as the project reads manifests), empty documents left out. */
export function objectsOf(text: string, where: string): Record<string, unknown>[] {
  return parseAllDocuments(text, KUBECTL_YAML).flatMap((doc) => {
    if (doc.errors.length > 0) throw new Error(`${where}: ${doc.errors[0]?.message}`);
    const value: unknown = doc.toJS();
    return value === null || value === undefined ? [] : [value as Record<string, unknown>];
  });
}

const HOOK = 'helm.sh/hook';

function annotations(o: Record<string, unknown>): Record<string, string> {
  const meta = o.metadata as { annotations?: Record<string, string> } | undefined;
  return meta?.annotations ?? {};
}

function list(value: string | undefined): string[] {
  return value === undefined ? [] : value.split(',').map((s) => s.trim().toLowerCase());
}

/** Go's strconv.Atoi, or 0 as Helm falls back to. */
function goAtoi(s: string | undefined): number {
  return s !== undefined && /^[+-]?\d+$/.test(s) ? Number(s) : 0;
}

/** A hook's facts read from its annotations as Helm reads them; `test-success` is `test`. */
export function hookFactsOf(o: Record<string, unknown>): HookFacts {
  const a = annotations(o);
  return {
    events: list(a[HOOK]).map((e) => (e === 'test-success' ? 'test' : e)),
    weight: goAtoi(a['helm.sh/hook-weight']),
    deletePolicies: list(a['helm.sh/hook-delete-policy']),
  };
}

/**
 * `helm template`'s output as objects: each document follows a `# Source: <path>`
 * line (documents of a CRD file after the first have none: they keep the file's).
 */
export function helmObjects(stdout: string): Rendered[] {
  const out: Rendered[] = [];
  let source = '';
  for (const chunk of stdout.split(/^---[ \t]*$/m)) {
    source = /^# Source: (.+)$/m.exec(chunk)?.[1] ?? source;
    for (const object of objectsOf(chunk, `helm template (${source})`)) {
      out.push(HOOK in annotations(object) ? { path: source, object, hook: hookFactsOf(object) } : { path: source, object });
    }
  }
  return out;
}

export interface HelperOutput {
  chart: { name: string; version: string; appVersion?: string };
  crds: { path: string; data: string }[];
  manifests: { path: string; data: string }[];
  hooks: ({ path: string; data: string } & HookFacts)[];
}

/** Our helper's output as objects: crds, then manifests (the non-hook sequence), and the hooks with the facts it gave. */
export function ourObjects(out: HelperOutput): { sequence: Rendered[]; hooks: Rendered[] } {
  const of = (entries: { path: string; data: string }[]): Rendered[] =>
    entries.flatMap((e) => objectsOf(e.data, `helper (${e.path})`).map((object) => ({ path: e.path, object })));
  const hooks = out.hooks.flatMap((h) =>
    objectsOf(h.data, `helper hook (${h.path})`).map((object) => ({ path: h.path, object, hook: { events: h.events, weight: h.weight, deletePolicies: h.deletePolicies } })),
  );
  return { sequence: [...of(out.crds), ...of(out.manifests)], hooks };
}

/** apiVersion/kind/namespace/name of an object. */
export function keyOf(r: Rendered): string {
  const meta = (r.object.metadata ?? {}) as { namespace?: string; name?: string };
  return `${String(r.object.apiVersion)}/${String(r.object.kind)}/${meta.namespace ?? ''}/${meta.name ?? ''}`;
}

/** A multiset, as a sorted list (by key, then by the whole entry). */
export function asMultiset(items: Rendered[]): Rendered[] {
  const sortKey = (r: Rendered): string => `${keyOf(r)}\u0000${JSON.stringify(r)}`;
  return [...items].sort((a, b) => (sortKey(a) < sortKey(b) ? -1 : sortKey(a) > sortKey(b) ? 1 : 0));
}

/** The first line of a helper's stderr: its message (PROTOCOL.md). */
export function firstLine(stderr: string): string {
  return stderr.split('\n')[0] ?? '';
}
