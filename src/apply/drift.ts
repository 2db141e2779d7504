import type { KubeObject } from '../kube/resources.js';
import { objectId } from './inventory.js';
import { changersOf, displayPath, lostFields, ourEntry } from './managed-fields.js';

/** Someone else changed fields we own of an owned object (seen in a watch event). */
export interface Drift {
  /** The object id (inventory form). */
  id: string;
  /** The fields we lost (`.data.a`). */
  fields: string[];
  /** The field managers that took them (or, where they were removed, that wrote last). */
  managers: string[];
  /** The whole object was deleted by someone else (a delete names no manager): `fields` and `managers` are empty. */
  deleted?: true;
}

/**
 * The drift an update shows: our Apply entry lost fields (or went) while
 * its time stayed, so the change was not our apply but someone else's.
 * Our own applies move our entry's time and are not drift.
 */
export function driftOf(before: KubeObject | undefined, after: KubeObject): Drift | undefined {
  const was = ourEntry(before);
  if (!was?.fieldsV1) return undefined;
  const now = ourEntry(after);
  if (now && now.time !== was.time) return undefined;
  const lost = lostFields(was.fieldsV1, now?.fieldsV1);
  if (lost.length === 0) return undefined;
  return { id: objectId(after), fields: lost.map(displayPath), managers: changersOf(after, lost) };
}

/** The drifts of an owner due for correction now, and when the first of the others (backed off) is due. */
export interface DueDrifts {
  due: Drift[];
  waitMs?: number;
}

/** The first correction waits for nothing; each next one within reach of the last waits twice as long, up to `interval`. */
const FIRST_BACKOFF_MS = 1000;

interface Corrections {
  count: number;
  last: number;
}

/**
 * Drifts seen per owner until its reconcile takes them, and how often each
 * object was corrected lately: a controller that keeps changing a field we
 * own (an HPA and `replicas`) is not fought in a hot loop.
 */
export class DriftLedger {
  private readonly pending = new Map<string, Map<string, Drift>>();
  private readonly corrections = new Map<string, Corrections>();

  /** Records a drift of an object of `owner` (`Kind/namespace/name`); a later one replaces an earlier one. */
  flag(owner: string, drift: Drift): void {
    let drifts = this.pending.get(owner);
    if (!drifts) this.pending.set(owner, (drifts = new Map()));
    const earlier = drifts.get(drift.id);
    drifts.set(drift.id, earlier ? merge(earlier, drift) : drift);
  }

  /**
   * The drifts of `owner` due for correction now (taken); the others stay,
   * and `waitMs` says when the first of them is due.
   */
  take(owner: string, intervalMs: number, now = Date.now()): DueDrifts {
    const drifts = this.pending.get(owner);
    if (!drifts) return { due: [] };
    const due: Drift[] = [];
    let waitMs: number | undefined;
    for (const d of drifts.values()) {
      const wait = this.allowedAt(d.id, intervalMs) - now;
      if (wait <= 0) {
        due.push(d);
        drifts.delete(d.id);
      } else waitMs = Math.min(waitMs ?? wait, wait);
    }
    if (drifts.size === 0) this.pending.delete(owner);
    return { due, waitMs };
  }

  /** The drift of object `id` of `owner` waiting, backed off, for its correction, if one is. */
  waiting(owner: string, id: string): Drift | undefined {
    return this.pending.get(owner)?.get(id);
  }

  /** Every drift of `owner`, due or not (taken): a full apply corrects them all. */
  takeAll(owner: string): Drift[] {
    const drifts = this.waitingOf(owner);
    this.pending.delete(owner);
    return drifts;
  }

  /** The drifts of `owner` waiting, backed off, for their correction (after `take`, the ones not due). */
  waitingOf(owner: string): Drift[] {
    return [...(this.pending.get(owner)?.values() ?? [])];
  }

  /** An object was corrected: how many times lately, and how long the next correction waits. */
  corrected(id: string, intervalMs: number, now = Date.now()): { count: number; nextMs: number } {
    const prev = this.corrections.get(id);
    const count = prev && now - prev.last <= 2 * backoffMs(prev.count, intervalMs) ? prev.count + 1 : 1;
    this.corrections.set(id, { count, last: now });
    return { count, nextMs: backoffMs(count, intervalMs) };
  }

  /** The object went: its corrections are forgotten. */
  forgetObject(id: string): void {
    this.corrections.delete(id);
  }

  /** The owner went: its pending drifts are forgotten. */
  forgetOwner(owner: string): void {
    this.pending.delete(owner);
  }

  private allowedAt(id: string, intervalMs: number): number {
    const c = this.corrections.get(id);
    return c ? c.last + backoffMs(c.count, intervalMs) : 0;
  }
}

/** The wait after the `count`th correction in a row: 1 s, 2 s, 4 s... up to `interval`. */
export function backoffMs(count: number, intervalMs: number): number {
  return Math.min(FIRST_BACKOFF_MS * 2 ** Math.max(0, count - 1), intervalMs);
}

function merge(a: Drift, b: Drift): Drift {
  if (b.deleted) return b; // whatever changed before, the object is gone now
  return { id: b.id, fields: [...new Set([...a.fields, ...b.fields])], managers: [...new Set([...a.managers, ...b.managers])].sort() };
}
