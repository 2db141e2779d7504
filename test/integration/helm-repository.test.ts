// A chart from a Helm repository served on loopback: the version chosen from
// its index, the archive verified against the index's digest, credentials
// from a Secret on mgmt sent to the repository only, the index read once for
// many syncs of one chart, a huge index refused.
import { afterAll, beforeAll, beforeEach, describe, expect, test } from '@jest/globals';
import { createHash } from 'node:crypto';
import type { HelmRepositorySource } from '../../src/api/source.js';
import type { KubeClient } from '../../src/kube/client.js';
import { SourceError, sourceMemoryBudget, sourceLimits, type BudgetLease } from '../../src/source/index.js';
import { fetchRepositoryChart, forgetIndexes, MAX_INDEX_BYTES } from '../../src/source/helm-repository.js';
import { startChartRepository, type ChartRepository } from '../support/chart-repository.js';
import { closeClients, clusterClient } from '../support/controlplane.js';
import { useTestNamespace } from '../support/namespace.js';

const namespace = useTestNamespace('mgmt', 'helm-repo');
let client: KubeClient;
let repo: ChartRepository;
let mirror: ChartRepository;
let locked: ChartRepository;

const CM = 'templates/cm.yaml';
const cm = (v: string): Record<string, string> => ({ [CM]: `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web\ndata:\n  v: "${v}"\n` });
const BASIC = `Basic ${Buffer.from('reader:s3cret').toString('base64')}`;

beforeAll(async () => {
  client = await clusterClient('mgmt');
  mirror = await startChartRepository([{ name: 'web', version: '9.9.9', files: cm('mirror') }]);
  repo = await startChartRepository([
    { name: 'web', version: '1.0.0', files: cm('1.0.0') },
    { name: 'web', version: '1.2.0', files: cm('1.2.0') },
    { name: 'web', version: '2.0.0-rc.1', files: cm('rc') },
    { name: 'web', version: '1.3.0', files: cm('1.3.0'), digest: 'b'.repeat(64) },
    { name: 'web', version: '1.1.0', files: cm('1.1.0'), url: `${mirror.url}/charts/web-9.9.9.tgz`, digest: null },
  ]);
  locked = await startChartRepository([{ name: 'web', version: '1.0.0', files: cm('locked') }], BASIC);
});

afterAll(async () => {
  await Promise.all([repo.close(), mirror.close(), locked.close()]);
  closeClients();
});

beforeEach(() => forgetIndexes());

function fetch(source: Omit<HelmRepositorySource, 'chart'> & { chart?: string }, lease?: BudgetLease): ReturnType<typeof fetchRepositoryChart> {
  return fetchRepositoryChart({ client, namespace: namespace(), limits: sourceLimits(), lease }, { chart: 'web', ...source });
}

async function refusal(p: Promise<unknown>): Promise<string> {
  const err = await p.then(() => undefined, (e: unknown) => e);
  expect(err).toBeInstanceOf(SourceError);
  return (err as Error).message;
}

const sha = (b: Buffer): string => `sha256:${createHash('sha256').update(b).digest('hex')}`;

describe('a public repository', () => {
  test('the newest stable version, verified against the index, its digest and a label naming repository, chart and version', async () => {
    // 1.3.0 is newer, but the index gives it a wrong digest: asked for by range, it is refused; by default too.
    const got = await fetch({ url: repo.url, version: '<1.3.0' });
    expect(got.version).toBe('1.2.0');
    expect(got.data.equals(repo.archives.get('web-1.2.0.tgz') as Buffer)).toBe(true);
    expect(got.digest).toBe(sha(got.data));
    expect(got.label).toBe(`helmRepository ${repo.url}/ chart web 1.2.0`);
  });

  test('an archive whose bytes are not the index\'s digest is refused, naming both', async () => {
    const message = await refusal(fetch({ url: repo.url }));
    expect(message).toMatch(new RegExp(`^helmRepository ${repo.url}/ chart web 1.3.0: digest mismatch: expected sha256:b{64}, got sha256:[0-9a-f]{64}`));
  });

  test('a pre-release only by name; an archive on another origin fetched without the index\'s credentials and without a digest, its own', async () => {
    expect((await fetch({ url: repo.url, version: '2.0.0-rc.1' })).version).toBe('2.0.0-rc.1');
    const other = await fetch({ url: repo.url, version: '1.1.0' });
    expect(other.data.equals(mirror.archives.get('web-9.9.9.tgz') as Buffer)).toBe(true);
    expect(other.digest).toBe(sha(other.data));
  });

  test('many reads of one chart at once read the index once', async () => {
    const before = repo.received.get('/index.yaml') ?? 0;
    const got = await Promise.all(Array.from({ length: 20 }, () => fetch({ url: repo.url, version: '1.0.0' })));
    expect(got.map((g) => g.version)).toEqual(Array(20).fill('1.0.0'));
    expect((repo.received.get('/index.yaml') ?? 0) - before).toBe(1);
    // Within the minute the index is kept, a later read does not GET it again.
    await fetch({ url: repo.url, version: '1.2.0' });
    expect((repo.received.get('/index.yaml') ?? 0) - before).toBe(1);
  });

  test('a chart or version the index does not have is named with what it has', async () => {
    expect(await refusal(fetch({ url: repo.url, chart: 'api' }))).toBe(`${repo.url}/index.yaml has no chart "api" (charts: web): fix spec.source.helmRepository.chart`);
    expect(await refusal(fetch({ url: repo.url, version: '7.0.0' }))).toMatch(/chart web: no version matches "7.0.0" \(newest: 2.0.0-rc.1, 1.3.0, 1.2.0, 1.1.0, 1.0.0\)/);
  });

  test('an index past the index limit is refused without being held whole, and the memory budget is whole again after', async () => {
    const huge = await startChartRepository([]);
    huge.setIndex(Buffer.alloc(MAX_INDEX_BYTES + 1024, 'a'));
    try {
      const lease = sourceMemoryBudget().lease('huge index');
      expect(await refusal(fetch({ url: huge.url }, lease))).toBe(`GET ${huge.url}/index.yaml: more than 16 MiB (the Helm repository index limit)`);
      expect(lease.held).toBe(0);
      // A chart read with a lease: the index given back, the archive held until the caller releases it.
      const chart = sourceMemoryBudget().lease('chart');
      const got = await fetch({ url: repo.url, version: '1.0.0' }, chart);
      expect(chart.held).toBe(got.data.length);
      chart.release();
    } finally {
      await huge.close();
    }
  });
});

describe('a repository with credentials', () => {
  async function secret(name: string, data: Record<string, string>): Promise<void> {
    const encoded = Object.fromEntries(Object.entries(data).map(([k, v]) => [k, Buffer.from(v).toString('base64')]));
    await client.request({ method: 'POST', path: `/api/v1/namespaces/${namespace()}/secrets`, body: { apiVersion: 'v1', kind: 'Secret', metadata: { name }, data: encoded } });
  }

  test('username and password from the Secret, sent as basic auth to the index and the archive', async () => {
    await secret('repo-basic', { username: 'reader', password: 's3cret\n' });
    const got = await fetch({ url: locked.url, secretRef: { name: 'repo-basic' } });
    expect(got.data.equals(locked.archives.get('web-1.0.0.tgz') as Buffer)).toBe(true);
    expect(locked.authorization.get('/index.yaml')?.at(-1)).toBe(BASIC);
    expect(locked.authorization.get('/charts/web-1.0.0.tgz')?.at(-1)).toBe(BASIC);
  });

  test('without them, the repository\'s refusal; with a Secret lacking the keys, what it needs', async () => {
    expect(await refusal(fetch({ url: locked.url }))).toMatch(/401/);
    await secret('repo-empty', { user: 'x' });
    expect(await refusal(fetch({ url: locked.url, secretRef: { name: 'repo-empty' } }))).toBe(
      `Secret ${namespace()}/repo-empty: needs the keys username and password (basic auth), or token (bearer); it has user`,
    );
  });

  test('a token is sent as a bearer token; the credentials never follow the index to another origin', async () => {
    await secret('repo-token', { token: 'abc' });
    await fetch({ url: repo.url, version: '1.1.0', secretRef: { name: 'repo-token' } });
    expect(repo.authorization.get('/index.yaml')?.at(-1)).toBe('Bearer abc');
    expect(mirror.authorization.get('/charts/web-9.9.9.tgz')?.at(-1)).toBeUndefined();
    expect(mirror.received.get('/charts/web-9.9.9.tgz')).toBeGreaterThan(0);
  });
});
