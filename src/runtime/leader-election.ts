// Leader election on a coordination.k8s.io/v1 Lease, after client-go's
// leaderelection package with a LeaseLock:
//
// - A candidate reads the Lease every retry period (a standby writes nothing)
//   and takes it when it is free or has expired. Expiry is judged by OUR clock
//   only: we remember the record we last saw and when we first saw it (on a
//   monotonic clock); the lease lapses leaseDurationSeconds after that moment
//   unless the record changes. The other process's timestamps are never
//   compared with ours.
// - The leader renews every retry period. When it has not managed to renew for
//   renewDeadline (shorter than the lease), or it sees another holder, it stops
//   leading: the signal given to onStartedLeading aborts, then
//   onStoppedLeading runs. run() then returns; like controller-runtime, the
//   caller decides what losing leadership means (usually: exit).
// - Every write is a PUT guarded by resourceVersion (or a POST that creates the
//   Lease): a conflict is just a lost race. Every request has a deadline, every
//   wait a jitter.
// - release() on clean shutdown stops the elector and, if we hold the Lease,
//   empties its holder and shortens it to 1 s so that a standby takes over at
//   once.
// - standAside (optional): a reason not to lead now, asked before each try to
//   acquire, again at once from a fresh read after the Lease was taken (and
//   then given back at once if there is one), and after each renewal (then
//   leadership ends and the Lease is given back). Replicas of the other mode
//   (`--shards`) are the reason in the operator: see runtime/shard-presence.ts.
import { performance } from 'node:perf_hooks';
import { ApiError } from '../kube/errors.js';
import { sleep } from './backoff.js';
import { LeaseLock, MissingNamespaceError, microTime, sameRecord } from './lease-lock.js';
import type { CallOptions, Lease, LeaseClient, LeaseSpec } from './lease-lock.js';
import { silentLogger, type Logger } from './logger.js';

export { MissingNamespaceError } from './lease-lock.js';
export type { Lease, LeaseClient, LeaseSpec } from './lease-lock.js';

export interface LeaderElectorOptions {
  client: LeaseClient;
  /** Namespace of the Lease; it must exist (the elector does not create it). */
  namespace: string;
  /** Name of the Lease. */
  name: string;
  /** Unique per process (e.g. pod name plus a random suffix). */
  identity: string;
  /** How long a standby waits, after it last saw the record change, before taking the Lease. */
  leaseDurationMs?: number;
  /** How long the leader keeps leading without a successful renewal. */
  renewDeadlineMs?: number;
  /** Pause between attempts to acquire or renew (stretched by up to 20% jitter). */
  retryPeriodMs?: number;
  /** Labels on the Lease (put on it when created, or missing on a write): how others find it. */
  labels?: Record<string, string>;
  /** Called on becoming leader; `signal` aborts when leadership ends. */
  onStartedLeading(signal: AbortSignal): void | Promise<void>;
  /** Called after leadership ended (after the signal aborted), before run() returns; `reason` says why. */
  onStoppedLeading(reason: string): void | Promise<void>;
  /** Called when a holder other than the last one reported is seen (ourselves included). */
  onNewLeader?(identity: string): void;
  /**
   * Why this candidate must not lead now, or undefined when it may: asked
   * before each try to acquire (`fresh` false), right after the Lease was
   * taken (`fresh` true: from what the API server says now, since what it
   * decides against may have been written a moment ago), and after each
   * renewal. A rejection counts as a reason.
   */
  standAside?(fresh: boolean): Promise<string | undefined>;
  logger?: Logger;
}

/** The outcome of one attempt to acquire or renew. */
type Attempt = 'held' | 'heldByOther' | 'failed';

/** Why leading ended; `standingAside`: for a reason of the caller's (standAside), and the Lease is given back. */
interface Ended {
  reason: string;
  standingAside?: boolean;
}

/** How long a Lease lasts unless the options say otherwise (client-go's default). */
export const DEFAULT_LEASE_DURATION_MS = 15_000;

/** Waits are stretched by up to this share of the retry period. */
const JITTER = 0.2;

const now = (): number => performance.now();

export class LeaderElector {
  private readonly lock: LeaseLock;
  private readonly identity: string;
  private readonly leaseDurationMs: number;
  private readonly renewDeadlineMs: number;
  private readonly retryPeriodMs: number;
  private readonly log: Logger;

  /** The last Lease read or written, and when (monotonic ms) its record was first seen. */
  private observed?: Lease;
  private observedAt = 0;
  /** When (monotonic ms) the last successful write of ours was sent. */
  private renewedAt = 0;
  private leading = false;
  private reportedLeader = '';
  private loop?: AbortController;
  private running?: Promise<void>;

  constructor(private readonly opts: LeaderElectorOptions) {
    this.identity = opts.identity;
    this.leaseDurationMs = opts.leaseDurationMs ?? DEFAULT_LEASE_DURATION_MS;
    this.renewDeadlineMs = opts.renewDeadlineMs ?? 10_000;
    this.retryPeriodMs = opts.retryPeriodMs ?? 2_000;
    validate(this.identity, this.leaseDurationMs, this.renewDeadlineMs, this.retryPeriodMs);
    this.lock = new LeaseLock(opts.client, opts.namespace, opts.name, opts.labels);
    this.log = (opts.logger ?? silentLogger).child({ lease: this.lock.description, identity: this.identity });
  }

  /**
   * Whether we lead now: we hold the Lease and renewed it within the renew
   * deadline, by our monotonic clock. Asked before a write, this is true only
   * while no standby can have taken over (the renew deadline is shorter than
   * the lease), even in a process that was paused (SIGSTOP, a VM frozen, a
   * long GC) and has not yet run the timer that ends its leadership: the I/O
   * it resumes with runs before that timer.
   */
  isLeader(): boolean {
    return this.leading && this.renewRemaining() > 0;
  }

  /** The holder seen last (ourselves included); undefined while none is known. */
  leader(): string | undefined {
    return this.observed?.spec?.holderIdentity || undefined;
  }

  /**
   * Campaigns until we lead, then leads until leadership is lost or `signal`
   * aborts; returns after onStoppedLeading ran. Rejects with
   * MissingNamespaceError when the Lease's namespace does not exist. Aborting
   * does not release the Lease: call release() for that.
   */
  run(signal: AbortSignal): Promise<void> {
    if (this.running) return Promise.reject(new Error(`leader election for ${this.lock.description} runs already`));
    const loop = new AbortController();
    const stop = (): void => loop.abort();
    signal.addEventListener('abort', stop, { once: true });
    if (signal.aborted) loop.abort();
    this.loop = loop;
    this.running = this.campaign(loop.signal).finally(() => {
      signal.removeEventListener('abort', stop);
      this.loop = undefined;
      this.running = undefined;
    });
    return this.running;
  }

  /**
   * Stops run() (ending leadership first) and, if we hold the Lease, gives it
   * up so that a standby takes it at once. Resolves to whether it released a
   * Lease we held; tries for up to the renew deadline.
   */
  async release(): Promise<boolean> {
    if (this.loop) {
      this.loop.abort();
      await this.running?.catch(() => undefined);
    }
    const deadline = now() + this.renewDeadlineMs;
    for (;;) {
      if (deadline - now() <= 0) {
        this.log.warn('could not release the lease before the renew deadline');
        return false;
      }
      try {
        return await this.releaseOnce({ deadline });
      } catch (err) {
        this.log.debug({ err: String(err) }, 'release attempt failed');
      }
      await sleep(Math.min(this.retryWait(), deadline - now()));
    }
  }

  private async campaign(signal: AbortSignal): Promise<void> {
    if (await this.acquire(signal)) await this.lead(signal);
  }

  /** Tries every retry period until we hold the Lease (true) or `signal` aborts (false). */
  private async acquire(signal: AbortSignal): Promise<boolean> {
    this.log.info('trying to acquire the lease');
    let toldAside: string | undefined;
    while (!signal.aborted) {
      let aside = await this.asideReason(false);
      if (aside === undefined && (await this.attempt({ deadline: now() + this.renewDeadlineMs, signal })) === 'held') {
        aside = await this.asideReason(true);
        if (aside === undefined) return true;
        await this.giveBack();
      }
      if (aside !== undefined && aside !== toldAside) this.log.info({ reason: aside }, 'standing aside: not taking the lease');
      toldAside = aside;
      await sleep(this.retryWait(), signal);
    }
    return false;
  }

  /** The caller's reason not to lead now (standAside); what it throws is one too. */
  private async asideReason(fresh: boolean): Promise<string | undefined> {
    const ask = this.opts.standAside;
    if (!ask) return undefined;
    try {
      return await ask(fresh);
    } catch (err) {
      return `could not tell whether to stand aside: ${String(err)}`;
    }
  }

  /** Releases the Lease we hold, after leading was ended (or before it began): whoever we stand aside for need not wait for it to lapse. */
  private async giveBack(): Promise<void> {
    try {
      await this.releaseOnce({ deadline: now() + this.renewDeadlineMs });
    } catch (err) {
      this.log.warn({ err: String(err) }, 'could not give the lease back (it lapses)');
    }
  }

  private async lead(signal: AbortSignal): Promise<void> {
    const leadership = new AbortController();
    let ended: Ended = { reason: 'the elector failed' };
    this.leading = true;
    this.log.info('started leading');
    void this.safely('onStartedLeading', () => this.opts.onStartedLeading(leadership.signal));
    try {
      ended = await this.renewLoop(signal);
    } finally {
      this.leading = false;
      this.log.info({ reason: ended.reason }, 'stopped leading');
      leadership.abort(new Error(`stopped leading ${this.lock.description}: ${ended.reason}`));
      // Given back only now that we lead no more: no write of ours passes the fence once it is free.
      if (ended.standingAside) await this.giveBack();
      await this.safely('onStoppedLeading', () => this.opts.onStoppedLeading(ended.reason));
    }
  }

  /** Renews until that fails for the renew deadline, another holder shows, a reason to stand aside does, or `signal` aborts; says why it stopped. */
  private async renewLoop(signal: AbortSignal): Promise<Ended> {
    for (;;) {
      await sleep(Math.min(this.retryWait(), this.renewRemaining()), signal);
      if (signal.aborted) return { reason: 'the elector was stopped' };
      if (this.renewRemaining() <= 0) return { reason: `could not renew the lease within ${this.renewDeadlineMs} ms` };
      // All requests of this attempt must be over by the time leadership would end.
      const deadline = this.renewedAt + this.renewDeadlineMs;
      const outcome = await this.attempt({ deadline, signal }).catch((err: unknown) => {
        this.log.error({ err: String(err) }, 'failed to renew the lease');
        return 'failed' as const;
      });
      if (outcome === 'heldByOther') return { reason: `the lease is held by ${this.leader() ?? 'another process'}` };
      const aside = outcome === 'held' ? await this.asideReason(false) : undefined;
      if (aside !== undefined) return { reason: `standing aside: ${aside}`, standingAside: true };
    }
  }

  /** One tryAcquireOrRenew; transport and API errors count as a failed attempt. */
  private async attempt(call: CallOptions): Promise<Attempt> {
    try {
      return await this.tryAcquireOrRenew(call);
    } catch (err) {
      if (err instanceof MissingNamespaceError) throw err;
      if (call.signal?.aborted) return 'failed';
      if (err instanceof ApiError && err.conflict) {
        this.log.debug('lost a race for the lease');
      } else {
        this.log.warn({ err: String(err) }, this.leading ? 'failed to renew the lease' : 'failed to read or take the lease');
      }
      return 'failed';
    }
  }

  private async tryAcquireOrRenew(call: CallOptions): Promise<Attempt> {
    // The leader renews straight from what it wrote last; only when that fails does it read.
    if (this.leading && this.observed && this.leaseValid() && (await this.renewObserved(this.observed, call))) {
      return 'held';
    }
    // The client cannot notice a signal that aborted before its request started.
    if (call.signal?.aborted) return 'failed';
    const lease = await this.lock.get(call);
    if (!lease) return this.createLease(call);
    this.observe(lease);
    const holder = lease.spec?.holderIdentity ?? '';
    if (holder !== '' && holder !== this.identity && this.leaseValid()) return 'heldByOther';
    await this.write(lease, call);
    return 'held';
  }

  private async renewObserved(observed: Lease, call: CallOptions): Promise<boolean> {
    try {
      await this.write(observed, call);
      return true;
    } catch (err) {
      this.log.debug({ err: String(err) }, 'renewal from the last record failed; reading the lease');
      return false;
    }
  }

  private async createLease(call: CallOptions): Promise<Attempt> {
    const sentAt = now();
    const stamp = microTime(new Date());
    const spec: LeaseSpec = {
      holderIdentity: this.identity,
      leaseDurationSeconds: this.leaseSeconds(),
      acquireTime: stamp,
      renewTime: stamp,
      leaseTransitions: 0,
    };
    this.observe(await this.lock.create(spec, call));
    this.renewedAt = sentAt;
    return 'held';
  }

  /** Writes our record over `lease` (guarded by its resourceVersion). */
  private async write(lease: Lease, call: CallOptions): Promise<void> {
    const sentAt = now();
    const written = await this.lock.update(lease, this.nextRecord(lease.spec), call);
    this.observe(written);
    this.renewedAt = sentAt;
  }

  /** Our record to write over `old`: a renewal keeps acquireTime and transitions, a takeover counts one more. */
  private nextRecord(old: LeaseSpec | undefined): LeaseSpec {
    const stamp = microTime(new Date());
    const ours = (old?.holderIdentity ?? '') === this.identity;
    const transitions = old?.leaseTransitions ?? 0;
    return {
      holderIdentity: this.identity,
      leaseDurationSeconds: this.leaseSeconds(),
      acquireTime: ours && old?.acquireTime ? old.acquireTime : stamp,
      renewTime: stamp,
      leaseTransitions: ours ? transitions : transitions + 1,
    };
  }

  private async releaseOnce(call: CallOptions): Promise<boolean> {
    const lease = await this.lock.get(call);
    if (!lease || (lease.spec?.holderIdentity ?? '') !== this.identity) return false;
    const stamp = microTime(new Date());
    const spec: LeaseSpec = {
      holderIdentity: '',
      leaseDurationSeconds: 1,
      acquireTime: stamp,
      renewTime: stamp,
      leaseTransitions: lease.spec?.leaseTransitions ?? 0,
    };
    this.observe(await this.lock.update(lease, spec, call));
    this.log.info('released the lease');
    return true;
  }

  /** Remembers `lease`; its record counts as new (restarting the lease's clock) only when it changed. */
  private observe(lease: Lease): void {
    if (!this.observed || !sameRecord(this.observed.spec, lease.spec)) this.observedAt = now();
    this.observed = lease;
    const holder = lease.spec?.holderIdentity ?? '';
    if (holder === this.reportedLeader) return;
    this.reportedLeader = holder;
    if (holder === '') return;
    this.log.info({ leader: holder }, 'new leader');
    const onNewLeader = this.opts.onNewLeader;
    if (onNewLeader) void this.safely('onNewLeader', () => onNewLeader(holder));
  }

  /** Whether the observed record is still valid by our own clock. */
  private leaseValid(): boolean {
    const seconds = this.observed?.spec?.leaseDurationSeconds;
    const durationMs = typeof seconds === 'number' ? seconds * 1000 : this.leaseDurationMs;
    return now() < this.observedAt + durationMs;
  }

  private renewRemaining(): number {
    return this.renewedAt + this.renewDeadlineMs - now();
  }

  private retryWait(): number {
    return this.retryPeriodMs * (1 + JITTER * Math.random());
  }

  private leaseSeconds(): number {
    return Math.max(1, Math.ceil(this.leaseDurationMs / 1000));
  }

  /** Runs a callback of the caller's; what it throws or rejects with is logged, not propagated. */
  private async safely(what: string, fn: () => unknown): Promise<void> {
    try {
      await fn();
    } catch (err) {
      this.log.error({ err: String(err) }, `${what} failed`);
    }
  }
}

function validate(identity: string, leaseMs: number, renewMs: number, retryMs: number): void {
  if (!identity) throw new Error('leader election: identity must not be empty');
  if (!(retryMs > 0)) throw new Error('leader election: retryPeriodMs must be positive');
  if (!(leaseMs > renewMs)) throw new Error('leader election: leaseDurationMs must be greater than renewDeadlineMs');
  if (!(renewMs > retryMs * (1 + JITTER))) {
    throw new Error(`leader election: renewDeadlineMs must be greater than ${1 + JITTER} x retryPeriodMs`);
  }
}
