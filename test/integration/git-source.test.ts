// Git sources through a running operator (issue 48), against a real Git
// server on loopback (Debian's git http-backend, test/support/git-server.ts)
// that counts what it is asked: a Sync of a branch applies its folder with the
// revision `main@sha1:<commit>`; tags, semver ranges and commits; 100 Syncs of
// one repository and ref share one ref listing per interval and one fetch per
// new commit; a push webhook makes a Sync with a long interval look at once
// (and a wrong token is a 404 that wakes nothing); credentials come from a
// Secret read as the sync's account and are refused without it; and a
// FleetSync over edge-1 and edge-2 pins both children to one commit while the
// branch moves on. Runs the fetch helper `make build` builds.
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import type { KubeClient } from '../../src/kube/client.js';
import { closedPort } from '../support/cli.js';
import { clusterClient, closeClients, ensureClusters } from '../support/controlplane.js';
import { installCrds } from '../support/crds.js';
import { eventually } from '../support/eventually.js';
import { createBareRepo, type GitRepo } from '../support/git-repos.js';
import { startGitServer, type GitServer } from '../support/git-server.js';
import { useTestNamespace } from '../support/namespace.js';
import { OperatorProcess } from '../support/operator.js';
import { bindRole } from '../support/rbac.js';
import { applyFleetSync, FLEETSYNCS, registerEastAndWest, REMOTESYNCS } from '../support/remote.js';
import { applySync, createSyncs, deleteSyncAndWait, find, getSync, readyOf, waitForReady, type SyncObject } from '../support/syncs.js';

const HOME = 'mgmt';
let mgmt: KubeClient;
let edge1: KubeClient;
let edge2: KubeClient;
let op: OperatorProcess;
let server: GitServer;
let locked: GitServer;
let repo: GitRepo;
let webhook = '';
const ns = useTestNamespace(HOME, 'git');
const edgeNs = useTestNamespace('edge-1', 'gitedge');
const refsNs = useTestNamespace(HOME, 'gitrefs');

const configMap = (name: string, value: string): string => `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\ndata:\n  value: "${value}"\n`;
const cm = (client: KubeClient, namespace: string, name: string) => find<{ data?: Record<string, string> }>(client, `/api/v1/namespaces/${namespace}/configmaps/${name}`);
const secret = (name: string, data: Record<string, string>) => ({
  apiVersion: 'v1',
  kind: 'Secret',
  metadata: { name },
  stringData: data,
});
const createSecret = (name: string, data: Record<string, string>) => mgmt.request({ method: 'POST', path: `/api/v1/namespaces/${ns()}/secrets`, body: secret(name, data) });
const valueIn = async (name: string): Promise<string | undefined> => (await cm(mgmt, ns(), name))?.data?.value;
const post = (token: string, body: unknown) => fetch(`${webhook}/hooks/${token}`, { method: 'POST', body: JSON.stringify(body), headers: { 'content-type': 'application/json' } });

beforeAll(async () => {
  await ensureClusters([HOME, 'edge-1', 'edge-2']);
  [mgmt, edge1, edge2] = await Promise.all([clusterClient(HOME), clusterClient('edge-1'), clusterClient('edge-2')]);
  await installCrds(HOME);
  server = await startGitServer();
  locked = await startGitServer({ auth: { username: 'reader', password: 'open-sesame' } });
  repo = createBareRepo(server.root, 'apps');
  await registerEastAndWest(mgmt, ns(), edgeNs());
  const port = await closedPort();
  webhook = `http://127.0.0.1:${port}`;
  op = await OperatorProcess.start(HOME, ['--namespace', ns(), '--cluster-id', 'mgmt-git-test', '--webhook-addr', `127.0.0.1:${port}`]);
}, 120_000);

afterAll(async () => {
  await op?.stop('SIGTERM');
  await Promise.all([server?.close(), locked?.close()]);
  await edge2?.request({ method: 'DELETE', path: `/api/v1/namespaces/${edgeNs()}` }).catch(() => undefined);
  await closeClients();
});

describe('a Sync of a Git repository', () => {
  test('applies the folder of the branch, with the revision main@sha1:<commit>; a tag, a semver range and a commit name theirs', async () => {
    const first = await repo.commit({ 'apps/one.yaml': configMap('git-one', 'v1'), 'README.md': 'not a manifest' });
    repo.tag('v1.0.0', first, 'release 1.0.0');
    const second = await repo.commit({ 'apps/one.yaml': configMap('git-one', 'v2') });
    repo.tag('v1.1.0', second);
    repo.tag('v2.0.0-rc.1', second);
    await applySync(mgmt, ns(), 'branch', { wait: false, source: { git: { url: server.repoUrl('apps'), ref: { branch: 'main' } } }, paths: ['apps'], defaultNamespace: ns() });
    const ready = await waitForReady(mgmt, ns(), 'branch', 'True');
    expect(ready.status?.lastAppliedRevision).toBe(`main@sha1:${second}`);
    expect(await valueIn('git-one')).toBe('v2');

    const revisionOf = async (name: string, ref: Record<string, string>): Promise<string | undefined> => {
      await applySync(mgmt, ns(), name, { wait: false, source: { git: { url: server.repoUrl('apps'), ref } }, paths: ['apps'], defaultNamespace: refsNs() });
      const revision = (await waitForReady(mgmt, ns(), name, 'True')).status?.lastAppliedRevision;
      // Each applies the same ConfigMap: gone with its Sync, before the next one applies it.
      await deleteSyncAndWait(mgmt, ns(), name);
      return revision;
    };
    expect(await revisionOf('tag', { tag: 'v1.0.0' })).toBe(`v1.0.0@sha1:${first}`);
    // A range never takes a pre-release it does not name.
    expect(await revisionOf('range', { semver: '>=1.0.0' })).toBe(`v1.1.0@sha1:${second}`);
    expect(await revisionOf('commit', { commit: first })).toBe(`sha1:${first}`);
  });

  test('a ref that does not exist is a SourceError naming it, and nothing is applied', async () => {
    await applySync(mgmt, ns(), 'nobranch', { source: { git: { url: server.repoUrl('apps'), ref: { branch: 'nope' } } }, defaultNamespace: ns() });
    const refused = await waitForReady(mgmt, ns(), 'nobranch', 'False', 'SourceError');
    expect(readyOf(refused)?.message).toContain(server.repoUrl('apps'));
    expect(readyOf(refused)?.message).toContain('nope');
  });
});

describe('one listing per interval, one fetch per new commit', () => {
  const INTERVAL_MS = 8_000;
  const expectListings = (counts: { refs: number; fetch: number }, elapsedMs: number): void => {
    expect(counts.fetch).toBe(1);
    const listings = counts.refs - counts.fetch;
    expect(listings).toBeGreaterThanOrEqual(1);
    expect(listings).toBeLessThanOrEqual(Math.floor(elapsedMs / INTERVAL_MS) + 1);
  };
  const N = 100;
  const names = Array.from({ length: N }, (_, i) => `many-${i}`);

  test(`${N} Syncs of one repository and ref list it once per interval and fetch each new commit once`, async () => {
    const shared = createBareRepo(server.root, 'shared');
    const files = (v: string) => Object.fromEntries(names.map((n) => [`apps/${n}/cm.yaml`, configMap(n, v)]));
    await shared.commit(files('one'));
    server.reset();
    const first = Date.now();
    await createSyncs(mgmt, ns(), names, (name) => ({ wait: false, interval: '8s', source: { git: { url: server.repoUrl('shared'), ref: { branch: 'main' } } }, paths: [`apps/${name}`], defaultNamespace: ns() }));
    await eventually('every Sync applied the first commit', async () => ((await Promise.all(names.map(valueIn))).every((v) => v === 'one') ? true : undefined), 120_000);
    // One fetch (its own listing, then the pack); the listings beside it at most one per interval begun meanwhile.
    expectListings(server.counts('shared'), Date.now() - first);

    server.reset();
    const start = Date.now();
    await shared.commit(files('two'));
    await eventually('every Sync applied the second commit', async () => ((await Promise.all(names.map(valueIn))).every((v) => v === 'two') ? true : undefined), 120_000);
    // One fetch got the new commit, whatever the 100 Syncs did; the listings (beside the fetch's own) are at
    // most one per interval that began in the window, not one per Sync.
    expectListings(server.counts('shared'), Date.now() - start);
  }, 300_000);
});

describe('the push webhook', () => {
  test('a push event naming the repository, with the token of its Secret, makes a Sync with a long interval look at once; a wrong token is a 404 and wakes nothing', async () => {
    const pushed = createBareRepo(server.root, 'pushed');
    await pushed.commit({ 'cm.yaml': configMap('pushed', 'one') });
    await createSecret('hook', { token: 'a-long-random-token' });
    await applySync(mgmt, ns(), 'pushed', { wait: false, interval: '1h', source: { git: { url: server.repoUrl('pushed'), webhookSecretRef: { name: 'hook' } } }, defaultNamespace: ns() });
    await waitForReady(mgmt, ns(), 'pushed', 'True');
    expect(await valueIn('pushed')).toBe('one');
    const second = await pushed.commit({ 'cm.yaml': configMap('pushed', 'two') });

    const wrong = await post('not-the-token', { repository: { clone_url: server.repoUrl('pushed') } });
    expect(wrong.status).toBe(404);
    const other = await post('a-long-random-token', { repository: { clone_url: server.repoUrl('some-other') } });
    expect(other.status).toBe(404);
    expect((await fetch(`${webhook}/hooks/a-long-random-token`)).status).toBe(404);
    await new Promise((r) => setTimeout(r, 3_000));
    expect(await valueIn('pushed')).toBe('one');

    // GitHub's push event names the repository by its clone URL (and others).
    const right = await post('a-long-random-token', { ref: 'refs/heads/main', repository: { clone_url: `${server.repoUrl('pushed')}`, html_url: 'https://example.invalid/pushed' } });
    expect(right.status).toBe(202);
    expect(await right.json()).toEqual({ woken: 1 });
    // The object is applied before the status says so: wait for the status, then look at the object.
    await eventually('the push applied', async () => ((await getSync(mgmt, ns(), 'pushed')).status?.lastAppliedRevision === `main@sha1:${second}` ? true : undefined), 30_000);
    expect(await valueIn('pushed')).toBe('two');
  });
});

describe('credentials', () => {
  test('a repository that asks for them is refused without; a Secret read as the sync\'s account gives them, once the account may read it', async () => {
    const priv = createBareRepo(locked.root, 'private');
    await priv.commit({ 'cm.yaml': configMap('private', 'secret-stuff') });
    const url = locked.repoUrl('private');
    await applySync(mgmt, ns(), 'private', { wait: false, source: { git: { url } }, defaultNamespace: ns() });
    const refused = await waitForReady(mgmt, ns(), 'private', 'False', 'SourceError');
    expect(readyOf(refused)?.message).toContain(url);
    expect(readyOf(refused)?.message).toMatch(/authentication/i);

    await createSecret('git-creds', { username: 'reader', password: 'open-sesame' });
    const account = 'git-reader';
    await mgmt.request({ method: 'POST', path: `/api/v1/namespaces/${ns()}/serviceaccounts`, body: { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: account } } });
    await bindRole(mgmt, ns(), `${account}-apply`, [{ apiGroups: [''], resources: ['configmaps'], verbs: ['*'] }], { name: account, namespace: ns() });
    const spec = { wait: false, serviceAccountName: account, source: { git: { url, secretRef: { name: 'git-creds' } } }, defaultNamespace: ns() };
    await applySync(mgmt, ns(), 'private', spec);
    const forbidden = await waitForReady(mgmt, ns(), 'private', 'False', 'SourceError');
    expect(readyOf(forbidden)?.message).toContain(`service account ${ns()}/${account} may not get Secret ${ns()}/git-creds`);
    expect(JSON.stringify(forbidden.status)).not.toContain('open-sesame');

    await bindRole(mgmt, ns(), `${account}-secrets`, [{ apiGroups: [''], resources: ['secrets'], resourceNames: ['git-creds'], verbs: ['get'] }], { name: account, namespace: ns() });
    await applySync(mgmt, ns(), 'private', spec, { annotations: { 'syncprims.dev/reconcile-requested-at': new Date().toISOString() } });
    await waitForReady(mgmt, ns(), 'private', 'True');
    expect(await valueIn('private')).toBe('secret-stuff');
  });
});

describe('a FleetSync of a branch', () => {
  type Fleet = SyncObject & { status?: { phase?: string; updateRevision?: string } };
  const fleet = () => getSync(mgmt, ns(), 'gitfleet', FLEETSYNCS) as Promise<Fleet>;
  const childCommits = async (): Promise<(string | undefined)[]> =>
    Promise.all(['gitfleet-east', 'gitfleet-west'].map(async (c) => ((await getSync(mgmt, ns(), c, REMOTESYNCS)).spec as { source?: { git?: { ref?: { commit?: string } } } }).source?.git?.ref?.commit));
  const values = async () => [(await cm(edge1, edgeNs(), 'fleet-cm'))?.data?.value, (await cm(edge2, edgeNs(), 'fleet-cm'))?.data?.value];

  test('resolves the branch once and pins every child to that commit; the branch moving on rolls the new commit through the waves, never mixing in a child', async () => {
    const fleetRepo = createBareRepo(server.root, 'fleet');
    const first = await fleetRepo.commit({ 'cm.yaml': configMap('fleet-cm', 'one') });
    await createSecret('fleet-hook', { token: 'fleet-token' });
    const spec = (approval: boolean) => ({
      kind: 'RemoteSync',
      clusters: { names: ['east', 'west'] },
      rollout: { waves: [{ name: 'canary', selector: { matchLabels: { region: 'east' } } }, { name: 'rest', approval }] },
      template: { spec: { wait: false, interval: '1h', defaultNamespace: edgeNs(), source: { git: { url: server.repoUrl('fleet'), ref: { branch: 'main' }, webhookSecretRef: { name: 'fleet-hook' } } } } },
    });
    await applyFleetSync(mgmt, ns(), 'gitfleet', spec(false));
    await eventually('both children applied the first commit', async () => ((await values()).every((v) => v === 'one') ? true : undefined), 60_000).catch(async (err: unknown) => {
      throw new Error(`${String(err)}; the FleetSync: ${JSON.stringify((await fleet()).status)}`);
    });
    expect(await childCommits()).toEqual([first, first]);
    for (const child of ['gitfleet-east', 'gitfleet-west']) {
      expect((await getSync(mgmt, ns(), child, REMOTESYNCS)).status?.lastAppliedRevision).toBe(`main@sha1:${first}`);
    }

    // From now on the second wave waits for an approval (not part of the template: no new revision).
    await applyFleetSync(mgmt, ns(), 'gitfleet', spec(true));
    const second = await fleetRepo.commit({ 'cm.yaml': configMap('fleet-cm', 'two') });
    const woken = await post('fleet-token', { url: server.repoUrl('fleet') });
    expect(woken.status).toBe(202);
    await eventually('the canary wave has the new commit, the rest waits for approval', async () => {
      const f = await fleet();
      return f.status?.phase === 'AwaitingApproval' ? f : undefined;
    }, 60_000);
    await eventually('east applied the second commit', async () => ((await values())[0] === 'two' ? true : undefined), 30_000);
    // The branch moved on; west stays pinned to the first commit (its own child never resolves the branch).
    expect(await childCommits()).toEqual([second, first]);
    expect(await values()).toEqual(['two', 'one']);
    const third = await fleetRepo.commit({ 'cm.yaml': configMap('fleet-cm', 'three') });
    expect(third).not.toBe(second);
    await new Promise((r) => setTimeout(r, 2_000));
    expect(await values()).toEqual(['two', 'one']);
  }, 180_000);
});
