// Whether an operator runs, for `syncprims doctor`: every operator renews a
// Lease labelled syncprims.dev/operator-lease=true (its leader Lease, or its
// own liveness Lease: runtime/liveness-lease.ts) that names the namespace it
// watches. A Lease is live while it has a holder and renewTime +
// leaseDurationSeconds has not passed (on this machine's clock); a clean stop
// empties the holder, a crash leaves it to lapse.
import type { KubeClient } from '../../kube/client.js';
import { ApiError } from '../../kube/errors.js';
import { OPERATOR_LEASE_LABEL, WATCH_NAMESPACE_LABEL } from '../../runtime/liveness-lease.js';
import type { Lease } from '../../runtime/lease-lock.js';
import type { Finding } from './doctor-findings.js';
import { serverMessage } from '../errors.js';
import { humanAge } from '../format.js';
import { collectionPath, CORE } from '../../kube/resources.js';

export interface OperatorLease {
  /** `namespace/name` of the Lease. */
  lease: string;
  holder: string;
  /** The namespace the operator watches; undefined: all. */
  watches?: string;
  renewTime?: string;
  live: boolean;
}

export function operatorLeases(items: readonly Lease[], now: number): OperatorLease[] {
  return items.map((l) => {
    const holder = l.spec?.holderIdentity ?? '';
    const renewed = Date.parse(l.spec?.renewTime ?? '');
    const seconds = l.spec?.leaseDurationSeconds ?? 0;
    const watching = (l.metadata.labels as Record<string, string> | undefined)?.[WATCH_NAMESPACE_LABEL];
    return {
      lease: `${l.metadata.namespace ?? ''}/${l.metadata.name}`,
      holder,
      watches: watching ? watching : undefined,
      renewTime: l.spec?.renewTime ?? undefined,
      live: holder !== '' && !Number.isNaN(renewed) && renewed + seconds * 1000 > now,
    };
  });
}

/** Whether a live operator watches `namespace`. */
export function watched(leases: readonly OperatorLease[], namespace: string): boolean {
  return leases.some((l) => l.live && (l.watches === undefined || l.watches === namespace));
}

/** Whether the operator of a Lease watches `namespace` (live or not). */
function covers(lease: OperatorLease, namespace: string): boolean {
  return lease.watches === undefined || lease.watches === namespace;
}

/**
 * Why no operator watches `namespace`, for a message: none runs at all, or
 * none of those that run watches it; then `history`.
 */
export function whyNotWatched(leases: readonly OperatorLease[], namespace: string, now: number): string {
  const head = leases.some((l) => l.live) ? `no running operator watches namespace ${namespace}` : 'no operator is running';
  return `${head}: ${history(leases, namespace, now)}`;
}

/** What became of the last operator that watched `namespace` (lapsed: a crash; released: a clean stop), and which run. */
export function history(leases: readonly OperatorLease[], namespace: string, now: number): string {
  const last = leases.filter((l) => covers(l, namespace)).sort((a, b) => (b.renewTime ?? '').localeCompare(a.renewTime ?? ''))[0];
  const when = last?.renewTime ? ` at ${last.renewTime} (${humanAge(now - Date.parse(last.renewTime))} ago)` : '';
  const said = !last
    ? `no operator Lease (labelled ${OPERATOR_LEASE_LABEL}=true) watches it`
    : last.holder === ''
      ? `the last, Lease ${last.lease}, was released${when}: a clean stop`
      : `the last, Lease ${last.lease} of ${last.holder}, was renewed last${when} and has lapsed`;
  const running = leases
    .filter((l) => l.live)
    .map((l) => `${l.holder} watching ${l.watches ?? 'all namespaces'}`)
    .sort();
  return `${said}${running.length > 0 ? `; running: ${running.join(', ')}` : ''}`;
}

export type LeaseRead = { ok: true; leases: OperatorLease[] } | { ok: false; message: string };

/** The operator Leases of a cluster (every namespace); a refusal is a message, other errors are thrown. */
export async function readOperatorLeases(client: KubeClient, now: number): Promise<LeaseRead> {
  try {
    const list = await client.request<{ items: Lease[] }>({
      path: collectionPath(CORE.leases),
      query: { labelSelector: `${OPERATOR_LEASE_LABEL}=true` },
    });
    return { ok: true, leases: operatorLeases(list.items, now) };
  } catch (err) {
    if (err instanceof ApiError && (err.status === 401 || err.status === 403)) return { ok: false, message: serverMessage(err) };
    throw err;
  }
}

const START = 'start the operator (syncprims run, or its Deployment) watching this namespace or all';

/** One finding per namespace that has syncs and no live operator watching it. */
export function operatorFindings(read: LeaseRead, namespaces: readonly string[], now: number): Finding[] {
  if (!read.ok) {
    if (namespaces.length === 0) return [];
    return [
      {
        problem: 'CannotCheck',
        severity: 'warning',
        namespace: '',
        object: '-',
        message: `cannot tell whether an operator runs: listing Leases is refused (${read.message})`,
        action: 'ask for list on leases.coordination.k8s.io in all namespaces',
      },
    ];
  }
  return namespaces
    .filter((ns) => !watched(read.leases, ns))
    .map((namespace) => ({
      problem: 'OperatorNotRunning',
      severity: 'error',
      namespace,
      object: '-',
      message: whyNotWatched(read.leases, namespace, now),
      action: `${START}: until one runs, nothing here is reconciled and no finalizer is removed`,
    }));
}
