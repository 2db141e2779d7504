import { ageOf } from '../format.js';
import type { Style } from '../terminal.js';
import { lastSeenAt, objectOf, type EventObject, type FoundEvent } from '../../views/events-order.js';

/** The table of `syncprims events`, as `kubectl events` prints it. */

export const EVENT_HEADER = ['LAST SEEN', 'TYPE', 'REASON', 'OBJECT', 'MESSAGE'];

/** `45s`, or `45s (x3 over 10m)` for an Event seen more than once. */
export function lastSeen(e: EventObject, now: number): string {
  const age = ageOf(lastSeenAt(e), now);
  const count = e.series?.count ?? e.count ?? 1;
  if (count <= 1) return age;
  const first = e.firstTimestamp || e.eventTime || undefined;
  return first ? `${age} (x${count} over ${ageOf(first, now)})` : `${age} (x${count})`;
}

/** One table row; a Warning stands out on a terminal. */
export function eventRow(found: FoundEvent, namespace: string, style: Style, now: number): string[] {
  const e = found.event;
  const type = e.type ?? '';
  return [
    lastSeen(e, now),
    type === 'Warning' ? style.yellow(type) : type,
    e.reason ?? '',
    objectOf(found, namespace),
    (e.message ?? '').replace(/\s*\n\s*/g, ' ').trim(),
  ];
}
