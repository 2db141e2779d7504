// Reading an audit log from the lines of a given time on (test/support/audit-files.ts,
// offsetSince): a long-lived log is hundreds of MB, and the lines before that time
// are skipped by bisection on the time each line was written, never one of a request
// received since then.
import { describe, expect, test } from '@jest/globals';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { auditLogText, offsetSince } from '../support/audit-files.js';

const START = Date.parse('2026-11-28T09:00:00Z');
const iso = (ms: number): string => new Date(ms).toISOString();

/** An audit line received at `receivedMs` and written `tookMs` later, padded to about a kilobyte as real ones are. */
function line(n: number, receivedMs: number, tookMs = 5): string {
  const pad = 'x'.repeat(900);
  return `${JSON.stringify({ kind: 'Event', auditID: `id-${n}`, requestURI: `/api/v1/x/${pad}`, requestReceivedTimestamp: iso(receivedMs), stageTimestamp: iso(receivedMs + tookMs) })}\n`;
}

function log(lines: string[]): string {
  const file = path.join(mkdtempSync(path.join(tmpdir(), 'syncprims-audit-since-')), 'mgmt.audit.log');
  writeFileSync(file, lines.join(''));
  return file;
}

describe('an audit log read since a time', () => {
  // 2,000 lines, one every 100 ms (2 MB); the 1,000th is received 100 s after the first.
  const lines = Array.from({ length: 2000 }, (_, n) => line(n, START + n * 100));
  const file = log(lines);
  const since = START + 100_000;

  test('skips most of what was written before it, and keeps every line received since', () => {
    const offset = offsetSince(file, since);
    const skipped = lines.join('').slice(0, offset);
    // Well into the file (bisection, not a read from the start)...
    expect(offset).toBeGreaterThan(800 * lines[0]!.length);
    // ...at the start of a line, and none of those skipped was received since.
    expect(skipped.endsWith('\n')).toBe(true);
    expect(skipped.split('\n').filter(Boolean).every((l) => Date.parse((JSON.parse(l) as { requestReceivedTimestamp: string }).requestReceivedTimestamp) < since)).toBe(true);
    const text = auditLogText(file, since);
    expect(text).toBe(lines.join('').slice(offset));
    expect(text).toContain('"auditID":"id-1000"');
  });

  test('a long request written late (a watch ending) is after its time, not skipped', () => {
    const late = [...lines.slice(0, 1500), line(9999, since + 1, 40_000), ...lines.slice(1500)];
    expect(auditLogText(log(late), since)).toContain('"auditID":"id-9999"');
  });

  test('lines that do not say when they were written: read from the start', () => {
    const file2 = log(Array.from({ length: 200 }, (_, n) => `{"n":${n},"pad":"${'y'.repeat(1000)}"}\n`));
    expect(offsetSince(file2, since)).toBe(0);
  });

  test('a time before the log began, or after its end', () => {
    expect(offsetSince(file, START - 60_000)).toBe(0);
    expect(auditLogText(file, START + 10_000_000)).not.toContain('"auditID":"id-1000"');
  });
});
