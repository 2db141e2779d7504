// What a local process holds, read from /proc (Linux): its TCP connections,
// counted from the kernel's tables to check what a client says of itself.
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';

const ESTABLISHED = '01';

/**
 * The established TCP connections of process `pid` (or this one) to `port` on
 * any address (IPv4 and IPv6), from its socket file descriptors and the
 * kernel's connection tables. Synchronous, so it can be sampled often.
 */
export function establishedTo(port: number, pid: number | 'self' = 'self'): number {
  return establishedSockets(port, pid).size;
}

/**
 * The socket inodes of `establishedTo`'s connections: a test that compares two
 * samples counts the connections opened between them (and those of the first
 * still open), whatever else closed meanwhile.
 */
export function establishedSockets(port: number, pid: number | 'self' = 'self'): Set<string> {
  const inodes = socketInodes(pid);
  const found = new Set<string>();
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    for (const row of rows(table)) {
      const remotePort = parseInt(row.remote.slice(row.remote.lastIndexOf(':') + 1), 16);
      if (row.state === ESTABLISHED && remotePort === port && inodes.has(row.inode)) found.add(row.inode);
    }
  }
  return found;
}

/** How many of the connections `establishedSockets` finds now were not in `before`. */
export function openedSince(before: Set<string>, port: number): number {
  return [...establishedSockets(port)].filter((inode) => !before.has(inode)).length;
}

/** `establishedTo` of another process, as a promise (for callers that chain it). */
export async function tcpConnectionsTo(pid: number, port: number): Promise<number> {
  return establishedTo(port, pid);
}

function socketInodes(pid: number | 'self'): Set<string> {
  const inodes = new Set<string>();
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
      if (m?.[1]) inodes.add(m[1]);
    } catch {
      // closed meanwhile
    }
  }
  return inodes;
}

function rows(table: string): { remote: string; state: string; inode: string }[] {
  let text: string;
  try {
    text = readFileSync(table, 'utf8');
  } catch {
    return [];
  }
  return text
    .split('\n')
    .slice(1)
    .map((line) => line.trim().split(/\s+/))
    .filter((f) => f.length > 9)
    .map((f) => ({ remote: f[2] ?? '', state: f[3] ?? '', inode: f[9] ?? '' }));
}
