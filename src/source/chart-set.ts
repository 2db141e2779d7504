import type { HelmSpec } from '../api/helm.js';
import { PRUNE_ANNOTATION, PRUNE_DISABLED } from '../api/marks.js';
import type { SyncSource } from '../api/source.js';
import type { KubeObject } from '../kube/resources.js';
import { sourceMemoryBudget } from './budget.js';
import { fetchChart, type ChartSourceOptions, type GivenChartFiles } from './chart-source.js';
import { chartRevision, readValuesLayers } from './chart-values.js';
import { SourceError } from './errors.js';
import { renderChart, type RenderedChart, type RenderedFile, type ValuesLayer } from './helm.js';
import { displayUrl } from './http.js';
import { parseManifests } from './parse.js';

/**
 * A sync's chart rendered into objects (docs/source.md, "Helm charts"): its
 * values read, its archive fetched, `helm template` run by the helper, and
 * what it printed parsed: the CRDs of `crds/` first (marked never to be
 * pruned), then the manifests, in Helm's order; the hooks apart.
 */

/** What renderSet resolved of `spec.helm`. */
export interface ChartSetOptions {
  spec: HelmSpec;
  /** `.Release.Name`: spec.helm.releaseName, else the sync's name. */
  releaseName: string;
  /** `.Release.Namespace`: chart-values.ts helmNamespace. */
  namespace: string;
  /** `.Capabilities.KubeVersion`: the spec's, else the target cluster's; undefined: helm template's default. */
  kubeVersion?: string;
  /** `.Capabilities.APIVersions` added: the spec's, else the target cluster's. */
  apiVersions?: string[];
  /** A chart given as files, not read from the source (`syncprims build --path DIR`). */
  given?: GivenChart;
}

/** A chart folder read by the caller, and its values files (`helm template -f`), merged in order before the spec's layers. */
export interface GivenChart extends GivenChartFiles {
  values: ValuesLayer[];
}

/** A hook of the chart, parsed, not yet rendered (the caller decides its phase). */
export interface FetchedHook {
  object: KubeObject;
  /** helm.sh/hook. */
  events: string[];
  weight: number;
  deletePolicies: string[];
}

export interface FetchedChartSet {
  /** The CRDs (when included), then the manifests. */
  objects: KubeObject[];
  hooks: FetchedHook[];
  revision: string;
  readFrom: string;
  chart: RenderedChart['chart'];
}

type ChartSetContext = Omit<ChartSourceOptions, 'lease' | 'chart'>;

/** Reads and renders the chart. Every failure is a SourceError. */
export async function fetchChartSet(ctx: ChartSetContext, helm: ChartSetOptions): Promise<FetchedChartSet> {
  const { spec } = helm;
  const values = [...(helm.given?.values ?? []), ...(await readValuesLayers(ctx, spec))];
  const includeCRDs = spec.includeCRDs ?? true;
  // What the chart holds, and what the helper takes and prints, are held once at a time, then given back.
  const lease = sourceMemoryBudget().lease(leaseLabel(ctx.source, helm.given));
  try {
    const fetched = await fetchChart({ ...ctx, chart: spec.chart, lease, given: helm.given });
    const request = { chart: fetched.chart, releaseName: helm.releaseName, namespace: helm.namespace, values, includeCRDs, kubeVersion: helm.kubeVersion, apiVersions: helm.apiVersions };
    const rendered = await renderChart(fetched.files, request, { label: fetched.label, lease, signal: ctx.signal, maxOutputBytes: ctx.limits.maxUnpackedBytes });
    fetched.files.clear();
    const parse = parser(fetched.label, ctx.limits.maxObjects);
    const objects = [...rendered.crds.flatMap((f) => parse(f).map(neverPruned)), ...rendered.manifests.flatMap(parse)];
    const hooks = rendered.hooks.flatMap((h) => parse(h).map((object) => ({ object, events: h.events, weight: h.weight, deletePolicies: h.deletePolicies })));
    const revision = chartRevision(rendered.chart, fetched.digest, {
      values,
      releaseName: helm.releaseName,
      namespace: helm.namespace,
      includeCRDs,
      kubeVersion: spec.kubeVersion,
      apiVersions: spec.apiVersions,
    });
    return { objects, hooks, revision, readFrom: fetched.readFrom, chart: rendered.chart };
  } finally {
    lease.release();
  }
}

/** Parses rendered files in turn, the objects of all of them bounded by `maxObjects`. */
function parser(label: string, maxObjects: number): (file: RenderedFile) => KubeObject[] {
  let left = maxObjects;
  return (file) => {
    const objects = parseManifests(file.data, `${label}: ${file.path}`, { maxObjects: left });
    left -= objects.length;
    return objects;
  };
}

/** A CRD of `crds/`: never pruned (as Helm never deletes them), unless it says otherwise itself. */
function neverPruned(crd: KubeObject): KubeObject {
  const annotations = crd.metadata.annotations ?? {};
  if (annotations[PRUNE_ANNOTATION] !== undefined) return crd;
  return { ...crd, metadata: { ...crd.metadata, annotations: { ...annotations, [PRUNE_ANNOTATION]: PRUNE_DISABLED } } };
}

/** Names the source in the memory budget's messages. */
function leaseLabel(source: SyncSource, given: GivenChart | undefined): string {
  if (given) return given.label;
  if (source.http) return displayUrl(source.http.url);
  if (source.helmRepository) return `helmRepository ${displayUrl(source.helmRepository.url)} chart ${source.helmRepository.chart}`;
  if (source.configMap) return `ConfigMap ${source.configMap.name}`;
  if (source.secret) return `Secret ${source.secret.name}`;
  if (source.artifact) return `${source.artifact.kind} ${source.artifact.name}`;
  return 'the chart';
}

/** spec.paths selects files of an archive of manifests: a chart's folder is spec.helm.chart. */
export function noPathsWithChart(paths: string[] | undefined): void {
  if (paths?.length) throw new SourceError('spec.paths selects files of an archive of manifests; a chart\'s folder is spec.helm.chart: remove spec.paths');
}
