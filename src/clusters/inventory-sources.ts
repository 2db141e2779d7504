// Pure readers of the cluster inventory's three sources (API.md, "Clusters"):
// what cluster each cached object stands for, and the conflicts between them.
// The objects are as the inventory's watches keep them: Secrets and Cluster
// API Clusters as metadata only, ClusterProfiles as projectClusterProfile
// leaves them.
import { DEFAULT_KUBECONFIG_KEY } from '../api/cluster.js';
import { CLUSTER_LABEL } from '../api/marks.js';
import type { KubeObject } from '../kube/resources.js';
import { clusterValues, profileProperties, VALUES_ANNOTATION_PREFIX } from './cluster-values.js';
import type { ClusterSource, InventoryCluster } from './inventory-types.js';
import { CLUSTER_MODE_LABEL, PULL_MODE } from './pull-names.js';

/** The versions of `cluster.x-k8s.io` that serve Cluster, newest first (the first served one is watched). */
export const CLUSTER_API_VERSIONS = ['cluster.x-k8s.io/v1beta2', 'cluster.x-k8s.io/v1beta1'];
/** SIG-Multicluster's Cluster Inventory API. */
export const CLUSTER_PROFILE_VERSIONS = ['multicluster.x-k8s.io/v1alpha1'];

/**
 * The extension of a ClusterProfile access provider's `cluster` that the
 * Cluster Inventory API's credential plugins read their configuration from
 * (KEP-5339); the kubeconfig-secretreader plugin's is `{name, key, namespace?}`:
 * the Secret holding a kubeconfig.
 */
export const EXEC_EXTENSION = 'client.authentication.k8s.io/exec';

const SOURCE_WORDS: Record<ClusterSource, string> = { Secret: 'Secret', Cluster: 'Cluster API Cluster', ClusterProfile: 'ClusterProfile' };

function definedByOf(source: ClusterSource, obj: KubeObject): string {
  return `${SOURCE_WORDS[source]} ${obj.metadata.namespace ?? ''}/${obj.metadata.name ?? ''}`;
}

/** A kubeconfig Secret labelled `syncprims.dev/cluster: <name>` (key `value`); an empty value names the cluster after the Secret. */
export function secretCluster(secret: KubeObject): InventoryCluster {
  const labels = secret.metadata.labels ?? {};
  const name = labels[CLUSTER_LABEL] || (secret.metadata.name ?? '');
  return {
    name,
    namespace: secret.metadata.namespace ?? '',
    labels,
    values: clusterValues(name, secret.metadata.annotations),
    source: 'Secret',
    ...(labels[CLUSTER_MODE_LABEL] === PULL_MODE && { mode: 'pull' as const }),
    definedBy: definedByOf('Secret', secret),
    ref: { kubeConfig: { secretRef: { name: secret.metadata.name ?? '', key: DEFAULT_KUBECONFIG_KEY } } },
  };
}

/** A Cluster API Cluster: its kubeconfig is the Secret `<name>-kubeconfig`, which `clusterRef` names. */
export function clusterApiCluster(cluster: KubeObject): InventoryCluster {
  const name = cluster.metadata.name ?? '';
  return {
    name,
    namespace: cluster.metadata.namespace ?? '',
    labels: cluster.metadata.labels ?? {},
    values: clusterValues(name, cluster.metadata.annotations),
    source: 'Cluster',
    definedBy: definedByOf('Cluster', cluster),
    ref: { clusterRef: { name } },
  };
}

interface AccessProvider {
  name?: unknown;
  cluster?: { extensions?: { name?: unknown; extension?: unknown }[] };
}

/** The `values.syncprims.dev/` annotations of an object, or undefined: it has none. */
function valueAnnotations(obj: KubeObject): Record<string, string> | undefined {
  const kept = Object.entries(obj.metadata.annotations ?? {}).filter(([k]) => k.startsWith(VALUES_ANNOTATION_PREFIX));
  return kept.length > 0 ? Object.fromEntries(kept) : undefined;
}

/**
 * What the inventory keeps of a kubeconfig Secret or a Cluster API Cluster,
 * read as metadata only: its name, namespace, uid, resourceVersion, labels,
 * deletion and value annotations, no other annotation (a Secret's
 * `last-applied-configuration` holds its data). As `kind` of its group
 * (`group`: "" for the core group; the version is the one listed).
 */
export function projectInventoryMetadata(kind: string, apiVersion: string): (obj: KubeObject) => KubeObject {
  return (obj) => {
    const { name, namespace, uid, resourceVersion, labels, deletionTimestamp } = obj.metadata;
    const metadata: KubeObject['metadata'] = { name, namespace, uid, resourceVersion };
    if (labels) metadata.labels = labels;
    const annotations = valueAnnotations(obj);
    if (annotations) metadata.annotations = annotations;
    if (deletionTimestamp) metadata.deletionTimestamp = deletionTimestamp;
    // A metadata-only answer says PartialObjectMetadata (meta.k8s.io/v1).
    return { apiVersion: obj.kind === kind ? obj.apiVersion : apiVersion, kind, metadata };
  };
}

/** Of a ClusterProfile, what the inventory reads: its labels, its value annotations and properties, and each access provider's name and credential-plugin extension. */
export function projectClusterProfile(profile: KubeObject): KubeObject {
  const { name, namespace, uid, resourceVersion, labels, deletionTimestamp } = profile.metadata;
  const annotations = valueAnnotations(profile);
  const providers = accessProvidersOf(profile).map((p) => {
    const extension = (Array.isArray(p.cluster?.extensions) ? p.cluster.extensions : []).find((e) => e?.name === EXEC_EXTENSION)?.extension;
    const kept = isRecord(extension) ? { name: extension.name, key: extension.key, namespace: extension.namespace } : undefined;
    return { name: p.name, cluster: kept ? { extensions: [{ name: EXEC_EXTENSION, extension: kept }] } : {} };
  });
  return {
    apiVersion: profile.apiVersion,
    kind: profile.kind,
    metadata: { name, namespace, uid, resourceVersion, labels, annotations, deletionTimestamp },
    status: { accessProviders: providers, properties: profileProperties(profile.status) },
  };
}

/**
 * A ClusterProfile: its credentials as the Cluster Inventory API's
 * kubeconfig-secretreader convention gives them, without running its plugin
 * (syncprims runs no credential command): an access provider whose `cluster`
 * has the extension `client.authentication.k8s.io/exec` with `name` and `key`
 * names the kubeconfig Secret (of the profile's namespace), which is checked
 * as any other. With no such provider, it is listed with a problem saying
 * what is missing.
 */
export function clusterProfileCluster(profile: KubeObject): InventoryCluster {
  const namespace = profile.metadata.namespace ?? '';
  const name = profile.metadata.name ?? '';
  const base = {
    name,
    namespace,
    labels: profile.metadata.labels ?? {},
    values: clusterValues(name, profile.metadata.annotations, profileProperties(profile.status)),
    source: 'ClusterProfile' as const,
    definedBy: definedByOf('ClusterProfile', profile),
  };
  const found = profileCredentials(profile);
  return 'secret' in found ? { ...base, ref: { kubeConfig: { secretRef: found.secret } } } : { ...base, ref: {}, problem: found.problem };
}

function profileCredentials(profile: KubeObject): { secret: { name: string; key: string } } | { problem: string } {
  const namespace = profile.metadata.namespace ?? '';
  const providers = accessProvidersOf(profile);
  if (providers.length === 0) {
    return { problem: 'it has no status.accessProviders yet: its cluster manager has not said how to reach the cluster' };
  }
  const elsewhere: string[] = [];
  for (const p of providers) {
    const found = kubeconfigSecretOf(p, namespace);
    if (typeof found === 'string') elsewhere.push(found);
    else if (found) return { secret: found };
  }
  const names = providers.map((p) => String(p.name ?? '?')).join(', ');
  const why = elsewhere.length > 0 ? `; ${elsewhere.join('; ')}` : '';
  return {
    problem:
      `no access provider names a kubeconfig Secret of namespace ${namespace} (the kubeconfig-secretreader convention: ` +
      `status.accessProviders[].cluster.extensions "${EXEC_EXTENSION}" with name and key)${why}; ` +
      `its providers (${names}) need a credentials plugin run as a command, which syncprims refuses as it refuses exec kubeconfigs`,
  };
}

/** The kubeconfig Secret an access provider names (kubeconfig-secretreader), why it cannot be used, or undefined: it names none. */
function kubeconfigSecretOf(p: AccessProvider, namespace: string): { name: string; key: string } | string | undefined {
  const ext = (p.cluster?.extensions ?? []).find((e) => e?.name === EXEC_EXTENSION)?.extension;
  if (!isRecord(ext) || typeof ext.name !== 'string' || ext.name === '' || typeof ext.key !== 'string' || ext.key === '') return undefined;
  if (typeof ext.namespace === 'string' && ext.namespace !== '' && ext.namespace !== namespace) {
    return `${String(p.name)} names Secret ${ext.namespace}/${ext.name}, outside the profile's namespace`;
  }
  return { name: ext.name, key: ext.key };
}

function accessProvidersOf(profile: KubeObject): AccessProvider[] {
  const status = profile.status as { accessProviders?: unknown; credentialProviders?: unknown } | undefined;
  // credentialProviders: the field's name in the API's first releases.
  const list = status?.accessProviders ?? status?.credentialProviders;
  return Array.isArray(list) ? (list.filter(isRecord) as AccessProvider[]) : [];
}

/**
 * The clusters of one namespace, sorted by name: where two objects claim one
 * name (two sources, or two labelled Secrets), each is kept with a problem
 * naming the others, so that neither is used until one goes.
 */
export function withConflicts(clusters: InventoryCluster[]): InventoryCluster[] {
  const byName = new Map<string, InventoryCluster[]>();
  for (const c of clusters) byName.set(c.name, [...(byName.get(c.name) ?? []), c]);
  const out: InventoryCluster[] = [];
  for (const [name, claims] of byName) {
    if (claims.length === 1) {
      out.push(claims[0]!);
      continue;
    }
    for (const c of claims) {
      const others = claims.filter((o) => o !== c).map((o) => o.definedBy);
      const conflict = `the name ${name} is claimed by ${others.join(' and ')} too: remove or rename one of them`;
      out.push({ ...c, problem: c.problem ? `${conflict}; ${c.problem}` : conflict });
    }
  }
  return out.sort((a, b) => compare(a.name, b.name) || compare(a.definedBy, b.definedBy));
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
