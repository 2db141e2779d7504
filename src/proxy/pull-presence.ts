// Whether a pull cluster is online, from the Lease its downstream operator
// renews in its assignments namespace (PULL_LEASE): pure, for the ProxySync
// reconciler (which reads the Lease) and `get clusters`.
import type { KubeObject } from '../kube/resources.js';

/** Online until `until`; or offline, last seen at `lastSeen` (undefined: never). */
export type Presence = { online: true; until: number } | { online: false; lastSeen?: string };

/** The presence a Lease says at `now` (ms): its renewTime plus its duration. */
export function presenceOf(lease: KubeObject | undefined, now: number): Presence {
  const spec = (lease as { spec?: { renewTime?: unknown; leaseDurationSeconds?: unknown } } | undefined)?.spec;
  const renewed = typeof spec?.renewTime === 'string' ? Date.parse(spec.renewTime) : NaN;
  if (Number.isNaN(renewed)) return { online: false };
  const seconds = typeof spec?.leaseDurationSeconds === 'number' && spec.leaseDurationSeconds > 0 ? spec.leaseDurationSeconds : 0;
  const until = renewed + seconds * 1000;
  return until > now ? { online: true, until } : { online: false, lastSeen: new Date(renewed).toISOString() };
}

/** What a ProxySync says of its pull cluster offline. */
export function offlineMessage(cluster: string, presence: { lastSeen?: string }, now: number): string {
  const since = presence.lastSeen
    ? `last seen ${presence.lastSeen} (${Math.round((now - Date.parse(presence.lastSeen)) / 1000)} s ago)`
    : 'never seen (its operator has not joined: syncprims join, or syncprims run --upstream-kubeconfig)';
  return `pull cluster ${cluster} is offline: ${since}; what it applied keeps running there, and it takes what changed when it connects again`;
}
