// `syncprims get clusters`: a namespace's cluster inventory, as the operator
// would see it (clusters/inventory-read.ts), with whether each answers (opened
// from its kubeconfig as `doctor` opens remote clusters, all at once, each
// given a few seconds), which FleetSyncs select it, its values, and the
// FleetSyncs that cannot make its template (views/fleet-unmade.ts), and, under
// `run --shards`, the replica that holds it (views/shard-read.ts, from the Leases of
// --operator-namespace).
import { CLUSTER_LABEL } from '../../api/marks.js';
import { readInventory } from '../../clusters/inventory-read.js';
import { selectClusters, type InventoryCluster, type LabelSelector } from '../../clusters/inventory.js';
import { assignmentNamespace, CLUSTER_MODE_LABEL, PULL_LEASE } from '../../clusters/pull-names.js';
import { REVOKED_AT_LABEL, revokedAtOf } from '../../clusters/pull-target.js';
import { getIfExists, type Requester } from '../../kube/client.js';
import { ApiError } from '../../kube/errors.js';
import { CORE, objectPath, type KubeObject } from '../../kube/resources.js';
import { unmadeTemplates, type UnmadeTemplate } from '../../views/fleet-unmade.js';
import { shardCell, type ShardHolding } from '../../views/shard-holders.js';
import { clusterHolding, DEFAULT_OPERATOR_NAMESPACE, readShards } from '../../views/shard-read.js';
import { syncCollectionPath } from '../../views/sync-api.js';
import { withCluster, type Cluster, type ClusterFlags } from '../cluster.js';
import { humanAge } from '../format.js';
import { toJson, toYaml } from '../output.js';
import { formatTable } from '../table.js';
import { valuesCell } from './value-flags.js';

export type ListOutput = 'table' | 'wide' | 'json' | 'yaml';

/** A cluster is given this long to answer `GET /version`. */
const PROBE_TIMEOUT_MS = 5_000;
const FLEETSYNCS = (namespace: string): string => syncCollectionPath('FleetSync', namespace);

/** Whether a cluster answered: `yes`, `no` (with why), or `-` (not tried: no credentials to try with). */
export interface Reach {
  reachable: 'yes' | 'no' | '-';
  server?: string;
  message?: string;
}

export interface ClusterRow extends InventoryCluster {
  mode: 'push' | 'pull';
  /** A pull cluster: when its operator last renewed its Lease (RFC 3339); null when it never did, and for a push cluster. */
  lastSeen: string | null;
  /** A pull cluster whose identity was revoked (`syncprims cluster revoke`): when (RFC 3339). */
  revokedAt?: string;
  reach: Reach;
  selectedBy: string[];
  /** Under `run --shards`: the replica holding its key Lease, or why none (views/shard-holders.ts). */
  shard: ShardHolding;
  /** The FleetSyncs selecting it that cannot make its template: which, and why. */
  unmade: Pick<UnmadeTemplate, 'fleetSync' | 'reason' | 'message'>[];
}

export interface ListFlags extends ClusterFlags {
  output: ListOutput;
  /** Where the operator's Leases are (its --leader-election-namespace; default syncprims-system). */
  operatorNamespace?: string;
}

export async function listClusters(flags: ListFlags): Promise<void> {
  await withCluster(flags, async (home) => {
    const [clusters, fleets, shards] = await Promise.all([
      readInventory(home.client, home.namespace),
      readFleetSyncs(home.client, home.namespace),
      readShards(home.client, flags.operatorNamespace ?? DEFAULT_OPERATOR_NAMESPACE, Date.now()),
    ]);
    const reaches = await Promise.all(clusters.map((c) => (c.mode === 'pull' ? { reachable: '-' as const } : probe(home, c))));
    const seen = await Promise.all(clusters.map((c) => (c.mode === 'pull' ? lastSeenOf(home.client, c) : null)));
    const unmade = unmadeTemplates(fleets, clusters);
    const rows = clusters.map((c, i) => ({
      ...c,
      mode: c.mode ?? ('push' as const),
      lastSeen: seen[i]!,
      ...revokedOf(c),
      reach: reaches[i]!,
      selectedBy: selectorsOf(c, clusters, fleets),
      shard: clusterHolding(shards, c),
      unmade: unmadeFor(c, unmade),
    }));
    process.stdout.write(render(rows, home.namespace, flags.output));
  });
}

/** The FleetSyncs of the namespace (none where their CRD is not served). */
async function readFleetSyncs(client: Requester, namespace: string): Promise<KubeObject[]> {
  try {
    return (await client.request<{ items?: KubeObject[] }>({ path: FLEETSYNCS(namespace) })).items ?? [];
  } catch (err) {
    if (err instanceof ApiError && err.status === 404) return [];
    throw err;
  }
}

/** The names of the FleetSyncs whose `spec.clusters` select `cluster`. */
export function selectorsOf(cluster: InventoryCluster, clusters: InventoryCluster[], fleets: KubeObject[]): string[] {
  return fleets
    .filter((f) => {
      const sel = ((f.spec as { clusters?: { selector?: LabelSelector; names?: string[] } } | undefined)?.clusters ?? {}) as { selector?: LabelSelector; names?: string[] };
      return selectClusters(clusters, sel).some((c) => c === cluster);
    })
    .map((f) => f.metadata.name ?? '')
    .sort();
}

/** The unmade templates of `cluster` (not of another claim of its name, which is not selected). */
function unmadeFor(cluster: InventoryCluster, unmade: UnmadeTemplate[]): ClusterRow['unmade'] {
  if (cluster.problem) return [];
  return unmade.filter((u) => u.cluster === cluster.name).map(({ fleetSync, reason, message }) => ({ fleetSync, reason, message }));
}

/** When a pull cluster's operator last renewed its Lease (docs/pull.md), RFC 3339; null when there is no Lease (it never connected). */
async function lastSeenOf(client: Requester, cluster: InventoryCluster): Promise<string | null> {
  const lease = await getIfExists<{ spec?: { renewTime?: string } }>(client, objectPath(CORE.leases, PULL_LEASE, assignmentNamespace(cluster.namespace, cluster.name)));
  const renewed = lease?.spec?.renewTime ? Date.parse(lease.spec.renewTime) : NaN;
  return Number.isNaN(renewed) ? null : new Date(renewed).toISOString();
}

/** `{revokedAt}` of a pull cluster whose Secret says it was revoked; nothing otherwise. */
function revokedOf(cluster: InventoryCluster): { revokedAt?: string } {
  if (cluster.mode !== 'pull') return {};
  // As the operator reads it (pullTargetOf): a label that is not a time is no revoke.
  const at = revokedAtOf(cluster.labels[REVOKED_AT_LABEL]);
  return at ? { revokedAt: at } : {};
}

/** A LAST-SEEN cell: `-` for a push cluster; for a pull one `revoked`, `never` (no Lease), or the age of its last renewal as kubectl prints ages (`12s`, `3m20s`). */
export function lastSeenCell(row: Pick<ClusterRow, 'mode' | 'lastSeen' | 'revokedAt'>, now = Date.now()): string {
  if (row.mode !== 'pull') return '-';
  if (row.revokedAt !== undefined) return 'revoked';
  if (row.lastSeen === null) return 'never';
  const at = Date.parse(row.lastSeen);
  // A renewal a little ahead of this clock (the downstream's own) is seen now.
  return Number.isNaN(at) ? '-' : humanAge(Math.max(0, now - at));
}

/** Opens the cluster from its kubeconfig, as the operator would, and asks its version. */
async function probe(home: Pick<Cluster, 'client'>, cluster: InventoryCluster): Promise<Reach> {
  if (!cluster.ref.kubeConfig && !cluster.ref.clusterRef) return { reachable: '-' };
  const { openRemote, remoteFailure } = await import('../remote.js');
  const asSync: KubeObject = { apiVersion: 'v1', kind: 'Cluster', metadata: { namespace: cluster.namespace, name: cluster.name }, spec: cluster.ref };
  const target = await openRemote(home, asSync);
  if (!target.ok) return { reachable: 'no', message: target.message };
  try {
    await target.client.request({ path: '/version', timeoutMs: PROBE_TIMEOUT_MS });
    return { reachable: 'yes', server: target.client.server.origin };
  } catch (err) {
    const failure = remoteFailure(err, target.client);
    return { reachable: 'no', server: target.client.server.origin, message: failure ?? (err instanceof Error ? err.message : String(err)) };
  } finally {
    target.client.close();
  }
}

function labelsOf(c: InventoryCluster): string {
  return Object.entries(c.labels)
    .filter(([k]) => k !== CLUSTER_LABEL && k !== CLUSTER_MODE_LABEL && k !== REVOKED_AT_LABEL)
    .map(([k, v]) => `${k}=${v}`)
    .join(',');
}

export function render(rows: ClusterRow[], namespace: string, output: ListOutput): string {
  if (output === 'json' || output === 'yaml') {
    const value = { namespace, clusters: rows };
    return output === 'json' ? toJson(value) : toYaml(value);
  }
  if (rows.length === 0) return `No clusters in namespace ${namespace} (register one: syncprims cluster add NAME --kubeconfig FILE -n ${namespace})\n`;
  const wide = output === 'wide';
  const header = ['NAME', 'SOURCE', 'MODE', 'REACHABLE', 'LAST-SEEN', 'SHARD', 'SELECTED-BY', 'LABELS', ...(wide ? ['VALUES', 'OBJECT', 'SERVER'] : []), 'PROBLEM'];
  const lines = rows.map((r) => [
    r.name,
    r.source,
    r.mode,
    r.reach.reachable,
    lastSeenCell(r),
    shardCell(r.shard),
    r.selectedBy.join(',') || '-',
    labelsOf(r) || '-',
    ...(wide ? [valuesCell(r.values) || '-', r.definedBy, r.reach.server ?? '-'] : []),
    [r.problem, r.reach.message, ...r.unmade.map((u) => `fleetsync/${u.fleetSync}: ${u.reason}: ${u.message}`)].filter(Boolean).join('; ') || '-',
  ]);
  return `${formatTable(header, lines).lines.join('\n')}\n`;
}
