// The Lease that says an operator is alive, for `syncprims doctor`.
//
// With --leader-elect the leader Lease says it (the manager labels it as
// below). Without, the operator holds a Lease of its own, `syncprims-operator`,
// in the namespace it watches (or, watching all, in the leader election
// namespace), by the same leader-election code: it takes the Lease, renews it
// every retry period, and releases it on a clean shutdown; after a crash it
// lapses, leaseDurationSeconds after its renewTime. The Lease gates nothing: a
// second operator on the same Lease waits as a standby of the Lease only, and
// reconciles all the same. Lease renewals are not "writes" (API.md).
//
// Both Leases carry the labels below, so that they are found with one list:
// `syncprims.dev/operator-lease=true`, and `syncprims.dev/watch-namespace`
// (the namespace the operator watches; empty when it watches all).
import { sleep } from './backoff.js';
import { LeaderElector, MissingNamespaceError, type LeaseClient } from './leader-election.js';
import type { Logger } from './logger.js';

/** On every Lease that says an operator is alive. */
export const OPERATOR_LEASE_LABEL = 'syncprims.dev/operator-lease';
/** The namespace the operator holding the Lease watches; empty when it watches all. */
export const WATCH_NAMESPACE_LABEL = 'syncprims.dev/watch-namespace';
/** The Lease of an operator that runs without leader election. */
export const LIVENESS_LEASE_NAME = 'syncprims-operator';
/** As the leader Lease's (API.md): 15 s. */
export const DEFAULT_LIVENESS_LEASE_MS = 15_000;

/** The labels of an operator's Lease; `watchNamespace` undefined: it watches all namespaces. */
export function operatorLeaseLabels(watchNamespace: string | undefined): Record<string, string> {
  return { [OPERATOR_LEASE_LABEL]: 'true', [WATCH_NAMESPACE_LABEL]: watchNamespace ?? '' };
}

/** The renew deadline and retry period of a lease duration, in the leader Lease's proportions (15 s, 10 s, 2 s). */
export function livenessTimings(leaseDurationMs: number): { leaseDurationMs: number; renewDeadlineMs: number; retryPeriodMs: number } {
  return { leaseDurationMs, renewDeadlineMs: (leaseDurationMs * 2) / 3, retryPeriodMs: (leaseDurationMs * 2) / 15 };
}

/** How long to wait before trying again to create the Lease in a namespace that did not exist. */
const MISSING_NAMESPACE_RETRY_MS = 30_000;

export interface LivenessLeaseOptions {
  client: LeaseClient;
  namespace: string;
  name?: string;
  identity: string;
  /** The namespace the operator watches; undefined: all. */
  watchNamespace: string | undefined;
  leaseDurationMs?: number;
  logger: Logger;
}

export class LivenessLease {
  private readonly elector: LeaderElector;
  private readonly stopping = new AbortController();
  private running?: Promise<void>;
  private readonly log: Logger;
  private readonly description: string;

  constructor(private readonly opts: LivenessLeaseOptions) {
    const name = opts.name ?? LIVENESS_LEASE_NAME;
    this.description = `${opts.namespace}/${name}`;
    this.log = opts.logger.child({ lease: this.description });
    this.elector = new LeaderElector({
      client: opts.client,
      namespace: opts.namespace,
      name,
      identity: opts.identity,
      ...livenessTimings(opts.leaseDurationMs ?? DEFAULT_LIVENESS_LEASE_MS),
      labels: operatorLeaseLabels(opts.watchNamespace),
      // Its "leading" is only holding the Lease: its own info lines would read as leader election's.
      logger: this.log.child({}, { level: this.log.level === 'info' ? 'warn' : this.log.level }),
      onStartedLeading: () => this.log.info('holding the liveness Lease'),
      onStoppedLeading: () => undefined,
    });
  }

  /** Takes the Lease and keeps renewing it until release(); never throws. */
  start(): void {
    this.running ??= this.keep();
  }

  /** Stops renewing and gives the Lease up, so that it shows at once that this operator is gone. */
  async release(): Promise<void> {
    this.stopping.abort();
    await this.running;
    if (await this.elector.release().catch(() => false)) this.log.info('released the liveness Lease');
  }

  private async keep(): Promise<void> {
    const signal = this.stopping.signal;
    let told = false;
    while (!signal.aborted) {
      try {
        await this.elector.run(signal);
        // It returns when renewing failed for the renew deadline (the API server was out of reach): take the Lease again.
        if (!signal.aborted) this.log.warn('could not renew the liveness Lease in time: taking it again');
      } catch (err) {
        if (!(err instanceof MissingNamespaceError)) {
          this.log.warn({ err: String(err) }, 'liveness Lease failed: trying again');
        } else if (!told) {
          told = true;
          this.log.warn(
            { namespace: this.opts.namespace, retryMs: MISSING_NAMESPACE_RETRY_MS },
            `namespace ${this.opts.namespace} does not exist, so the liveness Lease ${this.description} cannot be created: ` +
              '`syncprims doctor` will say that no operator runs; create the namespace (it is tried again every 30 s) or pass --leader-election-namespace',
          );
        }
        await sleep(MISSING_NAMESPACE_RETRY_MS, signal);
        continue;
      }
      await sleep(1_000, signal);
    }
  }
}
