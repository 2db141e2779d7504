// Lane: own clusters (none: sources are read in this process, and a git or oci source without Secrets reads nothing of a cluster)
// Hostile Git repositories and OCI artifacts (issue 48), read in process by
// fetchSource as the operator reads them (the fetch helper `make build`
// builds, then the archive checks of src/source/archive.ts): a Git commit
// holding a symlink that points out of the tree, a blob larger than
// maxUnpackedBytes, an OCI layer that is a tar bomb, and a Git repository and
// an OCI blob redirected to an address `--source-deny-cidrs` denies (here
// 127.0.0.2/32) are each a SourceError saying what was refused, so that
// nothing is applied; and a chart in a folder of a Git repository renders
// with spec.helm. The operator's own handling of a SourceError (Ready=False,
// nothing applied) is oci-source.test.ts's and git-source.test.ts's.
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import type { Requester } from '../../src/kube/client.js';
import { AddressPolicy, outboundAddressPolicy, setOutboundAddressPolicy } from '../../src/kube/address-policy.js';
import { fetchSource, SourceError, type FetchSourceOptions, type FetchedSource } from '../../src/source/index.js';
import type { SyncSource } from '../../src/api/source.js';
import { webChartFiles } from '../support/charts/web-chart.js';
import { createBareRepo, type GitRepo } from '../support/git-repos.js';
import { startGitServer, type GitServer } from '../support/git-server.js';
import { startOciRegistry, type OciRegistry } from '../support/oci-registry.js';

const MiB = 1024 * 1024;
let git: GitServer;
let registry: OciRegistry;
let repo: GitRepo;

/** No cluster: a source that tried to read one (a Secret, a ConfigMap) would fail here, loudly. */
const noCluster: Requester = {
  name: 'no-cluster',
  request: () => Promise.reject(new Error('this test reads no cluster')),
};

const configMap = (name: string): string => `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\ndata:\n  value: "v"\n`;

const read = (source: SyncSource, more: Partial<FetchSourceOptions> = {}): Promise<FetchedSource> =>
  fetchSource({ client: noCluster, namespace: 'hostile', source, ...more });

/** The SourceError that reading `source` is refused with. */
async function refusal(source: SyncSource, more: Partial<FetchSourceOptions> = {}): Promise<SourceError> {
  const err = await read(source, more).then(
    (fetched) => new Error(`read ${fetched.objects.length} objects (${fetched.revision ?? ''}): expected a refusal`),
    (e: unknown) => e,
  );
  if (!(err instanceof SourceError)) throw err;
  return err;
}

beforeAll(async () => {
  [git, registry] = await Promise.all([startGitServer(), startOciRegistry()]);
  repo = createBareRepo(git.root, 'apps');
  await repo.commit({ 'apps/fine.yaml': configMap('fine') });
}, 60_000);

afterAll(async () => {
  await Promise.all([git?.close(), registry?.close()]);
});

describe('a hostile Git repository', () => {
  test('a symlink pointing out of the tree is refused whole, naming the link', async () => {
    const bad = createBareRepo(git.root, 'symlink');
    await bad.commit({ 'apps/fine.yaml': configMap('fine'), 'apps/passwd.yaml': { symlink: '../../../etc/passwd' } });
    const err = await refusal({ git: { url: git.repoUrl('symlink') } }, { paths: ['apps'] });
    expect(err.message).toMatch(new RegExp(`^${git.repoUrl('symlink')} \\(main@sha1:[0-9a-f]{40}\\): entry "apps/passwd.yaml" is a link to "../../../etc/passwd", outside the archive root; archive refused$`));
  });

  test('a blob larger than maxUnpackedBytes is refused before it is unpacked, naming it and the limit', async () => {
    const big = createBareRepo(git.root, 'huge');
    await big.commit({ 'apps/fine.yaml': configMap('fine'), 'apps/huge.yaml': { zeros: 9 * MiB } });
    const blob = big.rev('HEAD:apps/huge.yaml');
    const err = await refusal({ git: { url: git.repoUrl('huge') } }, { limits: { maxUnpackedBytes: 8 * MiB } });
    // The pack's headers are read before anything is inflated: the blob is named by its id (its path is in a tree not yet unpacked).
    expect(err.message).toBe(
      `${git.repoUrl('huge')}: the blob ${blob} is ${9 * MiB} bytes unpacked, more than the ${8 * MiB} bytes allowed (maxUnpackedBytes, --source-max-unpacked); refused before it was unpacked`,
    );
  });

  test('a redirect to a denied address is refused naming the address, before any byte is sent there', async () => {
    const before = outboundAddressPolicy();
    const { port } = new URL(git.url);
    git.redirect('/moved.git', `http://127.0.0.2:${port}/apps.git`);
    setOutboundAddressPolicy(AddressPolicy.parse('127.0.0.2/32'));
    try {
      const err = await refusal({ git: { url: git.repoUrl('moved') } });
      expect(err.message).toBe(`${git.repoUrl('moved')}: connection to 127.0.0.2 refused: the address 127.0.0.2 is in 127.0.0.2/32, which --source-deny-cidrs denies; nothing was sent`);
      expect(git.count('moved', 'redirect')).toBeGreaterThan(0);
    } finally {
      setOutboundAddressPolicy(before);
    }
    // The same repository, not redirected, is read.
    expect((await read({ git: { url: git.repoUrl('apps') } })).objects.map((o) => o.metadata.name)).toEqual(['fine']);
  });
});

describe('a hostile OCI artifact', () => {
  test('a layer that is a tar bomb (32 KiB inflating to 32 MiB) is refused by the extractor at the unpacked limit', async () => {
    const pushed = await registry.pushTarBomb({ repo: 'bomb', tag: 'v1', inflatedMiB: 32 });
    expect(pushed.layer.length).toBeLessThan(64 * 1024);
    const err = await refusal({ oci: { url: registry.url('bomb'), ref: { tag: 'v1' }, insecure: true } }, { limits: { maxUnpackedBytes: 8 * MiB } });
    expect(err.message).toBe(`${registry.url('bomb')} (v1@${pushed.digest}): more than 8 MiB once unpacked (the source limit, --source-max-unpacked); archive refused`);
  });

  test('a registry at a denied address is refused by the dialer, naming the address; a blob redirected to one is refused too', async () => {
    const pushed = await registry.pushFluxArtifact({ 'cm.yaml': configMap('moved') }, { repo: 'moved', tag: 'v1' });
    const port = registry.host.split(':')[1] ?? '';
    const before = outboundAddressPolicy();
    setOutboundAddressPolicy(AddressPolicy.parse('127.0.0.2/32'));
    try {
      const denied = await refusal({ oci: { url: `oci://127.0.0.2:${port}/moved`, ref: { tag: 'v1' }, insecure: true } });
      expect(denied.message).toBe(`oci://127.0.0.2:${port}/moved: connection to 127.0.0.2 refused: the address 127.0.0.2 is in 127.0.0.2/32, which --source-deny-cidrs denies; nothing was sent`);
      // The helper follows a blob's redirect itself, through the same dialer: refused there, in the operator's words.
      registry.redirectBlob('moved', pushed.layerDigest, `http://127.0.0.2:${port}/v2/moved/blobs/${pushed.layerDigest}`);
      const redirected = await refusal({ oci: { url: registry.url('moved'), ref: { tag: 'v1' }, insecure: true } });
      expect(redirected.message).toBe(`${registry.url('moved')}: connection to 127.0.0.2 refused: the address 127.0.0.2 is in 127.0.0.2/32, which --source-deny-cidrs denies; nothing was sent`);
      expect(registry.requests.filter((r) => r.repo === 'moved' && r.kind === 'blobs').map((r) => r.status)).toContain(307);
    } finally {
      setOutboundAddressPolicy(before);
    }
  });
});

describe('a chart in a folder of a Git repository', () => {
  test("renders with spec.helm (the chart's folder named), the revision naming the chart and the tree's digest", async () => {
    const charts = createBareRepo(git.root, 'charts');
    const files = Object.fromEntries(Object.entries(webChartFiles('charts.example.test')).map(([p, data]) => [`charts/web/${p}`, data]));
    await charts.commit({ ...files, 'README.md': 'charts live under charts/' });
    const fetched = await read(
      { git: { url: git.repoUrl('charts'), ref: { branch: 'main' } } },
      { helm: { spec: { chart: 'charts/web', values: { message: 'from-git' } }, releaseName: 'web', namespace: 'hostile', kubeVersion: 'v1.36.0' } },
    );
    const config = fetched.objects.find((o) => o.kind === 'ConfigMap' && o.metadata.name === 'web-config') as { data?: Record<string, string> } | undefined;
    expect(config?.data).toMatchObject({ message: 'from-git', namespace: 'hostile' });
    expect(fetched.objects.map((o) => o.kind).sort()).toEqual(['ConfigMap', 'CustomResourceDefinition', 'Deployment', 'Widget']);
    expect(fetched.readFrom).toBe(git.repoUrl('charts'));
    expect(fetched.chart).toMatchObject({ name: 'web', version: '1.0.0' });
    expect(fetched.revision).toMatch(/^web-1\.0\.0@sha256:[0-9a-f]{64}\+values\.[0-9a-f]{16}$/);
  });
});
