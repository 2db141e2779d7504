import type { Kind } from '../api/kinds.js';
import type { KubeObject } from '../kube/resources.js';

/** What `syncprims get` and the web view show of a Sync, RemoteSync or ProxySync. */

export type ReadyStatus = 'True' | 'False' | 'Unknown';

export interface SyncRow {
  kind: Kind;
  namespace: string;
  name: string;
  /** The Ready condition's status; undefined when it has none yet. */
  ready?: ReadyStatus;
  reason?: string;
  message?: string;
  revision?: string;
  /** The kubeconfig Secret or the Cluster (RemoteSync, ProxySync). */
  cluster?: string;
  /** `Kind/name` (or `Kind/namespace/name` across namespaces) of each unmet dependency. */
  pending: string[];
  createdAt?: string;
}

interface Condition {
  type?: string;
  status?: string;
  reason?: string;
  message?: string;
}

interface SyncLike {
  spec?: { kubeConfig?: { secretRef?: { name?: string } }; clusterRef?: { name?: string } };
  status?: {
    conditions?: Condition[];
    lastAppliedRevision?: string;
    pendingDependencies?: { kind?: string; name?: string; namespace?: string }[];
  };
}

export function syncRow(obj: KubeObject): SyncRow {
  const { spec, status } = obj as SyncLike;
  const namespace = obj.metadata.namespace ?? '';
  const created = obj.metadata.creationTimestamp;
  return {
    kind: obj.kind as Kind,
    namespace,
    name: obj.metadata.name ?? '',
    ...readyOf(status?.conditions),
    revision: status?.lastAppliedRevision || undefined,
    cluster: spec?.kubeConfig?.secretRef?.name ?? spec?.clusterRef?.name,
    pending: pendingOf(status?.pendingDependencies, namespace),
    createdAt: typeof created === 'string' ? created : undefined,
  };
}

function readyOf(conditions: Condition[] | undefined): Pick<SyncRow, 'ready' | 'reason' | 'message'> {
  const ready = conditions?.find((c) => c.type === 'Ready');
  if (!ready) return {};
  return { ready: isReadyStatus(ready.status) ? ready.status : undefined, reason: ready.reason || undefined, message: ready.message || undefined };
}

/** `Kind/name`, or `Kind/namespace/name` for a dependency in another namespace. */
function pendingOf(deps: NonNullable<SyncLike['status']>['pendingDependencies'], namespace: string): string[] {
  return (deps ?? []).map((d) => (d.namespace && d.namespace !== namespace ? `${d.kind}/${d.namespace}/${d.name}` : `${d.kind}/${d.name}`));
}

function isReadyStatus(v: unknown): v is ReadyStatus {
  return v === 'True' || v === 'False' || v === 'Unknown';
}

const KIND_ORDER: Record<string, number> = { Sync: 0, RemoteSync: 1, ProxySync: 2 };

/** Sync, RemoteSync, ProxySync; then by namespace and name. */
export function compareRows(a: SyncRow, b: SyncRow): number {
  return (KIND_ORDER[a.kind] ?? 9) - (KIND_ORDER[b.kind] ?? 9) || a.namespace.localeCompare(b.namespace) || a.name.localeCompare(b.name);
}
