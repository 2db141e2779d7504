import type { SyncKind } from '../api/kinds.js';
import type { KubeObject } from '../kube/resources.js';
import { UsageError } from './errors.js';
import { ageOf, shortRevision } from './format.js';
import type { Style } from './terminal.js';

/** What `syncprims get` shows of a Sync, RemoteSync or ProxySync. */

export type ReadyStatus = 'True' | 'False' | 'Unknown';

export interface SyncRow {
  kind: SyncKind;
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
    kind: obj.kind as SyncKind,
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

export function tableHeader(allNamespaces: boolean): string[] {
  const cols = ['KIND', 'NAMESPACE', 'NAME', 'READY', 'REASON', 'REVISION', 'CLUSTER', 'PENDING', 'AGE'];
  return allNamespaces ? cols : cols.filter((c) => c !== 'NAMESPACE');
}

/** A row's cells, in the order of `tableHeader`; `-` for what is not there. */
export function rowCells(row: SyncRow, opts: { allNamespaces: boolean; style: Style; now?: number; reason?: string }): string[] {
  const { style } = opts;
  const colour = row.ready === 'True' ? style.green : row.ready === 'False' ? style.red : style.yellow;
  const cells = [
    row.kind,
    row.namespace,
    row.name,
    row.ready ? colour(row.ready) : style.dim('-'),
    (opts.reason ?? row.reason) ? colour(opts.reason ?? row.reason ?? '') : '-',
    shortRevision(row.revision),
    row.cluster ?? '-',
    row.pending.length > 0 ? style.yellow(row.pending.join(',')) : '-',
    ageOf(row.createdAt, opts.now),
  ];
  if (!opts.allNamespaces) cells.splice(1, 1);
  return cells;
}

const KIND_ORDER: Record<string, number> = { Sync: 0, RemoteSync: 1, ProxySync: 2 };

/** Sync, RemoteSync, ProxySync; then by namespace and name. */
export function compareRows(a: SyncRow, b: SyncRow): number {
  return (KIND_ORDER[a.kind] ?? 9) - (KIND_ORDER[b.kind] ?? 9) || a.namespace.localeCompare(b.namespace) || a.name.localeCompare(b.name);
}

/** `--status-selector`: which rows to show. */
export type RowFilter = (row: SyncRow) => boolean;

const READY_VALUES: Record<string, ReadyStatus> = { true: 'True', false: 'False', unknown: 'Unknown' };

/**
 * `ready=false`, `ready=true`, `ready=unknown` (also a sync with no Ready
 * condition yet), `ready!=true`; several joined by commas must all hold.
 */
export function parseStatusSelector(text: string | undefined): RowFilter {
  if (text === undefined) return () => true;
  const tests = text.split(',').map((term) => {
    const m = /^\s*([a-zA-Z]+)\s*(!=|==|=)\s*([a-zA-Z]+)\s*$/.exec(term);
    const key = m?.[1]?.toLowerCase();
    const want = READY_VALUES[m?.[3]?.toLowerCase() ?? ''];
    if (!m || key !== 'ready' || !want) {
      throw new UsageError(`--status-selector ${JSON.stringify(text)}: want ready=true, ready=false, ready=unknown or ready!=true`);
    }
    const negate = m[2] === '!=';
    return (row: SyncRow) => ((row.ready ?? 'Unknown') === want) !== negate;
  });
  return (row) => tests.every((t) => t(row));
}
