// An API server's audit log, read across its rotation. The local control
// plane starts each kube-apiserver with --audit-log-maxsize=200 (MB) and
// --audit-log-maxbackup=1: a long-lived cluster's log (mgmt's, a benchmark's)
// is renamed to `<name>-<time>.log` when it reaches 200 MB and a new one is
// begun. A reader of the current file alone then misses what was written
// before the rotation: a count of writes comes out short, and a test that
// expects none passes whatever happened.
import { closeSync, existsSync, openSync, readdirSync, readSync, statSync } from 'node:fs';
import path from 'node:path';

/** The rotated copies of an audit log, oldest first (their names carry the time of the rotation). */
export function rotatedAuditLogs(file: string): string[] {
  const dir = path.dirname(file);
  const ext = path.extname(file);
  const prefix = `${path.basename(file, ext)}-`;
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((f) => f.startsWith(prefix) && f.endsWith(ext))
    .sort()
    .map((f) => path.join(dir, f));
}

/**
 * The text of an audit log written since `sinceMs` (epoch ms): the rotated
 * copies last written since then, oldest first, then the current file, each
 * from where its lines of that time begin (offsetSince: a long-lived log is
 * hundreds of MB, and reading it whole took seconds per call). Some lines
 * older than `sinceMs` are still in it; callers filter by their timestamps.
 */
export function auditLogText(file: string, sinceMs: number): string {
  const parts = rotatedAuditLogs(file)
    .filter((f) => statSync(f).mtimeMs >= sinceMs)
    .map((f) => readFrom(f, offsetSince(f, sinceMs)));
  if (existsSync(file)) parts.push(readFrom(file, offsetSince(file, sinceMs)));
  return wholeLines(parts.join(''));
}

/** How far out of order the API server may write its lines (by stageTimestamp), with room to spare. */
const OUT_OF_ORDER_MS = 10_000;
/** Below this many bytes, bisection stops: they are read. */
const CLOSE_ENOUGH = 64 * 1024;
const STAGE_FIELD = '"stageTimestamp":"';

/**
 * Where the lines of an audit log written at `sinceMs` or later begin, found
 * by bisection on the stageTimestamp of its lines (the time each was written,
 * so they come in its order): the start of a line written before `sinceMs`
 * (less OUT_OF_ORDER_MS), or 0. A request received since then ends since
 * then, so no line before that offset is one of its. A line without the
 * field stops the bisection there (the offset stays before it).
 */
export function offsetSince(file: string, sinceMs: number): number {
  const size = statSync(file).size;
  const fd = openSync(file, 'r');
  try {
    let lo = 0;
    let hi = size;
    while (hi - lo > CLOSE_ENOUGH) {
      const mid = Math.floor((lo + hi) / 2);
      const line = lineAfter(fd, mid, hi);
      if (line && line.writtenMs < sinceMs - OUT_OF_ORDER_MS) lo = line.start;
      else hi = mid;
    }
    return lo;
  } finally {
    closeSync(fd);
  }
}

/** The first whole line that begins after `offset` and before `end`, with the time it was written; undefined if none (or none says). */
function lineAfter(fd: number, offset: number, end: number): { start: number; writtenMs: number } | undefined {
  const buffer = Buffer.alloc(Math.min(CLOSE_ENOUGH, end - offset));
  const read = buffer.subarray(0, readSync(fd, buffer, 0, buffer.length, offset));
  const newline = read.indexOf(0x0a);
  const lineEnd = read.indexOf(0x0a, newline + 1);
  if (newline < 0 || lineEnd < 0) return undefined;
  const line = read.subarray(newline + 1, lineEnd).toString('utf8');
  const at = line.indexOf(STAGE_FIELD);
  if (at < 0) return undefined;
  const from = at + STAGE_FIELD.length;
  const writtenMs = Date.parse(line.slice(from, line.indexOf('"', from)));
  return Number.isNaN(writtenMs) ? undefined : { start: offset + newline + 1, writtenMs };
}

/**
 * The text an audit log gained since it was `offset` bytes long. If it has
 * been rotated since (it is shorter now), that is the newest rotated copy
 * from `offset` on, then the whole current file.
 */
export function auditLogTail(file: string, offset: number): string {
  const size = existsSync(file) ? statSync(file).size : 0;
  if (size >= offset) return wholeLines(linesFrom(file, offset));
  const backup = rotatedAuditLogs(file).pop();
  return wholeLines((backup ? linesFrom(backup, offset) : '') + readFrom(file, 0));
}

/**
 * Without the last line when it is still being written: the API server
 * appends a line at a time, and a reader may catch one half written (its
 * JSON cut short).
 */
function wholeLines(text: string): string {
  return text.slice(0, text.lastIndexOf('\n') + 1);
}

/** A file's lines that begin at `offset` or after: one being written when `offset` was taken belongs before it. */
function linesFrom(file: string, offset: number): string {
  if (offset === 0) return readFrom(file, 0);
  const text = readFrom(file, offset - 1);
  const end = text.indexOf('\n');
  return end < 0 ? '' : text.slice(end + 1);
}

/** A file from `offset` on, read from there (a long-lived log is hundreds of MB). */
function readFrom(file: string, offset: number): string {
  if (!existsSync(file)) return '';
  const size = statSync(file).size;
  if (offset >= size) return '';
  const buffer = Buffer.alloc(size - offset);
  const fd = openSync(file, 'r');
  try {
    readSync(fd, buffer, 0, buffer.length, offset);
  } finally {
    closeSync(fd);
  }
  return buffer.toString('utf8');
}
