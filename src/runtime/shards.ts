// Replicas sharing the work by shard key (`syncprims run --shards`; docs/shards.md, ADR 0015).
//
// - Membership: each replica renews a Lease of its own (memberLeaseName), by the leader election
//   code, as the one candidate for it. A replica is fresh while it renewed within the renew
//   deadline by its own clock; each time it becomes fresh again after it was not (a pause, an
//   outage), its epoch grows, and every key it held before counts as lost until taken again.
// - Assignment: every key in use (a remote cluster, a namespace of local syncs) goes to the live
//   member of highest rendezvous weight (runtime/rendezvous.ts), or to its pin while that is live.
// - Fence: a replica works a key only while it holds that key's Lease, taken by a write of its
//   own (create, or an update guarded by resourceVersion) in its current epoch. Key Leases are
//   written only when they change hands: one is valid while its holder's membership is live. A
//   Lease held by a member that looks dead is taken only after a fresh read of that member's
//   membership Lease shows the record we saw a lease duration ago (a stale watch never decides).
// - Handover: a key that should move is first closed to new work, its work in flight drains (up
//   to a bound), then its Lease is released (holder emptied), which its new owner is watching.
// - The other mode: no key is taken while the `--leader-elect` Lease (leaderLease) is held by a
//   leader that renews it, read afresh after each (re)joining; the leader, for its part, stands
//   aside while members are live (runtime/shard-presence.ts).
import { performance } from 'node:perf_hooks';
import { memberLeaseName, SHARD_KEY_ANNOTATION, SHARD_LEASE_LABEL, SHARD_MEMBER_LABEL, shardKeyString, shardLeaseName, type ShardKey } from '../api/shard-marks.js';
import { ApiError } from '../kube/errors.js';
import type { KubeClient } from '../kube/client.js';
import type { KubeObject } from '../kube/resources.js';
import { sleep } from './backoff.js';
import type { ClusterCache } from './cache.js';
import type { Informer, InformerEvent } from './informer.js';
import { LeaderElector } from './leader-election.js';
import { LeaseLock, type Lease } from './lease-lock.js';
import { operatorLeaseLabels } from './liveness-lease.js';
import type { Logger } from './logger.js';
import type { OperatorMetrics } from './metrics.js';
import { ownerOf } from './rendezvous.js';
import { currentShardKey, withinShardKey } from './shard-context.js';
import { ShardLocks } from './shard-locks.js';
import { ShardMembers } from './shard-members.js';

export interface ShardsOptions {
  client: KubeClient;
  cache: ClusterCache;
  /** Where the Leases live (the leader election namespace). */
  namespace: string;
  /** This replica's name among the members (unique among live replicas). */
  member: string;
  /** `--namespace`: put on the membership Lease, which also says (to `doctor`) that an operator watching it is alive. */
  watchNamespace?: string;
  leaseDurationMs?: number;
  renewDeadlineMs?: number;
  retryPeriodMs?: number;
  /** How long work in flight on a key that moves may finish before its Lease is given up. */
  drainMs?: number;
  /** The Lease of `--leader-elect` replicas in `namespace`: no key is taken while a leader holds it. */
  leaderLease?: string;
  logger: Logger;
  metrics?: OperatorMetrics;
}

/** A key some sync needs worked, and the member it is pinned to (SHARD_PIN_LABEL), if any. */
export interface KeyInUse {
  key: ShardKey;
  pin?: string;
}

interface Holding {
  key: ShardKey;
  epoch: number;
  /** The resourceVersion of our write; `echoed` once the watch brought it (later events are news). */
  written: string;
  echoed: boolean;
}

const LEASE_API = 'coordination.k8s.io/v1';

/** A Lease as the informers hold it. */
type LeaseObject = Lease & KubeObject;
/** Key Leases taken at once (each one write to the managing cluster). */
const ACQUIRE_CONCURRENCY = 8;
/** A member Lease not renewed for this many lease durations is left over from a replica that died: deleted. */
const LONG_GONE_FACTOR = 10;

export class Shards {
  readonly member: string;
  private readonly members: ShardMembers;
  /** Holders of the leaderLease, judged as members are. */
  private readonly leaders: ShardMembers;
  /** The epoch in which the leaderLease was last found free (or lapsed): read again after each (re)joining. */
  private noLeaderSince = 0;
  private toldLeader = '';
  private readonly locks: ShardLocks;
  private readonly elector: LeaderElector;
  private readonly leaseDurationMs: number;
  private readonly renewDeadlineMs: number;
  private readonly retryPeriodMs: number;
  private readonly drainMs: number;
  private readonly log: Logger;
  private epoch = 0;
  private readonly held = new Map<string, Holding>();
  private readonly releasing = new Set<string>();
  private readonly active = new Map<string, number>();
  private readonly drained = new Map<string, () => void>();
  private keysInUse: () => Map<string, KeyInUse> = () => new Map();
  private keyLeases?: Informer<LeaseObject>;
  /** Set when shutdown begins: no key is taken any more (those held are kept until stop()). */
  private leaving = false;
  /** The owners last computed, and from what (the live members, and the keys-in-use map they were computed for). */
  private owners?: { live: string; inUse: Map<string, KeyInUse>; of: Map<string, string | undefined> };
  /** Holders confirmed gone (or not) in this pass: one read of a member's Lease, whatever number of keys it held. */
  private gone = new Map<string, Promise<boolean>>();
  private passScheduled = false;
  private passing = false;
  private passAgain = false;
  private lastCollect = 0;
  private timer?: NodeJS.Timeout;
  private readonly loop = new AbortController();
  private membership?: Promise<void>;
  private readonly acquiredListeners: ((keys: string[]) => void)[] = [];
  private readonly releasedListeners: ((keys: string[]) => void)[] = [];

  constructor(private readonly opts: ShardsOptions) {
    this.member = opts.member;
    this.leaseDurationMs = opts.leaseDurationMs ?? 15_000;
    this.renewDeadlineMs = opts.renewDeadlineMs ?? 10_000;
    this.retryPeriodMs = opts.retryPeriodMs ?? 2_000;
    this.drainMs = opts.drainMs ?? 10_000;
    this.log = opts.logger.child({ component: 'shards', member: opts.member });
    this.members = new ShardMembers(this.leaseDurationMs);
    this.leaders = new ShardMembers(this.leaseDurationMs);
    this.locks = new ShardLocks(opts.client, opts.namespace, opts.member, Math.ceil(this.leaseDurationMs / 1000));
    this.elector = new LeaderElector({
      client: opts.client,
      namespace: opts.namespace,
      name: memberLeaseName(opts.member),
      identity: opts.member,
      labels: { [SHARD_MEMBER_LABEL]: 'true', ...operatorLeaseLabels(opts.watchNamespace) },
      leaseDurationMs: this.leaseDurationMs,
      renewDeadlineMs: this.renewDeadlineMs,
      retryPeriodMs: this.retryPeriodMs,
      logger: this.log,
      onStartedLeading: () => this.joined(),
      onStoppedLeading: () => this.lapsed(),
    });
  }

  /** What keys are in use, asked on each pass; call keysChanged() when the answer may have changed. */
  useKeys(fn: () => Map<string, KeyInUse>): void {
    this.keysInUse = fn;
  }

  keysChanged(): void {
    this.schedulePass();
  }

  /** Told the keys (shardKeyString) this replica took: their work may start. */
  onAcquired(fn: (keys: string[]) => void): void {
    this.acquiredListeners.push(fn);
  }

  /** Told the keys this replica gave up or lost: what it opened for them may close. */
  onReleased(fn: (keys: string[]) => void): void {
    this.releasedListeners.push(fn);
  }

  /**
   * Watches the shard Leases (primed), then joins: renews the membership Lease until stop().
   * Resolves once started; `failed` rejects if membership cannot go on (its namespace is missing).
   */
  async start(): Promise<{ failed: Promise<never> }> {
    const { cache, namespace } = this.opts;
    const memberLeases = await cache.informer<LeaseObject>(LEASE_API, 'Lease', { namespace, labelSelector: SHARD_MEMBER_LABEL });
    this.keyLeases = await cache.informer<LeaseObject>(LEASE_API, 'Lease', { namespace, labelSelector: SHARD_LEASE_LABEL });
    for (const lease of memberLeases.store.list()) this.members.observe(lease);
    memberLeases.onEvent((e) => this.memberEvent(e));
    this.keyLeases.onEvent((e) => this.keyLeaseEvent(e));
    this.timer = setInterval(() => this.schedulePass(), this.retryPeriodMs);
    this.timer.unref();
    this.membership = this.keepMembership();
    return { failed: this.membership.then(() => new Promise<never>(() => undefined)) };
  }

  /** Whether this replica may start work on `key` now. */
  works(key: string): boolean {
    return this.holds(key) && !this.releasing.has(key);
  }

  /** Runs `fn` as work of `key`: its requests pass the fences only while the key is held. */
  async within<R>(key: string, fn: () => Promise<R>): Promise<R> {
    this.active.set(key, (this.active.get(key) ?? 0) + 1);
    try {
      return await withinShardKey(key, fn);
    } finally {
      const left = (this.active.get(key) ?? 1) - 1;
      if (left > 0) this.active.set(key, left);
      else {
        this.active.delete(key);
        this.drained.get(key)?.();
      }
    }
  }

  /** The managing cluster's write fence: the work's key held, or (outside any key's work) a fresh membership. */
  mayWrite(): boolean {
    const key = currentShardKey();
    return key === undefined ? this.fresh() : this.holds(key);
  }

  /** A remote cluster's write fence: only work of a key held writes there. */
  mayWriteRemote(): boolean {
    const key = currentShardKey();
    return key !== undefined && this.holds(key);
  }

  /** The keys held now (shardKeyString), for views and tests. */
  heldKeys(): string[] {
    return [...this.held.keys()].filter((k) => this.holds(k));
  }

  /** Shutdown has begun: take no more keys (a replica that is leaving would only have to give them up again). */
  stopTaking(): void {
    this.leaving = true;
  }

  /** Leaves: gives up every key (emptied, so that the others take them at once) and deletes the membership Lease. */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    const keys = [...this.held.values()].map((h) => h.key);
    this.loop.abort();
    const deadline = performance.now() + this.renewDeadlineMs;
    await Promise.all(keys.map((key) => this.giveUp(key, false, deadline).catch(() => undefined)));
    await this.membership?.catch(() => undefined);
    this.held.clear();
    this.report();
    const lock = this.locks.ofMember(this.member);
    const own = await lock.get({ deadline }).catch(() => undefined);
    if (own) await lock.delete(own, { deadline }).catch((err: unknown) => this.log.warn({ err: String(err) }, 'could not delete the membership Lease'));
    this.log.info({ released: keys.length }, 'left the shards');
  }

  private fresh(): boolean {
    return this.elector.isLeader();
  }

  private holds(key: string): boolean {
    return this.fresh() && this.held.get(key)?.epoch === this.epoch;
  }

  private async keepMembership(): Promise<void> {
    const signal = this.loop.signal;
    while (!signal.aborted) {
      await this.elector.run(signal);
      if (!signal.aborted) await sleep(this.retryPeriodMs, signal);
    }
  }

  private joined(): void {
    this.epoch++;
    this.opts.metrics?.shardMember.set(1);
    this.log.info({ epoch: this.epoch }, this.epoch === 1 ? 'joined the shards' : 'renewing again: every key held before is taken again before it is worked');
    this.schedulePass();
  }

  private lapsed(): void {
    this.opts.metrics?.shardMember.set(0);
    const lost = [...this.held.keys()];
    this.held.clear();
    if (lost.length > 0) this.log.warn({ keys: lost.length }, 'membership not renewed within the renew deadline: every key held is dropped');
    this.tell(this.releasedListeners, lost);
    this.report();
  }

  private memberEvent(e: InformerEvent<LeaseObject>): void {
    if (e.type === 'deleted') this.members.forget(e.object.spec?.holderIdentity ?? '');
    else this.members.observe(e.object);
    this.schedulePass();
  }

  /** A key Lease changed: one we hold that now names another holder (or is gone) is lost at once. */
  private keyLeaseEvent(e: InformerEvent<LeaseObject>): void {
    const key = (e.object.metadata.annotations as Record<string, string> | undefined)?.[SHARD_KEY_ANNOTATION];
    const kind = (e.object.metadata.labels as Record<string, string> | undefined)?.[SHARD_LEASE_LABEL];
    const holding = key !== undefined && kind !== undefined ? this.held.get(`${kind}:${key}`) : undefined;
    if (holding) {
      const ours = e.type !== 'deleted' && e.object.spec?.holderIdentity === this.member;
      if (e.object.metadata.resourceVersion === holding.written || (ours && !holding.echoed)) holding.echoed = true;
      else if (holding.echoed && !ours) this.lose(shardKeyString(holding.key), e.type === 'deleted' ? 'deleted' : `taken by ${e.object.spec?.holderIdentity || 'nobody'}`);
    }
    this.schedulePass();
  }

  private lose(key: string, how: string): void {
    this.held.delete(key);
    this.log.warn({ key, how }, 'a shard Lease held here was lost');
    this.tell(this.releasedListeners, [key]);
    this.report();
  }

  private schedulePass(): void {
    if (this.passScheduled || this.loop.signal.aborted) return;
    this.passScheduled = true;
    setImmediate(() => {
      this.passScheduled = false;
      void this.runPasses();
    });
  }

  private async runPasses(): Promise<void> {
    if (this.passing) {
      this.passAgain = true;
      return;
    }
    this.passing = true;
    try {
      do {
        this.passAgain = false;
        await this.pass();
      } while (this.passAgain && !this.loop.signal.aborted);
    } catch (err) {
      this.log.error({ err: String(err) }, 'shard pass failed');
    } finally {
      this.passing = false;
    }
  }

  /** Takes the keys that are ours and free, gives up those that are another's now. */
  private async pass(): Promise<void> {
    if (!this.fresh() || this.loop.signal.aborted) return;
    const live = [...new Set([...this.members.live(), this.member])].sort();
    this.opts.metrics?.shardMembers.set(live.length);
    const inUse = this.keysInUse();
    const owners = this.ownersOf(live, inUse);
    const take: ShardKey[] = [];
    for (const [k, use] of inUse) {
      const mine = owners.get(k) === this.member;
      if (mine && !this.holds(k)) take.push(use.key);
      else if (!mine && this.holds(k) && !this.releasing.has(k)) void this.handOver(use.key, false);
    }
    for (const [k, h] of this.held) if (!inUse.has(k) && !this.releasing.has(k)) void this.handOver(h.key, true);
    this.gone = new Map();
    if (take.length > 0 && !this.leaving && (await this.noLeader())) await this.takeAll(take, live.length);
    await this.collectLongGone();
  }

  /**
   * Whether no `--leader-elect` replica leads: the leaderLease missing, free,
   * or not renewed for its duration (by our clock), read once per epoch (a
   * leader that starts later stands aside for this replica, whose membership
   * was written before this read). While one leads, it is read each pass.
   */
  private async noLeader(): Promise<boolean> {
    const name = this.opts.leaderLease;
    if (name === undefined || this.noLeaderSince === this.epoch) return true;
    const lease = await new LeaseLock(this.opts.client, this.opts.namespace, name)
      .get({ deadline: performance.now() + this.renewDeadlineMs, signal: this.loop.signal })
      .catch((err: unknown) => (this.log.warn({ err: String(err) }, 'could not read the leader Lease; taking no key until it is read'), null));
    if (lease === null) return false;
    const leader = lease?.spec?.holderIdentity ?? '';
    if (lease) this.leaders.observe(lease);
    if (leader !== '' && this.leaders.isLive(leader)) {
      if (this.toldLeader !== leader) this.log.warn({ leader, lease: name }, 'a --leader-elect replica leads: no key is taken until it stands aside or stops');
      this.toldLeader = leader;
      return false;
    }
    if (this.toldLeader !== '') this.log.info({ lease: name }, 'the --leader-elect replica stopped leading: taking keys');
    this.toldLeader = '';
    this.noLeaderSince = this.epoch;
    return true;
  }

  /** Each key's owner: hashed again only when the live members or the keys in use changed (a pass runs on every renewal). */
  private ownersOf(live: string[], inUse: Map<string, KeyInUse>): Map<string, string | undefined> {
    const id = live.join(',');
    if (this.owners?.live === id && this.owners.inUse === inUse) return this.owners.of;
    const of = new Map<string, string | undefined>();
    for (const [k, use] of inUse) of.set(k, ownerOf(k, live, use.pin));
    this.owners = { live: id, inUse, of };
    return of;
  }


  /** Takes the Leases of `keys`, a few at once; each batch's work starts at once (a thousand keys are not all waited for). */
  private async takeAll(keys: ShardKey[], members: number): Promise<void> {
    this.log.info({ keys: keys.length, members }, 'taking shard keys');
    let taken = 0;
    for (let i = 0; i < keys.length && this.fresh(); i += ACQUIRE_CONCURRENCY) {
      const batch = keys.slice(i, i + ACQUIRE_CONCURRENCY);
      const results = await Promise.all(batch.map((key) => this.acquire(key)));
      const got = batch.filter((_, j) => results[j]).map(shardKeyString);
      taken += got.length;
      this.tell(this.acquiredListeners, got);
    }
    if (taken === 0) return;
    this.log.info({ taken, held: this.held.size, members }, 'took shard keys');
    this.opts.metrics?.shardHandovers.inc({ direction: 'acquired' }, taken);
    this.report();
  }

  /** Takes `key`'s Lease: created, free, ours from before, or its holder's membership confirmed lapsed. */
  private async acquire(key: ShardKey): Promise<boolean> {
    const lease = this.keyLeases?.store.get(`${this.opts.namespace}/${shardLeaseName(key)}`);
    const holder = lease?.spec?.holderIdentity ?? '';
    const another = holder !== '' && holder !== this.member;
    if (another && !(await this.goneInThisPass(holder))) return false;
    const epoch = this.epoch;
    try {
      const written = await this.locks.take(key, lease, { deadline: performance.now() + this.renewDeadlineMs, signal: this.loop.signal });
      if (epoch !== this.epoch || !this.fresh()) return false;
      this.held.set(shardKeyString(key), { key, epoch, written: written.metadata.resourceVersion ?? '', echoed: false });
      if (another) this.log.info({ key: shardKeyString(key), from: holder }, 'took over a shard key from a replica that stopped renewing');
      return true;
    } catch (err) {
      const lost = err instanceof ApiError && err.conflict;
      this.log[lost ? 'debug' : 'warn']({ key: shardKeyString(key), err: String(err) }, 'could not take a shard Lease; trying again');
      return false;
    }
  }


  private goneInThisPass(holder: string): Promise<boolean> {
    let answer = this.gone.get(holder);
    if (!answer) this.gone.set(holder, (answer = this.holderGone(holder)));
    return answer;
  }

  /** Whether `holder` is gone: its membership Lease, read now, is missing or holds the record we saw a lease duration ago. */
  private async holderGone(holder: string): Promise<boolean> {
    if (this.members.isLive(holder)) return false;
    const lock = this.locks.ofMember(holder);
    const now = await lock.get({ deadline: performance.now() + this.renewDeadlineMs, signal: this.loop.signal }).catch(() => null);
    if (now === null) return false;
    if (now === undefined || (now.spec?.holderIdentity ?? '') === '') return true;
    if (this.members.unchanged(now, holder)) return true;
    this.members.observe(now);
    return false;
  }

  /** Closes `key` to new work, lets its work in flight finish, then releases its Lease (or deletes it: no sync uses the key). */
  private async handOver(key: ShardKey, remove: boolean): Promise<void> {
    const k = shardKeyString(key);
    this.releasing.add(k);
    try {
      await this.drain(k);
      await this.giveUp(key, remove, performance.now() + this.renewDeadlineMs);
      this.opts.metrics?.shardHandovers.inc({ direction: 'released' });
    } catch (err) {
      this.log.warn({ key: k, err: String(err) }, 'could not release a shard Lease (it lapses with this replica, if it stops)');
    } finally {
      this.releasing.delete(k);
      this.schedulePass();
    }
  }

  private drain(key: string): Promise<void> {
    if (!this.active.has(key)) return Promise.resolve();
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        this.drained.delete(key);
        resolve();
      };
      const timer = setTimeout(done, this.drainMs);
      this.drained.set(key, done);
    });
  }

  /** Stops working `key` and writes its Lease free (holder emptied: its next owner need not wait) or deletes it. */
  private async giveUp(key: ShardKey, remove: boolean, deadline: number): Promise<void> {
    const k = shardKeyString(key);
    const had = this.held.delete(k);
    if (had) {
      this.tell(this.releasedListeners, [k]);
      this.report();
    }
    const lock = this.locks.key(key);
    // From the watched copy (one request per key, on a clean stop of a thousand); a conflict reads it again.
    const cached = this.keyLeases?.store.get(`${this.opts.namespace}/${lock.name}`);
    try {
      await this.locks.free(lock, cached?.spec?.holderIdentity === this.member ? cached : await lock.get({ deadline }), remove, deadline);
    } catch (err) {
      if (!(err instanceof ApiError && err.conflict)) throw err;
      await this.locks.free(lock, await lock.get({ deadline }), remove, deadline);
    }
  }


  /** Deletes the membership Leases of replicas long dead (killed: a clean stop deletes its own). */
  private async collectLongGone(): Promise<void> {
    const now = performance.now();
    if (now - this.lastCollect < this.leaseDurationMs) return;
    this.lastCollect = now;
    for (const member of this.members.longGone(LONG_GONE_FACTOR)) {
      if (member === this.member) continue;
      const lock = this.locks.ofMember(member);
      const lease = await lock.get({ deadline: now + this.renewDeadlineMs }).catch(() => undefined);
      if (lease && this.members.unchanged(lease, member)) await lock.delete(lease, { deadline: performance.now() + this.renewDeadlineMs }).catch(() => undefined);
      if (!lease) this.members.forget(member);
    }
  }


  private report(): void {
    const metrics = this.opts.metrics;
    if (!metrics) return;
    for (const kind of ['cluster', 'namespace'] as const) metrics.shardKeysHeld.set({ kind }, [...this.held.values()].filter((h) => h.key.kind === kind).length);
  }

  private tell(listeners: ((keys: string[]) => void)[], keys: string[]): void {
    if (keys.length === 0) return;
    for (const fn of listeners) {
      try {
        fn(keys);
      } catch (err) {
        this.log.error({ err: String(err) }, 'a shard listener failed');
      }
    }
  }
}
