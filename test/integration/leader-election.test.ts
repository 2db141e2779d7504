// Lane: own clusters (test/support/lanes-runner.js: it runs beside the shared-cluster files).
// Leader election against a real API server (the own lane's): electors in this process
// compete for Leases in a namespace of the test's own. Each elector talks
// through a wrapper that records its requests and can cut it off (requests then
// hang until their own deadline), so the tests see what was sent.
import { afterAll, afterEach, beforeAll, describe, expect, test } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { KubeClient, RequestOptions } from '../../src/kube/client.js';
import { TransportError } from '../../src/kube/errors.js';
import { LeaderElector, MissingNamespaceError } from '../../src/runtime/leader-election.js';
import type { Lease, LeaseClient } from '../../src/runtime/leader-election.js';
import { closeClients, clusterClient, OWN_LANE_CLUSTER } from '../support/controlplane.js';
import { eventually } from '../support/eventually.js';
import { useTestNamespace } from '../support/namespace.js';

const namespace = useTestNamespace(OWN_LANE_CLUSTER, 'leader-election');
let client: KubeClient;
beforeAll(async () => {
  client = await clusterClient(OWN_LANE_CLUSTER);
});
afterAll(closeClients);

/** Short enough to keep the tests fast, in the proportions of the defaults. */
const FAST = { leaseDurationMs: 3_000, renewDeadlineMs: 2_000, retryPeriodMs: 500 };

interface SentRequest {
  method: string;
  path: string;
  timeoutMs?: number;
}

interface Candidate {
  identity: string;
  elector: LeaderElector;
  /** Every request the elector sent, in order. */
  requests: SentRequest[];
  /** The Leases its successful writes returned, in order. */
  written: Lease[];
  /** The signals given to onStartedLeading. */
  leaderSignals: AbortSignal[];
  newLeaders: string[];
  controller: AbortController;
  /** While true, its requests reach nothing and fail at their deadline. */
  cut: boolean;
  finished: boolean;
  done: Promise<void>;
  start(): Candidate;
}

/** What all candidates of a test did, in order: "<identity> started" / "<identity> stopped". */
let events: string[] = [];
let candidates: Candidate[] = [];
let leaseCount = 0;
let leaseName = '';

afterEach(async () => {
  for (const c of candidates) c.controller.abort();
  await Promise.all(candidates.map((c) => c.done.catch(() => undefined)));
  candidates = [];
  events = [];
});

function newLease(): string {
  leaseName = `lease-${++leaseCount}`;
  return leaseName;
}

function leasePath(name = leaseName): string {
  return `/apis/coordination.k8s.io/v1/namespaces/${namespace()}/leases/${name}`;
}

async function readLease(): Promise<Lease> {
  return client.request<Lease>({ path: leasePath() });
}

/** A request to a server that never answers: it fails at its deadline or when aborted, and never without one. */
function unreachable(opts: RequestOptions): Promise<never> {
  return new Promise((_resolve, reject) => {
    const fail = (): void => reject(new TransportError(`${opts.method ?? 'GET'} ${opts.path}: unreachable`));
    if (opts.timeoutMs !== undefined) setTimeout(fail, opts.timeoutMs).unref();
    opts.signal?.addEventListener('abort', fail, { once: true });
  });
}

function candidate(identity: string, timing: Partial<typeof FAST> = {}, standAside?: (fresh: boolean) => Promise<string | undefined>): Candidate {
  const c = {
    identity,
    requests: [],
    written: [],
    leaderSignals: [],
    newLeaders: [],
    controller: new AbortController(),
    cut: false,
    finished: false,
    done: Promise.resolve(),
  } as unknown as Candidate;
  const wrapped: LeaseClient = {
    request: async <T>(opts: RequestOptions): Promise<T> => {
      const method = opts.method ?? 'GET';
      c.requests.push({ method, path: opts.path, timeoutMs: opts.timeoutMs });
      if (c.cut) return unreachable(opts);
      const answer = await client.request<T>(opts);
      if (method !== 'GET') c.written.push(answer as Lease);
      return answer;
    },
  };
  c.elector = new LeaderElector({
    client: wrapped,
    namespace: namespace(),
    name: leaseName,
    identity,
    ...FAST,
    ...timing,
    onStartedLeading: (signal) => {
      c.leaderSignals.push(signal);
      events.push(`${identity} started`);
    },
    onStoppedLeading: () => {
      events.push(`${identity} stopped`);
    },
    onNewLeader: (leader) => {
      c.newLeaders.push(leader);
    },
    ...(standAside && { standAside }),
  });
  c.start = () => {
    c.done = c.elector.run(c.controller.signal).finally(() => {
      c.finished = true;
    });
    return c;
  };
  candidates.push(c);
  return c;
}

function leading(c: Candidate): Promise<true> {
  return eventually(`${c.identity} to lead`, async () => (c.elector.isLeader() ? true : undefined), 30_000);
}

function finished(c: Candidate): Promise<true> {
  return eventually(`${c.identity}'s run() to return`, async () => (c.finished ? true : undefined), 30_000);
}

/** Waits until `c` has seen `leader` hold the Lease. */
function sawLeader(c: Candidate, leader: string): Promise<true> {
  return eventually(`${c.identity} to see ${leader} lead`, async () => (c.newLeaders.includes(leader) ? true : undefined), 30_000);
}

describe('leader election', () => {
  test('of two electors exactly one leads; the standby only reads, the leader only renews', async () => {
    newLease();
    const a = candidate('a');
    const b = candidate('b');
    let bothLed = false;
    const sampler = setInterval(() => {
      if (a.elector.isLeader() && b.elector.isLeader()) bothLed = true;
    }, 20);
    try {
      a.start();
      b.start();
      const leader = await eventually('a leader', async () => [a, b].find((c) => c.elector.isLeader()), 30_000);
      const standby = leader === a ? b : a;
      await sawLeader(standby, leader.identity);
      leader.requests.length = 0;
      standby.requests.length = 0;
      await eventually('three renewals and three reads', async () =>
        leader.requests.length >= 3 && standby.requests.length >= 3 ? true : undefined,
      );

      expect(bothLed).toBe(false);
      expect(leader.elector.isLeader()).toBe(true);
      expect(standby.elector.isLeader()).toBe(false);
      expect(new Set(standby.requests.map((r) => r.method))).toEqual(new Set(['GET']));
      expect(new Set(leader.requests.map((r) => r.method))).toEqual(new Set(['PUT']));
      for (const r of [...leader.requests, ...standby.requests]) {
        expect(r.path).toBe(leasePath());
        expect(r.timeoutMs).toBeGreaterThan(0);
      }
      const lease = await readLease();
      expect(lease.spec).toMatchObject({
        holderIdentity: leader.identity,
        leaseDurationSeconds: 3,
        leaseTransitions: 0,
      });
      expect(standby.elector.leader()).toBe(leader.identity);
      expect(standby.newLeaders).toEqual([leader.identity]);
      expect(events).toEqual([`${leader.identity} started`]);
    } finally {
      clearInterval(sampler);
    }
  });

  test('when the leader releases, the standby takes over at once and the Lease counts the transition', async () => {
    newLease();
    // A's lease would last a minute: only a release lets B in within the timeouts below.
    const a = candidate('a', { leaseDurationMs: 60_000 }).start();
    await leading(a);
    const b = candidate('b').start();
    await sawLeader(b, 'a');
    const before = await readLease();

    await expect(a.elector.release()).resolves.toBe(true);
    expect(a.finished).toBe(true);
    expect(a.elector.isLeader()).toBe(false);
    expect(a.leaderSignals).toHaveLength(1);
    expect(a.leaderSignals[0]?.aborted).toBe(true);
    await leading(b);

    const after = await readLease();
    expect(after.spec?.holderIdentity).toBe('b');
    expect(after.spec?.leaseTransitions).toBe((before.spec?.leaseTransitions ?? 0) + 1);
    expect(after.spec?.acquireTime).not.toBe(before.spec?.acquireTime);
    expect(events).toEqual(['a started', 'a stopped', 'b started']);
    expect(b.newLeaders).toEqual(['a', 'b']);
  });

  test('release empties the holder and shortens the Lease, and only the holder releases', async () => {
    newLease();
    const a = candidate('a').start();
    await leading(a);
    const held = await readLease();

    await expect(a.elector.release()).resolves.toBe(true);
    const released = await readLease();
    expect(released.spec?.holderIdentity ?? '').toBe('');
    expect(released.spec?.leaseDurationSeconds).toBe(1);
    expect(released.spec?.leaseTransitions).toBe(held.spec?.leaseTransitions);

    // Neither the former holder nor a process that never held it writes again.
    const other = candidate('other');
    await expect(a.elector.release()).resolves.toBe(false);
    await expect(other.elector.release()).resolves.toBe(false);
    expect((await readLease()).metadata.resourceVersion).toBe(released.metadata.resourceVersion);
    expect(other.requests.map((r) => r.method)).toEqual(['GET']);
  });

  test('after a leader crashes without releasing, the standby takes over only once the lease lapsed', async () => {
    newLease();
    const a = candidate('a').start();
    await leading(a);
    const b = candidate('b').start();
    await sawLeader(b, 'a');

    a.controller.abort(); // a crash as far as the Lease can tell: no release
    await finished(a);
    expect(events).toEqual(['a started', 'a stopped']);
    expect(a.leaderSignals[0]?.aborted).toBe(true);
    const left = await readLease();
    expect(left.spec?.holderIdentity).toBe('a');
    expect(b.elector.isLeader()).toBe(false);

    await leading(b);
    const after = await readLease();
    expect(after.spec?.holderIdentity).toBe('b');
    expect(after.spec?.leaseTransitions).toBe((left.spec?.leaseTransitions ?? 0) + 1);
    // B's takeover is stamped at least a lease duration after A's last renewal
    // (both clocks are this process's).
    const lastRenewal = a.written.at(-1)?.spec?.renewTime;
    expect(lastRenewal).toBeDefined();
    const lapse = Date.parse(after.spec?.acquireTime ?? '') - Date.parse(lastRenewal ?? '');
    expect(lapse).toBeGreaterThanOrEqual((left.spec?.leaseDurationSeconds ?? 0) * 1000);
    // Until then B only read.
    const firstWrite = b.requests.findIndex((r) => r.method !== 'GET');
    expect(firstWrite).toBeGreaterThan(0);
    expect(b.requests[firstWrite]?.method).toBe('PUT');
    expect(events).toEqual(['a started', 'a stopped', 'b started']);
  });

  test('a leader paused past its renew deadline (its event loop blocked, as by SIGSTOP or a frozen VM) leads no more the moment it runs again, before any timer', async () => {
    newLease();
    const a = candidate('a').start();
    await leading(a);
    // Nothing of the process runs meanwhile: no timer, no answer of a renewal. The write fences
    // (KubeClient.fenceWrites, runtime/shards.ts) ask isLeader() at each write, so this is what
    // stops the first write of a woken process.
    const until = performance.now() + FAST.renewDeadlineMs + 200;
    while (performance.now() < until) {
      // blocked
    }
    expect(a.elector.isLeader()).toBe(false);
    // Its loop then notices and steps down.
    await finished(a);
    expect(events).toEqual(['a started', 'a stopped']);
  });

  test('a leader whose Lease is taken by force stops leading and writes nothing over it', async () => {
    newLease();
    const a = candidate('a').start();
    await leading(a);
    const current = await readLease();
    const stamp = new Date().toISOString().replace('Z', '000Z');
    const forced = await client.request<Lease>({
      method: 'PUT',
      path: leasePath(),
      body: {
        ...current,
        spec: {
          holderIdentity: 'intruder',
          leaseDurationSeconds: 3600,
          acquireTime: stamp,
          renewTime: stamp,
          leaseTransitions: (current.spec?.leaseTransitions ?? 0) + 1,
        },
      },
    });

    await finished(a);
    expect(a.elector.isLeader()).toBe(false);
    expect(a.leaderSignals[0]?.aborted).toBe(true);
    expect(String(a.leaderSignals[0]?.reason)).toContain('intruder');
    expect(events).toEqual(['a started', 'a stopped']);
    expect(a.newLeaders).toEqual(['a', 'intruder']);
    expect((await readLease()).metadata.resourceVersion).toBe(forced.metadata.resourceVersion);
  });

  test('a leader that cannot reach the API server steps down before the standby takes over', async () => {
    newLease();
    const a = candidate('a').start();
    await leading(a);
    const b = candidate('b').start();
    await sawLeader(b, 'a');
    const sentBeforeCut = a.requests.length;

    a.cut = true;
    await leading(b);
    await finished(a);

    expect(events).toEqual(['a started', 'a stopped', 'b started']);
    expect(a.leaderSignals[0]?.aborted).toBe(true);
    expect(String(a.leaderSignals[0]?.reason)).toContain('could not renew');
    const unanswered = a.requests.slice(sentBeforeCut);
    expect(unanswered.length).toBeGreaterThan(0);
    for (const r of unanswered) expect(r.timeoutMs).toBeGreaterThan(0);
    expect((await readLease()).spec?.holderIdentity).toBe('b');
  });

  test('standing aside (replicas of the other mode live): never taken; taken a moment before a fresh look finds a reason, given back at once; found after a renewal, leadership ends and the Lease is free', async () => {
    newLease();
    // What the watch shows (asked before each try and after each renewal), and what a fresh read shows (asked once the Lease is taken).
    const seen: { watched?: string; fresh?: string } = { watched: 'sharded replicas are live' };
    const a = candidate('a', {}, async (fresh) => (fresh ? (seen.fresh ?? seen.watched) : seen.watched)).start();
    await new Promise((r) => setTimeout(r, 4 * FAST.retryPeriodMs));
    expect(a.requests).toEqual([]);

    // The watch has not seen the replica that joined a moment ago; the read after taking the Lease has.
    seen.watched = undefined;
    seen.fresh = 'a sharded replica joined';
    await eventually('a to take the Lease and give it back', async () => (a.written.length >= 2 ? true : undefined), 30_000);
    expect(a.written.slice(0, 2).map((l) => l.spec?.holderIdentity ?? '')).toEqual(['a', '']);
    expect(events).toEqual([]);

    seen.fresh = undefined;
    await leading(a);
    seen.watched = 'sharded replicas are live';
    await finished(a);
    expect(events).toEqual(['a started', 'a stopped']);
    expect(a.leaderSignals[0]?.aborted).toBe(true);
    const free = await readLease();
    expect([free.spec?.holderIdentity ?? '', free.spec?.leaseDurationSeconds]).toEqual(['', 1]);
  });

  test('a missing namespace is a clear error, not an endless retry', async () => {
    const missing = `no-such-ns-${randomBytes(3).toString('hex')}`;
    let started = false;
    const elector = new LeaderElector({
      client,
      namespace: missing,
      name: 'syncprims-leader',
      identity: 'a',
      ...FAST,
      onStartedLeading: () => {
        started = true;
      },
      onStoppedLeading: () => undefined,
    });
    const err = await elector.run(new AbortController().signal).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(MissingNamespaceError);
    expect((err as Error).message).toContain(`namespace "${missing}" does not exist`);
    expect(started).toBe(false);
    expect(elector.isLeader()).toBe(false);
  });

  test('refuses timings where the leader could outlive its lease', () => {
    const base = {
      client,
      namespace: 'ns',
      name: 'l',
      identity: 'a',
      onStartedLeading: () => undefined,
      onStoppedLeading: () => undefined,
    };
    expect(() => new LeaderElector({ ...base, leaseDurationMs: 2_000, renewDeadlineMs: 2_000 })).toThrow(
      /leaseDurationMs must be greater than renewDeadlineMs/,
    );
    expect(() => new LeaderElector({ ...base, renewDeadlineMs: 2_000, retryPeriodMs: 2_000 })).toThrow(
      /renewDeadlineMs must be greater/,
    );
    expect(() => new LeaderElector({ ...base, identity: '' })).toThrow(/identity/);
    expect(() => new LeaderElector(base)).not.toThrow();
  });
});
