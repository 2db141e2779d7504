import { describe, expect, test } from '@jest/globals';
import { DURATION_PATTERN, durationSchema, intervalSchema, isDuration, parseDuration } from '../../src/api/duration.js';

describe('parseDuration', () => {
  test.each([
    ['30s', 30_000],
    ['5m', 300_000],
    ['10m', 600_000],
    ['1h30m', 5_400_000],
    ['1h', 3_600_000],
    ['1.5h', 5_400_000],
    ['2h45m30s', 9_930_000],
    ['250ms', 250],
    ['1m0.5s', 60_500],
    ['1500us', 1.5],
    ['1500µs', 1.5],
    ['2000000ns', 2],
    ['0s', 0],
    ['1s1s', 2000],
  ])('%s is %d ms', (text, ms) => {
    expect(parseDuration(text)).toBe(ms);
  });

  test.each(['', '5', '5 m', '5min', '1d', '-5m', '+5m', 'm', '.5s', '5.s', '1h 30m', ' 5m', '5m ', 'PT5M', '5M'])(
    '%j is refused with a message saying what is expected',
    (text) => {
      expect(isDuration(text)).toBe(false);
      expect(() => parseDuration(text)).toThrow(
        `invalid duration ${JSON.stringify(text)}: must be a duration such as 30s, 5m or 1h30m`,
      );
    },
  );

  test('an interval is a duration of 1s at least', () => {
    for (const ok of ['1s', '1.5s', '1000ms', '1000000us', '10m', '1h30m']) expect([ok, intervalSchema.safeParse(ok).success]).toEqual([ok, true]);
    for (const hot of ['0s', '999ms', '0.5s', '1us']) {
      const parsed = intervalSchema.safeParse(hot);
      expect([hot, parsed.error?.issues.map((i) => i.message)]).toEqual([hot, [expect.stringMatching(/^must be at least 1s/)]]);
    }
    // Not a duration: said once, as for any duration.
    expect(intervalSchema.safeParse('1d').error?.issues.map((i) => i.message)).toEqual([expect.stringMatching(/^must be a duration/)]);
  });

  test('the zod schema and the CRD rule use one pattern', () => {
    expect(durationSchema.safeParse('1h30m').success).toBe(true);
    const bad = durationSchema.safeParse('90 seconds');
    expect(bad.success).toBe(false);
    expect(bad.error?.issues[0]?.message).toMatch(/^must be a duration such as 30s, 5m or 1h30m/);
    // RE2 (CEL) has no lookarounds or backreferences, and the rule quotes it in '...'.
    expect(DURATION_PATTERN).not.toMatch(/['\\]|\(\?/);
  });
});
