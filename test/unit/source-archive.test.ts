// Extracting .tar.gz archives in memory: real archives built here, good and hostile.
import { describe, expect, test } from '@jest/globals';
import { gzipSync } from 'node:zlib';
import { ByteBudget, extractTarGz, selectManifests, SourceError, type ArchiveFiles } from '../../src/source/index.js';
import { manifestFilter } from '../../src/source/select.js';
import { gzipBomb, ustarHeader } from '../support/hostile-archives.js';
import { tarGz, type TarEntry as Entry } from '../support/tarball.js';

const MiB = 1024 * 1024;
const LIMITS = { maxUnpackedBytes: 200 * MiB, maxFiles: 10_000 };

async function refusal(data: Buffer | Iterable<Buffer>, limits = LIMITS): Promise<string> {
  const err = await extractTarGz(data, limits, 'https://example.test/x.tgz').then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(SourceError);
  return (err as SourceError).message;
}

function cm(name: string): string {
  return `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ${name}}\n`;
}

describe('a good archive', () => {
  test('regular files by normalized path; folders and inside links are not files', async () => {
    const data = await tarGz([
      { name: './', type: 'directory' },
      { name: './apps/', type: 'directory' },
      { name: './apps/web.yaml', data: cm('web') },
      { name: 'apps/db/db.yml', data: cm('db') },
      { name: 'base//ns.json', data: '{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"n"}}' },
      { name: 'README.md', data: '# hi' },
      { name: 'apps/a/../tidy.yaml', data: cm('tidy') },
      { name: 'apps/link.yaml', type: 'symlink', linkname: 'web.yaml' },
      { name: 'apps/hard.yaml', type: 'link', linkname: 'apps/web.yaml' },
    ]);
    const files = await extractTarGz(data, LIMITS, 'a.tgz');
    expect([...files.keys()].sort()).toEqual(['README.md', 'apps/db/db.yml', 'apps/tidy.yaml', 'apps/web.yaml', 'base/ns.json']);
    expect(files.get('apps/web.yaml')?.toString()).toBe(cm('web'));
  });

  test('a later entry of the same path replaces an earlier one, as tar does', async () => {
    const budget = new ByteBudget(MiB);
    const lease = budget.lease('a.tgz');
    const files = await extractTarGz(await tarGz([{ name: 'a.yaml', data: 'one!' }, { name: './a.yaml', data: 'two' }]), LIMITS, 'a.tgz', { lease });
    expect(files.get('a.yaml')?.toString()).toBe('two');
    // The replaced content is no longer counted against the memory budget (found by the property test).
    expect(lease.held).toBe(3);
  });

  test('exactly maxFiles files (folders not counted) is fine', async () => {
    const data = await tarGz([{ name: 'd/', type: 'directory' }, { name: 'd/1.yaml' }, { name: 'd/2.yaml' }, { name: 'd/3.yaml' }]);
    await expect(extractTarGz(data, { ...LIMITS, maxFiles: 3 }, 'a.tgz')).resolves.toHaveProperty('size', 3);
  });
});

describe('hostile archives are refused whole, naming the entry', () => {
  test.each<[string, Entry, string]>([
    ['a parent path', { name: '../evil.yaml', data: cm('evil') }, 'entry "../evil.yaml" is an absolute path or leaves the archive root (..)'],
    ['a path that climbs out midway', { name: 'apps/../../evil.yaml' }, 'entry "apps/../../evil.yaml" is an absolute path or leaves'],
    ['an absolute path', { name: '/etc/evil.yaml' }, 'entry "/etc/evil.yaml" is an absolute path'],
    ['a Windows drive path', { name: 'C:/evil.yaml' }, 'entry "C:/evil.yaml" is an absolute path'],
    // Found by the property test: a drive path that shows only once normalized.
    ['a Windows drive path behind ./', { name: './C:/evil.yaml' }, 'entry "./C:/evil.yaml" is an absolute path'],
    ['a drive behind .\\/', { name: '.\\/C:' }, 'entry ".\\\\/C:" is an absolute path'],
    ['a backslash traversal', { name: 'apps\\..\\..\\evil.yaml' }, 'entry "apps\\\\..\\\\..\\\\evil.yaml" is an absolute path or leaves'],
    ['a symlink out of the root', { name: 'apps/l', type: 'symlink', linkname: '../../etc/passwd' }, 'entry "apps/l" is a link to "../../etc/passwd", outside the archive root'],
    ['an absolute symlink', { name: 'l', type: 'symlink', linkname: '/etc/passwd' }, 'entry "l" is a link to "/etc/passwd", outside the archive root'],
    ['a hard link out of the root', { name: 'h', type: 'link', linkname: '../secret' }, 'entry "h" is a link to "../secret", outside the archive root'],
    ['a character device', { name: 'dev/null', type: 'character-device' }, 'entry "dev/null" is a character-device'],
    ['a block device', { name: 'sda', type: 'block-device' }, 'entry "sda" is a block-device'],
    ['a fifo', { name: 'pipe', type: 'fifo' }, 'entry "pipe" is a fifo'],
  ])('%s', async (_what, hostile, message) => {
    const data = await tarGz([{ name: 'ok.yaml', data: cm('ok') }, hostile, { name: 'after.yaml', data: cm('after') }]);
    const msg = await refusal(data);
    expect(msg).toContain(`https://example.test/x.tgz: ${message}`);
    expect(msg).toContain('archive refused');
  });

  test('a symlink that climbs out only through its own folder is judged from that folder', async () => {
    // "a/b/l -> ../x" stays inside (a/x); "a/l -> ../../x" leaves.
    await expect(extractTarGz(await tarGz([{ name: 'a/b/l', type: 'symlink', linkname: '../x' }]), LIMITS, 'a.tgz')).resolves.toBeDefined();
    expect(await refusal(await tarGz([{ name: 'a/l', type: 'symlink', linkname: '../../x' }]))).toContain('outside the archive root');
  });

  test('more than maxFiles files', async () => {
    const data = await tarGz([{ name: '1.yaml' }, { name: '2.yaml' }, { name: '3.yaml' }, { name: '4.yaml' }]);
    expect(await refusal(data, { ...LIMITS, maxFiles: 3 })).toBe(
      'https://example.test/x.tgz: more than 3 files (the source limit, --source-max-files); archive refused',
    );
  });

  test('more than maxUnpackedBytes in ordinary files', async () => {
    const data = await tarGz([{ name: 'big.yaml', data: 'x'.repeat(3 * MiB) }]);
    expect(await refusal(data, { ...LIMITS, maxUnpackedBytes: 2 * MiB })).toBe(
      'https://example.test/x.tgz: more than 2 MiB once unpacked (the source limit, --source-max-unpacked); archive refused',
    );
  });
});

describe('a packaged chart (issue 47): the helper is given regular files only', () => {
  const chart = [
    { name: 'podinfo/Chart.yaml', data: 'apiVersion: v2\nname: podinfo\nversion: 6.7.0\n' },
    { name: 'podinfo/templates/cm.yaml', data: cm('podinfo') },
  ];

  test('links that stay in the archive but leave the chart folder are not files (never followed)', async () => {
    const data = await tarGz([
      ...chart,
      { name: 'secrets/token', data: 'not for the chart' },
      { name: 'podinfo/files/token', type: 'symlink', linkname: '../../secrets/token' },
      { name: 'podinfo/templates/token.yaml', type: 'link', linkname: 'secrets/token' },
    ]);
    const files = await extractTarGz(data, LIMITS, 'podinfo-6.7.0.tgz');
    expect([...files.keys()].filter((p) => p.startsWith('podinfo/')).sort()).toEqual(['podinfo/Chart.yaml', 'podinfo/templates/cm.yaml']);
  });

  test.each<[string, Entry, string]>([
    ['a template linked to the service-account token', { name: 'podinfo/templates/token.yaml', type: 'symlink', linkname: '/var/run/secrets/kubernetes.io/serviceaccount/token' }, 'entry "podinfo/templates/token.yaml" is a link to "/var/run/secrets/kubernetes.io/serviceaccount/token", outside the archive root'],
    ['a values file reached by ../ from the chart', { name: 'podinfo/../../values.yaml', data: 'a: 1' }, 'entry "podinfo/../../values.yaml" is an absolute path or leaves the archive root'],
  ])('%s refuses the archive', async (_what, hostile, message) => {
    expect(await refusal(await tarGz([...chart, hostile]))).toContain(message);
  });
});

describe('gzip bombs stop at the limit, without inflating the rest', () => {
  // A gzip stream may hold several members, inflated one after the other; each
  // member here is 1 MiB of zeros in about 1 KiB. The streams below never end:
  // only a limit enforced while inflating can stop them.
  const zeros = gzipSync(Buffer.alloc(MiB), { level: 9 });

  function* endless(first: Buffer, counter: { members: number }): Generator<Buffer> {
    yield first;
    for (;;) {
      counter.members++;
      yield zeros;
    }
  }

  test('zeros after a small valid archive', async () => {
    const valid = await tarGz([{ name: 'a.yaml', data: cm('a') }]);
    const counter = { members: 0 };
    const msg = await refusal(endless(valid, counter), { ...LIMITS, maxUnpackedBytes: 8 * MiB });
    expect(msg).toBe('https://example.test/x.tgz: more than 8 MiB once unpacked (the source limit, --source-max-unpacked); archive refused');
    // 8 MiB is 8 members; a few more may sit in stream buffers, not hundreds.
    expect(counter.members).toBeGreaterThanOrEqual(8);
    expect(counter.members).toBeLessThan(40);
  });

  test('a file that claims 5 GiB of zeros, at the default limit', async () => {
    const counter = { members: 0 };
    const msg = await refusal(endless(gzipSync(ustarHeader('bomb.yaml', 5 * 1024 * MiB)), counter));
    expect(msg).toContain('more than 200 MiB once unpacked');
    // What was read is the bound: members of 1 MiB each, so at most 240 MiB inflated of the 5 GiB claimed.
    expect(counter.members).toBeGreaterThanOrEqual(200);
    expect(counter.members).toBeLessThan(240);
  });
});

describe('not an archive', () => {
  test('bytes that are not gzip', async () => {
    expect(await refusal(Buffer.from('apiVersion: v1\nkind: ConfigMap\n'))).toMatch(
      /^https:\/\/example\.test\/x\.tgz: not a valid gzip stream \(.*\); expected a \.tar\.gz$/,
    );
  });

  test('gzip of something that is not a tar', async () => {
    expect(await refusal(gzipSync(Buffer.from('x'.repeat(2000))))).toMatch(/not a valid tar archive/);
  });

  test('a truncated archive', async () => {
    const data = await tarGz([{ name: 'a.yaml', data: 'y'.repeat(100_000) }]);
    expect(await refusal(data.subarray(0, data.length - 40))).toMatch(/not a valid (gzip stream|tar archive)/);
  });
});

describe('paths', () => {
  const files: ArchiveFiles = new Map(
    ['apps/web/deploy.yaml', 'apps/web/svc.yml', 'apps/db/db.json', 'apps/db/notes.txt', 'base/ns.yaml', 'apps-extra/x.yaml', 'README.md', 'Z.YAML'].map(
      (p) => [p, Buffer.from(p)],
    ),
  );
  const select = (paths?: string[]): string[] => selectManifests(files, paths, 'a.tgz').map((f) => f.path);

  test('without paths: every manifest file, sorted by path', () => {
    expect(select()).toEqual(['Z.YAML', 'apps-extra/x.yaml', 'apps/db/db.json', 'apps/web/deploy.yaml', 'apps/web/svc.yml', 'base/ns.yaml']);
  });

  test('folders recursively (not by name prefix), files, the root; union, sorted', () => {
    expect(select(['base', 'apps'])).toEqual(['apps/db/db.json', 'apps/web/deploy.yaml', 'apps/web/svc.yml', 'base/ns.yaml']);
    expect(select(['./apps/web/', 'apps/web/svc.yml'])).toEqual(['apps/web/deploy.yaml', 'apps/web/svc.yml']);
    expect(select(['base/ns.yaml'])).toEqual(['base/ns.yaml']);
    expect(select(['.'])).toHaveLength(6);
  });

  test('a path that matches nothing names it and shows what is there', () => {
    expect(() => select(['apps/cache'])).toThrow(
      'a.tgz: paths[0] "apps/cache" matches no .yaml, .yml or .json file in the archive (top level: README.md, Z.YAML, apps, apps-extra, base)',
    );
    expect(() => select(['apps/web/deploy'])).toThrow(SourceError);
  });

  test('a named file that is not a manifest, and paths outside the archive', () => {
    expect(() => select(['apps/db/notes.txt'])).toThrow('a.tgz: paths[0] "apps/db/notes.txt" is not a .yaml, .yml or .json file');
    expect(() => select(['base', '../etc'])).toThrow('a.tgz: paths[1] "../etc" must be a relative path inside the archive');
    expect(() => select(['/base'])).toThrow('must be a relative path inside the archive');
  });
});

describe('memory: only what will be parsed is kept, charged to a shared budget', () => {
  const bomb = (name: string, mib: number): Buffer => gzipBomb(mib, name);

  test('files that will not be parsed are listed empty, never held; paths decide too', async () => {
    const data = await tarGz([
      { name: 'apps/web.yaml', data: cm('web') },
      { name: 'apps/logo.png', data: Buffer.alloc(4096, 1) },
      { name: 'other/x.yaml', data: cm('x') },
    ]);
    const budget = new ByteBudget(MiB);
    const lease = budget.lease('a.tgz');
    const files = await extractTarGz(data, LIMITS, 'a.tgz', { keep: manifestFilter(['apps']), lease });
    expect(files.get('apps/web.yaml')?.toString()).toBe(cm('web'));
    expect(files.get('apps/logo.png')?.length).toBe(0);
    expect(files.get('other/x.yaml')?.length).toBe(0);
    expect(budget.inUse).toBe(cm('web').length);
    lease.release();
    expect(budget.inUse).toBe(0);
    // What is selected afterwards is what was kept.
    expect(selectManifests(files, ['apps'], 'a.tgz').map((f) => f.path)).toEqual(['apps/web.yaml']);
    expect(() => selectManifests(files, ['apps/logo.png'], 'a.tgz')).toThrow('is not a .yaml, .yml or .json file');
  });

  test('manifestFilter agrees with selectManifests on which files a path takes', () => {
    const keep = manifestFilter(['apps/web', './base/ns.yml', '../x', '/abs']);
    expect(['apps/web/a.yaml', 'apps/web/b/c.json', 'base/ns.yml'].every(keep)).toBe(true);
    expect(['apps/webby/a.yaml', 'apps/web/readme.md', 'base/other.yml', 'x', 'abs'].some(keep)).toBe(false);
    expect(manifestFilter(undefined)('deep/down/a.YAML')).toBe(true);
  });

  test('a bomb that is not a manifest is drained to the unpack limit, holding nothing', async () => {
    const budget = new ByteBudget(MiB);
    const lease = budget.lease('x.tgz');
    const err = await extractTarGz(bomb('bomb.bin', 12), { ...LIMITS, maxUnpackedBytes: 8 * MiB }, 'x.tgz', { keep: manifestFilter(undefined), lease }).catch((e: unknown) => e);
    expect((err as Error).message).toBe('x.tgz: more than 8 MiB once unpacked (the source limit, --source-max-unpacked); archive refused');
    expect(lease.held).toBe(0);
  });

  test('a bomb in a manifest stops at the budget, before the unpack limit', async () => {
    const budget = new ByteBudget(4 * MiB);
    const lease = budget.lease('x.tgz');
    const err = await extractTarGz(bomb('bomb.yaml', 12), LIMITS, 'x.tgz', { keep: manifestFilter(undefined), lease }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SourceError);
    expect((err as Error).message).toMatch(/^x\.tgz: more than 4 MiB to hold in memory at once .*the operator's memory budget for sources\); refused/);
    expect(lease.held).toBeLessThanOrEqual(4 * MiB);
    lease.release();
    expect(budget.inUse).toBe(0);
  });

  test('bombs read at once share the budget: never more held than it, each refused, none left waiting', async () => {
    const budget = new ByteBudget(6 * MiB);
    let peak = 0;
    const runs = Array.from({ length: 5 }, async (_, i) => {
      const lease = budget.lease(`b${i}.tgz`);
      const take = lease.take.bind(lease);
      lease.take = async (n, signal) => {
        await take(n, signal);
        peak = Math.max(peak, budget.inUse);
      };
      try {
        return await extractTarGz(bomb('bomb.yaml', 20), LIMITS, `b${i}.tgz`, { keep: () => true, lease }).then(
          () => 'extracted',
          (e: unknown) => (e as Error).message,
        );
      } finally {
        lease.release();
      }
    });
    const messages = await Promise.all(runs);
    for (const m of messages) expect(m).toMatch(/memory budget for sources/);
    expect(peak).toBeLessThanOrEqual(6 * MiB);
    expect(budget.inUse).toBe(0);
  });
});

describe('ByteBudget', () => {
  test('a take that does not fit waits until bytes are given back', async () => {
    const budget = new ByteBudget(100);
    const a = budget.lease('a');
    const b = budget.lease('b');
    await a.take(80);
    let granted = false;
    const waiting = b.take(30).then(() => {
      granted = true;
    });
    await new Promise((r) => setImmediate(r));
    expect(granted).toBe(false);
    a.release();
    await waiting;
    expect(granted).toBe(true);
    expect(budget.inUse).toBe(30);
  });

  test('when every holder waits, the one holding most is refused and the others go on', async () => {
    const budget = new ByteBudget(100);
    const a = budget.lease('a');
    const b = budget.lease('b');
    await a.take(60);
    await b.take(40);
    const bWaits = b.take(10);
    const aWaits = a.take(10).catch((e: unknown) => e);
    expect(((await aWaits) as Error).message).toBe(
      "a: the operator's memory budget for sources (100 bytes, shared by all syncs) is in use by other sources being read at the same time (this one held 60 bytes of it); retried later",
    );
    await bWaits;
    expect(b.held).toBe(50);
    expect(budget.inUse).toBe(50);
  });

  test('a waiter that holds nothing waits while a holder works; an abort ends the wait', async () => {
    const budget = new ByteBudget(100);
    const a = budget.lease('a');
    await a.take(100);
    const ac = new AbortController();
    const c = budget.lease('c').take(1, ac.signal).catch((e: unknown) => e);
    ac.abort(new SourceError('cancelled'));
    expect(((await c) as Error).message).toBe('cancelled');
    expect(budget.inUse).toBe(100);
  });

  test('more than the whole budget for one lease is refused at once', async () => {
    const budget = new ByteBudget(100);
    await expect(budget.lease('big').take(101)).rejects.toThrow(/^big: more than 100 bytes to hold in memory at once/);
  });
});
