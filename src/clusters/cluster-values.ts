// A cluster's values (API.md, "Clusters"), which a FleetSync with
// `substitute` writes into its template: `cluster_name`; each annotation
// `values.syncprims.dev/<key>` of the Secret, Cluster or ClusterProfile the
// cluster comes from; a ClusterProfile's `status.properties`. Pure.

/** The annotations' prefix: `values.syncprims.dev/region: eu-west` is the value `region`. */
export const VALUES_ANNOTATION_PREFIX = 'values.syncprims.dev/';
/** Always set, to the cluster's name in the inventory; neither an annotation nor a property replaces it. */
export const CLUSTER_NAME_VALUE = 'cluster_name';

/** A key as a value's name: every character outside [A-Za-z0-9_] written `_` (`cluster.x-k8s.io/zone` is `cluster_x_k8s_io_zone`). */
export function valueName(key: string): string {
  return key.replace(/[^A-Za-z0-9_]/g, '_');
}

/**
 * The values of cluster `name`: the properties first (a ClusterProfile's
 * `status.properties`, set by its cluster manager), then the annotations
 * (set by whoever registers the cluster), which win over a property of the
 * same name; `cluster_name` last, always the name.
 */
export function clusterValues(name: string, annotations: Record<string, string> | undefined, properties: { name: string; value: string }[] = []): Record<string, string> {
  const values: Record<string, string> = {};
  for (const p of properties) values[valueName(p.name)] = p.value;
  for (const [key, value] of Object.entries(annotations ?? {})) {
    if (key.startsWith(VALUES_ANNOTATION_PREFIX) && key.length > VALUES_ANNOTATION_PREFIX.length) values[valueName(key.slice(VALUES_ANNOTATION_PREFIX.length))] = value;
  }
  values[CLUSTER_NAME_VALUE] = name;
  return values;
}

/** The `{name, value}` pairs of a ClusterProfile's `status.properties` (others, malformed, left out). */
export function profileProperties(status: unknown): { name: string; value: string }[] {
  const list = (status as { properties?: unknown } | undefined)?.properties;
  if (!Array.isArray(list)) return [];
  return list.flatMap((p: unknown) => {
    const { name, value } = (p ?? {}) as { name?: unknown; value?: unknown };
    return typeof name === 'string' && name !== '' && typeof value === 'string' ? [{ name, value }] : [];
  });
}
