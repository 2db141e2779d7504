// The shapes of the cluster inventory (clusters/inventory.ts), apart so that
// the pure readers of each source (inventory-sources.ts) and the live
// inventory share them without importing each other.
import type { ClusterRef, KubeConfigRef } from '../api/cluster.js';

/** Where an inventory cluster comes from: a labelled kubeconfig Secret, a Cluster API Cluster, a SIG-Multicluster ClusterProfile. */
export type ClusterSource = 'Secret' | 'Cluster' | 'ClusterProfile';

export interface InventoryCluster {
  name: string;
  namespace: string;
  labels: Record<string, string>;
  /** Its values, for a FleetSync's substitution (cluster-values.ts): `cluster_name`, the `values.syncprims.dev/` annotations, a ClusterProfile's properties. */
  values: Record<string, string>;
  source: ClusterSource;
  /** `pull`: a cluster that connects upward (its Secret holds no credential: docs/pull.md); absent: push (dialled). */
  mode?: 'push' | 'pull';
  /** The object it comes from, for messages: `Secret team/edge-1-kubeconfig`, `Cluster team/edge-1`, `ClusterProfile team/edge-1`. */
  definedBy: string;
  /** The spec fields a RemoteSync/ProxySync names this cluster with (exactly one of kubeConfig / clusterRef, as src/api/cluster.ts types them). */
  ref: { kubeConfig?: KubeConfigRef; clusterRef?: ClusterRef };
  /** Set when the cluster cannot be used as is (two sources claim the name: say which; a ClusterProfile with no usable credentials: say why). Such a cluster is listed but not selected. */
  problem?: string;
}
