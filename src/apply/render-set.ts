// The one step from a sync's spec to its rendered set, for every caller: the
// sync pipeline (Sync and RemoteSync), `syncprims diff` and `syncprims build`
// (docs/adr/0009-one-render.md). The source is read as the caller says (the
// sync's account in its own cluster), fetched and rendered by the source's
// own code (kustomize in its sandbox, YAML 1.1 parsing), then given its
// namespaces, commonMetadata, owner and origin marks (render.ts), and its
// revision. A chart (spec.helm) is rendered by the Helm helper below
// fetchSource; its hooks come back apart (`hooks`), rendered as the objects are. A new source form or renderer is added below fetchSource, and
// every caller has it.
import type { SyncSpec } from '../api/sync-spec.js';
import type { InventoryEntry } from '../api/status.js';
import { UnknownKindError, type Discovery } from '../kube/discovery.js';
import type { KubeObject } from '../kube/resources.js';
import type { HelmSpec } from '../api/helm.js';
import type { ClusterCapabilities } from '../kube/capabilities.js';
import { fetchSource, helmNamespace, type ChartSetOptions, type FetchedSource, type GivenChart, type ObjectRef, type SourceReader } from '../source/index.js';
import { renderHooks } from './chart-hooks.js';
import type { ChartHook } from './hooks.js';
import { inventoryOf } from './inventory.js';
import { kindKey, render, revisionOf, type KindKey, type RenderOwner, type ScopeOf } from './render.js';

/** What of a sync's spec makes its set. */
export type SetSpec = Pick<SyncSpec, 'source' | 'paths' | 'defaultNamespace' | 'commonMetadata' | 'helm'>;

export interface RenderSetOptions {
  /** Who reads the source in the cluster the sync lives in: its account's client when it has one. */
  reader: SourceReader;
  /** The sync's namespace: the ConfigMaps, Secrets and Flux objects a source names live there. */
  namespace: string;
  spec: SetSpec;
  /** Whose owner labels the objects get (a ProxySync's set: the remote Sync's). */
  owner: RenderOwner;
  /** The managing cluster's id (`syncprims.dev/origin`), on objects applied to a remote cluster. */
  origin?: string;
  /** The scope of a kind in the cluster the set goes to (undefined: not served there). */
  scopeOf: ScopeOf;
  /** See RenderOptions.unknownScope: `asWritten` only where no server can be asked. */
  unknownScope?: 'error' | 'asWritten';
  /** The home cluster's discovery (Flux source kinds), shared with the process. */
  discovery?: Discovery;
  /** A referenced object as the caller's watch has it (FetchSourceOptions.cached). */
  cached?: (ref: ObjectRef) => KubeObject | undefined;
  /** What an earlier call read (`RenderedSet.fetched`): rendered again without reading the source again. */
  fetched?: FetchedSource;
  /** Hears the objects read, before they are rendered. */
  onFetched?: (objects: KubeObject[]) => void;
  /**
   * What the target cluster serves, for a chart's `.Capabilities` where
   * spec.helm names none (kube/capabilities.ts); undefined: `helm template`'s
   * defaults (`syncprims build` offline).
   */
  capabilities?: () => Promise<ClusterCapabilities>;
  /**
   * With spec.helm: the chart as files read by the caller, with values files
   * layered before the spec's (`syncprims build --path DIR --values FILE`);
   * the source is then not read.
   */
  chart?: GivenChart;
  /** FetchSourceOptions.resolveMaxAgeMs: a Git or OCI source's resolution younger than this is used as it is. */
  resolveMaxAgeMs?: number;
}

export interface RenderedSet {
  /** The objects that rendered, in source order. */
  objects: KubeObject[];
  /** One line per object that did not; when any, the set is refused (SourceError, or CRDNotInstalled when `unknownKinds`). */
  errors: string[];
  /** Kinds neither the target nor a CRD in the set defines. */
  unknownKinds: KindKey[];
  /** The objects' inventory entries. */
  entries: InventoryEntry[];
  /** The set's revision (the artifact's or the fetched bytes', else the hash of the objects); undefined when it did not render. */
  revision?: string;
  /** What was read, to render again (`RenderSetOptions.fetched`). */
  fetched: FetchedSource;
  /** A chart's hooks (spec.helm), rendered as the objects are, in the order they are applied; `[]` for other sources. */
  hooks: ChartHook[];
}

/**
 * Reads and renders a sync's set. A source that cannot be read rejects with
 * its SourceError (a cluster that does not answer: the TransportError
 * within); what is wrong with the objects is in `errors`, typed by
 * `unknownKinds`, never to be read from their words.
 */
export async function renderSet(opts: RenderSetOptions): Promise<RenderedSet> {
  const { spec } = opts;
  const namespace = spec.helm ? helmNamespace(spec.helm, spec.defaultNamespace, opts.namespace) : spec.defaultNamespace;
  const fetched =
    opts.fetched ??
    (await fetchSource({
      ...opts.reader,
      discovery: opts.discovery,
      namespace: opts.namespace,
      source: spec.source,
      paths: spec.paths,
      cached: opts.cached,
      resolveMaxAgeMs: opts.resolveMaxAgeMs,
      helm: spec.helm ? await chartOptions(spec.helm, namespace as string, opts) : undefined,
    }));
  opts.onFetched?.(fetched.objects);
  const renderOpts = {
    owner: opts.owner,
    defaultNamespace: namespace,
    commonMetadata: spec.commonMetadata,
    origin: opts.origin,
    scopeOf: opts.scopeOf,
    unknownScope: opts.unknownScope,
  };
  const rendered = await render(fetched.objects, renderOpts);
  let hooks: ChartHook[] = [];
  if (fetched.hooks?.length) {
    const h = await renderHooks(fetched.hooks, renderOpts, rendered.objects);
    rendered.errors.push(...h.errors);
    rendered.unknownKinds.push(...h.unknownKinds.filter((k) => !rendered.unknownKinds.some((u) => kindKey(u) === kindKey(k))));
    hooks = h.hooks;
  }
  const revision = rendered.errors.length === 0 ? (fetched.revision ?? revisionOf(rendered.objects)) : undefined;
  return { ...rendered, entries: inventoryOf(rendered.objects), revision, fetched, hooks };
}

/** spec.helm resolved: the release's name and namespace, and the capabilities the spec names, else the target's. */
async function chartOptions(helm: HelmSpec, namespace: string, opts: RenderSetOptions): Promise<ChartSetOptions> {
  const named = { kubeVersion: helm.kubeVersion, apiVersions: helm.apiVersions };
  const discovered = named.kubeVersion === undefined || named.apiVersions === undefined ? await opts.capabilities?.() : undefined;
  return {
    spec: helm,
    releaseName: helm.releaseName ?? opts.owner.name,
    namespace,
    kubeVersion: named.kubeVersion ?? discovered?.kubeVersion,
    apiVersions: named.apiVersions ?? discovered?.apiVersions,
    given: opts.chart,
  };
}

/** A kind's scope as `discovery` has it; undefined when it is not served (a failure to ask is thrown). */
export function scopesOf(discovery: Pick<Discovery, 'resolve'>): ScopeOf {
  return async (apiVersion, kind) => {
    try {
      return (await discovery.resolve(apiVersion, kind)).namespaced ? 'Namespaced' : 'Cluster';
    } catch (err) {
      if (err instanceof UnknownKindError) return undefined;
      throw err;
    }
  };
}
