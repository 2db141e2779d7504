import { createHash } from 'node:crypto';
import type { HttpSource, KeyRef, SyncSource } from '../api/source.js';
import { SOURCE_FORMS } from '../api/source.js';
import type { Discovery } from '../kube/discovery.js';
import type { KubeObject } from '../kube/resources.js';
import { extractTarGz, type ArchiveFiles } from './archive.js';
import type { BudgetLease } from './budget.js';
import { SourceError } from './errors.js';
import { fluxArtifact } from './flux-artifact.js';
import { fetchRepositoryChart } from './helm-repository.js';
import { digestOf, displayUrl, httpGet, verifyDigest } from './http.js';
import { secretHeaders } from './http-headers.js';
import { describeRef, readKeys, type ObjectRef, type SourceReader } from './kube-refs.js';
import { isUnder } from './kustomize-files.js';
import type { SourceLimits } from './limits.js';
import { repositoryTree } from './repository.js';
import { secretCa } from './secret-ca.js';

/**
 * The chart of a sync with `spec.helm` (docs/source.md, "Helm charts"): a
 * packaged chart (`.tgz`) from whichever source form holds one, unpacked in
 * memory with the archive limits and checks (archive.ts: no link out of it,
 * no `..`, no bomb), and the chart's folder found in it. Only that folder's
 * files are kept.
 */

export interface ChartSourceOptions extends SourceReader {
  /** The sync's namespace: every object a source names lives there. */
  namespace: string;
  source: SyncSource;
  /** `spec.helm.chart`: the chart's folder in the archive; the default rule when omitted (chartFolder). */
  chart?: string;
  /** The home cluster's discovery (Flux source kinds). */
  discovery?: Discovery;
  /** FetchSourceOptions.resolveMaxAgeMs. */
  resolveMaxAgeMs?: number;
  /** FetchSourceOptions.cached. */
  cached?: (ref: ObjectRef) => KubeObject | undefined;
  limits: SourceLimits;
  /** Charged with the archive while it is read and with the chart's files (kept: the caller releases them). */
  lease: BudgetLease;
  signal?: AbortSignal;
  /** A chart given as files instead of the source's archive (`syncprims build --path DIR`): the source is not read. */
  given?: GivenChartFiles;
}

/** A chart's folder as files (paths relative to it, or to a folder above it), read by the caller. */
export interface GivenChartFiles {
  files: ArchiveFiles;
  /** Names them in messages and status: the folder's path. */
  label: string;
}

export interface FetchedChart {
  /** The chart folder's files (paths as in the archive). */
  files: ArchiveFiles;
  /** The folder holding Chart.yaml (`''`: the archive's root). */
  chart: string;
  /** `sha256:<hex>` of the archive. */
  digest: string;
  /** The archive in messages: its URL, `ConfigMap ns/name key chart.tgz`, ... */
  label: string;
  /** What was read, for status: a URL, `ConfigMap ns/name`, ... */
  readFrom: string;
  /** The source's own revision where it has one (a Flux artifact's). */
  revision?: string;
}

/** A packaged chart, before it is unpacked. */
interface Packaged {
  data: Buffer;
  digest: string;
  label: string;
  readFrom: string;
  revision?: string;
}

/** Reads the chart the source holds. Every failure is a SourceError. */
export async function fetchChart(opts: ChartSourceOptions): Promise<FetchedChart> {
  if (opts.given) return givenChart(opts, opts.given);
  const form = SOURCE_FORMS.find((f) => opts.source[f] !== undefined);
  const packaged = await packagedChart(opts, form);
  const keep = opts.chart === undefined ? undefined : (p: string): boolean => isUnder(p, opts.chart as string);
  const all = await extractTarGz(packaged.data, opts.limits, packaged.label, { keep, lease: opts.lease, signal: opts.signal });
  opts.lease.release(packaged.data.length);
  const chart = chartFolder([...all.keys()], opts.chart, packaged.label);
  const files: ArchiveFiles = new Map();
  for (const [p, data] of all) {
    if (isUnder(p, chart)) files.set(p, data);
    else opts.lease.release(data.length);
  }
  return { files, chart, digest: packaged.digest, label: packaged.label, readFrom: packaged.readFrom, revision: packaged.revision };
}

/**
 * A chart given as files: its folder found by the same rule as in an
 * archive, its files charged to the lease; its digest is `sha256:` over the
 * folder's paths and the sha256 of each file (there is no archive to hash).
 */
async function givenChart(opts: ChartSourceOptions, given: GivenChartFiles): Promise<FetchedChart> {
  const chart = chartFolder([...given.files.keys()], opts.chart, given.label);
  const files: ArchiveFiles = new Map();
  const hash = createHash('sha256');
  for (const [p, data] of [...given.files].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    if (!isUnder(p, chart)) continue;
    await opts.lease.take(data.length, opts.signal);
    files.set(p, data);
    hash.update(`${p}\0${createHash('sha256').update(data).digest('hex')}\n`);
  }
  return { files, chart, digest: `sha256:${hash.digest('hex')}`, label: given.label, readFrom: given.label };
}

async function packagedChart(opts: ChartSourceOptions, form: string | undefined): Promise<Packaged> {
  const { source } = opts;
  if (source.http) return fromHttp(opts, source.http);
  if (source.artifact) {
    const artifact = await fluxArtifact(opts, source.artifact);
    const data = await get(opts, { url: artifact.url });
    const digest = artifact.digest ? verifyDigest(data, artifact.digest, artifact.label) : digestOf(data);
    return { data, digest, label: artifact.label, readFrom: describeRef({ ...source.artifact, namespace: opts.namespace }), revision: artifact.revision };
  }
  if (source.helmRepository) {
    const chart = await fetchRepositoryChart(opts, source.helmRepository);
    return { data: chart.data, digest: chart.digest, label: chart.label, readFrom: chart.label };
  }
  if (source.git || source.oci) {
    // A chart folder of a Git commit's tree, or an OCI artifact's layer (a packaged chart, or a tree holding one).
    const tree = await repositoryTree(opts, source.git ? { git: source.git } : { oci: source.oci as NonNullable<typeof source.oci> });
    await opts.lease.take(tree.data.length, opts.signal);
    return { data: tree.data, digest: digestOf(tree.data), label: `${tree.label} (${tree.revision})`, readFrom: tree.label, revision: tree.revision };
  }
  if (source.configMap) return fromKeys(opts, 'ConfigMap', source.configMap);
  if (source.secret) return fromKeys(opts, 'Secret', source.secret);
  throw new SourceError(
    `spec.helm: a chart needs an archive (a packaged chart, .tgz), and spec.source.${form ?? 'inline'} holds objects: ` +
      'use spec.source.http, artifact, helmRepository, git or oci, or a ConfigMap or Secret holding the .tgz',
  );
}

async function fromHttp(opts: ChartSourceOptions, source: HttpSource): Promise<Packaged> {
  const label = displayUrl(source.url);
  const headers = source.headersSecretRef ? await secretHeaders(opts, opts.namespace, source.headersSecretRef.name, opts.signal) : undefined;
  const ca = source.caSecretRef ? await secretCa(opts, opts.namespace, source.caSecretRef, 'spec.source.http.caSecretRef.key', opts.signal) : undefined;
  const data = await get(opts, { url: source.url, headers, ca });
  const digest = source.digest ? verifyDigest(data, source.digest, label) : digestOf(data);
  return { data, digest, label, readFrom: label };
}

function get(opts: ChartSourceOptions, req: { url: string; headers?: Record<string, string>; ca?: string }): Promise<Buffer> {
  return httpGet({ ...req, timeoutMs: opts.limits.fetchTimeoutMs, maxBytes: opts.limits.maxFetchedBytes, signal: opts.signal, lease: opts.lease });
}

/**
 * A ConfigMap or Secret holding a packaged chart: the key `spec.source.<kind>.key`
 * names, else its one key ending in `.tgz` (a ConfigMap holds it in binaryData).
 */
async function fromKeys(opts: ChartSourceOptions, kind: 'ConfigMap' | 'Secret', keyRef: KeyRef): Promise<Packaged> {
  const ref: ObjectRef = { apiVersion: 'v1', kind, name: keyRef.name, namespace: opts.namespace };
  const field = `spec.source.${kind === 'Secret' ? 'secret' : 'configMap'}`;
  const entries = await readKeys(opts, ref, `${field}.name`, opts.signal);
  const key = chartKey(entries.map(([k]) => k), keyRef.key, describeRef(ref), field);
  const data = (entries.find(([k]) => k === key) as [string, Buffer])[1];
  await opts.lease.take(data.length, opts.signal);
  const label = `${describeRef(ref)} key ${key}`;
  return { data, digest: digestOf(data), label, readFrom: describeRef(ref) };
}

/** The key holding the chart: the one named, else the single key ending in `.tgz`. */
export function chartKey(keys: string[], named: string | undefined, what: string, field: string): string {
  const listed = keys.length ? keys.join(', ') : 'none';
  if (named !== undefined) {
    if (keys.includes(named)) return named;
    throw new SourceError(`${what} has no key ${JSON.stringify(named)} (keys: ${listed}): fix ${field}.key`);
  }
  const packaged = keys.filter((k) => k.endsWith('.tgz'));
  if (packaged.length === 1) return packaged[0] as string;
  const why = packaged.length === 0 ? 'no key ending in .tgz' : `several keys ending in .tgz`;
  throw new SourceError(`${what} has ${why} (keys: ${listed}): a chart in a ConfigMap or Secret is one packaged chart (.tgz); name its key in ${field}.key`);
}

/**
 * The chart's folder among the archive's files: the one named (it must hold
 * Chart.yaml), else the root when it holds Chart.yaml, else the single
 * top-level folder that does (as `helm package` lays a chart out).
 */
export function chartFolder(paths: string[], named: string | undefined, label: string): string {
  const charts = paths.filter((p) => p === 'Chart.yaml' || p.endsWith('/Chart.yaml')).map((p) => p.slice(0, -'Chart.yaml'.length).replace(/\/$/, ''));
  const shown = (list: string[]): string => list.slice(0, 10).map((c) => c || '.').join(', ') + (list.length > 10 ? `, and ${list.length - 10} more` : '');
  if (named !== undefined) {
    if (charts.includes(named)) return named;
    const found = charts.length ? `folders holding Chart.yaml: ${shown(charts)}` : 'no Chart.yaml in the archive';
    throw new SourceError(`${label}: no Chart.yaml in ${named} (${found}): fix spec.helm.chart`);
  }
  if (charts.includes('')) return '';
  const top = charts.filter((c) => !c.includes('/'));
  if (top.length === 1) return top[0] as string;
  if (top.length > 1) throw new SourceError(`${label}: several top-level folders hold a Chart.yaml (${shown(top)}): name the chart's folder in spec.helm.chart`);
  const entries = [...new Set(paths.map((p) => p.split('/')[0] as string))].sort();
  const deeper = charts.length ? `; Chart.yaml found in ${shown(charts)}: name the chart's folder in spec.helm.chart` : ': is it a chart?';
  throw new SourceError(`${label}: no Chart.yaml at the root nor in a top-level folder (the archive holds ${shown(entries) || 'nothing'})${deeper}`);
}
