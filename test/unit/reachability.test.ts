// Reachability of a remote cluster: turned away while down, one probe at a
// time after a backoff, told when it answers again.
import { describe, expect, test } from '@jest/globals';
import { Reachability } from '../../src/clusters/reachability.js';

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
