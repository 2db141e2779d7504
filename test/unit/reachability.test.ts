// Reachability of a remote cluster: turned away while down, one probe at a
// time after a backoff, told when it answers again.
import { describe, expect, test } from '@jest/globals';
import { failureScopeOf, IdentityReachability, Reachability } from '../../src/clusters/reachability.js';

describe('Reachability', () => {
  test('reachable until a request gets no answer; then callers are turned away until the backoff lets one probe', () => {
    let now = 1_000_000;
    const r = new Reachability({ backoff: { initialMs: 1_000, maxMs: 8_000 }, now: () => now });
    expect(r.admit()).toEqual({ go: true, probe: false });
    r.failed('connect ECONNREFUSED 127.0.0.1:6443');
    expect(r.reachable).toBe(false);
    const away = r.admit();
    expect(away.go).toBe(false);
    expect(away.go === false && away.message).toBe('connect ECONNREFUSED 127.0.0.1:6443 (never reached)');
    // After the backoff (1 s, jitter up to +10%), exactly one caller probes.
    now += 1_200;
    expect(r.admit()).toEqual({ go: true, probe: true });
    expect(r.admit().go).toBe(false);
    // The probe fails: the next one waits longer (2 s).
    r.failed('still refused');
    now += 1_200;
    expect(r.admit().go).toBe(false);
    now += 1_200;
    expect(r.admit()).toEqual({ go: true, probe: true });
  });

  test('failures of ordinary requests while down do not push the next probe further away', () => {
    let now = 0;
    const r = new Reachability({ backoff: { initialMs: 1_000, maxMs: 8_000 }, now: () => now });
    r.failed('a');
    r.failed('b');
    r.failed('c');
    now += 1_200;
    expect(r.admit()).toEqual({ go: true, probe: true });
  });

  test('an answer makes it reachable again; listeners hear each change once, not each request; the first error is told', () => {
    let now = Date.parse('2026-11-23T10:00:00Z');
    const r = new Reachability({ now: () => now });
    const changes: boolean[] = [];
    r.onChange((reachable) => changes.push(reachable));
    r.answered();
    expect(changes).toEqual([]);
    now += 5_000;
    r.failed('timeout');
    r.failed('refused');
    expect(r.describe()).toBe('timeout (last reached 2026-11-23T10:00:00.000Z)');
    r.answered();
    r.answered();
    expect(changes).toEqual([false, true]);
    expect(r.reachable).toBe(true);
    expect(r.admit()).toEqual({ go: true, probe: false });
  });
});

describe('IdentityReachability: what one identity knows, apart from the other identities of its server', () => {
  let now = 1_000_000;
  const backoff = { initialMs: 1_000, maxMs: 8_000 };
  const make = () => {
    const server = new Reachability({ backoff, now: () => now });
    const ids = ['a', 'b'].map(() => new IdentityReachability(new Reachability({ backoff, now: () => now }), server));
    return { server, a: ids[0]!, b: ids[1]! };
  };

  test.each([
    ['no answer from https://127.0.0.1:6443: connect ECONNREFUSED 127.0.0.1:6443', 'server'],
    ['no answer from https://edge.example: getaddrinfo ENOTFOUND edge.example', 'server'],
    ['no answer from https://127.0.0.1:6443: no TLS connection within 5000 ms', 'server'],
    ['no answer from https://127.0.0.1:6443: connection to 127.0.0.1 refused: the address is in 127.0.0.0/8, which --source-deny-cidrs denies; nothing was sent', 'server'],
    ['no answer from https://127.0.0.1:6443: no answer within 15000 ms', 'identity'],
    ['no answer from https://127.0.0.1:6443: read ECONNRESET', 'identity'],
    ['no answer from https://127.0.0.1:6443: socket hang up', 'identity'],
  ])('%s: the failure of the %s', (error, scope) => {
    expect(failureScopeOf(error)).toBe(scope);
  });

  test("one identity's own failure (a timeout, a reset) turns away only that identity", () => {
    const { a, b } = make();
    a.failed('no answer within 15000 ms');
    expect(a.reachable).toBe(false);
    expect(a.admit().go).toBe(false);
    expect(b.reachable).toBe(true);
    expect(b.admit()).toEqual({ go: true, probe: false });
    // The other's answers do not end it: only its own does.
    b.answered();
    expect(a.reachable).toBe(false);
    a.answered();
    expect(a.reachable).toBe(true);
  });

  test("the server's failure (refused) turns every identity away at once, one probing for all; any identity's answer ends it", () => {
    const { a, b } = make();
    const told: string[] = [];
    a.onChange((up) => told.push(`a ${up}`));
    b.onChange((up) => told.push(`b ${up}`));
    a.failed('connect ECONNREFUSED 127.0.0.1:6443');
    expect([a.reachable, b.reachable]).toEqual([false, false]);
    expect(b.describe()).toBe('connect ECONNREFUSED 127.0.0.1:6443 (never reached)');
    now += 1_200;
    expect(b.admit()).toEqual({ go: true, probe: true });
    expect(a.admit().go).toBe(false);
    b.answered();
    expect([a.reachable, b.reachable]).toEqual([true, true]);
    expect(told).toEqual(['a false', 'b false', 'a true', 'b true']);
  });

  test('an identity down on its own stays down when the server comes back for another, but is told, and probes at once', () => {
    const { a, b } = make();
    const told: boolean[] = [];
    a.onChange((up) => told.push(up));
    // A server going away: a's connection reset first (its own), then refused (the server's).
    a.failed('read ECONNRESET');
    b.failed('connect ECONNREFUSED 127.0.0.1:6443');
    b.answered();
    expect(b.reachable).toBe(true);
    expect(a.reachable).toBe(false);
    expect(a.describe()).toBe('read ECONNRESET (never reached)');
    // Not its backoff: the next admission probes it.
    expect(told).toEqual([false, false]);
    expect(a.admit()).toEqual({ go: true, probe: true });
    a.answered();
    expect(told).toEqual([false, false, true]);
  });

  test('a server going away (reset, then refused) is one outage, told by the error that began it; whichever began first', () => {
    const { a, b } = make();
    a.failed('read ECONNRESET');
    now += 500;
    a.failed('connect ECONNREFUSED 127.0.0.1:6443');
    expect(a.reachable).toBe(false);
    expect(a.describe()).toBe('read ECONNRESET (never reached)');
    expect(a.snapshot()).toEqual({ reachable: false, error: 'read ECONNRESET' });
    // The other identity was not reset: the server's refusal is its outage.
    expect(b.describe()).toBe('connect ECONNREFUSED 127.0.0.1:6443 (never reached)');
    // The server's first, then a's own (a probe timing out): still the server's.
    b.answered();
    now += 500;
    b.failed('connect ECONNREFUSED 127.0.0.1:6443');
    now += 1_200;
    expect(b.admit()).toEqual({ go: true, probe: true });
    b.probeFailed('no answer within 15000 ms');
    expect(b.describe()).toBe(`connect ECONNREFUSED 127.0.0.1:6443 (last reached ${new Date(now - 1_700).toISOString()})`);
  });

  test("closed, it follows its server no more", () => {
    const { a, b } = make();
    const told: boolean[] = [];
    a.onChange((up) => told.push(up));
    a.close();
    b.failed('connect ECONNREFUSED 127.0.0.1:6443');
    expect(told).toEqual([]);
  });

  test("a failed probe gives its slot back to whichever outage let it through, and backs off", () => {
    const { a, b } = make();
    a.failed('connect ECONNREFUSED 127.0.0.1:6443');
    now += 1_200;
    expect(a.admit()).toEqual({ go: true, probe: true });
    // Its own timeout, during the server's probe: the server's probe is over (next after a longer backoff), and a is down on its own too.
    a.probeFailed('no answer within 5000 ms');
    expect(b.admit().go).toBe(false);
    now += 2_400; // the longest second backoff: 2 s and 20% of jitter
    expect(b.admit()).toEqual({ go: true, probe: true });
    b.answered();
    expect(b.reachable).toBe(true);
    expect(a.reachable).toBe(false);
    now += 10_000;
    expect(a.admit()).toEqual({ go: true, probe: true });
    a.probeFailed('connect ECONNREFUSED 127.0.0.1:6443');
    // Its own probe found the server refusing: every identity is turned away again, and a's own probe is over.
    expect(b.reachable).toBe(false);
    now += 10_000;
    expect(a.admit()).toEqual({ go: true, probe: true });
  });

  test('forget(): new credentials end an outage of the old ones, told as reachable', () => {
    const { a } = make();
    const told: boolean[] = [];
    a.onChange((up) => told.push(up));
    a.failed('read ECONNRESET');
    a.own.forget();
    expect(a.reachable).toBe(true);
    expect(told).toEqual([false, true]);
  });
});
