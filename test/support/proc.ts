// What a local process holds, read from /proc (Linux): its TCP connections.
import { readdir, readFile, readlink } from 'node:fs/promises';

const ESTABLISHED = '01';

/**
 * The established TCP connections of process `pid` to `port` on any address
 * (IPv4 and IPv6), counted from its socket file descriptors and the kernel's
 * connection tables: what the process holds, whatever its own metrics say.
 */
export async function tcpConnectionsTo(pid: number, port: number): Promise<number> {
  const inodes = new Set<string>();
  for (const fd of await readdir(`/proc/${pid}/fd`)) {
    const link = await readlink(`/proc/${pid}/fd/${fd}`).catch(() => '');
    const m = /^socket:\[(\d+)\]$/.exec(link);
    if (m?.[1]) inodes.add(m[1]);
  }
  const hexPort = port.toString(16).toUpperCase().padStart(4, '0');
  let count = 0;
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    const text = await readFile(table, 'utf8').catch(() => '');
    for (const line of text.split('\n').slice(1)) {
      const cols = line.trim().split(/\s+/);
      // sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
      const [, , remote, state, , , , , , inode] = cols;
      if (state === ESTABLISHED && remote?.endsWith(`:${hexPort}`) && inode && inodes.has(inode)) count++;
    }
  }
  return count;
}
