import { randomBytes } from 'node:crypto';
import type { KubeClient } from '../kube/client.js';
import type { KubeObject } from '../kube/resources.js';
import { silentLogger, type Logger } from './logger.js';

export type EventType = 'Normal' | 'Warning';

/**
 * Records Kubernetes Events (core/v1) on objects. The same reason and message
 * for the same object within `dedupeMs` is recorded once: an Event is a write.
 * Failures are logged, never thrown: an Event must not fail a reconcile.
 */
export class EventRecorder {
  private readonly recent = new Map<string, number>();

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
    }
  }

  private prune(now: number): void {
    for (const [id, at] of this.recent) if (now - at >= this.dedupeMs) this.recent.delete(id);
  }
}
