// What `syncprims doctor` finds in the sharding Leases (`run --shards`, docs/shards.md, "Who
// holds what"), pure: the Leases read (views/shard-read.ts), the syncs, the time. A cluster or a
// namespace that syncs need and that no live replica holds (ShardUnheld), after a grace that
// lets a handover finish; a replica that still holds keys but has stopped renewing its
// membership Lease (ReplicaNotRenewing); and a summary: the replicas, live or not, and what
// each holds. Nothing when the operator is not sharded (no membership Lease).
import { clusterShardKey, namespaceShardKey, shardKeyString, type ShardKey } from '../../api/shard-marks.js';
import type { KubeObject } from '../../kube/resources.js';
import { CLOCK_SKEW_MS, DEFAULT_LEASE_SECONDS, heldByHolder, holdingOf, isSharded, memberNamed, type HeldCount, type ShardHolding, type ShardState } from '../../views/shard-holders.js';
import type { ShardRead } from '../../views/shard-read.js';
import { humanAge } from '../format.js';
import { clusterOf, type Finding } from './doctor-findings.js';

/** A key nobody live holds is reported only after this many lease durations (a handover takes a few retry periods). */
export const GRACE_LEASES = 2;
/** Syncs named in a finding; the rest are counted. */
const NAMED = 5;

/** A shard key that syncs need: the cluster of RemoteSyncs and ProxySyncs, the namespace of Syncs and FleetSyncs. */
export interface NeededKey {
  key: ShardKey;
  namespace: string;
  /** The finding's object: `Secret/<name>` or `Cluster/<name>` of a cluster, `Namespace/<name>`. */
  object: string;
  /** `Kind/name` of the syncs needing it, sorted. */
  syncs: string[];
  /** When the first of them was created (ms; NaN: not known). */
  since: number;
}

/** Pure: the keys that `objects` need, one per key, in the order first needed. */
export function neededKeys(objects: readonly KubeObject[]): NeededKey[] {
  const keys = new Map<string, NeededKey>();
  for (const o of objects) {
    const namespace = o.metadata.namespace ?? '';
    const remote = o.kind === 'RemoteSync' || o.kind === 'ProxySync';
    const cluster = remote ? clusterOf(o) : undefined;
    // A spec that names no cluster is InvalidSpec, said by its own status.
    if (remote && !cluster) continue;
    const key = cluster ? clusterShardKey(namespace, cluster.secret) : namespaceShardKey(namespace);
    const id = shardKeyString(key);
    const need = keys.get(id) ?? { key, namespace, object: cluster?.object ?? `Namespace/${namespace}`, syncs: [], since: NaN };
    need.syncs.push(`${o.kind}/${o.metadata.name ?? ''}`);
    const created = Date.parse(String(o.metadata.creationTimestamp ?? ''));
    if (!Number.isNaN(created)) need.since = Number.isNaN(need.since) ? created : Math.min(need.since, created);
    keys.set(id, need);
  }
  for (const need of keys.values()) need.syncs.sort();
  return [...keys.values()];
}

const liveNames = (state: ShardState): string[] => state.members.filter((m) => m.live).map((m) => m.name);

/** The lease duration to judge a key by (ms): the longest of its Lease's and the replicas'. */
function durationMs(state: ShardState, lease: string): number {
  const seconds = Math.max(state.keys.get(lease)?.durationSeconds ?? 0, ...state.members.map((m) => m.durationSeconds));
  return (seconds || DEFAULT_LEASE_SECONDS) * 1000;
}

/**
 * Since when (ms) a handover of the key may have been under way: the latest of when a sync first
 * needed it, when its Lease last changed hands, when its holder lapsed, and when the newest live
 * replica joined (a join moves keys).
 */
function handoverSince(state: ShardState, need: NeededKey, holding: Extract<ShardHolding, { state: 'none' }>): number {
  const holder = holding.holder === undefined ? undefined : memberNamed(state, holding.holder);
  const times = [
    need.since,
    Date.parse(state.keys.get(holding.lease)?.since ?? ''),
    Date.parse(holder?.expiresAt ?? ''),
    ...state.members.filter((m) => m.live).map((m) => Date.parse(m.acquireTime ?? '')),
  ].filter((t) => !Number.isNaN(t));
  return times.length === 0 ? -Infinity : Math.max(...times);
}

function namedSyncs(syncs: readonly string[]): string {
  const more = syncs.length > NAMED ? `, and ${syncs.length - NAMED} more` : '';
  return `${syncs.slice(0, NAMED).join(', ')}${more}`;
}

function unheldAction(state: ShardState, need: NeededKey): string {
  const live = liveNames(state);
  if (live.length === 0) return 'start the operator (its Deployment, or syncprims run --shards): no replica is live, so nothing here is reconciled';
  const check = need.key.kind === 'cluster' ? `; syncprims get clusters -n ${need.namespace} --operator-namespace ${state.namespace} shows who holds each cluster` : '';
  return `a live replica (${live.join(', ')}) takes a key nobody holds within seconds: look in their logs for errors writing Leases in namespace ${state.namespace} (they need get, list, watch, create, update and delete on leases.coordination.k8s.io there)${check}`;
}

/** Pure: the keys `objects` need that no live replica holds, past the grace. */
export function unheldKeys(state: ShardState, objects: readonly KubeObject[], now: number): Finding[] {
  if (!isSharded(state)) return [];
  return neededKeys(objects).flatMap((need): Finding[] => {
    const holding = holdingOf(state, need.key);
    if (holding.state !== 'none') return [];
    const since = handoverSince(state, need, holding);
    if (now - since < GRACE_LEASES * durationMs(state, holding.lease)) return [];
    const what = need.key.kind === 'cluster' ? `cluster ${need.key.id}` : `namespace ${need.key.id} (its Syncs and FleetSyncs)`;
    return [
      {
        problem: 'ShardUnheld',
        severity: 'error',
        namespace: need.namespace,
        object: need.object,
        message: `${what} is held by no live replica: ${holding.why}; nothing reconciles ${namedSyncs(need.syncs)}`,
        action: unheldAction(state, need),
        ...(Number.isFinite(since) ? { since: new Date(since).toISOString() } : {}),
      },
    ];
  });
}

function heldText(c: HeldCount): string {
  const parts = [c.clusters > 0 ? `${c.clusters} cluster${c.clusters === 1 ? '' : 's'}` : '', c.namespaces > 0 ? `${c.namespaces} namespace${c.namespaces === 1 ? '' : 's'}` : ''];
  return parts.filter(Boolean).join(' and ') || 'nothing';
}

/** Pure: the replicas that hold keys but whose membership Lease has lapsed (renewTime + leaseDurationSeconds + CLOCK_SKEW_MS before `now`). */
export function replicasNotRenewing(state: ShardState, now: number): Finding[] {
  const held = heldByHolder(state);
  const live = liveNames(state);
  return state.members.flatMap((m): Finding[] => {
    const holds = held.get(m.name);
    if (m.live || !holds) return [];
    const when = m.renewTime ? `since ${m.renewTime} (${humanAge(now - Date.parse(m.renewTime))} ago)` : '(its Lease has no renewTime)';
    const takeOver = live.length > 0 ? `the live replicas (${live.join(', ')}) should take its keys: if they do not, look in their logs` : 'no replica is live: start the operator';
    return [
      {
        problem: 'ReplicaNotRenewing',
        severity: 'error',
        namespace: state.namespace,
        object: `Lease/${m.lease}`,
        message: `replica ${m.name} holds ${heldText(holds)} but has not renewed its membership Lease ${when}: it lapses ${m.durationSeconds}s after a renewal, and ${CLOCK_SKEW_MS / 1000}s more are allowed for the clocks of this machine and the replicas`,
        action: `if its pod is gone or hung, ${takeOver}; once it is gone for good, deleting its Lease tells the others at once: kubectl delete lease ${m.lease} -n ${state.namespace}`,
        ...(m.renewTime ? { since: m.renewTime } : {}),
      },
    ];
  });
}

/** A replica in the summary: live or not, what it holds; `lease` undefined: a holder named by key Leases that has no membership Lease. */
export interface ReplicaSummary {
  name: string;
  live: boolean;
  lease?: string;
  renewTime?: string;
  clusters: number;
  namespaces: number;
}

export interface ShardSummary {
  /** The namespace of the Leases. */
  namespace: string;
  replicas: ReplicaSummary[];
}

/** Pure: the replicas (with a membership Lease, or named by a key Lease), sorted live first, then by name; undefined when not sharded. */
export function shardSummary(state: ShardState): ShardSummary | undefined {
  if (!isSharded(state)) return undefined;
  const held = heldByHolder(state);
  const none: HeldCount = { clusters: 0, namespaces: 0 };
  const replicas: ReplicaSummary[] = state.members.map((m) => ({ name: m.name, live: m.live, lease: m.lease, ...(m.renewTime ? { renewTime: m.renewTime } : {}), ...(held.get(m.name) ?? none) }));
  for (const [name, c] of held) if (!memberNamed(state, name)) replicas.push({ name, live: false, ...c });
  replicas.sort((a, b) => Number(b.live) - Number(a.live) || a.name.localeCompare(b.name));
  return { namespace: state.namespace, replicas };
}

/** The summary as one line: `Shards (Leases in namespace X): 2 of 3 replicas live: a holds 3 clusters, b holds nothing; not live: c holds 1 cluster`. */
export function summaryLine(s: ShardSummary): string {
  const live = s.replicas.filter((r) => r.live);
  const gone = s.replicas.filter((r) => !r.live);
  const listed = (rs: ReplicaSummary[]) => rs.map((r) => `${r.name} holds ${heldText(r)}${r.lease === undefined ? ' (no membership Lease)' : ''}`).join(', ');
  const counted = s.replicas.filter((r) => r.lease !== undefined).length;
  const head = `Shards (Leases in namespace ${s.namespace}): ${live.length} of ${counted} replica${counted === 1 ? '' : 's'} live`;
  return [head, live.length > 0 ? `: ${listed(live)}` : '', gone.length > 0 ? `; not live: ${listed(gone)}` : ''].join('');
}

/** Pure: every shard finding of what was read; `leasesRefused`: the operator Leases could not be listed either (a warning already says so). */
export function shardFindings(read: ShardRead, objects: readonly KubeObject[], now: number, leasesRefused = false): Finding[] {
  if (read.ok) return [...replicasNotRenewing(read.state, now), ...unheldKeys(read.state, objects, now)];
  if (leasesRefused || objects.length === 0) return [];
  return [
    {
      problem: 'CannotCheck',
      severity: 'warning',
      namespace: '',
      object: '-',
      message: `cannot tell which replica holds what (run --shards): listing Leases in namespace ${read.namespace} is refused (${read.message})`,
      action: `ask for list on leases.coordination.k8s.io in namespace ${read.namespace}, or name the operator's namespace with --operator-namespace`,
    },
  ];
}
