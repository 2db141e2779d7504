// The one step from a sync's spec to its rendered set, for every caller: the
// sync pipeline (Sync and RemoteSync), `syncprims diff` and `syncprims build`
// (docs/adr/0009-one-render.md). The source is read as the caller says (the
// sync's account in its own cluster), fetched and rendered by the source's
// own code (kustomize in its sandbox, YAML 1.1 parsing), then given its
// namespaces, commonMetadata, owner and origin marks (render.ts), and its
// revision. A new source form or renderer is added below fetchSource, and
// every caller has it.
import type { SyncSpec } from '../api/sync-spec.js';
import type { InventoryEntry } from '../api/status.js';
import { UnknownKindError, type Discovery } from '../kube/discovery.js';
import type { KubeObject } from '../kube/resources.js';
import type { ChartHook } from './hooks.js';
import { fetchSource, SourceError, type FetchedSource, type ObjectRef, type SourceReader } from '../source/index.js';
import { inventoryOf } from './inventory.js';
import { render, revisionOf, type KindKey, type RenderOwner, type ScopeOf } from './render.js';

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
  /** A chart's pre and post hooks, applied in stages of their own on a new revision (hooks.ts); [] for a set that is not a chart. */
  hooks: ChartHook[];
}

/**
 * Reads and renders a sync's set. A source that cannot be read rejects with
 * its SourceError (a cluster that does not answer: the TransportError
 * within); what is wrong with the objects is in `errors`, typed by
 * `unknownKinds`, never to be read from their words.
 */
export async function renderSet(opts: RenderSetOptions): Promise<RenderedSet> {
  // The API has spec.helm (issue 47); until this operator renders charts, a chart is refused, never read as plain manifests.
  if (opts.spec.helm !== undefined) {
    throw new SourceError('spec.helm: this version of the operator does not render Helm charts yet (docs/adr/0013-helm-charts.md); remove spec.helm or render the chart with helm template into the source');
  }
  const fetched =
    opts.fetched ??
    (await fetchSource({
      ...opts.reader,
      discovery: opts.discovery,
      namespace: opts.namespace,
      source: opts.spec.source,
      paths: opts.spec.paths,
      cached: opts.cached,
    }));
  opts.onFetched?.(fetched.objects);
  const rendered = await render(fetched.objects, {
    owner: opts.owner,
    defaultNamespace: opts.spec.defaultNamespace,
    commonMetadata: opts.spec.commonMetadata,
    origin: opts.origin,
    scopeOf: opts.scopeOf,
    unknownScope: opts.unknownScope,
  });
  const revision = rendered.errors.length === 0 ? (fetched.revision ?? revisionOf(rendered.objects)) : undefined;
  return { ...rendered, entries: inventoryOf(rendered.objects), revision, fetched, hooks: [] };
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
