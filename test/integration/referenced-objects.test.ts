// Lane: own clusters (test/support/lanes-runner.js: it runs beside the shared-cluster files).
// Referenced objects at scale, through a running operator: 600 Syncs each
// reading a source object of its own (ConfigMaps, Secrets, Flux
// ExternalArtifacts) all become Ready over a few connections and one watch
// per kind; an edit wakes its Sync and no other; no Secret content reaches
// the caches; SIGTERM ends it all at once. Also: a kind's watch (referenced
// or owned) ends once no sync needs it.
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { mapLimit } from '../../src/apply/map-limit.js';
import type { KubeClient } from '../../src/kube/client.js';
import { closeClients, clusterClient, OWN_LANE_CLUSTER } from '../support/controlplane.js';
import { installCrds } from '../support/crds.js';
import { eventually, steady } from '../support/eventually.js';
import { createExternalArtifact, FLUX_SOURCE_API_VERSION, installFluxSourceCrd, setArtifact } from '../support/flux.js';
import { useTestNamespace } from '../support/namespace.js';
import { OperatorProcess, type LogLine } from '../support/operator.js';
import { tcpConnectionsTo } from '../support/proc.js';
import { applySync, createSyncs, find, readyOf, syncPath, waitForReady, type SyncObject } from '../support/syncs.js';

const CLUSTER = OWN_LANE_CLUSTER;
const CONFIGMAPS = 300;
const SECRETS = 150;
const ARTIFACTS = 150;
let client: KubeClient;
let op: OperatorProcess;
let server: http.Server;
let base = '';
const ns = useTestNamespace(CLUSTER, 'refs');

const cmYaml = (name: string, value: string): string => `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\ndata:\n  value: "${value}"\n`;
const names = (prefix: string, n: number): string[] => Array.from({ length: n }, (_, i) => `${prefix}-${i}`);
const cmPath = (name: string): string => `/api/v1/namespaces/${ns()}/configmaps/${name}`;

beforeAll(async () => {
  client = await clusterClient(CLUSTER);
  await installCrds(CLUSTER);
  await installFluxSourceCrd(CLUSTER, 'ExternalArtifact');
  // Each artifact is one file naming the ConfigMap its Sync applies: /<name>.yaml.
  server = http.createServer((req, res) => {
    const name = /^\/([\w-]+)\.yaml$/.exec(req.url ?? '')?.[1];
    if (!name) return void res.writeHead(404).end('not found');
    res.writeHead(200).end(cmYaml(`out-${name}`, name));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  op = await OperatorProcess.start(CLUSTER, ['--namespace', ns(), '--log-level', 'debug', '--enable-debug-endpoints']);
}, 120_000);

afterAll(async () => {
  await op?.stop('SIGTERM');
  await new Promise((r) => server?.close(r));
  await closeClients();
});

async function writeConfigMap(name: string, data: Record<string, string>): Promise<void> {
  await client.request({
    method: 'PATCH',
    path: cmPath(name),
    query: { fieldManager: 'test', force: true },
    contentType: 'application/apply-patch+yaml',
    body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: ns() }, data },
  });
}

async function createSecret(name: string, value: string, annotations: Record<string, string> = {}): Promise<void> {
  await client.request({
    method: 'POST',
    path: `/api/v1/namespaces/${ns()}/secrets`,
    body: { apiVersion: 'v1', kind: 'Secret', metadata: { name, annotations }, data: { 'app.yaml': Buffer.from(value).toString('base64') } },
  });
}

async function listSyncs(): Promise<SyncObject[]> {
  return (await client.request<{ items: SyncObject[] }>({ path: syncPath(ns()) })).items;
}

/** How many Syncs are Ready for their current generation. */
async function readyCount(): Promise<{ ready: number; notReady: string[] }> {
  const syncs = await listSyncs();
  const isReady = (s: SyncObject): boolean => readyOf(s)?.status === 'True' && s.status?.observedGeneration === s.metadata.generation;
  return { ready: syncs.filter(isReady).length, notReady: syncs.filter((s) => !isReady(s)).map((s) => `${s.metadata.name}: ${readyOf(s)?.message ?? 'no status'}`) };
}

async function waitForAllReady(n: number): Promise<void> {
  let last: { ready: number; notReady: string[] } = { ready: 0, notReady: [] };
  await eventually(
    `${n} Syncs Ready`,
    async () => {
      last = await readyCount();
      return last.ready === n ? true : undefined;
    },
    300_000,
    1_000,
  ).catch((err: unknown) => {
    throw new Error(`${String(err)}; not ready (first 5): ${last.notReady.slice(0, 5).join('; ')}`);
  });
}

const reconciledLines = (name: string): LogLine[] =>
  op.logs.filter((l) => l.msg === 'reconciled' && l.kind === 'Sync' && l.namespace === ns() && l.name === name);

/** Open watches by resource, from the operator's own gauge. */
async function watchesByResource(): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  for (const m of (await op.metrics()).matchAll(/^syncprims_watches\{([^}]*)\} (\S+)$/gm)) {
    const resource = /resource="([^"]*)"/.exec(m[1] ?? '')?.[1] ?? '';
    out.set(resource, (out.get(resource) ?? 0) + Number(m[2]));
  }
  return out;
}

async function cacheDump(): Promise<{ informer: string; objects: { metadata: { name?: string } }[] }[]> {
  const res = await fetch(`http://127.0.0.1:${op.ports.debug}/debug/cache`);
  expect(res.status).toBe(200);
  return (await res.json()) as { informer: string; objects: { metadata: { name?: string } }[] }[];
}

describe('600 Syncs, each with a source object of its own', () => {
  const cms = names('cm', CONFIGMAPS);
  const secrets = names('sec', SECRETS);
  const artifacts = names('art', ARTIFACTS);

  beforeAll(async () => {
    await mapLimit(cms, 32, (name) => writeConfigMap(`src-${name}`, { 'app.yaml': cmYaml(`out-${name}`, 'v1') }));
    await mapLimit(secrets, 32, (name) => createSecret(`src-${name}`, cmYaml(`out-${name}`, 'v1')));
    await mapLimit(artifacts, 32, async (name) => {
      await createExternalArtifact(CLUSTER, ns(), name);
      await setArtifact(CLUSTER, ns(), name, { url: `${base}/${name}.yaml`, revision: `${name}@v1` }, 'ExternalArtifact');
    });
    // Created at once, all 600: 32 at a time, as fast as the API server takes them.
    await Promise.all([
      createSyncs(client, ns(), cms, (name) => ({ defaultNamespace: ns(), source: { configMap: { name: `src-${name}` } } })),
      createSyncs(client, ns(), secrets, (name) => ({ defaultNamespace: ns(), source: { secret: { name: `src-${name}` } } })),
      createSyncs(client, ns(), artifacts, (name) => ({
        defaultNamespace: ns(),
        source: { artifact: { apiVersion: FLUX_SOURCE_API_VERSION, kind: 'ExternalArtifact', name } },
      })),
    ]);
  }, 120_000);

  test('all become Ready over at most 32 connections and one watch per kind', async () => {
    await waitForAllReady(CONFIGMAPS + SECRETS + ARTIFACTS);
    expect(await find(client, cmPath('out-art-149'))).toMatchObject({ data: { value: 'art-149' } });
    expect(await find(client, cmPath('out-sec-0'))).toMatchObject({ data: { value: 'v1' } });

    const connections = await tcpConnectionsTo(op.child.pid!, Number(client.server.port));
    expect(connections).toBeGreaterThan(0);
    expect(connections).toBeLessThanOrEqual(32);
    // The operator's own gauge agrees: HTTP/2 (the API server negotiates it), a connection or two.
    const reported = await op.metric('syncprims_connections', { protocol: 'h2' });
    expect(reported).toBeGreaterThan(0);
    expect(reported).toBeLessThanOrEqual(32);
    // In play: the four kinds (no FleetSync here: the cluster inventory and the template revisions
    // are not watched); ConfigMaps and Secrets as references (metadata only), and
    // ExternalArtifacts (Flux source objects, cached whole: their status.artifact is read from the
    // cache); ConfigMaps as owned objects. One watch each, whatever the number of syncs.
    const watches = await watchesByResource();
    expect(Object.fromEntries(watches)).toEqual({
      'syncs.syncprims.dev': 1,
      'remotesyncs.syncprims.dev': 1,
      'proxysyncs.syncprims.dev': 1,
      'fleetsyncs.syncprims.dev': 1,
      'configmaps/metadata': 1,
      'secrets/metadata': 1,
      'externalartifacts.source.toolkit.fluxcd.io': 1,
      configmaps: 1,
    });
  }, 330_000);

  test('editing one source re-applies its Sync, woken by the watch event, and no other', async () => {
    const names = [...cms, ...secrets, ...artifacts];
    // The lines that trail the last test's status writes land first: none new for a second.
    await steady(() => names.reduce((n, name) => n + reconciledLines(name).length, 0));
    const before = new Map(names.map((name) => [name, reconciledLines(name).length]));
    await writeConfigMap('src-cm-7', { 'app.yaml': cmYaml('out-cm-7', 'v2') });
    const edited = (await client.request<{ metadata: { resourceVersion: string } }>({ path: cmPath('src-cm-7') })).metadata.resourceVersion;
    await eventually('out-cm-7 to hold v2', async () => ((await find<{ data?: { value?: string } }>(client, cmPath('out-cm-7')))?.data?.value === 'v2' ? true : undefined), 30_000);
    await waitForReady(client, ns(), 'cm-7', 'True');
    // The reconcile that applied it was caused by the watch event of that very change.
    const cause = `ConfigMap ${ns()}/src-cm-7 changed (resourceVersion ${edited})`;
    const runs = await eventually('the reconcile woken by the edit', async () => {
      const lines = reconciledLines('cm-7').slice(before.get('cm-7'));
      return lines.some((l) => (l.causes as string[]).includes(cause)) ? lines : undefined;
    });
    expect(runs.flatMap((l) => l.causes as string[]).filter((c) => c === 'requeue or retry')).toEqual([]);
    // Every event of the edit has been handled by now (the Sync's own status write came after it); give stragglers a moment.
    await new Promise((r) => setTimeout(r, 2_000));
    const others = [...before].filter(([name, n]) => name !== 'cm-7' && reconciledLines(name).length !== n).map(([name]) => name);
    expect(others).toEqual([]);
  }, 60_000);

  test('no Secret content reaches the caches, whatever its annotations hold', async () => {
    const marker = `marker-${Date.now().toString(36)}-only-in-the-secret`;
    const value = `# ${marker}\n${cmYaml('out-marked', 'plain')}`;
    const encoded = Buffer.from(value).toString('base64');
    // As `kubectl apply` would leave it: the whole Secret, data and all, in an annotation.
    const lastApplied = JSON.stringify({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'src-marked' }, data: { 'app.yaml': encoded }, stringData: { note: marker } });
    await createSecret('src-marked', value, { 'kubectl.kubernetes.io/last-applied-configuration': lastApplied });
    await applySync(client, ns(), 'marked', { defaultNamespace: ns(), source: { secret: { name: 'src-marked' } } });
    await waitForReady(client, ns(), 'marked', 'True');

    const dump = await cacheDump();
    // The Secret is in the caches (by its metadata), so the dump is the one to look in.
    const secrets = dump.filter((d) => d.informer.startsWith('v1|Secret|') && d.informer.endsWith('|metadata'));
    expect(secrets.flatMap((d) => d.objects.map((o) => o.metadata.name))).toContain('src-marked');
    const text = JSON.stringify(dump);
    expect(text).not.toContain(marker);
    expect(text).not.toContain(encoded);
    expect(text).not.toContain('last-applied-configuration');
  });

  test('SIGTERM with 600 Syncs, their watches and reconciles in flight: the first signal ends it, gracefully', async () => {
    // Work in flight: 100 sources edited just before the signal.
    await mapLimit(cms.slice(100, 200), 32, (name) => writeConfigMap(`src-${name}`, { 'app.yaml': cmYaml(`out-${name}`, 'v3') }));
    const code = await op.stop('SIGTERM');
    expect(code).toBe(0);
    expect(op.logs.some((l) => l.msg === 'shutdown complete')).toBe(true);
    expect(op.logs.some((l) => l.msg.startsWith('shutdown did not finish'))).toBe(false);
    op = await OperatorProcess.start(CLUSTER, ['--namespace', ns(), '--log-level', 'debug', '--enable-debug-endpoints']);
    await eventually('the edits applied after a restart', async () => ((await find<{ data?: { value?: string } }>(client, cmPath('out-cm-199')))?.data?.value === 'v3' ? true : undefined));
  }, 90_000);
});

describe('a watch ends when no sync needs its kind', () => {
  test('referenced kinds and owned kinds (stale inventory entries count)', async () => {
    await writeConfigMap('roles-src', {
      'app.yaml': [
        cmYaml('kept', 'x'),
        '---\napiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata:\n  name: reader\nrules: []\n',
      ].join(''),
    });
    await applySync(client, ns(), 'roles', { defaultNamespace: ns(), prune: false, source: { configMap: { name: 'roles-src' } } });
    const first = await waitForReady(client, ns(), 'roles', 'True');
    const roles = 'roles.rbac.authorization.k8s.io';
    expect((await watchesByResource()).get(roles)).toBe(1);

    // The Role leaves the set; with prune: false it stays in the inventory, so it is still watched.
    await writeConfigMap('roles-src', { 'app.yaml': cmYaml('kept', 'x') });
    const second = await eventually('the new set applied', async () => {
      const s = (await listSyncs()).find((x) => x.metadata.name === 'roles');
      const applied = s?.status?.lastAppliedRevision !== first.status?.lastAppliedRevision && readyOf(s!)?.status === 'True';
      return applied ? s : undefined;
    });
    expect(second.status?.inventory?.entries.map((e) => e.id)).toContain(`${ns()}_reader_rbac.authorization.k8s.io_Role`);
    expect((await watchesByResource()).get(roles)).toBe(1);

    // The Syncs that read ExternalArtifacts go, and the one that owns the Role: nobody needs either kind now.
    const artifactWatch = 'externalartifacts.source.toolkit.fluxcd.io';
    expect((await watchesByResource()).get(artifactWatch)).toBe(1);
    await mapLimit([...names('art', ARTIFACTS), 'roles'], 32, (name) => client.request({ method: 'DELETE', path: syncPath(ns(), name) }));
    await eventually('no ExternalArtifact watch, no Role watch', async () => {
      const w = await watchesByResource();
      return !w.get(artifactWatch) && !w.get(roles) ? w : undefined;
    }, 120_000, 500);
    // Kinds still needed keep their one watch each.
    const w = await watchesByResource();
    expect([w.get('configmaps/metadata'), w.get('secrets/metadata'), w.get('configmaps')]).toEqual([1, 1, 1]);
    expect(await find(client, `/apis/rbac.authorization.k8s.io/v1/namespaces/${ns()}/roles/reader`)).toBeUndefined();
  }, 150_000);
});
