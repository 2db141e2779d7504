import { createHash, randomBytes } from 'node:crypto';
import type { KubeClient } from '../kube/client.js';
import { ApiError } from '../kube/errors.js';
import type { KubeObject } from '../kube/resources.js';
import { silentLogger, type Logger } from './logger.js';
import { collectionPath, CORE, objectPath } from '../kube/resources.js';

export type EventType = 'Normal' | 'Warning';

/** Events being sent at once; more wait their turn. */
const MAX_IN_FLIGHT = 16;
/** Events waiting for their turn; past this, new ones are dropped (and logged), as client-go's broadcaster does. */
const MAX_WAITING = 1000;

/**
 * Events on one object, as client-go's spam filter allows them: a burst of 25,
 * then one per 5 minutes. A message that changes at each retry (an error that
 * quotes a request id, say) is not a duplicate, and would otherwise send an
 * Event per retry for as long as the failure lasts.
 */
export const DEFAULT_EVENT_BURST = 25;
export const DEFAULT_EVENT_REFILL_MS = 5 * 60_000;

/**
 * How long an Event is remembered after it was last written, to count its
 * repeats on it: the API server's default `--event-ttl` (it deletes an Event
 * that long after its last write).
 */
const EVENT_TTL_MS = 60 * 60_000;

export interface EventRecorderOptions {
  /** The Events' source component. Default `syncprims`. */
  component?: string;
  log?: Logger;
  /** The same reason and message for the same object within this is written once. Default 10 minutes. */
  dedupeMs?: number;
  /** Events one object may have at once, before they are limited to one per `refillMs`. Default 25. */
  burst?: number;
  refillMs?: number;
  /** Milliseconds; default Date.now. */
  now?: () => number;
}

/** An Event written: its object's name, when it was last written, and how often it happened since it was created. */
interface Written {
  name: string;
  at: number;
  count: number;
}

/**
 * Records Kubernetes Events (core/v1) on objects, as client-go's recorder
 * does: a repeat of an Event (same object, type, reason and message) counts on
 * the Event already there (`count`, `lastTimestamp`: kubectl shows `x3 over
 * 30m`), and one object has at most `burst` Event writes, then one per
 * `refillMs` (the others are dropped, at debug level in the log). Unlike
 * client-go, a repeat within `dedupeMs` of the last write is only counted, and
 * written with the next one: an Event is a write. Failures are logged, never
 * thrown: an Event must not fail a reconcile. An Event is best effort, as
 * client-go's are: a caller need not wait for it (record() resolves once it is
 * sent, failed or dropped), and at most MAX_IN_FLIGHT are sent at once, the
 * others queued.
 */
export class EventRecorder {
  /** The Events written in the last hour, by a hash of (object, type, reason, message); the least recently written first. */
  private readonly written = new Map<string, Written>();
  /** Per object (uid): the Events it may still have, as of `at`; the least recently used first. */
  private readonly budgets = new Map<string, { tokens: number; at: number }>();
  private inFlight = 0;
  private readonly waiting: (() => void)[] = [];
  private readonly component: string;
  private readonly log: Logger;
  private readonly dedupeMs: number;
  private readonly burst: number;
  private readonly refillMs: number;
  private readonly now: () => number;

  constructor(
    private readonly client: KubeClient,
    opts: EventRecorderOptions = {},
  ) {
    this.component = opts.component ?? 'syncprims';
    this.log = opts.log ?? silentLogger;
    this.dedupeMs = opts.dedupeMs ?? 10 * 60_000;
    this.burst = opts.burst ?? DEFAULT_EVENT_BURST;
    this.refillMs = opts.refillMs ?? DEFAULT_EVENT_REFILL_MS;
    this.now = opts.now ?? Date.now;
  }

  async record(obj: KubeObject, type: EventType, reason: string, message: string): Promise<void> {
    const namespace = obj.metadata.namespace ?? 'default';
    const uid = obj.metadata.uid ?? `${namespace}/${obj.kind}/${obj.metadata.name}`;
    const key = createHash('sha256').update(`${uid}\0${type}\0${reason}\0${message}`).digest('base64');
    const now = this.now();
    forgetUntil(this.written, now - EVENT_TTL_MS, (w) => w.at);
    const before = this.written.get(key);
    if (before && now - before.at < this.dedupeMs) {
      before.count++; // counted, written with the next repeat
      return;
    }
    if (!this.take(uid, now)) {
      if (before) before.count++;
      this.log.debug({ reason, kind: obj.kind, namespace, name: obj.metadata.name }, `an Event was dropped: more than ${this.burst} on this object (then one per ${this.refillMs / 1000}s)`);
      return;
    }
    const event: Written = before ? { name: before.name, at: now, count: before.count + 1 } : { name: eventName(obj), at: now, count: 1 };
    touch(this.written, key, event);
    if (!(await this.turn())) {
      // Not sent: the same Event later is written (and counts this one).
      if (before) touch(this.written, key, { ...before, count: event.count });
      else this.written.delete(key);
      this.log.warn({ reason, waiting: this.waiting.length }, 'an Event was dropped: too many waiting to be sent');
      return;
    }
    const time = new Date(now).toISOString();
    try {
      if (before && (await this.countRepeat(namespace, event, time))) return;
      if (before) Object.assign(event, { name: eventName(obj), count: 1 }); // the one we knew has expired
      await this.create(obj, event.name, { type, reason, message }, time);
    } catch (err) {
      this.log.warn({ err: String(err), reason }, 'could not record an Event');
    } finally {
      this.inFlight--;
      this.waiting.shift()?.();
    }
  }

  /** Creates the Event, seen once at `time`. */
  private async create(obj: KubeObject, name: string, e: { type: EventType; reason: string; message: string }, time: string): Promise<void> {
    const namespace = obj.metadata.namespace ?? 'default';
    await this.client.request({
      method: 'POST',
      path: collectionPath(CORE.events, namespace),
      body: {
        apiVersion: 'v1',
        kind: 'Event',
        metadata: { name, namespace },
        involvedObject: {
          apiVersion: obj.apiVersion,
          kind: obj.kind,
          name: obj.metadata.name,
          namespace: obj.metadata.namespace,
          uid: obj.metadata.uid,
          resourceVersion: obj.metadata.resourceVersion,
        },
        type: e.type,
        reason: e.reason,
        message: e.message.slice(0, 1024),
        source: { component: this.component },
        reportingComponent: this.component,
        reportingInstance: this.component,
        firstTimestamp: time,
        lastTimestamp: time,
        count: 1,
      },
      timeoutMs: 10_000,
    });
  }

  /** Writes a repeat's count on the Event already there; false when it is gone (expired, or deleted). */
  private async countRepeat(namespace: string, event: Written, time: string): Promise<boolean> {
    try {
      await this.client.request({
        method: 'PATCH',
        path: objectPath(CORE.events, event.name, namespace),
        contentType: 'application/merge-patch+json',
        body: { count: event.count, lastTimestamp: time },
        timeoutMs: 10_000,
      });
      return true;
    } catch (err) {
      if (err instanceof ApiError && err.status === 404) return false;
      throw err;
    }
  }

  /** Resolves with true when this Event may be sent (counted in flight), false when too many wait already. */
  private turn(): Promise<boolean> {
    if (this.inFlight < MAX_IN_FLIGHT) {
      this.inFlight++;
      return Promise.resolve(true);
    }
    if (this.waiting.length >= MAX_WAITING) return Promise.resolve(false);
    return new Promise((resolve) =>
      this.waiting.push(() => {
        this.inFlight++;
        resolve(true);
      }),
    );
  }

  /** Takes one of the object's Events, if it has one left (refilled one per refillMs, up to burst). */
  private take(uid: string, now: number): boolean {
    const budget = this.budgets.get(uid) ?? { tokens: this.burst, at: now };
    const refilled = Math.min(this.burst, budget.tokens + Math.max(0, now - budget.at) / this.refillMs);
    const allowed = refilled >= 1;
    touch(this.budgets, uid, { tokens: allowed ? refilled - 1 : refilled, at: now });
    // Untouched for burst × refillMs, a budget is full again: as if the object was never seen.
    forgetUntil(this.budgets, now - this.burst * this.refillMs, (b) => b.at);
    return allowed;
  }
}

/** A new Event's name: its object's, and 12 random hex digits. */
function eventName(obj: KubeObject): string {
  return `${obj.metadata.name}.${randomBytes(6).toString('hex')}`;
}

/** Sets a key as the newest of a map kept in the order its keys were last set. */
function touch<V>(map: Map<string, V>, key: string, value: V): void {
  map.delete(key);
  map.set(key, value);
}

/** Forgets the oldest entries of such a map, up to those set after `until` (amortized O(1) per call). */
function forgetUntil<V>(map: Map<string, V>, until: number, at: (value: V) => number): void {
  for (const [key, value] of map) {
    if (at(value) > until) return;
    map.delete(key);
  }
}
