// A file that holds a credential (a join bundle's token), written readable by
// its owner only: into a new file of mode 0600 beside it, renamed over it.
// Writing into the file itself would keep the mode of one that exists (0644,
// say), and a reader could catch it half written.
import { closeSync, fchmodSync, openSync, renameSync, rmSync, writeSync } from 'node:fs';
import path from 'node:path';

/** Writes `text` to `file` (mode 0600, whole or not at all); what failed is thrown as the file system said it. */
export function writePrivateFile(file: string, text: string): void {
  const tmp = path.join(path.dirname(file), `.${path.basename(file)}.${process.pid}.tmp`);
  try {
    const fd = openSync(tmp, 'wx', 0o600);
    try {
      fchmodSync(fd, 0o600); // exactly 0600, whatever the umask took away
      writeSync(fd, text);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, file);
  } catch (err) {
    rmSync(tmp, { force: true });
    throw err;
  }
}
