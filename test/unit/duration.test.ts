import { describe, expect, test } from '@jest/globals';
import { boundedDurationSchema, DURATION_PATTERN, intervalSchema, isDuration, parseDuration } from '../../src/api/duration.js';

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

  test.each([
    ['an interval', intervalSchema],
    ['a timeout', boundedDurationSchema],
  ])('%s no Go duration can hold is refused as too long, once (CEL would fail to convert it)', (_, schema) => {
    for (const ok of ['99999h', '9999999m', '999999999s', '999999999999ms', '99999h9999999m999999999s', '0.001h', '10000h59m59.999s']) {
      expect([ok, schema.safeParse(ok).success]).toEqual([ok, true]);
    }
    for (const long of ['99999999999h', '100000h', '10000000m', '1000000000s', '9999999999999999999ns']) {
      expect([long, schema.safeParse(long).error?.issues.map((i) => i.message)]).toEqual([long, [expect.stringMatching(/^is too long: at most 5 digits of hours/)]]);
    }
    // The largest accepted within 64 characters (seconds carry the most per character) still fits a Go duration (2,562,047h).
    expect(schema.safeParse('999999999s'.repeat(6)).success).toBe(true);
    expect(parseDuration('999999999s'.repeat(6)) / 3_600_000).toBeLessThan(2_562_047);
    expect(parseDuration('99999h'.repeat(10)) / 3_600_000).toBeLessThan(2_562_047);
  });

  test('the zod schema and the CRD rule use one pattern', () => {
    expect(boundedDurationSchema.safeParse('1h30m').success).toBe(true);
    expect(boundedDurationSchema.safeParse('0s').success).toBe(true);
    const bad = boundedDurationSchema.safeParse('90 seconds');
    expect(bad.success).toBe(false);
    expect(bad.error?.issues.map((i) => i.message)).toEqual([expect.stringMatching(/^must be a duration such as 30s, 5m or 1h30m/)]);
    // RE2 (CEL) has no lookarounds or backreferences, and the rule quotes it in '...'.
    expect(DURATION_PATTERN).not.toMatch(/['\\]|\(\?/);
  });
});
