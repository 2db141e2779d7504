// A Git server over SSH on loopback for tests (issue 48): syncprims-testservers'
// SSH server (git-upload-pack of the bare repositories under a root, e.g. a
// git-server.ts root, so one repository is served over HTTP and SSH alike) with
// one client key allowed in, made here with ssh-keygen (OpenSSH format, as a
// Flux SSH Secret's `identity`), the server's known_hosts line, and another
// host key's line for the same address (a wrong host key).
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startTestServers, type TestServers } from './oci-registry.js';

export interface SshGitServer {
  /** `127.0.0.1:<port>` */
  address: string;
  /** `ssh://git@127.0.0.1:<port>/<name>.git` */
  repoUrl(name: string): string;
  /** The client's private key (OpenSSH PEM, no passphrase): the Secret's `identity`. */
  identity: string;
  /** The client's key encrypted with `passphrase` (the Secret's `identity` and `password`). */
  identityWithPassphrase: { identity: string; passphrase: string };
  /** The client's public key (authorized_keys line). */
  publicKey: string;
  /** Another key, not allowed in. */
  otherIdentity: string;
  /** The server's host key as a known_hosts line (`[127.0.0.1]:<port> ssh-ed25519 …`). */
  knownHosts: string;
  /** A known_hosts line for the same address with another host key. */
  wrongKnownHosts: string;
  /** Counts of testservers: `ssh connections`, `ssh sessions`, `ssh upload-pack`. */
  servers: TestServers;
  close(): Promise<void>;
}

/** ssh-keygen's key pair (ed25519, OpenSSH format) in `dir`: private key and public line. */
export function sshKeyPair(dir: string, name: string, passphrase = ''): { privateKey: string; publicKey: string } {
  const file = path.join(dir, name);
  execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', passphrase, '-C', `syncprims-test-${name}`, '-f', file], { stdio: 'pipe' });
  return { privateKey: readFileSync(file, 'utf8'), publicKey: readFileSync(`${file}.pub`, 'utf8').trim() };
}

/** Starts the SSH server for the bare repositories under `root` (`<root>/<name>.git`). */
export async function startSshGitServer(root: string): Promise<SshGitServer> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'syncprims-ssh-'));
  try {
    const client = sshKeyPair(dir, 'client');
    const other = sshKeyPair(dir, 'other');
    // The client's own key, encrypted with a passphrase.
    copyFileSync(path.join(dir, 'client'), path.join(dir, 'locked'));
    execFileSync('ssh-keygen', ['-q', '-p', '-P', '', '-N', 'passphrase-1', '-f', path.join(dir, 'locked')], { stdio: 'pipe' });
    const locked = readFileSync(path.join(dir, 'locked'), 'utf8');
    const known = path.join(dir, 'known_hosts');
    const servers = await startTestServers(['-ssh', '-ssh-root', root, '-ssh-authorized-key', path.join(dir, 'client.pub'), '-ssh-known-hosts', known]);
    const address = servers.addresses.ssh ?? '';
    const knownHosts = readFileSync(known, 'utf8').trim();
    const wrongHostKey = sshKeyPair(dir, 'wrong-host').publicKey.split(' ').slice(0, 2).join(' ');
    return {
      address,
      repoUrl: (name) => `ssh://git@${address}/${name}.git`,
      identity: client.privateKey,
      identityWithPassphrase: { identity: locked, passphrase: 'passphrase-1' },
      publicKey: client.publicKey,
      otherIdentity: other.privateKey,
      knownHosts,
      wrongKnownHosts: `${knownHosts.split(' ')[0]} ${wrongHostKey}`,
      servers,
      close: () => servers.stop(),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
