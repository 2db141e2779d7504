// Who holds what under `syncprims run --shards` (docs/shards.md, "Who holds what"), from the
// Leases of the operator's namespace as one LIST returns them: the membership Lease each
// replica renews, and the Lease of each shard key (a remote cluster, or a namespace of local
// syncs) naming the replica that holds it. A key Lease is written only when the key changes
// hands: it is good while its holder's membership Lease is renewed. Pure; `get clusters`
// (SHARD) and `doctor` read it. Times are compared with this machine's clock, allowing
// CLOCK_SKEW_MS for the clocks of the replicas that wrote them.
import { KEY_LEASE_PREFIXES, memberLeaseName, SHARD_KEY_ANNOTATION, SHARD_LEASE_LABEL, SHARD_MEMBER_LABEL, shardLeaseName, type ShardKey, type ShardKeyKind } from '../api/shard-marks.js';
import type { Lease } from '../runtime/lease-lock.js';

/** A Lease that says no leaseDurationSeconds is judged with the operator's default (15 s). */
export const DEFAULT_LEASE_SECONDS = 15;
/** How far the clocks of the replicas (which write renewTime) may be from this machine's. */
export const CLOCK_SKEW_MS = 5_000;

/** A replica, as its membership Lease says. */
export interface ShardMember {
  /** The replica's name (its instance id): the holderIdentity of its membership Lease. */
  name: string;
  /** The membership Lease's name. */
  lease: string;
  renewTime?: string;
  acquireTime?: string;
  durationSeconds: number;
  /** When it lapses unless renewed (renewTime + leaseDurationSeconds, RFC 3339); undefined without a renewTime. */
  expiresAt?: string;
  /** Renewed within its lease duration (plus CLOCK_SKEW_MS). */
  live: boolean;
}

/** A shard key's Lease. */
export interface KeyLease {
  lease: string;
  /** Its `syncprims.dev/shard-lease` label, else what its name says. */
  kind?: ShardKeyKind;
  /** Its `syncprims.dev/shard-key` annotation. */
  key?: string;
  /** The replica holding it; '' when released. */
  holder: string;
  /** When it changed hands last: its renewTime, else its acquireTime (RFC 3339). */
  since?: string;
  durationSeconds?: number;
}

/** The Leases of sharding in one namespace (the operator's). */
export interface ShardState {
  namespace: string;
  /** Every replica that has a membership Lease, live or not, sorted by name. */
  members: ShardMember[];
  /** The key Leases, by Lease name. */
  keys: Map<string, KeyLease>;
}

/** Who holds a shard key: nobody needs to (not sharded), unknown (Leases not readable), a live replica, or no live replica (and why). */
export type ShardHolding =
  | { state: 'unsharded' }
  | { state: 'unknown'; message: string }
  | { state: 'held'; holder: string; lease: string }
  | { state: 'none'; lease: string; holder?: string; why: string };

/** How a membership Lease's name begins (a key Lease's: KEY_LEASE_PREFIXES). */
const MEMBER_PREFIX = memberLeaseName('');

const labelsOf = (l: Lease): Record<string, string> => (l.metadata.labels as Record<string, string> | undefined) ?? {};
const annotationsOf = (l: Lease): Record<string, string> => (l.metadata.annotations as Record<string, string> | undefined) ?? {};

function secondsOf(l: Lease): number | undefined {
  const s = l.spec?.leaseDurationSeconds;
  return typeof s === 'number' && s > 0 ? s : undefined;
}

/** Pure: the membership Lease of a replica, judged at `now`. */
export function memberOf(l: Lease, now: number): ShardMember {
  const durationSeconds = secondsOf(l) ?? DEFAULT_LEASE_SECONDS;
  const renewed = Date.parse(l.spec?.renewTime ?? '');
  const holder = l.spec?.holderIdentity ?? '';
  const expires = Number.isNaN(renewed) ? undefined : renewed + durationSeconds * 1000;
  return {
    name: holder || l.metadata.name.slice(MEMBER_PREFIX.length),
    lease: l.metadata.name,
    ...(l.spec?.renewTime ? { renewTime: l.spec.renewTime } : {}),
    ...(l.spec?.acquireTime ? { acquireTime: l.spec.acquireTime } : {}),
    durationSeconds,
    ...(expires === undefined ? {} : { expiresAt: new Date(expires).toISOString() }),
    live: holder !== '' && expires !== undefined && expires + CLOCK_SKEW_MS > now,
  };
}

/** A key Lease's kind: its label, else what its name says. */
function keyKindOf(l: Lease): ShardKeyKind | undefined {
  const label = labelsOf(l)[SHARD_LEASE_LABEL];
  if (label === 'cluster' || label === 'namespace') return label;
  return (Object.keys(KEY_LEASE_PREFIXES) as ShardKeyKind[]).find((k) => l.metadata.name.startsWith(KEY_LEASE_PREFIXES[k]));
}

function keyLeaseOf(l: Lease): KeyLease {
  const kind = keyKindOf(l);
  const key = annotationsOf(l)[SHARD_KEY_ANNOTATION];
  const since = l.spec?.renewTime ?? l.spec?.acquireTime ?? undefined;
  const durationSeconds = secondsOf(l);
  return {
    lease: l.metadata.name,
    ...(kind === undefined ? {} : { kind }),
    ...(key === undefined ? {} : { key }),
    holder: l.spec?.holderIdentity ?? '',
    ...(since ? { since } : {}),
    ...(durationSeconds === undefined ? {} : { durationSeconds }),
  };
}

/** Pure: the sharding Leases among `leases` (every Lease of the operator's namespace), judged at `now`. */
export function shardStateOf(namespace: string, leases: readonly Lease[], now: number): ShardState {
  const members = leases
    .filter((l) => labelsOf(l)[SHARD_MEMBER_LABEL] === 'true')
    .map((l) => memberOf(l, now))
    .sort((a, b) => a.name.localeCompare(b.name));
  // Looked up by name (shardLeaseName), so a key Lease counts whatever its label says.
  const keys = new Map(leases.filter((l) => keyKindOf(l) !== undefined).map((l) => [l.metadata.name, keyLeaseOf(l)]));
  return { namespace, members, keys };
}

/** Sharded: some replica has a membership Lease (live or not). */
export function isSharded(state: ShardState): boolean {
  return state.members.length > 0;
}

/** The replica `name`'s membership, found by its Lease's name (memberLeaseName). */
export function memberNamed(state: ShardState, name: string): ShardMember | undefined {
  const lease = memberLeaseName(name);
  return state.members.find((m) => m.lease === lease);
}

/** Why the holder of a key Lease is not live, for a message. */
function notLive(member: ShardMember | undefined, holder: string): string {
  if (!member) return `its holder ${holder} is not live: its membership Lease ${memberLeaseName(holder)} is gone`;
  const when = member.renewTime ? `last renewed at ${member.renewTime}` : 'never renewed';
  return `its holder ${holder} is not live: its membership Lease was ${when} (lease ${member.durationSeconds}s)`;
}

/** Pure: who holds `key` (not sharded: nobody needs to). */
export function holdingOf(state: ShardState, key: ShardKey): ShardHolding {
  if (!isSharded(state)) return { state: 'unsharded' };
  const lease = shardLeaseName(key);
  const found = state.keys.get(lease);
  if (!found) return { state: 'none', lease, why: `its Lease ${state.namespace}/${lease} does not exist` };
  if (found.holder === '') return { state: 'none', lease, why: `its Lease ${state.namespace}/${lease} is released (no holder)` };
  const member = memberNamed(state, found.holder);
  if (member?.live) return { state: 'held', holder: found.holder, lease };
  return { state: 'none', lease, holder: found.holder, why: notLive(member, found.holder) };
}

/** A SHARD cell: `-` not sharded, `?` the Leases could not be read, the holder, or `(none)`: no live replica holds it. */
export function shardCell(h: ShardHolding): string {
  switch (h.state) {
    case 'unsharded':
      return '-';
    case 'unknown':
      return '?';
    case 'held':
      return h.holder;
    case 'none':
      return '(none)';
  }
}

/** How many keys each replica's name holds, by kind (every key Lease of the namespace, whoever holds it). */
export interface HeldCount {
  clusters: number;
  namespaces: number;
}

/** Pure: the keys each holder named by a key Lease holds (live or not); released Leases count for nobody. */
export function heldByHolder(state: ShardState): Map<string, HeldCount> {
  const counts = new Map<string, HeldCount>();
  for (const k of state.keys.values()) {
    if (k.holder === '') continue;
    const c = counts.get(k.holder) ?? { clusters: 0, namespaces: 0 };
    if (k.kind === 'namespace') c.namespaces++;
    else c.clusters++;
    counts.set(k.holder, c);
  }
  return counts;
}
