import { createHash } from 'node:crypto';
import type { GitSource, OciSource } from '../api/repository-sources.js';
import { outboundAddressPolicy } from '../kube/address-policy.js';
import { sourceMemoryBudget } from './budget.js';
import { SourceError, VerificationError } from './errors.js';
import { fetchRepository, resolveRepository, type FetchRequest, type Fetched, type RepositoryKind, type Resolution } from './fetch-helper.js';
import { describeRef, readKeys, type ObjectRef, type SourceReader } from './kube-refs.js';
import type { SourceLimits } from './limits.js';
import { RepositoryCache } from './repository-cache.js';
import { secretCa } from './secret-ca.js';

/**
 * A sync's Git repository or OCI artifact (docs/source.md, "Git and OCI"):
 * its Secrets read as the sync's account, the ref resolved (shared by every
 * sync of the same URL, ref and credentials for `maxAgeMs`), and the tree of
 * what it resolved to fetched once (fetch-helper.ts does the talking).
 */

export interface RepositoryContext extends SourceReader {
  /** The sync's namespace: its Secrets live there. */
  namespace: string;
  limits: SourceLimits;
  /** A resolution younger than this is used as it is (the sync's interval); 0: resolve now. */
  resolveMaxAgeMs?: number;
  signal?: AbortSignal;
}

export type RepositorySource = { git: GitSource; oci?: undefined } | { oci: OciSource; git?: undefined };

export interface RepositoryTree extends Fetched {
  /** The source in messages and status: its URL (never with credentials). */
  label: string;
}

/** Trees kept: a few repositories' worth; a fleet's syncs share them. */
const CACHE = new RepositoryCache({ maxTreeBytes: 64 * 1024 * 1024, maxTrees: 64 });

/** The process's cache (the webhook forgets resolutions in it; tests read its counts). */
export function repositoryCache(): RepositoryCache {
  return CACHE;
}

/** What the ref names now (no download). Every failure is a SourceError. */
export async function resolveRepositorySource(ctx: RepositoryContext, source: RepositorySource): Promise<Resolution> {
  const { request, label } = await requestOf(ctx, source);
  return resolveWith(ctx, request, label);
}

/** The tree (git) or layer (oci) of what the ref names now. Every failure is a SourceError. */
export async function repositoryTree(ctx: RepositoryContext, source: RepositorySource): Promise<RepositoryTree> {
  const { request, label } = await requestOf(ctx, source);
  const resolution = await resolveWith(ctx, request, label);
  const treeKey = keyOf({ ...request, ref: undefined, resolved: resolution.resolved });
  // Shared by every caller that comes while it runs: its own lease of the memory budget, and no caller's signal.
  const fetched = await CACHE.tree(treeKey, async () => {
    const lease = sourceMemoryBudget().lease(label);
    try {
      return await fetchRepository({ ...request, resolved: resolution.resolved }, { label, timeoutMs: ctx.limits.fetchTimeoutMs, lease });
    } catch (err) {
      // The helper refuses an artifact whose cosign signature does not hold before it fetches any layer.
      if (request.verify && err instanceof SourceError && /cosign/.test(err.message)) throw new VerificationError(err.message, { cause: err });
      throw err;
    } finally {
      lease.release();
    }
  });
  // The tree kept is shared: the revision is this ref's (a branch and a tag may name one commit).
  return { ...fetched, revision: resolution.revision, ref: resolution.ref, label };
}

function resolveWith(ctx: RepositoryContext, request: FetchRequest, label: string): Promise<Resolution> {
  const pinned = pinnedResolution(request);
  if (pinned) return Promise.resolve(pinned);
  const run = { label, timeoutMs: ctx.limits.fetchTimeoutMs };
  return CACHE.resolve(keyOf(request), request.url, ctx.resolveMaxAgeMs ?? 0, () => resolveRepository(request, run));
}

/** A ref naming its commit or digest needs no listing: the revision is known. */
function pinnedResolution(request: FetchRequest): Resolution | undefined {
  const ref = request.ref ?? {};
  const name = ref.branch ?? ref.tag;
  if (request.kind === 'git' && ref.commit) return { revision: `${name ? `${name}@` : ''}sha1:${ref.commit}`, resolved: ref.commit, ref: name ? { [ref.branch ? 'branch' : 'tag']: name } : undefined };
  if (request.kind === 'oci' && ref.digest) return { revision: `${ref.tag ? `${ref.tag}@` : ''}${ref.digest}`, resolved: ref.digest, ref: ref.tag ? { tag: ref.tag } : undefined };
  return undefined;
}

function keyOf(request: FetchRequest): string {
  return createHash('sha256').update(JSON.stringify(request)).digest('hex');
}

/** The helper's request: the spec, with what its Secrets hold. */
async function requestOf(ctx: RepositoryContext, source: RepositorySource): Promise<{ request: FetchRequest; label: string }> {
  const kind: RepositoryKind = source.git ? 'git' : 'oci';
  const spec = (source.git ?? source.oci) as GitSource | OciSource;
  const field = `spec.source.${kind}`;
  const oci = source.oci;
  const request: FetchRequest = {
    kind,
    url: spec.url,
    ref: spec.ref ? { ...spec.ref } : undefined,
    auth: spec.secretRef ? await credentials(ctx, kind, spec.secretRef.name, `${field}.secretRef.name`) : undefined,
    caPEM: spec.caSecretRef ? await secretCa(ctx, ctx.namespace, spec.caSecretRef, `${field}.caSecretRef.key`, ctx.signal) : undefined,
    insecure: oci?.insecure,
    denyCidrs: outboundAddressPolicy().cidrs,
    maxFetchedBytes: ctx.limits.maxFetchedBytes,
    maxUnpackedBytes: ctx.limits.maxUnpackedBytes,
    maxFiles: ctx.limits.maxFiles,
    layerSelector: oci?.layerSelector,
    verify: oci?.verify ? { provider: 'cosign', publicKeys: await publicKeys(ctx, oci.verify.secretRef.name) } : undefined,
  };
  return { request, label: displayRepositoryUrl(spec.url) };
}

/** A URL for messages: never with user info (the schema refuses it; a cached, unvalidated spec might still hold it). */
export function displayRepositoryUrl(url: string): string {
  return url.replace(/^([a-z]+:\/\/)[^/@]*@/i, '$1');
}

const GIT_KEYS = { username: 'username', password: 'password', bearerToken: 'bearerToken', identity: 'identity', known_hosts: 'knownHosts' } as const;

/** The Secret's credentials, as the helper names them; a Secret holding none of the keys is a SourceError naming them. */
async function credentials(ctx: RepositoryContext, kind: RepositoryKind, name: string, field: string): Promise<Record<string, string>> {
  const ref: ObjectRef = { apiVersion: 'v1', kind: 'Secret', name, namespace: ctx.namespace };
  const entries = new Map(await readKeys(ctx, ref, field, ctx.signal));
  const auth: Record<string, string> = {};
  if (kind === 'oci') {
    const config = entries.get('.dockerconfigjson');
    if (!config) throw new SourceError(`${describeRef(ref)} has no key .dockerconfigjson: an OCI registry's credentials are a kubernetes.io/dockerconfigjson Secret (kubectl create secret docker-registry)`);
    auth.dockerConfigJson = config.toString('utf8');
    return auth;
  }
  for (const [key, as] of Object.entries(GIT_KEYS)) {
    const value = entries.get(key);
    if (value !== undefined) auth[as] = value.toString('utf8');
  }
  // With an identity, `password` is its passphrase (as Flux reads such a Secret).
  if (auth.identity !== undefined && auth.password !== undefined && auth.username === undefined) {
    auth.identityPassphrase = auth.password;
    delete auth.password;
  }
  if (Object.keys(auth).length === 0) {
    throw new SourceError(`${describeRef(ref)} holds none of the keys a Git repository's credentials use (${Object.keys(GIT_KEYS).join(', ')}): fix ${field}`);
  }
  return auth;
}

/** The cosign public keys: every key of the Secret ending in `.pub`. */
async function publicKeys(ctx: RepositoryContext, name: string): Promise<string[]> {
  const ref: ObjectRef = { apiVersion: 'v1', kind: 'Secret', name, namespace: ctx.namespace };
  const entries = await readKeys(ctx, ref, 'spec.source.oci.verify.secretRef.name', ctx.signal);
  const keys = entries.filter(([k]) => k.endsWith('.pub')).map(([, v]) => v.toString('utf8'));
  if (keys.length === 0) {
    throw new SourceError(`${describeRef(ref)} has no key ending in .pub: put the cosign public key (cosign.pub) there, or fix spec.source.oci.verify.secretRef`);
  }
  return keys;
}
