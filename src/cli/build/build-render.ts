import type { ProxySync, RemoteSync, Sync } from '../../api/objects.js';
import type { SyncSource } from '../../api/source.js';
import type { HelmSpec } from '../../api/helm.js';
import type { CommonMetadata } from '../../api/sync-spec.js';
import { clusterCapabilities, type ClusterCapabilities } from '../../kube/capabilities.js';
import { parseAnySyncObject } from '../../api/validate.js';
import { kindKey, type KindKey, type RenderOwner, type Scope, type ScopeOf } from '../../apply/render.js';
import { renderSet, scopesOf } from '../../apply/render-set.js';
import { remoteLocation } from '../../proxy/remote-sync.js';
import type { KubeClient } from '../../kube/client.js';
import { Discovery } from '../../kube/discovery.js';
import { TransportError } from '../../kube/errors.js';
import type { KubeObject } from '../../kube/resources.js';
import { SourceError, sourceSecretsOf, type FetchedSource, type GivenChart } from '../../source/index.js';
import { builtinScope } from './builtin-scopes.js';
import { CliError, findCause } from '../errors.js';

/**
 * What `syncprims build` renders: a sync's set by the operator's own step
 * (apply/render-set.ts `renderSet`, which the sync pipeline and `diff` call
 * too), with the same owner, defaultNamespace, commonMetadata and origin.
 * Only the scope of kinds comes from elsewhere when there is no cluster: a
 * built-in table, then CRDs in the set (render.ts); a kind neither knows is
 * rendered as written, with a warning.
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
  /** Render the source as a Helm chart (spec.helm). */
  helm?: HelmSpec;
  /** With `helm`: the chart folder and values files read from disk (`--path DIR --values FILE`), not the source. */
  chart?: GivenChart;
  /** A chart's `.Capabilities` as `--kube-version` / `--api-versions` name them (over the cluster's, or helm template's defaults). */
  capabilities?: Partial<ClusterCapabilities>;
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
  /** Kinds nobody defined: rendered as written when no cluster was asked (`discovered` false), else in `errors`. */
  unknownKinds: KindKey[];
  /** Whether the cluster was asked for the scopes of kinds neither built in nor in the set. */
  discovered?: boolean;
  /** What was read of the source, to render again without reading again. */
  fetched?: FetchedSource;
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
    helm: spec.helm,
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
    helm: spec.helm,
    target: targetOf(value.spec),
  };
}

/** The source forms that read the cluster the sync lives in. */
export function clusterReadOf(source: SyncSource): string | undefined {
  if (source.configMap) return 'source.configMap';
  if (source.secret) return 'source.secret';
  if (source.artifact) return 'source.artifact';
  // A CA, headers, credentials or cosign keys: Secrets of the sync's namespace.
  const secret = sourceSecretsOf(source)[0];
  return secret ? `source.${secret.field}` : undefined;
}

/**
 * Reads and renders one input by the operator's own step (apply/render-set.ts); what goes wrong with the source or the
 * set is in `errors` (a cluster that does not answer is thrown). The scope of a kind comes from the built-in table,
 * the set's CRDs, `scopes.defined` (the CRDs other syncs of the same build apply to the same cluster, by kindKey),
 * and last, when `scopes.discover` and there is a cluster, the cluster. Without one, an object of a kind nobody
 * defines is rendered as written (its namespace untouched) and listed in `unknownKinds`: report() warns of it.
 * `before`: an earlier build of the same input, whose source is rendered again, not read again.
 */
export async function renderInput(
  input: BuildInput,
  cluster: BuildCluster | undefined,
  scopes: { defined?: ReadonlyMap<string, Scope>; discover: boolean },
  before?: Built,
): Promise<Built> {
  const needs = clusterReadOf(input.source);
  if (needs && !cluster) return { input, objects: [], errors: [`${needs} is read from the cluster the sync lives in: pass --kubeconfig (and --context) to read it`], unknownKinds: [] };
  const discover = scopes.discover && cluster !== undefined;
  try {
    const client = needs && cluster ? await cluster.client() : NO_CLUSTER;
    const set = await renderSet({
      reader: { client },
      namespace: input.namespace,
      spec: input,
      owner: input.owner,
      origin: input.origin,
      scopeOf: scopeFinder(discover ? cluster : undefined, scopes.defined ?? new Map()),
      unknownScope: discover ? 'error' : 'asWritten',
      fetched: before?.fetched,
      capabilities: capabilitiesOf(input, cluster),
      chart: input.chart,
    });
    return { input, objects: set.objects, revision: set.revision, errors: set.errors, unknownKinds: set.unknownKinds, fetched: set.fetched, discovered: discover };
  } catch (err) {
    // A source that cannot be read is the build's answer; a cluster that does not answer is not.
    if (err instanceof SourceError && !findCause(err, TransportError)) return { input, objects: [], errors: [err.message], unknownKinds: [] };
    throw err;
  }
}

/**
 * A chart's `.Capabilities`: the flags', over those of the cluster a Sync goes to when there is one
 * (`--kubeconfig`; a RemoteSync's or ProxySync's cluster is not asked), else helm template's defaults.
 */
function capabilitiesOf(input: BuildInput, cluster: BuildCluster | undefined): (() => Promise<ClusterCapabilities>) | undefined {
  const named = input.capabilities ?? {};
  const ask = input.target === HOME && cluster ? async () => clusterCapabilities(await cluster.client()) : undefined;
  if (!input.helm || (!ask && named.kubeVersion === undefined && named.apiVersions === undefined)) return undefined;
  return async () => {
    const asked = named.kubeVersion !== undefined && named.apiVersions !== undefined ? undefined : await ask?.();
    return { kubeVersion: named.kubeVersion ?? asked?.kubeVersion ?? '', apiVersions: named.apiVersions ?? asked?.apiVersions ?? [] };
  };
}

/** Fetches and renders one input, its kinds looked up in the cluster when they are neither built in nor in the set. */
export async function buildOne(input: BuildInput, cluster: BuildCluster | undefined): Promise<Built> {
  return renderInput(input, cluster, { discover: true });
}

/** What `build` says of a kind it rendered as written, for want of a cluster to ask its scope. */
export function unknownKindWarning(k: KindKey): string {
  return (
    `kind ${k.kind} in ${k.apiVersion} is not a built-in kind and no CustomResourceDefinition in the set defines it: ` +
    'rendered as written, its namespace untouched (the operator gives a namespaced kind the defaultNamespace); pass --kubeconfig to look up its scope'
  );
}

/**
 * The built-in table first; then a CRD another sync of the build applies;
 * then, with a cluster, its discovery (as the operator's `scopeOf`).
 */
function scopeFinder(cluster: BuildCluster | undefined, defined: ReadonlyMap<string, Scope>): ScopeOf {
  let served: Promise<ScopeOf> | undefined;
  return async (apiVersion, kind) => {
    const builtin = builtinScope(apiVersion, kind) ?? defined.get(kindKey({ apiVersion, kind }));
    if (builtin || !cluster) return builtin;
    served ??= cluster.client().then((c) => scopesOf(new Discovery(c)));
    return (await served)(apiVersion, kind);
  };
}

/**
 * The client the source is read with when no cluster is: inline and http
 * sources never use it, and renderInput refuses the others before it is asked.
 */
const NO_CLUSTER = {
  name: 'no cluster',
  request: () => Promise.reject(new CliError('this source reads a cluster: pass --kubeconfig')),
} as unknown as KubeClient;
