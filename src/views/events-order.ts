import type { KubeObject } from '../kube/resources.js';

/** Events in time order, as `kubectl events` orders them; what each one is about. */

export interface EventObject extends KubeObject {
  involvedObject?: { apiVersion?: string; kind?: string; name?: string; namespace?: string; uid?: string };
  reason?: string;
  message?: string;
  type?: string;
  count?: number;
  firstTimestamp?: string | null;
  lastTimestamp?: string | null;
  eventTime?: string | null;
  series?: { count?: number; lastObservedTime?: string } | null;
}

/** An Event and the cluster it was found in (undefined: the managing cluster). */
export interface FoundEvent {
  event: EventObject;
  cluster?: string;
}

/**
 * When an Event was last seen, as kubectl orders them: the series' last
 * observation, else lastTimestamp, else eventTime (events.k8s.io), else
 * firstTimestamp, else when the Event object was created.
 */
export function lastSeenAt(e: EventObject): string | undefined {
  return e.series?.lastObservedTime || e.lastTimestamp || e.eventTime || e.firstTimestamp || (e.metadata.creationTimestamp as string | undefined) || undefined;
}

function millis(timestamp: string | undefined): number {
  const at = timestamp ? Date.parse(timestamp) : NaN;
  return Number.isNaN(at) ? 0 : at;
}

/** Oldest first (the newest at the bottom, next to the prompt); ties by first seen, then by name. */
export function inTimeOrder<T extends FoundEvent>(events: readonly T[]): T[] {
  const key = (f: FoundEvent) => [millis(lastSeenAt(f.event)), millis(f.event.firstTimestamp ?? f.event.eventTime ?? undefined)] as const;
  return [...events].sort((a, b) => {
    const [la, fa] = key(a);
    const [lb, fb] = key(b);
    return la - lb || fa - fb || (a.event.metadata.name ?? '').localeCompare(b.event.metadata.name ?? '');
  });
}

/**
 * `Kind/name` of the Event's object; `Kind/namespace/name` when it is in
 * another namespace than the sync's; `[cluster] ...` when it is in a remote
 * cluster.
 */
export function objectOf(found: FoundEvent, namespace: string): string {
  const o = found.event.involvedObject ?? {};
  const where = o.namespace && o.namespace !== namespace ? `${o.namespace}/` : '';
  const name = `${o.kind ?? '?'}/${where}${o.name ?? '?'}`;
  return found.cluster === undefined ? name : `[${found.cluster}] ${name}`;
}
