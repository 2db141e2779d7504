// The audit log readers that tests and benchmarks count writes with
// (test/support/audit-files.ts), across a rotation as the API server's
// log writer makes it: the full file renamed to `<name>-<time>.log`, a new one begun.
import { describe, expect, test } from '@jest/globals';
import { appendFileSync, mkdtempSync, renameSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { auditLogTail, auditLogText, rotatedAuditLogs } from '../support/audit-files.js';

function rotate(file: string, at: string): string {
  const backup = file.replace(/\.log$/, `-${at}.log`);
  renameSync(file, backup);
  writeFileSync(file, '');
  return backup;
}

describe('audit log files', () => {
  test('what a log gained since an offset, across a rotation: the rest of the old file, then the new one', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'syncprims-audit-'));
    const file = path.join(dir, 'mgmt.audit.log');
    writeFileSync(file, 'a\nb\n');
    const offset = 4;
    appendFileSync(file, 'c\nd\n');
    expect(auditLogTail(file, offset)).toBe('c\nd\n');
    rotate(file, '2026-11-26T17-02-54.697');
    appendFileSync(file, 'e\n');
    expect(auditLogTail(file, offset)).toBe('c\nd\ne\n');
    // Another cluster's log in the same folder is not taken for a rotated copy.
    writeFileSync(path.join(dir, 'mgmt-2.audit.log'), 'x\n');
    expect(rotatedAuditLogs(file).map((f) => path.basename(f))).toEqual(['mgmt.audit-2026-11-26T17-02-54.697.log']);
  });

  test('the text since a time: rotated copies written since then, oldest first, then the current file', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'syncprims-audit-'));
    const file = path.join(dir, 'edge-1.audit.log');
    writeFileSync(file, 'old\n');
    const old = rotate(file, '2026-11-25T10-00-00.000');
    utimesSync(old, new Date('2026-11-25T10:00:00Z'), new Date('2026-11-25T10:00:00Z'));
    appendFileSync(file, 'before\n');
    rotate(file, '2026-11-26T12-00-00.000');
    appendFileSync(file, 'after\n');
    expect(auditLogText(file, Date.parse('2026-11-26T00:00:00Z'))).toBe('before\nafter\n');
    expect(auditLogText(path.join(dir, 'none.audit.log'), 0)).toBe('');
  });

  test('only whole lines: not one still being written at the end, nor one the offset falls inside', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'syncprims-audit-'));
    const file = path.join(dir, 'edge-2.audit.log');
    writeFileSync(file, '{"a":1}\n{"b":');
    expect(auditLogText(file, 0)).toBe('{"a":1}\n');
    expect(auditLogTail(file, 0)).toBe('{"a":1}\n');
    const inside = 3;
    appendFileSync(file, '2}\n{"c":3}\n{"d"');
    expect(auditLogTail(file, inside)).toBe('{"b":2}\n{"c":3}\n');
    // An offset at the start of a line keeps that line.
    expect(auditLogTail(file, '{"a":1}\n'.length)).toBe('{"b":2}\n{"c":3}\n');
    expect(auditLogTail(file, '{"a":1}\n{"b":2}\n'.length)).toBe('{"c":3}\n');
  });
});
