import { randomBytes } from 'node:crypto';
import type { KubeClient } from '../kube/client.js';
import type { KubeObject } from '../kube/resources.js';
import { silentLogger, type Logger } from './logger.js';

export type EventType = 'Normal' | 'Warning';

/** Events being sent at once; more wait their turn. */
const MAX_IN_FLIGHT = 16;
/** Events waiting for their turn; past this, new ones are dropped (and logged), as client-go's broadcaster does. */
const MAX_WAITING = 1000;

/**
 * Records Kubernetes Events (core/v1) on objects. The same reason and message
 * for the same object within `dedupeMs` is recorded once: an Event is a write.
 * Failures are logged, never thrown: an Event must not fail a reconcile. An
 * Event is best effort, as client-go's are: a caller need not wait for it
 * (record() resolves once it is sent, failed or dropped), and at most
 * MAX_IN_FLIGHT are sent at once, the others queued.
 */
export class EventRecorder {
  private readonly recent = new Map<string, number>();
  private inFlight = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(
    private readonly client: KubeClient,
    private readonly component = 'syncprims',
    private readonly log: Logger = silentLogger,
    private readonly dedupeMs = 10 * 60_000,
  ) {}

  async record(obj: KubeObject, type: EventType, reason: string, message: string): Promise<void> {
    const namespace = obj.metadata.namespace ?? 'default';
    const id = `${obj.metadata.uid}|${reason}|${message}`;
    const now = Date.now();
    const last = this.recent.get(id);
    if (last !== undefined && now - last < this.dedupeMs) return;
    this.recent.set(id, now);
    if (this.recent.size > 10_000) this.prune(now);
    const time = new Date(now).toISOString();
    if (!(await this.turn())) {
      this.recent.delete(id); // not sent: the same Event later is recorded
      this.log.warn({ reason, waiting: this.waiting.length }, 'an Event was dropped: too many waiting to be sent');
      return;
    }
    try {
      await this.client.request({
        method: 'POST',
        path: `/api/v1/namespaces/${namespace}/events`,
        body: {
          apiVersion: 'v1',
          kind: 'Event',
          metadata: { name: `${obj.metadata.name}.${randomBytes(6).toString('hex')}`, namespace },
          involvedObject: {
            apiVersion: obj.apiVersion,
            kind: obj.kind,
            name: obj.metadata.name,
            namespace: obj.metadata.namespace,
            uid: obj.metadata.uid,
            resourceVersion: obj.metadata.resourceVersion,
          },
          type,
          reason,
          message: message.slice(0, 1024),
          source: { component: this.component },
          reportingComponent: this.component,
          reportingInstance: this.component,
          firstTimestamp: time,
          lastTimestamp: time,
          count: 1,
        },
        timeoutMs: 10_000,
      });
    } catch (err) {
      this.log.warn({ err: String(err), reason }, 'could not record an Event');
    } finally {
      this.inFlight--;
      this.waiting.shift()?.();
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

  private prune(now: number): void {
    for (const [id, at] of this.recent) if (now - at >= this.dedupeMs) this.recent.delete(id);
  }
}
