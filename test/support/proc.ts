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
  const inodes = socketInodes(pid);
  let n = 0;
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    for (const row of rows(table)) {
      const remotePort = parseInt(row.remote.slice(row.remote.lastIndexOf(':') + 1), 16);
      if (row.state === ESTABLISHED && remotePort === port && inodes.has(row.inode)) n++;
    }
  }
  return n;
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
