import type { ProxySync, RemoteSync, Sync } from '../../api/objects.js';
import type { SyncSource } from '../../api/source.js';
import type { CommonMetadata } from '../../api/sync-spec.js';
import { parseAnySyncObject } from '../../api/validate.js';
import { kindKey, render, revisionOf, type KindKey, type RenderOwner, type Scope } from '../../apply/render.js';
import { remoteLocation } from '../../proxy/remote-sync.js';
import type { KubeClient } from '../../kube/client.js';
import { Discovery, UnknownKindError } from '../../kube/discovery.js';
import { TransportError } from '../../kube/errors.js';
import type { KubeObject } from '../../kube/resources.js';
import { fetchSource, SourceError } from '../../source/index.js';
import { builtinScope } from './builtin-scopes.js';
import { CliError, findCause } from '../errors.js';

/**
 * What `syncprims build` renders: a sync's source, fetched and rendered by
 * the operator's own code (src/source `fetchSource`, src/apply `render`,
 * `revisionOf`), with the same owner, defaultNamespace, commonMetadata and
 * origin as the operator's pipeline gives them (sync-pipeline.ts
 * `fetchAndRender`). Only the scope of kinds comes from elsewhere when there
 * is no cluster: a built-in table, then CRDs in the set (render.ts).
 */

export interface BuildInput {
  /** `Sync ns/name`, `ProxySync ns/name (remote Sync ns/name)`: for messages and the output's comments. */
  label: string;
  /** Whose owner labels the objects get (for a ProxySync, the remote Sync's). */
  owner: RenderOwner;
  /** Where the objects a source names (ConfigMap, Secret, Flux source) live. */
  namespace: string;
  source: SyncSource;
  paths?: string[];
  defaultNamespace?: string;
  commonMetadata?: CommonMetadata;
  /** `syncprims.dev/origin`: objects a RemoteSync applies to its cluster. */
  origin?: string;
  /** The cluster the objects go to: `home` for a Sync, else the kubeconfig Secret or Cluster a RemoteSync or ProxySync names. */
  target: string;
}

export interface Built {
  input: BuildInput;
  objects: KubeObject[];
  revision?: string;
  /** One line each; when not empty, the operator would refuse the set. */
  errors: string[];
  unknownKinds: KindKey[];
}

/** Where a build may reach a cluster: asked only when a source or a kind needs one. */
export interface BuildCluster {
  client(): Promise<KubeClient>;
}

/** The inputs of a Sync, RemoteSync or ProxySync object (read from a file, not yet validated). */
export function buildInputsOf(obj: KubeObject, file: string, opts: { namespace: string; clusterId?: string }): BuildInput {
  const withNamespace = { ...obj, metadata: { ...obj.metadata, namespace: obj.metadata.namespace || opts.namespace } };
  const parsed = parseAnySyncObject(withNamespace);
  const label = `${obj.kind} ${withNamespace.metadata.namespace}/${obj.metadata.name}`;
  if (!parsed.ok) {
    const hint = /^kind: /.test(parsed.message) ? ' (to render plain manifests, use --path)' : '';
    throw new CliError(`${file}: ${label}: ${parsed.message}${hint}`);
  }
  const value = parsed.value;
  const namespace = withNamespace.metadata.namespace;
  const name = value.metadata.name;
  if (value.kind === 'ProxySync') return proxySyncInput(value, withNamespace, file, label);
  const spec = (value as Sync | RemoteSync).spec;
  return {
    label,
    owner: { kind: value.kind, namespace, name },
    namespace,
    source: spec.source,
    paths: spec.paths,
    defaultNamespace: spec.defaultNamespace,
    commonMetadata: spec.commonMetadata,
    origin: value.kind === 'RemoteSync' ? opts.clusterId : undefined,
    target: value.kind === 'RemoteSync' ? targetOf(value.spec as RemoteSync['spec']) : HOME,
  };
}

/** A Sync's objects go to the cluster it lives in. */
export const HOME = 'home';

function targetOf(spec: { kubeConfig?: { secretRef: { name: string } }; clusterRef?: { name: string } }): string {
  return `cluster ${spec.kubeConfig?.secretRef.name ?? spec.clusterRef?.name ?? ''}`;
}

/** A ProxySync renders as the Sync it keeps in its remote cluster would (that cluster's operator applies it). */
function proxySyncInput(value: ProxySync, obj: KubeObject, file: string, label: string): BuildInput {
  const spec = value.spec.template.spec;
  if (spec.source.artifact) {
    throw new CliError(`${file}: ${label}: spec.template.spec.source.artifact cannot be proxied: the remote cluster cannot read Flux objects of the managing cluster; serve the artifact over http and use source.http`);
  }
  const remote = remoteLocation(obj, value.spec);
  return {
    label: `${label} (remote Sync ${remote.namespace}/${remote.name})`,
    owner: { kind: 'Sync', namespace: remote.namespace, name: remote.name },
    namespace: obj.metadata.namespace ?? '',
    source: spec.source,
    paths: spec.paths,
    defaultNamespace: spec.defaultNamespace,
    commonMetadata: spec.commonMetadata,
    target: targetOf(value.spec),
  };
}

/** The source forms that read the cluster the sync lives in. */
export function clusterReadOf(source: SyncSource): string | undefined {
  if (source.configMap) return 'source.configMap';
  if (source.secret) return 'source.secret';
  if (source.artifact) return 'source.artifact';
  if (source.http?.caSecretRef) return 'source.http.caSecretRef';
  if (source.http?.headersSecretRef) return 'source.http.headersSecretRef';
  return undefined;
}

/** An input's source as read: its objects, or why it cannot be read. */
export type Fetched = { objects: unknown[]; revision?: string } | { errors: string[] };

/** Reads one input's source; what goes wrong with the source is in `errors` (transport errors are thrown). */
export async function fetchInput(input: BuildInput, cluster: BuildCluster | undefined): Promise<Fetched> {
  const needs = clusterReadOf(input.source);
  if (needs && !cluster) return { errors: [`${needs} is read from the cluster the sync lives in: pass --kubeconfig (and --context) to read it`] };
  try {
    const client = needs && cluster ? await cluster.client() : NO_CLUSTER;
    return await fetchSource({ client, namespace: input.namespace, source: input.source, paths: input.paths });
  } catch (err) {
    // A source that cannot be read is the build's answer; a cluster that does not answer is not.
    if (err instanceof SourceError && !findCause(err, TransportError)) return { errors: [err.message] };
    throw err;
  }
}

/**
 * Renders what was read of one input (render copies it: it can be rendered again); what goes wrong with the set is
 * in `errors`. The scope of a kind comes from the built-in table, the set's CRDs, `scopes.defined` (the CRDs other
 * syncs of the same build apply to the same cluster, by kindKey), and last, when `scopes.discover`, the cluster.
 */
export async function renderInput(
  input: BuildInput,
  fetched: Fetched,
  cluster: BuildCluster | undefined,
  scopes: { defined?: ReadonlyMap<string, Scope>; discover: boolean },
): Promise<Built> {
  if ('errors' in fetched) return { input, objects: [], errors: fetched.errors, unknownKinds: [] };
  const rendered = await render(fetched.objects, {
    owner: input.owner,
    defaultNamespace: input.defaultNamespace,
    commonMetadata: input.commonMetadata,
    origin: input.origin,
    scopeOf: scopeFinder(scopes.discover ? cluster : undefined, scopes.defined ?? new Map()),
  });
  const errors = renderErrors(rendered, Boolean(cluster && scopes.discover));
  const revision = errors.length === 0 ? (fetched.revision ?? revisionOf(rendered.objects)) : undefined;
  return { input, objects: rendered.objects, revision, errors, unknownKinds: rendered.unknownKinds };
}

/** Fetches and renders one input, its kinds looked up in the cluster when they are neither built in nor in the set. */
export async function buildOne(input: BuildInput, cluster: BuildCluster | undefined): Promise<Built> {
  return renderInput(input, await fetchInput(input, cluster), cluster, { discover: true });
}

/** The render's errors; without a cluster asked, an unknown kind is said as such (not in the server's words). */
function renderErrors(rendered: { errors: string[]; unknownKinds: KindKey[] }, discovered: boolean): string[] {
  if (discovered) return rendered.errors;
  return [...rendered.errors.filter((e) => !UNSERVED.test(e)), ...rendered.unknownKinds.map(unknownKindError)];
}

/** render.ts's words for an object whose kind no one defines (the server's words: wrong without a server). */
const UNSERVED = /: the server does not serve .+, and no CustomResourceDefinition in the set defines it$/;

function unknownKindError(k: KindKey): string {
  return `unknown kind ${k.kind} in ${k.apiVersion}: not a built-in kind and no CustomResourceDefinition in the set defines it: pass --kubeconfig to look it up in a cluster`;
}

/**
 * The built-in table first; then a CRD another sync of the build applies;
 * then, with a cluster, its discovery (as the operator's `scopeOf`).
 */
function scopeFinder(cluster: BuildCluster | undefined, defined: ReadonlyMap<string, Scope>): (apiVersion: string, kind: string) => Promise<Scope | undefined> {
  let discovery: Promise<Discovery> | undefined;
  return async (apiVersion, kind) => {
    const builtin = builtinScope(apiVersion, kind) ?? defined.get(kindKey({ apiVersion, kind }));
    if (builtin || !cluster) return builtin;
    discovery ??= cluster.client().then((c) => new Discovery(c));
    try {
      return (await (await discovery).resolve(apiVersion, kind)).namespaced ? 'Namespaced' : 'Cluster';
    } catch (err) {
      if (err instanceof UnknownKindError) return undefined;
      throw err;
    }
  };
}

/**
 * The client given to fetchSource when no cluster is: inline and http
 * sources never use it, and buildOne refuses the others before it is asked.
 */
const NO_CLUSTER = {
  name: 'no cluster',
  request: () => Promise.reject(new CliError('this source reads a cluster: pass --kubeconfig')),
} as unknown as KubeClient;
