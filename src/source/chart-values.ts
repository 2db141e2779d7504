import { createHash } from 'node:crypto';
import type { HelmSpec, ValuesFrom } from '../api/helm.js';
import { canonicalJson } from '../kube/canonical-json.js';
import { ApiError } from '../kube/errors.js';
import { SourceError } from './errors.js';
import type { ValuesLayer } from './helm.js';
import { describeRef, readKeys, type ObjectRef, type SourceReader } from './kube-refs.js';

/**
 * A chart's values and its revision (docs/source.md, "Helm charts"): the
 * layers of `spec.helm.valuesFrom` in order, each read as the sync's account
 * (the reader of its source), then `spec.helm.values`; merged by the helper
 * as `helm -f a -f b --set-string ...` merges them, later layers winning.
 */

/** The key of a valuesFrom object read when none is named. */
export const DEFAULT_VALUES_KEY = 'values.yaml';

export interface ValuesReader extends SourceReader {
  /** The sync's namespace: the ConfigMaps and Secrets named live there. */
  namespace: string;
  signal?: AbortSignal;
}

/** The values layers of `helm`, in merge order. A missing object or key that is not optional is a SourceError naming it. */
export async function readValuesLayers(reader: ValuesReader, helm: Pick<HelmSpec, 'values' | 'valuesFrom'>): Promise<ValuesLayer[]> {
  const layers: ValuesLayer[] = [];
  for (const [i, from] of (helm.valuesFrom ?? []).entries()) {
    const layer = await readLayer(reader, from, `spec.helm.valuesFrom[${i}]`);
    if (layer) layers.push(layer);
  }
  if (helm.values !== undefined) layers.push({ from: 'spec.helm.values', object: helm.values });
  return layers;
}

async function readLayer(reader: ValuesReader, from: ValuesFrom, field: string): Promise<ValuesLayer | undefined> {
  const ref: ObjectRef = { apiVersion: 'v1', kind: from.kind, name: from.name, namespace: reader.namespace };
  const key = from.key ?? DEFAULT_VALUES_KEY;
  let entries: [string, Buffer][];
  try {
    entries = await readKeys(reader, ref, `${field}.name`, reader.signal);
  } catch (err) {
    if (from.optional && err instanceof SourceError && err.cause instanceof ApiError && err.cause.notFound) return undefined;
    throw err;
  }
  const found = entries.find(([k]) => k === key);
  if (!found) {
    if (from.optional) return undefined;
    const keys = entries.map(([k]) => k);
    throw new SourceError(
      `${describeRef(ref)} has no key ${JSON.stringify(key)} (keys: ${keys.length ? keys.join(', ') : 'none'}): ` +
        `fix ${field}.key${from.key === undefined ? ` (${DEFAULT_VALUES_KEY} unless given)` : ''}, or set ${field}.optional`,
    );
  }
  const text = found[1].toString('utf8');
  const label = `${describeRef(ref)} key ${key}`;
  return from.targetPath !== undefined ? { from: label, targetPath: from.targetPath, value: text } : { from: label, yaml: text };
}

/** `.Release.Namespace`, also given to namespaced objects that name none: spec.helm.namespace, else defaultNamespace, else the sync's. */
export function helmNamespace(helm: Pick<HelmSpec, 'namespace'>, defaultNamespace: string | undefined, syncNamespace: string): string {
  return helm.namespace ?? (defaultNamespace || syncNamespace);
}

/** What of a render the revision says, beside the chart: what the spec gives, never what a cluster was found to serve. */
export interface RevisionInput {
  values: ValuesLayer[];
  releaseName: string;
  namespace: string;
  includeCRDs: boolean;
  /** The spec's kubeVersion and apiVersions only (never discovered ones): one revision on every cluster. */
  kubeVersion?: string;
  apiVersions?: string[];
}

/**
 * `<chart>-<version>@sha256:<archive hex>+values.<16 hex>`: the chart, its
 * archive's digest, and a hash of the values as given (their layers in
 * order, the release, namespace, CRDs and the capabilities the spec names).
 */
export function chartRevision(chart: { name: string; version: string }, archiveDigest: string, input: RevisionInput): string {
  const hex = createHash('sha256')
    .update(canonicalJson({ ...input, kubeVersion: input.kubeVersion ?? null, apiVersions: input.apiVersions ?? null }))
    .digest('hex')
    .slice(0, 16);
  return `${chart.name}-${chart.version}@${archiveDigest}+values.${hex}`;
}

/** The ConfigMaps and Secrets a cached (unvalidated) `spec.helm` reads values from; anything malformed is skipped. */
export function valuesObjectsOf(helm: unknown, namespace: string): ObjectRef[] {
  const from = (helm as { valuesFrom?: unknown } | null | undefined)?.valuesFrom;
  if (!Array.isArray(from)) return [];
  return from.flatMap((v: unknown): ObjectRef[] => {
    const { kind, name } = (v ?? {}) as { kind?: unknown; name?: unknown };
    if ((kind !== 'ConfigMap' && kind !== 'Secret') || typeof name !== 'string' || name === '') return [];
    return [{ apiVersion: 'v1', kind, name, namespace }];
  });
}
