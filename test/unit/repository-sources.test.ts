// The pure parts of Git and OCI sources (issue 48): the schema's URLs and
// refs, the process cache (one resolution per interval, in-flight sharing,
// a push forgetting a repository's listings, trees bounded), a repository's
// identity across https and ssh URLs, the URLs a push event names, and a
// FleetSync's template pinned to what its ref names.
import { describe, expect, test } from '@jest/globals';
import { gitSourceSchema, ociSourceSchema } from '../../src/api/repository-sources.js';
import type { RevisionData } from '../../src/fleet/children.js';
import { movingSource, pinSources } from '../../src/fleet/pin-sources.js';
import type { Fetched, Resolution } from '../../src/source/fetch-helper.js';
import { pushedUrls } from '../../src/source/push-events.js';
import { RepositoryCache, repositoryIdentity } from '../../src/source/repository-cache.js';

const resolution = (resolved: string): Resolution => ({ revision: `main@sha1:${resolved}`, resolved });
const tree = (bytes: number): Fetched => ({ ...resolution('c'), name: 'tree.tar.gz', data: Buffer.alloc(bytes) });

describe('the schema', () => {
  test('Git URLs: https, http, ssh and scp-like; credentials in the URL are refused', () => {
    for (const url of ['https://example.invalid/org/repo.git', 'http://127.0.0.1:8080/repo.git', 'ssh://git@127.0.0.1:2222/org/repo.git', 'git@example.invalid:org/repo.git']) {
      expect(gitSourceSchema.safeParse({ url }).success).toBe(true);
    }
    for (const url of ['https://user:pw@example.invalid/repo.git', 'file:///etc', 'ftp://example.invalid/r', 'https://example.invalid']) {
      expect(gitSourceSchema.safeParse({ url }).success).toBe(false);
    }
  });

  test('refs: one of branch, tag and semver; a commit alone or with a branch or tag, never with a range', () => {
    const ok = (ref: object) => gitSourceSchema.safeParse({ url: 'https://h.invalid/r.git', ref }).success;
    const commit = 'a'.repeat(40);
    expect([ok({ branch: 'main' }), ok({ commit }), ok({ branch: 'main', commit }), ok({ tag: 'v1', commit })]).toEqual([true, true, true, true]);
    expect([ok({ branch: 'main', tag: 'v1' }), ok({ semver: '^1', commit }), ok({ commit: 'abc' })]).toEqual([false, false, false]);
    const oci = (ref: object) => ociSourceSchema.safeParse({ url: 'oci://127.0.0.1:5000/apps', ref }).success;
    const digest = `sha256:${'b'.repeat(64)}`;
    expect([oci({ tag: 'v1' }), oci({ digest }), oci({ tag: 'v1', digest }), oci({ tag: 'v1', semver: '^1' }), oci({ semver: '^1', digest })]).toEqual([true, true, true, false, false]);
    expect(ociSourceSchema.safeParse({ url: 'oci://127.0.0.1:5000/apps:v1' }).success).toBe(false);
  });
});

describe('the repository cache', () => {
  test('one resolution while it is young or in flight; a failed one is not kept; a push forgets the repository', async () => {
    let now = 0;
    const cache = new RepositoryCache({ maxTreeBytes: 100, maxTrees: 10, now: () => now });
    let loads = 0;
    const load = async () => resolution(String(++loads));
    const url = 'https://h.invalid/org/repo.git';
    const [a, b] = await Promise.all([cache.resolve('k', url, 0, load), cache.resolve('k', url, 0, load)]);
    expect([a.resolved, b.resolved, loads]).toEqual(['1', '1', 1]);
    now = 9_999;
    expect((await cache.resolve('k', url, 10_000, load)).resolved).toBe('1');
    now = 10_000;
    expect((await cache.resolve('k', url, 10_000, load)).resolved).toBe('2');
    expect(cache.forget('git@h.invalid:org/repo')).toBe(1);
    expect((await cache.resolve('k', url, 10_000, load)).resolved).toBe('3');
    await expect(cache.resolve('bad', url, 10_000, () => Promise.reject(new Error('unreachable')))).rejects.toThrow('unreachable');
    expect((await cache.resolve('bad', url, 10_000, load)).resolved).toBe('4');
    expect(cache.counts.resolutions).toBe(5);
  });

  test('trees are fetched once and kept within their bytes, the least recently used dropped first', async () => {
    const cache = new RepositoryCache({ maxTreeBytes: 100, maxTrees: 10 });
    let fetches = 0;
    const fetch = (bytes: number) => async () => (fetches++, tree(bytes));
    await Promise.all([cache.tree('a', fetch(40)), cache.tree('a', fetch(40))]);
    await cache.tree('b', fetch(40));
    await cache.tree('a', fetch(40)); // used: b is now the oldest
    await cache.tree('c', fetch(40)); // 120 bytes: b goes
    expect(fetches).toBe(3);
    await cache.tree('a', fetch(40));
    await cache.tree('b', fetch(40));
    expect(fetches).toBe(4);
  });

  test("a repository's identity: host and path, whatever the scheme, user, .git or trailing slash", () => {
    const id = 'github.invalid/org/repo';
    for (const url of ['https://github.invalid/org/repo.git', 'git@github.invalid:org/repo.git', 'ssh://git@github.invalid/org/repo', 'https://GitHub.invalid/org/repo/']) {
      expect(repositoryIdentity(url)).toBe(id);
    }
    expect(repositoryIdentity('http://127.0.0.1:8080/repo.git')).toBe('127.0.0.1:8080/repo');
    expect(repositoryIdentity('oci://127.0.0.1:5000/apps')).toBe('127.0.0.1:5000/apps');
  });
});

describe('push events', () => {
  test("GitHub's, GitLab's and a generic body's URLs; nothing from a body that is not JSON", () => {
    expect(pushedUrls(JSON.stringify({ repository: { clone_url: 'https://g.invalid/o/r.git', ssh_url: 'git@g.invalid:o/r.git', name: 'r' } }))).toEqual(['https://g.invalid/o/r.git', 'git@g.invalid:o/r.git']);
    expect(pushedUrls(JSON.stringify({ project: { git_http_url: 'https://gl.invalid/o/r.git' } }))).toEqual(['https://gl.invalid/o/r.git']);
    expect(pushedUrls(JSON.stringify({ url: 'oci://127.0.0.1:5000/apps', urls: ['a', 7] }))).toEqual(['oci://127.0.0.1:5000/apps', 'a']);
    expect(pushedUrls('not json')).toEqual([]);
    expect(pushedUrls('[1]')).toEqual([]);
  });
});

describe("a FleetSync's template pinned", () => {
  const data = (source: object): RevisionData => ({ kind: 'RemoteSync', template: { spec: { source } } }) as unknown as RevisionData;
  const commit = 'c'.repeat(40);

  test('a branch gets the commit it names now; a range the tag it chose; a ref with its commit or digest is left alone', async () => {
    const git = { url: 'https://h.invalid/r.git', ref: { branch: 'main' } };
    const pinned = await pinSources(data({ git }), async () => ({ resolved: commit }));
    expect((pinned.template as { spec: { source: unknown } }).spec.source).toEqual({ git: { ...git, ref: { branch: 'main', commit } } });
    const range = await pinSources(data({ git: { url: git.url, ref: { semver: '^1' } } }), async () => ({ resolved: commit, ref: { tag: 'v1.2.0' } }));
    expect((range.template as { spec: { source: unknown } }).spec.source).toEqual({ git: { url: git.url, ref: { tag: 'v1.2.0', commit } } });
    const oci = await pinSources(data({ oci: { url: 'oci://h.invalid/a', ref: { tag: 'v1' } } }), async () => ({ resolved: 'sha256:d' }));
    expect((oci.template as { spec: { source: unknown } }).spec.source).toEqual({ oci: { url: 'oci://h.invalid/a', ref: { tag: 'v1', digest: 'sha256:d' } } });
    expect(movingSource(data({ git: { ...git, ref: { commit } } }))).toBeUndefined();
    expect(movingSource(data({ inline: [] }))).toBeUndefined();
    expect(movingSource(data({ git: { url: git.url } }))).toEqual({ git: { url: git.url } });
  });
});
