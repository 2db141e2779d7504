// The client-side rate limit of remote clusters: burst at once, then qps.
import { describe, expect, test } from '@jest/globals';
import { TokenBucket } from '../../src/kube/token-bucket.js';

describe('TokenBucket', () => {
  test('burst requests go at once, the next wait 1/qps each, in order', () => {
    const now = 0;
    const b = new TokenBucket(10, 3, () => now);
    expect([b.reserve(), b.reserve(), b.reserve()]).toEqual([0, 0, 0]);
    expect(b.reserve()).toBeCloseTo(100);
    expect(b.reserve()).toBeCloseTo(200);
    expect(b.throttledMilliseconds).toBeCloseTo(300);
  });

  test('tokens come back with time, up to burst', () => {
    let now = 0;
    const b = new TokenBucket(10, 2, () => now);
    b.reserve();
    b.reserve();
    now += 10_000;
    expect([b.reserve(), b.reserve()]).toEqual([0, 0]);
    expect(b.reserve()).toBeCloseTo(100);
  });

  test('take() waits, and gives up when aborted', async () => {
    const b = new TokenBucket(1, 1);
    await b.take();
    const abort = new AbortController();
    const waiting = b.take(abort.signal);
    abort.abort(new Error('deadline'));
    await expect(waiting).rejects.toThrow('deadline');
  });

  test('nonsense limits are refused', () => {
    expect(() => new TokenBucket(0, 1)).toThrow('want qps > 0 and burst >= 1');
    expect(() => new TokenBucket(5, 0)).toThrow('want qps > 0 and burst >= 1');
  });
});
