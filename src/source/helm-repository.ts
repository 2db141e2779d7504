import semver from 'semver';
import { parse as parseYaml } from 'yaml';
import type { HelmRepositorySource } from '../api/source.js';
import type { BudgetLease } from './budget.js';
import { messageOf, SourceError } from './errors.js';
import { displayUrl, httpGet, verifyDigest, digestOf } from './http.js';
import { describeRef, readKeys, type ObjectRef, type SourceReader } from './kube-refs.js';
import type { SourceLimits } from './limits.js';
import { secretCa } from './secret-ca.js';

/**
 * A chart from a Helm repository (`source.helmRepository`, API.md): the
 * repository's `index.yaml` read with a size limit of its own, the version
 * chosen from it (exact, a semver range, or the newest stable), and the
 * chart archive fetched and verified against the index's digest. What a
 * repository index says of one chart is kept a minute per repository, chart
 * and credentials (never the whole index: the big public indexes are tens of
 * MiB, and source-controller's memory with them is a known pain), and reads
 * of the same index at the same time share one GET.
 */

export interface RepositoryContext extends SourceReader {
  /** The sync's namespace: the Secrets the source names live there. */
  namespace: string;
  limits: SourceLimits;
  /** Charged with the index while it is read and parsed (given back after) and with the chart archive (kept: the caller releases it). */
  lease?: BudgetLease;
  signal?: AbortSignal;
}

export interface RepositoryChart {
  /** The packaged chart (`.tgz`), verified. */
  data: Buffer;
  /** `sha256:<hex>` of `data`. */
  digest: string;
  /** The version chosen. */
  version: string;
  /** `helmRepository https://charts.example/ chart web 1.2.3`, for messages and status. */
  label: string;
}

/** One version of a chart as the index lists it. */
export interface IndexVersion {
  version: string;
  urls: string[];
  /** The archive's sha256 (hex), when the index gives it. */
  digest?: string;
}

/** An index past this is refused (CVE-2024-29893: a huge index took Argo CD's repo-server down). */
export const MAX_INDEX_BYTES = 16 * 1024 * 1024;

/** How long what an index says of a chart is used before the index is read again. */
export const INDEX_TTL_MS = 60_000;

/** Memory an index takes while parsed, per byte of it (the YAML's nodes and the values). */
const PARSE_FACTOR = 4;

/** Fetches the chart the source names. Every failure is a SourceError naming the repository and the chart. */
export async function fetchRepositoryChart(ctx: RepositoryContext, source: HelmRepositorySource): Promise<RepositoryChart> {
  const repo = displayUrl(source.url);
  const auth = await credentials(ctx, source);
  const versions = await indexedVersions(ctx, source, auth);
  const chosen = chooseVersion(versions, source.version, `${repo} chart ${source.chart}`);
  const label = `helmRepository ${repo} chart ${source.chart} ${chosen.version}`;
  const url = chartUrl(source.url, chosen, label);
  // Credentials go to the repository's own origin only (Helm's --pass-credentials is off by default).
  const sameOrigin = new URL(url).origin === new URL(source.url).origin;
  const data = await httpGet({
    url,
    headers: sameOrigin ? auth.headers : undefined,
    ca: auth.ca,
    timeoutMs: ctx.limits.fetchTimeoutMs,
    maxBytes: ctx.limits.maxFetchedBytes,
    signal: ctx.signal,
    lease: ctx.lease,
  });
  const digest = chosen.digest ? verifyDigest(data, `sha256:${chosen.digest}`, label) : digestOf(data);
  return { data, digest, version: chosen.version, label };
}

interface Credentials {
  headers?: Record<string, string>;
  ca?: string;
  /** Says which credentials, without them: part of the cache key. */
  key: string;
}

/** `username` and `password` (basic), or `token` (bearer), from the Secret; the CA bundle from its Secret. */
async function credentials(ctx: RepositoryContext, source: HelmRepositorySource): Promise<Credentials> {
  const ca = source.caSecretRef
    ? await secretCa(ctx, ctx.namespace, source.caSecretRef, 'spec.source.helmRepository.caSecretRef.key', ctx.signal)
    : undefined;
  if (!source.secretRef) return { ca, key: digestOf(Buffer.from(ca ?? '')) };
  const ref: ObjectRef = { apiVersion: 'v1', kind: 'Secret', name: source.secretRef.name, namespace: ctx.namespace };
  const keys = new Map(await readKeys(ctx, ref, 'spec.source.helmRepository.secretRef.name', ctx.signal));
  const text = (k: string): string | undefined => keys.get(k)?.toString('utf8').trim();
  const [username, password, token] = [text('username'), text('password'), text('token')];
  let authorization: string;
  if (token) authorization = `Bearer ${token}`;
  else if (username !== undefined && password !== undefined) authorization = `Basic ${Buffer.from(`${username}:${password}`).toString('base64')}`;
  else {
    throw new SourceError(`${describeRef(ref)}: needs the keys username and password (basic auth), or token (bearer); it has ${[...keys.keys()].join(', ') || 'none'}`);
  }
  return { headers: { Authorization: authorization }, ca, key: digestOf(Buffer.from(`${authorization}\n${ca ?? ''}`)) };
}

interface Indexed {
  versions: IndexVersion[];
  at: number;
}

/** What indexes said of charts lately, by repository, chart and credentials; and the reads in flight. */
const INDEXED = new Map<string, Indexed>();
const READING = new Map<string, Promise<IndexVersion[]>>();
const MAX_INDEXED = 256;

async function indexedVersions(ctx: RepositoryContext, source: HelmRepositorySource, auth: Credentials): Promise<IndexVersion[]> {
  const key = JSON.stringify([source.url, source.chart, auth.key]);
  const kept = INDEXED.get(key);
  if (kept && Date.now() - kept.at < INDEX_TTL_MS) return kept.versions;
  const reading = READING.get(key);
  if (reading) return reading;
  const read = readIndex(ctx, source, auth).then((versions) => {
    INDEXED.delete(key); // set again at the end: the first key is the least recently read
    if (INDEXED.size >= MAX_INDEXED) INDEXED.delete(INDEXED.keys().next().value as string);
    INDEXED.set(key, { versions, at: Date.now() });
    return versions;
  });
  READING.set(key, read);
  try {
    return await read;
  } finally {
    READING.delete(key);
  }
}

/** Forgets what indexes said (tests). */
export function forgetIndexes(): void {
  INDEXED.clear();
}

/** GETs `<url>/index.yaml` and keeps what it says of `source.chart`. */
async function readIndex(ctx: RepositoryContext, source: HelmRepositorySource, auth: Credentials): Promise<IndexVersion[]> {
  const url = indexUrl(source.url);
  const label = displayUrl(url);
  const maxBytes = Math.min(MAX_INDEX_BYTES, ctx.limits.maxFetchedBytes);
  // What the index takes from the lease (its bytes as they arrive, then its parse) is given back however it ends.
  const before = ctx.lease?.held ?? 0;
  try {
    const data = await httpGet({
      url,
      headers: auth.headers,
      ca: auth.ca,
      maxBytes,
      maxBytesName: 'the Helm repository index limit',
      timeoutMs: ctx.limits.fetchTimeoutMs,
      signal: ctx.signal,
      lease: ctx.lease,
    });
    await ctx.lease?.take(data.length * PARSE_FACTOR, ctx.signal);
    return versionsIn(data.toString('utf8'), source.chart, label);
  } finally {
    if (ctx.lease) ctx.lease.release(ctx.lease.held - before);
  }
}

/** `<url>/index.yaml` (a URL that already names a .yaml file is used as it is). */
export function indexUrl(url: string): string {
  const u = new URL(url);
  if (/\.ya?ml$/i.test(u.pathname)) return u.href;
  u.pathname = `${u.pathname.replace(/\/+$/, '')}/index.yaml`;
  return u.href;
}

/** The versions of `chart` an index lists (an `index.yaml` text). */
export function versionsIn(text: string, chart: string, label: string): IndexVersion[] {
  let index: unknown;
  try {
    index = parseYaml(text, { maxAliasCount: 100, version: '1.1' });
  } catch (err) {
    throw new SourceError(`${label}: not a Helm repository index (${messageOf(err).split('\n')[0]})`);
  }
  const entries = (index as { entries?: unknown } | null)?.entries;
  if (entries === null || typeof entries !== 'object') throw new SourceError(`${label}: not a Helm repository index (no entries)`);
  const listed = (entries as Record<string, unknown>)[chart];
  if (!Array.isArray(listed) || listed.length === 0) {
    const names = Object.keys(entries).sort();
    const some = names.slice(0, 10).join(', ') + (names.length > 10 ? `, and ${names.length - 10} more` : '');
    throw new SourceError(`${label} has no chart ${JSON.stringify(chart)} (charts: ${some || 'none'}): fix spec.source.helmRepository.chart`);
  }
  return listed.flatMap((v: unknown): IndexVersion[] => {
    const e = v as { version?: unknown; urls?: unknown; digest?: unknown };
    if (typeof e?.version !== 'string' || !Array.isArray(e.urls) || typeof e.urls[0] !== 'string') return [];
    const digest = typeof e.digest === 'string' && /^[0-9a-f]{64}$/i.test(e.digest) ? e.digest.toLowerCase() : undefined;
    return [{ version: e.version, urls: e.urls.filter((u): u is string => typeof u === 'string'), digest }];
  });
}

/**
 * The version `wanted` names: exact (`1.2.3`, `v1.2.3`), a range as Helm
 * takes it (`>=1.2 <2`, `>=1.2, <2`, `~1.4`, `^2`, `1.x`, `a || b`), or the
 * newest stable when omitted. Pre-releases only when the range names one.
 */
export function chooseVersion(versions: IndexVersion[], wanted: string | undefined, what: string): IndexVersion {
  const parsed = versions.flatMap((v) => {
    const sv = semver.parse(v.version, { loose: true });
    return sv ? [{ v, sv }] : [];
  });
  const newest = parsed.map((p) => p.sv.version).sort(semver.rcompare).slice(0, 5);
  const listed = newest.length ? `newest: ${newest.join(', ')}` : 'none with a semantic version';
  if (wanted !== undefined) {
    const exact = semver.parse(wanted.trim(), { loose: true });
    const hit = exact
      ? parsed.find((p) => p.sv.compare(exact) === 0 && p.sv.build.join('.') === exact.build.join('.')) ?? parsed.find((p) => p.sv.compare(exact) === 0)
      : best(parsed, rangeOf(wanted, what));
    if (!hit) throw new SourceError(`${what}: no version matches ${JSON.stringify(wanted)} (${listed}): fix spec.source.helmRepository.version`);
    return hit.v;
  }
  const stable = best(parsed, new semver.Range('*'));
  if (!stable) throw new SourceError(`${what}: no stable version (${listed}): name one in spec.source.helmRepository.version`);
  return stable.v;
}

function rangeOf(wanted: string, what: string): semver.Range {
  // Masterminds' AND is a comma or a space; npm's a space.
  const text = wanted.replace(/,/g, ' ');
  try {
    return new semver.Range(text, { loose: true });
  } catch {
    throw new SourceError(`${what}: version ${JSON.stringify(wanted)} is neither a version nor a semver range (such as >=1.2.0 <2.0.0, ~1.4, ^2)`);
  }
}

function best<T extends { sv: semver.SemVer }>(parsed: T[], range: semver.Range): T | undefined {
  let found: T | undefined;
  for (const p of parsed) {
    if (range.test(p.sv) && (!found || p.sv.compare(found.sv) > 0)) found = p;
  }
  return found;
}

/** The chart archive's URL: the index's first, resolved against the repository's URL when relative. */
function chartUrl(repoUrl: string, chosen: IndexVersion, label: string): string {
  const base = new URL(repoUrl);
  if (!base.pathname.endsWith('/') && !/\.ya?ml$/i.test(base.pathname)) base.pathname += '/';
  let url: URL;
  try {
    url = new URL(chosen.urls[0] as string, base);
  } catch {
    throw new SourceError(`${label}: the index gives the URL ${JSON.stringify(chosen.urls[0])}, which is not a URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new SourceError(`${label}: the index gives ${url.protocol} for the chart (oci:// charts come with source.oci); refused`);
  }
  return url.href;
}
