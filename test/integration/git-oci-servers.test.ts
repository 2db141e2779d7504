// Lane: own clusters (none: this file reaches no cluster, so it runs beside the shared lane)
// The test servers of issue 48 themselves, where nothing else checks them: the
// Git server (test/support/git-server.ts, git-http-backend as a CGI) serves a
// repository made by test/support/git-repos.ts to `git clone` and counts what
// the clone asked for; its authentication refuses a clone without credentials
// and lets one with them through; a shallow fetch of a commit no ref points at
// works (uploadpack.allowReachableSHA1InWant); a redirect rule answers 302.
// The OCI registry (test/support/oci-registry.ts, syncprims-testservers) takes
// a Flux artifact pushed as `flux push artifact` lays it out and serves it back
// by tag and by digest through the counting front, which serves other bytes for
// a tampered layer; a cosign signature's layer verifies with the public key.
// The SSH server (git-ssh-server.ts) serves a clone to the allowed key, with
// the host key it wrote, and refuses another key.
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { execFile, execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { createVerify } from 'node:crypto';
import { gunzipSync } from 'node:zlib';
import { startGitServer, type GitServer } from '../support/git-server.js';
import { createBareRepo, gitEnv, manyFiles, type GitRepo } from '../support/git-repos.js';
import { startSshGitServer } from '../support/git-ssh-server.js';
import {
  COSIGN_SIGNATURE_ANNOTATION,
  cosignKeyPair,
  cosignPayload,
  FLUX_CONFIG,
  FLUX_CONTENT,
  sha256,
  startOciRegistry,
  type OciRegistry,
} from '../support/oci-registry.js';

const tmp = mkdtempSync(path.join(os.tmpdir(), 'git-oci-servers-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** `git <args>` as a client (no config, no prompt, in `tmp`), asynchronously: the server runs in this process. */
async function client(args: string[], env: NodeJS.ProcessEnv = {}): Promise<string> {
  try {
    const { stdout } = await promisify(execFile)('git', args, { cwd: tmp, env: { ...gitEnv(tmp), ...env } });
    return stdout.trim();
  } catch (err) {
    throw new Error(`git ${args.join(' ')}: ${(err as { stderr?: string }).stderr ?? String(err)}`);
  }
}

describe('the git server', () => {
  let server: GitServer;
  let repo: GitRepo;
  let first: string;
  let middle: string;
  let second: string;
  beforeAll(async () => {
    server = await startGitServer();
    repo = createBareRepo(server.root, 'org/app');
    first = await repo.commit({ 'a.yaml': 'a: 1\n', 'bin/run': { executable: '#!/bin/sh\n' }, link: { symlink: '../../etc/passwd' } });
    middle = await repo.commit({ 'b.yaml': 'b: 1\n' });
    second = await repo.commit({ 'a.yaml': 'a: 2\n', ...manyFiles(50) });
    repo.tag('v1.0.0', first);
    repo.tag('v1.1.0', second, 'release 1.1.0');
  });
  afterAll(() => server.close());

  test('a clone through it works and is counted: one ref advertisement, one ls-refs, one fetch', async () => {
    server.reset();
    const dir = path.join(tmp, 'clone');
    await client(['clone', '--quiet', '--depth', '1', '--branch', 'main', server.repoUrl('org/app'), dir]);
    expect(await client(['-C', dir, 'rev-parse', 'HEAD'])).toBe(second);
    expect(readFileSync(path.join(dir, 'a.yaml'), 'utf8')).toBe('a: 2\n');
    expect(readlinkSync(path.join(dir, 'link'))).toBe('../../etc/passwd');
    expect(server.counts('org/app')).toEqual({ refs: 1, 'ls-refs': 1, fetch: 1, negotiate: 0, push: 0, redirect: 0, unauthorized: 0, other: 0 });
    expect(server.requests.every((r) => r.status === 200 && r.gitProtocol === 'version=2')).toBe(true);
  });

  test('commits are deterministic, and tags light and annotated resolve', () => {
    expect(repo.rev('v1.0.0')).toBe(first);
    expect(repo.rev('v1.1.0^{commit}')).toBe(second);
    expect(repo.rev('v1.1.0')).not.toBe(second);
    const again = createBareRepo(server.root, 'org/again');
    return again.commit({ 'a.yaml': 'a: 1\n', 'bin/run': { executable: '#!/bin/sh\n' }, link: { symlink: '../../etc/passwd' } }).then((sha) => expect(sha).toBe(first));
  });

  test('a shallow fetch of a commit no ref points at works, over protocol v0 too', async () => {
    const dir = path.join(tmp, 'shallow');
    await client(['init', '--quiet', dir]);
    for (const version of ['2', '0']) {
      server.reset();
      await client(['-C', dir, '-c', `protocol.version=${version}`, 'fetch', '--quiet', '--depth', '1', server.repoUrl('org/app'), middle]);
      expect(await client(['-C', dir, 'rev-parse', 'FETCH_HEAD'])).toBe(middle);
      expect(server.count('org/app', 'fetch')).toBe(1);
      expect(server.count('org/app', 'negotiate')).toBe(version === '0' ? 1 : 0);
    }
  });

  test('a redirect rule answers 302 to the URL given, counted as a redirect', async () => {
    server.reset();
    // Only the Location header is read (redirect: 'manual'): nothing connects to 127.0.0.2.
    server.redirect('/moved.git', 'http://127.0.0.2:9/x.git');
    const res = await fetch(`${server.url}/moved.git/info/refs?service=git-upload-pack`, { redirect: 'manual' });
    expect(res.status).toBe(302);
    expect(res.headers.get('location')).toBe('http://127.0.0.2:9/x.git/info/refs?service=git-upload-pack');
    expect(server.counts('moved').redirect).toBe(1);
  });
});

describe('the git server with authentication', () => {
  let server: GitServer;
  beforeAll(async () => {
    server = await startGitServer({ auth: { username: 'robot', password: 's3cret' }, tls: true });
    await createBareRepo(server.root, 'private').commit({ 'a.yaml': 'a: 1\n' });
    writeFileSync(path.join(tmp, 'ca.pem'), server.caPem ?? '');
  });
  afterAll(() => server.close());
  const tls = { GIT_SSL_CAINFO: path.join(tmp, 'ca.pem') };

  test('a clone without credentials is refused (401), one with them works, over HTTPS', async () => {
    await expect(client(['ls-remote', server.repoUrl('private')], tls)).rejects.toThrow(/Authentication failed|could not read Username|terminal prompts disabled/);
    expect(server.count('private', 'unauthorized')).toBeGreaterThan(0);
    expect(server.count('private', 'refs')).toBe(0);
    const withCredentials = server.repoUrl('private').replace('https://', 'https://robot:s3cret@');
    expect(await client(['ls-remote', withCredentials, 'refs/heads/main'], tls)).toMatch(/^[0-9a-f]{40}\trefs\/heads\/main$/);
    expect(server.count('private', 'refs')).toBe(1);
  });

  test('a bearer token, when that is what it wants', async () => {
    server.reset();
    server.setAuth({ bearerToken: 'tok-123' });
    const header = (value: string): string[] => ['-c', `http.extraHeader=Authorization: ${value}`];
    await expect(client([...header('Bearer wrong'), 'ls-remote', server.repoUrl('private')], tls)).rejects.toThrow();
    expect(await client([...header('Bearer tok-123'), 'ls-remote', server.repoUrl('private'), 'refs/heads/main'], tls)).toMatch(/refs\/heads\/main$/);
    expect(server.requests.filter((r) => r.kind === 'refs').map((r) => r.authorization)).toEqual(['Bearer tok-123']);
  });
});

test('the local git config of this machine is not read', () => {
  expect(execFileSync('git', ['config', '--list', '--show-origin'], { env: gitEnv(tmp), cwd: tmp }).toString()).toBe('');
});

describe('the OCI registry', () => {
  let registry: OciRegistry;
  beforeAll(async () => {
    registry = await startOciRegistry({ basicAuth: { username: 'puller', password: 'p4ss' } });
  });
  afterAll(() => registry.close());

  test('takes a Flux artifact and serves it back by tag and digest, counted by the front', async () => {
    const pushed = await registry.pushFluxArtifact({ 'deploy/cm.yaml': 'kind: ConfigMap\n' }, { repo: 'org/app', tag: 'v1.0.0', revision: 'v1.0.0@sha1:' + 'a'.repeat(40) });
    expect(pushed.manifest.config.mediaType).toBe(FLUX_CONFIG);
    expect(pushed.manifest.config.size).toBe(233);
    expect(pushed.manifest.layers.map((l) => l.mediaType)).toEqual([FLUX_CONTENT]);
    expect(Object.keys(pushed.manifest.annotations ?? {})).toEqual(['org.opencontainers.image.created', 'org.opencontainers.image.revision', 'org.opencontainers.image.source']);
    const auth = { authorization: `Basic ${Buffer.from('puller:p4ss').toString('base64')}` };
    const front = `http://${registry.host}/v2/org/app`;
    expect((await fetch(`${front}/manifests/v1.0.0`)).status).toBe(401);
    registry.reset();
    const byTag = await fetch(`${front}/manifests/v1.0.0`, { headers: { ...auth, accept: pushed.manifest.mediaType } });
    expect(byTag.headers.get('docker-content-digest')).toBe(pushed.digest);
    expect(Buffer.from(await byTag.arrayBuffer())).toEqual(pushed.manifestBytes);
    const byDigest = await fetch(`${front}/manifests/${pushed.digest}`, { headers: auth });
    expect(sha256(Buffer.from(await byDigest.arrayBuffer()))).toBe(pushed.digest);
    const layer = Buffer.from(await (await fetch(`${front}/blobs/${pushed.layerDigest}`, { headers: auth })).arrayBuffer());
    expect(sha256(layer)).toBe(pushed.layerDigest);
    expect(gunzipSync(layer).includes('kind: ConfigMap')).toBe(true);
    expect(registry.counts('org/app')).toMatchObject({ manifests: 2, blobs: 1, uploads: 0 });
    expect((await registry.servers.counts())['GET manifests']).toBeGreaterThanOrEqual(3);
  });

  test('a tampered layer: the front serves other bytes of the same length under the digest', async () => {
    const pushed = await registry.pushTampered({ 'a.yaml': 'a: 1\n' }, { repo: 'org/tampered', tag: 'v1' });
    const auth = { authorization: `Basic ${Buffer.from('puller:p4ss').toString('base64')}` };
    const served = Buffer.from(await (await fetch(`http://${registry.host}/v2/org/tampered/blobs/${pushed.layerDigest}`, { headers: auth })).arrayBuffer());
    expect(served.length).toBe(pushed.layer.length);
    expect(sha256(served)).not.toBe(pushed.layerDigest);
  });

  test('a cosign signature: tag sha256-<hex>.sig, the payload naming the digest, verifiable with the public key only', async () => {
    const pushed = await registry.pushFluxArtifact({ 'a.yaml': 'a: 1\n' }, { repo: 'org/signed', tag: 'v1' });
    const key = cosignKeyPair();
    const sig = await registry.cosignSign(pushed.digest, key.privateKey, { repo: 'org/signed' });
    expect(sig.tag).toBe(`sha256-${pushed.digest.slice('sha256:'.length)}.sig`);
    const stored = JSON.parse((await registry.client.getManifest('org/signed', sig.tag)).bytes.toString()) as typeof sig.manifest;
    const signature = stored.layers[0]?.annotations?.[COSIGN_SIGNATURE_ANNOTATION] ?? '';
    const payload = await registry.client.getBlob('org/signed', stored.layers[0]?.digest ?? '');
    expect(payload).toEqual(cosignPayload(`${registry.host}/org/signed`, pushed.digest));
    const verifies = (pem: string): boolean => createVerify('sha256').update(payload).verify(pem, signature, 'base64');
    expect(verifies(key.publicKeyPem)).toBe(true);
    expect(verifies(cosignKeyPair().publicKeyPem)).toBe(false);
  });
});

test('the SSH server serves a clone to the allowed key with its host key, and refuses another key', async () => {
  const server = await startGitServer();
  const ssh = await startSshGitServer(server.root);
  try {
    const sha = await createBareRepo(server.root, 'org/ssh').commit({ 'a.yaml': 'a: 1\n' });
    const keyFile = path.join(tmp, 'id');
    writeFileSync(keyFile, ssh.identity, { mode: 0o600 });
    writeFileSync(path.join(tmp, 'other'), ssh.otherIdentity, { mode: 0o600 });
    writeFileSync(path.join(tmp, 'known'), `${ssh.knownHosts}\n`);
    writeFileSync(path.join(tmp, 'wrong'), `${ssh.wrongKnownHosts}\n`);
    const sshCommand = (key: string, known: string): NodeJS.ProcessEnv => ({
      GIT_SSH_COMMAND: `ssh -i ${path.join(tmp, key)} -o IdentitiesOnly=yes -o UserKnownHostsFile=${path.join(tmp, known)} -o StrictHostKeyChecking=yes -o BatchMode=yes`,
    });
    expect(await client(['ls-remote', ssh.repoUrl('org/ssh'), 'refs/heads/main'], sshCommand('id', 'known'))).toBe(`${sha}\trefs/heads/main`);
    await expect(client(['ls-remote', ssh.repoUrl('org/ssh')], sshCommand('other', 'known'))).rejects.toThrow(/Permission denied/);
    await expect(client(['ls-remote', ssh.repoUrl('org/ssh')], sshCommand('id', 'wrong'))).rejects.toThrow(/HOST IDENTIFICATION HAS CHANGED|Host key verification failed/);
    expect((await ssh.servers.counts())['ssh upload-pack']).toBe(1);
  } finally {
    await ssh.close();
    await server.close();
  }
});
