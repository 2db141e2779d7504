import { KINDS, type Kind } from '../api/kinds.js';
import type { KubeObject } from '../kube/resources.js';
import { rolloutView } from './rollout-view.js';

/** What `syncprims get` and the web view show of a Sync, RemoteSync, ProxySync or FleetSync. */

export type ReadyStatus = 'True' | 'False' | 'Unknown';

export interface SyncRow {
  kind: Kind;
  namespace: string;
  name: string;
  /** The Ready condition's status; undefined when it has none yet. */
  ready?: ReadyStatus;
  reason?: string;
  message?: string;
  /** The revision applied (a FleetSync: the one every selected cluster is Ready with, `currentRevision`). */
  revision?: string;
  /** The revision being applied or last tried (a FleetSync: the one it rolls out, `updateRevision`). */
  targetRevision?: string;
  /** The kubeconfig Secret or the Cluster (RemoteSync, ProxySync). */
  cluster?: string;
  /** `Kind/name` (or `Kind/namespace/name` across namespaces) of each unmet dependency. */
  pending: string[];
  createdAt?: string;
  /** A FleetSync: its phase, and its clusters (`ready/selected`). */
  fleet?: FleetFields;
}

export interface FleetFields {
  phase?: string;
  /** `ready/selected`, e.g. `2/3`. */
  clusters: string;
  /** A FleetSync rolling out in waves (`status.waves`): `3/5 waves, 412/1000` (waves done, clusters updated of selected). */
  progress?: string;
  /** Why the rollout stands where it stands (`status.message`). */
  rolloutMessage?: string;
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
    lastAttemptedRevision?: string;
    /** FleetSync. */
    phase?: string;
    currentRevision?: string;
    updateRevision?: string;
    clusters?: { selected?: number; ready?: number };
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
    ...revisionsOf(status),
    cluster: spec?.kubeConfig?.secretRef?.name ?? spec?.clusterRef?.name,
    pending: pendingOf(status?.pendingDependencies, namespace),
    createdAt: typeof created === 'string' ? created : undefined,
    ...(obj.kind === 'FleetSync' ? { fleet: fleetFields(obj) } : {}),
  };
}

/** The revision applied and the one being applied, as any kind says them. */
function revisionsOf(status: SyncLike['status']): Pick<SyncRow, 'revision' | 'targetRevision'> {
  const revision = status?.lastAppliedRevision || status?.currentRevision;
  const target = status?.lastAttemptedRevision || status?.updateRevision;
  return { revision: revision || undefined, targetRevision: target || undefined };
}

/** A FleetSync's phase, `ready/selected` (counted as 0/0 before its first status) and its rollout's progress. */
function fleetFields(obj: KubeObject): FleetFields {
  const status = (obj as SyncLike).status;
  const clusters = status?.clusters;
  const fields: FleetFields = { clusters: `${clusters?.ready ?? 0}/${clusters?.selected ?? 0}` };
  if (status?.phase) fields.phase = status.phase;
  const rollout = rolloutView(obj);
  if (rollout) fields.progress = rollout.progress;
  if (rollout?.message) fields.rolloutMessage = rollout.message;
  return fields;
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

/** Where a kind sorts: Sync, RemoteSync, ProxySync, FleetSync (the order of KINDS), anything else last. */
export function kindRank(kind: string): number {
  const at = (KINDS as readonly string[]).indexOf(kind);
  return at < 0 ? KINDS.length : at;
}

/** Sync, RemoteSync, ProxySync, FleetSync; then by namespace and name. */
export function compareRows(a: SyncRow, b: SyncRow): number {
  return kindRank(a.kind) - kindRank(b.kind) || a.namespace.localeCompare(b.namespace) || a.name.localeCompare(b.name);
}
