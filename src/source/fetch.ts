import type { GitSource, OciSource } from '../api/repository-sources.js';
import { SOURCE_FORMS, type ArtifactSource, type HttpSource, type KeyRef, type SourceForm, type SyncSource } from '../api/source.js';
import type { Requester } from '../kube/client.js';
import type { Discovery } from '../kube/discovery.js';
import type { KubeObject } from '../kube/resources.js';
import { extractTarGz } from './archive.js';
import { sourceMemoryBudget, type BudgetLease } from './budget.js';
import { messageOf, SourceError } from './errors.js';
import { digestOf, displayUrl, httpGet, verifyDigest } from './http.js';
import { describeRef, readKey, readKeys, type ObjectRef } from './kube-refs.js';
import { fluxArtifact } from './flux-artifact.js';
import { secretHeaders } from './http-headers.js';
import { sourceLimits, type SourceLimits } from './limits.js';
import { checkObjects, parseManifests } from './parse.js';
import { secretCa } from './secret-ca.js';
import { fetchChartSet, noPathsWithChart, type ChartSetOptions, type FetchedChartSet, type FetchedHook } from './chart-set.js';
import { valuesObjectsOf } from './chart-values.js';
import { ParsedSets } from './parsed-sets.js';
import { keepForKustomize, kustomizeArchive } from './kustomize-archive.js';
import { repositoryTree, type RepositorySource } from './repository.js';
import { manifestFilter, selectSource } from './select.js';

export interface FetchSourceOptions {
  /**
   * A client of the cluster the sync lives in (ConfigMaps, Secrets and Flux
   * objects are read there): acting as the sync's service account when it
   * has one, and then `account` names it.
   */
  client: Requester;
  /** The service account `client` acts as (`namespace/name`), for messages; undefined: the operator's own identity. */
  account?: string;
  /** That cluster's discovery, shared with the rest of the process (a fresh one when omitted). */
  discovery?: Discovery;
  /** The sync's namespace: every object a source names lives there. */
  namespace: string;
  source: SyncSource;
  /**
   * A referenced object as the caller's watch has it, whole (a Flux source
   * object): read instead of a GET. Undefined, or an object without status
   * (metadata only), means a GET. Not used when reading as an `account`
   * (the watch is the operator's: whether the account may read it is asked
   * of the API server).
   */
  cached?: (ref: ObjectRef) => KubeObject | undefined;
  /** Files or folders inside an archive; the whole archive when omitted. */
  paths?: string[];
  /** Missing fields take the process's limits (sourceLimits(): the defaults unless `syncprims run`'s flags set them). */
  limits?: Partial<SourceLimits>;
  /** The source is a chart, rendered as `helm template` renders it (spec.helm, resolved: chart-set.ts). */
  helm?: ChartSetOptions;
  /**
   * A Git or OCI source's resolution younger than this is used as it is
   * (the sync's interval: every sync of one repository shares one listing
   * per interval); 0 or omitted: resolved now.
   */
  resolveMaxAgeMs?: number;
  signal?: AbortSignal;
}

export interface FetchedSource {
  objects: KubeObject[];
  /**
   * The artifact's revision (`artifact`); `sha256:<hex>` of the bytes fetched
   * (`http`); undefined otherwise: the caller hashes the rendered objects.
   */
  revision?: string;
  /** What was read, for status and logs: `ConfigMap ns/name`, a URL (without credentials or query), ... */
  readFrom: string;
  /** A chart's hooks (spec.helm), parsed, not rendered; undefined for other sources. */
  hooks?: FetchedHook[];
  /** The chart rendered (spec.helm). */
  chart?: FetchedChartSet['chart'];
}

interface Context extends FetchSourceOptions {
  limits: SourceLimits;
}

/** The fields of each source form that name a Secret beside the source itself (`verify`: its secretRef). */
const SOURCE_SECRET_REFS = [
  ['http', ['caSecretRef', 'headersSecretRef']],
  ['helmRepository', ['caSecretRef', 'secretRef']],
  ['git', ['secretRef', 'caSecretRef', 'verify']],
  ['oci', ['secretRef', 'caSecretRef', 'verify']],
] as const;

/**
 * The objects whose changes change a source (its ConfigMap, Secret or Flux
 * source object; an http source's CA and headers Secrets; a Helm
 * repository's Secrets; a Git repository's or OCI artifact's credentials,
 * CA and cosign keys; the ConfigMaps and Secrets of `helm.valuesFrom`,
 * when the spec's `helm` is given), known from the
 * spec alone: followed even while they are missing or not ready, so their
 * arrival is noticed at once. Read from a cached, unvalidated spec: anything
 * malformed is skipped (validation reports it).
 */
export function referencedObjectsOf(source: unknown, namespace: string, helm?: unknown): ObjectRef[] {
  const s = (source ?? {}) as Record<string, Record<string, unknown> | undefined>;
  const refs: ObjectRef[] = [];
  const add = (apiVersion: unknown, kind: unknown, name: unknown): void => {
    if (typeof apiVersion === 'string' && typeof kind === 'string' && typeof name === 'string' && name !== '') {
      refs.push({ apiVersion, kind, name, namespace });
    }
  };
  add('v1', 'ConfigMap', s.configMap?.name);
  add('v1', 'Secret', s.secret?.name);
  add(s.artifact?.apiVersion, s.artifact?.kind, s.artifact?.name);
  for (const [form, fields] of SOURCE_SECRET_REFS) {
    const r = (s[form] ?? {}) as Record<string, { name?: unknown; secretRef?: { name?: unknown } } | undefined>;
    for (const f of fields) add('v1', 'Secret', f === 'verify' ? r.verify?.secretRef?.name : r[f]?.name);
  }
  return [...refs, ...valuesObjectsOf(helm, namespace)];
}

/** Reads a sync's source and parses its objects. Every failure is a SourceError. */
export async function fetchSource(opts: FetchSourceOptions): Promise<FetchedSource> {
  const ctx: Context = { ...opts, limits: { ...sourceLimits(), ...opts.limits } };
  const set = SOURCE_FORMS.filter((f) => opts.source?.[f] !== undefined);
  const form = set[0];
  if (set.length !== 1 || form === undefined) {
    throw new SourceError(`spec.source must set exactly one of ${SOURCE_FORMS.join(', ')} (found ${set.join(', ') || 'none'})`);
  }
  try {
    if (opts.signal?.aborted) throw new SourceError(`reading the source (${form}): cancelled`);
    if (opts.helm) {
      noPathsWithChart(opts.paths);
      return await fetchChartSet(ctx, opts.helm);
    }
    return await FORMS[form](ctx);
  } catch (err) {
    if (err instanceof SourceError) throw err;
    throw new SourceError(`reading the source (${form}): ${messageOf(err)}`, { cause: err });
  }
}

const FORMS: Record<SourceForm, (ctx: Context) => Promise<FetchedSource>> = {
  inline: async (ctx) => fromInline(ctx),
  configMap: (ctx) => fromKeys(ctx, 'ConfigMap', ctx.source.configMap as KeyRef),
  secret: (ctx) => fromKeys(ctx, 'Secret', ctx.source.secret as KeyRef),
  http: (ctx) => fromHttp(ctx, ctx.source.http as HttpSource),
  artifact: (ctx) => fromArtifact(ctx, ctx.source.artifact as ArtifactSource),
  git: (ctx) => fromRepository(ctx, { git: ctx.source.git as GitSource }),
  oci: (ctx) => fromRepository(ctx, { oci: ctx.source.oci as OciSource }),
  helmRepository: () => {
    throw new SourceError('spec.source.helmRepository is a Helm chart: it is rendered only with spec.helm (set spec.helm: {} to render it as helm template does)');
  },
};

function noPaths(ctx: Context, what: string): void {
  if (ctx.paths?.length) {
    throw new SourceError(`spec.paths selects files inside an archive, but the source is ${what}: remove spec.paths`);
  }
}

function fromInline(ctx: Context): FetchedSource {
  noPaths(ctx, 'inline');
  const objects = checkObjects(ctx.source.inline ?? [], 'spec.source.inline', { maxObjects: ctx.limits.maxObjects });
  return { objects, readFrom: 'inline' };
}

async function fromKeys(ctx: Context, kind: 'ConfigMap' | 'Secret', keyRef: KeyRef): Promise<FetchedSource> {
  const ref: ObjectRef = { apiVersion: 'v1', kind, name: keyRef.name, namespace: ctx.namespace };
  noPaths(ctx, `a ${kind}`);
  const field = `spec.source.${kind === 'Secret' ? 'secret' : 'configMap'}`;
  const entries = keyRef.key
    ? [[keyRef.key, await readKey(ctx, ref, keyRef.key, `${field}.key`, ctx.signal)] as [string, Buffer]]
    : await readKeys(ctx, ref, `${field}.name`, ctx.signal);
  const objects: KubeObject[] = [];
  for (const [key, data] of entries) {
    const budget = ctx.limits.maxObjects - objects.length;
    objects.push(...parseManifests(data.toString('utf8'), `${describeRef(ref)} key ${key}`, { maxObjects: budget }));
  }
  return { objects, readFrom: describeRef(ref) };
}

async function fromHttp(ctx: Context, source: HttpSource): Promise<FetchedSource> {
  const label = displayUrl(source.url);
  const headers = source.headersSecretRef ? await secretHeaders(ctx, ctx.namespace, source.headersSecretRef.name, ctx.signal) : undefined;
  const ca = source.caSecretRef ? await secretCa(ctx, ctx.namespace, source.caSecretRef, 'spec.source.http.caSecretRef.key', ctx.signal) : undefined;
  const { objects, digest } = await fetchObjects(ctx, { url: source.url, headers, ca }, label, source.digest);
  return { objects, revision: digest, readFrom: label };
}

/**
 * GETs a file or archive and parses its objects, with a lease of the
 * process-wide memory budget given back once they are parsed (or it failed):
 * what it fetched and kept stays counted for as long as it is held. `digest`,
 * when given, is verified; the digest returned is that of the bytes fetched.
 */
async function fetchObjects(
  ctx: Context,
  get: { url: string; headers?: Record<string, string>; ca?: string },
  label: string,
  digest: string | undefined,
): Promise<{ objects: KubeObject[]; digest: string }> {
  // A digest names the bytes: a set parsed from them a moment ago (another Sync of the same artifact) is that set.
  const fetch = async (): Promise<{ set: { objects: KubeObject[]; digest: string }; bytes: number }> => {
    const lease = sourceMemoryBudget().lease(label);
    try {
      const data = await httpGet({ ...get, timeoutMs: ctx.limits.fetchTimeoutMs, maxBytes: ctx.limits.maxFetchedBytes, signal: ctx.signal, lease });
      const verified = digest ? verifyDigest(data, digest, label) : digestOf(data);
      return { set: { objects: await objectsFrom(ctx, data, get.url, label, lease), digest: verified }, bytes: data.length };
    } finally {
      lease.release();
    }
  };
  if (!digest) return (await fetch()).set;
  return PARSED.load(JSON.stringify([get.url, digest, ctx.paths ?? [], ctx.limits.maxObjects]), fetch);
}

/** The sets of content-addressed sources parsed lately, for the whole process. */
const PARSED = new ParsedSets();

/** An archive by the URL's suffix (.tar.gz, .tgz), a manifest file by .yaml/.yml/.json, else by gzip's magic bytes. */
export function isArchive(url: string, data: Buffer): boolean {
  let pathname = url;
  try {
    pathname = new URL(url).pathname;
  } catch {
    // not a URL: use it as it is
  }
  const p = pathname.toLowerCase();
  if (p.endsWith('.tar.gz') || p.endsWith('.tgz')) return true;
  if (/\.(ya?ml|json)$/.test(p)) return false;
  return data[0] === 0x1f && data[1] === 0x8b;
}

async function objectsFrom(ctx: Context, data: Buffer, url: string, label: string, lease: BudgetLease): Promise<KubeObject[]> {
  const { maxObjects } = ctx.limits;
  if (!isArchive(url, data)) {
    noPaths(ctx, `a single file (${label})`);
    return parseManifests(data.toString('utf8'), label, { maxObjects });
  }
  // Only the files that will be parsed (and kustomization files) are kept, and charged to the lease.
  const files = await extractTarGz(data, ctx.limits, label, { keep: keepForKustomize(manifestFilter(ctx.paths)), lease, signal: ctx.signal });
  const { manifests, kustomizations } = selectSource(files, ctx.paths, label);
  const objects: KubeObject[] = [];
  for (const file of manifests) {
    const budget = maxObjects - objects.length;
    objects.push(...parseManifests(file.data.toString('utf8'), `${label}: ${file.path}`, { maxObjects: budget }));
  }
  if (kustomizations.length === 0) return objects;
  const kustomized = await kustomizeArchive({ data, kept: files, dirs: kustomizations, label, limits: ctx.limits, maxObjects: maxObjects - objects.length, lease, signal: ctx.signal });
  return [...objects, ...kustomized];
}

async function fromArtifact(ctx: Context, source: ArtifactSource): Promise<FetchedSource> {
  const artifact = await fluxArtifact(ctx, source);
  const { objects, digest } = await fetchObjects(ctx, { url: artifact.url }, artifact.label, artifact.digest);
  return { objects, revision: artifact.revision ?? digest, readFrom: describeRef({ ...source, namespace: ctx.namespace }) };
}

/** A Git commit's tree or an OCI artifact's layer, fetched once for the process (repository.ts), then read as an archive or a file. */
async function fromRepository(ctx: Context, source: RepositorySource): Promise<FetchedSource> {
  const tree = await repositoryTree(ctx, source);
  const label = `${tree.label} (${tree.revision})`;
  const parse = async (): Promise<{ set: { objects: KubeObject[]; digest: string }; bytes: number }> => {
    const lease = sourceMemoryBudget().lease(label);
    try {
      return { set: { objects: await objectsFrom(ctx, tree.data, tree.name, label, lease), digest: tree.resolved }, bytes: tree.data.length };
    } finally {
      lease.release();
    }
  };
  const key = JSON.stringify([tree.label, tree.resolved, tree.name, ctx.paths ?? [], ctx.limits.maxObjects]);
  const { objects } = await PARSED.load(key, parse);
  return { objects, revision: tree.revision, readFrom: tree.label };
}
