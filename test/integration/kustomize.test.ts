// Kustomize overlays through a running operator (issue 36): a Flux artifact
// and an http archive holding base/, components/ and overlays/ apply exactly
// what the local `kubectl kustomize` prints for the overlay; what the sandbox
// does not allow (a remote base, an exec plugin, helmCharts), a cycle of
// bases and a patch bomb end in Ready=False with a message naming the file
// and field, an Event and a log line, and the operator goes on serving.
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';
import type { KubeClient } from '../../src/kube/client.js';
import { objectPath, type KubeObject } from '../../src/kube/resources.js';
import { parseManifests } from '../../src/source/parse.js';
import { clusterClient, closeClients, LOCAL, ROOT } from '../support/controlplane.js';
import { installCrds } from '../support/crds.js';
import { eventually } from '../support/eventually.js';
import { createGitRepository, FLUX_SOURCE_API_VERSION, installGitRepositoryCrd, setArtifact } from '../support/flux.js';
import { useTestNamespace } from '../support/namespace.js';
import { OperatorProcess } from '../support/operator.js';
import { applySync, eventsFor, find, getSync, waitForReady } from '../support/syncs.js';
import { tarGz } from '../support/tarball.js';
import { readTree } from './kustomize-support.js';

const CLUSTER = 'mgmt';
const FIXTURE = path.join(ROOT, 'test', 'fixtures', 'kustomize', 'overlay');
const KUBECTL = path.join(LOCAL, 'bin', 'kubectl');
let client: KubeClient;
let op: OperatorProcess;
let server: http.Server;
let archiveUrl = '';
let archive: Buffer;
const ns = useTestNamespace(CLUSTER, 'kustomize');

beforeAll(async () => {
  client = await clusterClient(CLUSTER);
  await Promise.all([installCrds(CLUSTER), installGitRepositoryCrd(CLUSTER)]);
  archive = await tarGz([...readTree(FIXTURE)].map(([name, data]) => ({ name, data })));
  server = http.createServer((req, res) => void (req.url === '/repo.tar.gz' ? res.writeHead(200).end(archive) : res.writeHead(404).end()));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  archiveUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/repo.tar.gz`;
  op = await OperatorProcess.start(CLUSTER, ['--namespace', ns()]);
});

afterAll(async () => {
  await op?.stop('SIGTERM');
  await new Promise((r) => server?.close(r));
  await closeClients();
});

/** What `kubectl kustomize` prints for a folder of the fixture, as objects. */
async function kubectlKustomize(folder: string): Promise<KubeObject[]> {
  const { stdout } = await promisify(execFile)(KUBECTL, ['kustomize', path.join(FIXTURE, folder)]);
  return parseManifests(stdout, `kubectl kustomize ${folder}`);
}

/** Each expected object is live (in the test namespace) with every field kubectl printed. */
async function expectApplied(expected: KubeObject[]): Promise<void> {
  for (const obj of expected) {
    const [group, version] = obj.apiVersion.includes('/') ? obj.apiVersion.split('/') : ['', obj.apiVersion];
    const resource = { group: group as string, version: version as string, kind: obj.kind, resource: `${obj.kind.toLowerCase()}s`, namespaced: true };
    const live = await find(client, objectPath(resource, obj.metadata.name as string, ns()));
    expect(live).toMatchObject({ ...obj, metadata: { ...obj.metadata, namespace: ns() } });
  }
}

const idOf = (o: KubeObject, namespace: string): string => `${namespace}_${o.metadata.name}_${o.apiVersion.includes('/') ? o.apiVersion.split('/')[0] : ''}_${o.kind}`;

async function expectInventory(name: string, expected: KubeObject[]): Promise<void> {
  const sync = await getSync(client, ns(), name);
  const ids = (sync.status?.inventory?.entries ?? []).map((e: { id: string }) => e.id).sort();
  expect(ids).toEqual(expected.map((o) => idOf(o, ns())).sort());
}

describe('kustomize overlays apply what kubectl kustomize prints', () => {
  test('a Flux artifact: overlays/prod (patches, images, namePrefix, configMapGenerator with hash, components, replacements) and a plain folder beside it', async () => {
    await createGitRepository(CLUSTER, ns(), 'platform');
    const digest = `sha256:${createHash('sha256').update(archive).digest('hex')}`;
    await setArtifact(CLUSTER, ns(), 'platform', { url: archiveUrl, digest, revision: 'main@sha1:abcd' });
    await applySync(client, ns(), 'prod', {
      defaultNamespace: ns(),
      wait: false,
      paths: ['overlays/prod', 'plain'],
      source: { artifact: { apiVersion: FLUX_SOURCE_API_VERSION, kind: 'GitRepository', name: 'platform' } },
    });
    const ready = await waitForReady(client, ns(), 'prod', 'True');
    expect(ready.status?.lastAppliedRevision).toBe('main@sha1:abcd');
    const expected = [...(await kubectlKustomize('overlays/prod')), ...parseManifests(readTree(FIXTURE).get('plain/extra.yaml')?.toString() ?? '', 'plain')];
    expect(expected.map((o) => o.metadata.name)).toContain('prod-app-config-bg9h65b2f2');
    await expectInventory('prod', expected);
    await expectApplied(expected);
  });

  test('an http archive: overlays/staging', async () => {
    await applySync(client, ns(), 'staging', { defaultNamespace: ns(), wait: false, paths: ['overlays/staging'], source: { http: { url: archiveUrl } } });
    await waitForReady(client, ns(), 'staging', 'True');
    const expected = await kubectlKustomize('overlays/staging');
    await expectInventory('staging', expected);
    await expectApplied(expected);
  });
});

describe('refused by the sandbox, each with the file and field named', () => {
  const cases = [
    { name: 'remote-base', message: 'refused/remote-base/kustomization.yaml: resources[1]: "github.com/example/platform//deploy?ref=v1.2.0" is a remote base' },
    { name: 'exec-plugin', message: 'refused/exec-plugin/kustomization.yaml: generators[0]: ksops is a KRM function plugin' },
    { name: 'helm', message: 'refused/helm/kustomization.yaml: helmCharts: helm charts are not supported' },
    { name: 'cycle-a', message: 'resources: a cycle of bases: refused/cycle-a -> refused/cycle-b -> refused/cycle-a' },
    { name: 'bomb', message: 'kustomize build refused/bomb: the build needed more than' },
  ];

  test.each(cases)('$name: Ready=False (SourceError), an Event and a log line; nothing applied', async ({ name, message }) => {
    await applySync(client, ns(), name, { defaultNamespace: ns(), paths: [`refused/${name}`], source: { http: { url: archiveUrl } } });
    const failed = await waitForReady(client, ns(), name, 'False', 'SourceError');
    const ready = (failed.status?.conditions ?? []).find((c: { type: string }) => c.type === 'Ready') as { message: string };
    expect(ready.message).toContain(message);
    await eventually(`a SourceError Event on ${name}`, async () => (await eventsFor(client, ns(), name)).some((e) => e.type === 'Warning' && e.message?.includes(message)) || undefined);
    await op.waitForLog(`a log line for ${name}`, (l) => JSON.stringify(l).includes(JSON.stringify(message).slice(1, -1)));
    expect(failed.status?.inventory?.entries ?? []).toEqual([]);
  });

  test('the operator took no harm: it is ready, and a new Sync still applies', async () => {
    expect(op.child.exitCode).toBeNull();
    expect(await op.readyz()).toBe(200);
    await applySync(client, ns(), 'after', { defaultNamespace: ns(), wait: false, paths: ['base'], source: { http: { url: archiveUrl } } });
    await waitForReady(client, ns(), 'after', 'True');
  });
});
