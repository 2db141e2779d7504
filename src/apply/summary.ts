/**
 * Health of a whole set of objects: counts for `status.summary`, and a short message naming the
 * least ready objects, small enough for a condition however many objects there are.
 */
import { KSTATUS_ORDER, type KStatus } from '../api/conditions.js';
import type { Summary } from '../api/status.js';
import { parseObjectId, type ObjectRef } from './inventory.js';

// KStatus, not health.ts's HealthStatus (the same type): health.ts re-exports this module.
type HealthStatus = KStatus;

const RANK: Readonly<Record<HealthStatus, number>> = Object.fromEntries(
  KSTATUS_ORDER.map((status, index) => [status, index]),
) as Record<HealthStatus, number>;

/** Least ready first: NotFound < Failed < Terminating < Unknown < InProgress < Current. */
export function compareHealth(a: HealthStatus, b: HealthStatus): number {
  return RANK[a] - RANK[b];
}

/** Counts per status, and the least ready status (Current for an empty set). */
export function summarize(statuses: readonly HealthStatus[]): Summary {
  const summary = { total: 0, current: 0, inProgress: 0, failed: 0, terminating: 0, notFound: 0, unknown: 0 };
  let leastStatus: HealthStatus = 'Current';
  for (const status of statuses) {
    summary.total += 1;
    summary[COUNTER[status]] += 1;
    if (compareHealth(status, leastStatus) < 0) leastStatus = status;
  }
  return { ...summary, leastStatus };
}

const COUNTER = {
  Current: 'current',
  InProgress: 'inProgress',
  Failed: 'failed',
  Terminating: 'terminating',
  NotFound: 'notFound',
  Unknown: 'unknown',
} as const satisfies Record<HealthStatus, keyof Omit<Summary, 'total' | 'leastStatus'>>;

export interface HealthEntry {
  /** Inventory id: `<namespace>_<name>_<group>_<kind>`. */
  id: string;
  status: HealthStatus;
  message: string;
}

/** Each object's reason is cut to this many characters in `leastReady`. */
export const MAX_REASON_LENGTH = 160;

/**
 * A short message naming the first `max` objects that are not Current, least ready first
 * (stable within one status), and why; the rest as "and N more". Empty when all are Current.
 * `Deployment team-a/web (InProgress): 0 of 2 replicas available; Job team-a/migrate (Failed): …; and 3 more`
 */
export function leastReady(entries: readonly HealthEntry[], max = 5): string {
  const pending = entries.filter((e) => e.status !== 'Current').sort((a, b) => compareHealth(a.status, b.status));
  if (pending.length === 0) return '';
  const shown = pending.slice(0, Math.max(0, Math.floor(max)));
  if (shown.length === 0) return `${pending.length} objects not Current`;
  const parts = shown.map(describeEntry);
  const rest = pending.length - shown.length;
  if (rest > 0) parts.push(`and ${rest} more`);
  return parts.join('; ');
}

function describeEntry(entry: HealthEntry): string {
  const object = refOf(entry.id);
  const who = object ? `${object.kind} ${object.namespace ? `${object.namespace}/` : ''}${object.name}` : entry.id;
  const reason = reasonOf(entry, object);
  return reason ? `${who} (${entry.status}): ${reason}` : `${who} (${entry.status})`;
}

/** The message without computeHealth's `<Kind> <name>: ` prefix (the id already names it). */
function reasonOf(entry: HealthEntry, object: ObjectRef | undefined): string {
  let reason = entry.message.replace(/\s+/g, ' ').trim();
  if (squash(reason) === squash(entry.status)) return ''; // "(NotFound): not found" says it twice
  const prefix = object ? `${object.kind} ${object.name}: ` : undefined;
  if (prefix && reason.startsWith(prefix)) reason = reason.slice(prefix.length);
  return reason.length <= MAX_REASON_LENGTH ? reason : `${reason.slice(0, MAX_REASON_LENGTH - 1)}…`;
}

function squash(text: string): string {
  return text.replace(/[\s.]/g, '').toLowerCase();
}

/** The object an inventory id names, or undefined for an id that is not one. */
function refOf(id: string): ObjectRef | undefined {
  try {
    return parseObjectId(id);
  } catch {
    return undefined;
  }
}
