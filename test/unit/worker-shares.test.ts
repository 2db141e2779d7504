// A fair share of the workers (issue 43): a server or a namespace holds up
// to half of a controller's workers, more only while a quarter stays free.
import { describe, expect, test } from '@jest/globals';
import { shareLimits, WorkerShares } from '../../src/clusters/worker-shares.js';

const enter = (shares: WorkerShares, pool: string, server: string, namespace: string, key?: string) =>
  shares.tryEnter({ pool, groups: [`server ${server}`, `namespace ${namespace}`], key });

describe('WorkerShares', () => {
  test('eight identities on one slow server (the issue): six of eight workers, two left for the others', () => {
    const shares = new WorkerShares(shareLimits(8));
    const held = Array.from({ length: 8 }, () => enter(shares, 'RemoteSync', 'slow', 'tenant'));
    expect(held.map((a) => a.ok)).toEqual([true, true, true, true, true, true, false, false]);
    expect(held[6]).toEqual({ ok: false, group: 'server slow' });
    // Another namespace's sync to another server goes on, twice at once.
    expect(enter(shares, 'RemoteSync', 'edge-1', 'other').ok).toBe(true);
    expect(enter(shares, 'RemoteSync', 'edge-1', 'other').ok).toBe(true);
  });

  test("one namespace's clusters on many servers: the namespace's share", () => {
    const shares = new WorkerShares(shareLimits(8));
    const held = Array.from({ length: 8 }, (_, i) => enter(shares, 'RemoteSync', `s${i}`, 'tenant'));
    expect(held.filter((a) => a.ok)).toHaveLength(6);
    expect(held[7]).toEqual({ ok: false, group: 'namespace tenant' });
  });

  test('past its share a group takes only what keeps the reserve free; within it, always', () => {
    const shares = new WorkerShares(shareLimits(8));
    for (let i = 0; i < 4; i++) expect(enter(shares, 'RemoteSync', 'a', 'na').ok).toBe(true);
    for (let i = 0; i < 2; i++) expect(enter(shares, 'RemoteSync', 'b', 'nb').ok).toBe(true);
    // Six in flight: a fifth for server a would leave one free, less than the reserve of two.
    expect(enter(shares, 'RemoteSync', 'a', 'na').ok).toBe(false);
    // Server b is within its share: it enters though the reserve is used.
    expect(enter(shares, 'RemoteSync', 'b', 'nb').ok).toBe(true);
  });

  test('leaving gives the worker back (once); pools are counted apart', () => {
    const shares = new WorkerShares(shareLimits(2));
    const first = enter(shares, 'RemoteSync', 'a', 'n');
    expect(first.ok).toBe(true);
    expect(enter(shares, 'RemoteSync', 'a', 'n').ok).toBe(false);
    expect(enter(shares, 'ProxySync', 'a', 'n').ok).toBe(true);
    if (first.ok) {
      first.leave();
      first.leave();
    }
    expect(shares.heldBy('RemoteSync', 'server a')).toBe(0);
    expect(enter(shares, 'RemoteSync', 'a', 'n').ok).toBe(true);
    expect(enter(shares, 'RemoteSync', 'a', 'n').ok).toBe(false);
  });

  test('a key turned away is woken once a worker is given back that it may take, oldest first, once; not by a timer', () => {
    const woken: string[] = [];
    const shares = new WorkerShares(shareLimits(8), (pool, key) => woken.push(`${pool} ${key}`));
    const held = Array.from({ length: 6 }, (_, i) => enter(shares, 'RemoteSync', 'slow', 'tenant', `tenant/drip-${i}`));
    expect(enter(shares, 'RemoteSync', 'slow', 'tenant', 'tenant/endless').ok).toBe(false);
    expect(enter(shares, 'RemoteSync', 'other', 'tenant', 'tenant/late').ok).toBe(false);
    expect(shares.waitingIn('RemoteSync')).toEqual(['tenant/endless', 'tenant/late']);
    // Another namespace's sync comes and goes: nothing it frees lets the tenant past its share and the reserve.
    const other = enter(shares, 'RemoteSync', 'edge-1', 'other', 'other/edge-1');
    expect(other.ok).toBe(true);
    if (other.ok) other.leave();
    expect(woken).toEqual([]);
    const first = held[0]!;
    if (first.ok) {
      first.leave();
      first.leave();
    }
    expect(woken).toEqual(['RemoteSync tenant/endless']);
    expect(shares.waitingIn('RemoteSync')).toEqual(['tenant/late']);
    // Woken, it enters (and is no longer waiting); the next worker given back wakes the next.
    expect(enter(shares, 'RemoteSync', 'slow', 'tenant', 'tenant/endless').ok).toBe(true);
    const second = held[1]!;
    if (second.ok) second.leave();
    expect(woken).toEqual(['RemoteSync tenant/endless', 'RemoteSync tenant/late']);
    expect(shares.waitingIn('RemoteSync')).toEqual([]);
  });

  test('the limits: half each, a quarter kept, at least one of each', () => {
    expect(shareLimits(8)).toEqual({ workers: 8, share: 4, reserve: 2 });
    expect(shareLimits(1)).toEqual({ workers: 1, share: 1, reserve: 1 });
    expect(shareLimits(3)).toEqual({ workers: 3, share: 2, reserve: 1 });
  });
});
