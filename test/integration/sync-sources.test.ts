// Sources through a running operator: a Flux artifact whose new revision is
// applied at once (watched, not polled), ConfigMap edits, and bad input of
// every kind: each ends in Ready=False with an actionable message and an
// Event, applies nothing, and the operator keeps serving other Syncs.
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { createHash } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { KubeClient } from '../../src/kube/client.js';
import { OPERATOR_USER_AGENT } from '../../src/cli/run/run.js';
import { requestsSince } from '../support/audit.js';
import { clusterClient, closeClients } from '../support/controlplane.js';
import { installCrds } from '../support/crds.js';
import { eventually } from '../support/eventually.js';
import { createGitRepository, FLUX_SOURCE_API_VERSION, installGitRepositoryCrd, setArtifact } from '../support/flux.js';
import { TEST_LABEL, useTestNamespace } from '../support/namespace.js';
import { OperatorProcess } from '../support/operator.js';
import { applySync, eventsFor, find, getSync, readyOf, waitForReady } from '../support/syncs.js';
import { tarGz } from '../support/tarball.js';

const CLUSTER = 'mgmt';
let client: KubeClient;
let op: OperatorProcess;
let server: http.Server;
let base = '';
const files = new Map<string, Buffer>();
/** GETs the server answered, per path. */
const served = new Map<string, number>();
const ns = useTestNamespace(CLUSTER, 'syncsrc');

beforeAll(async () => {
  client = await clusterClient(CLUSTER);
  await installCrds(CLUSTER);
  await installGitRepositoryCrd(CLUSTER);
  server = http.createServer((req, res) => {
    served.set(req.url ?? '', (served.get(req.url ?? '') ?? 0) + 1);
    const body = files.get(req.url ?? '');
    if (!body) return void res.writeHead(404).end('not found');
    res.writeHead(200).end(body);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  op = await OperatorProcess.start(CLUSTER, ['--namespace', ns()]);
});

afterAll(async () => {
  await op?.stop('SIGTERM');
  await new Promise((r) => server.close(r));
  await closeClients();
});

const sha256 = (b: Buffer): string => `sha256:${createHash('sha256').update(b).digest('hex')}`;
const cmYaml = (name: string, value: string): string =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\ndata:\n  value: "${value}"\n`;
const cmPath = (name: string): string => `/api/v1/namespaces/${ns()}/configmaps/${name}`;

async function expectWarningEvent(name: string, reason: string): Promise<void> {
  await eventually(`a ${reason} Event on ${name}`, async () =>
    (await eventsFor(client, ns(), name)).some((e) => e.reason === reason && e.type === 'Warning') || undefined,
  );
}

describe('Flux artifact source', () => {
  test('a new revision of the artifact is applied at once, read from the watch that brought it (no GET of the GitRepository)', async () => {
    const since = new Date();
    const v1 = await tarGz([{ name: 'app/cm.yaml', data: cmYaml('from-artifact', 'one') }]);
    files.set('/artifact-1.tar.gz', v1);
    await createGitRepository(CLUSTER, ns(), 'repo');
    await setArtifact(CLUSTER, ns(), 'repo', { url: `${base}/artifact-1.tar.gz`, digest: sha256(v1), revision: 'main@sha1:1111' });
    await applySync(client, ns(), 'from-flux', {
      defaultNamespace: ns(),
      paths: ['app'],
      source: { artifact: { apiVersion: FLUX_SOURCE_API_VERSION, kind: 'GitRepository', name: 'repo' } },
    });
    const ready = await waitForReady(client, ns(), 'from-flux', 'True');
    expect(ready.status?.lastAppliedRevision).toBe('main@sha1:1111');
    expect(await find(client, cmPath('from-artifact'))).toMatchObject({ data: { value: 'one' } });

    const v2 = await tarGz([{ name: 'app/cm.yaml', data: cmYaml('from-artifact', 'two') }]);
    files.set('/artifact-2.tar.gz', v2);
    const before = await op.metric('controller_runtime_reconcile_total', { controller: 'sync' });
    await setArtifact(CLUSTER, ns(), 'repo', { url: `${base}/artifact-2.tar.gz`, digest: sha256(v2), revision: 'main@sha1:2222' });
    const next = await eventually('revision 2222 to be applied', async () => {
      const s = await getSync(client, ns(), 'from-flux');
      return s.status?.lastAppliedRevision === 'main@sha1:2222' ? s : undefined;
    }, 20_000);
    expect(readyOf(next)?.status).toBe('True');
    expect(await find(client, cmPath('from-artifact'))).toMatchObject({ data: { value: 'two' } });
    // The GitRepository is cached whole (a Flux source object): its watch, not a GET per reconcile.
    const requests = await requestsSince(CLUSTER, since, OPERATOR_USER_AGENT);
    expect(requests.filter((e) => e.objectRef?.resource === 'gitrepositories' && e.verb === 'get')).toEqual([]);
    expect(requests.filter((e) => e.objectRef?.name === 'from-artifact' && e.verb === 'patch').length).toBeGreaterThanOrEqual(2);
    // Woken by the watch on the GitRepository: a few reconciles, no polling loop.
    expect((await op.metric('controller_runtime_reconcile_total', { controller: 'sync' })) - before).toBeLessThan(6);
  });

  test('Syncs created together on one artifact revision fetch its file once', async () => {
    const set = await tarGz([{ name: 'cm.yaml', data: cmYaml('from-shared', 'one') }]);
    files.set('/shared-1.tar.gz', set);
    await createGitRepository(CLUSTER, ns(), 'shared');
    await setArtifact(CLUSTER, ns(), 'shared', { url: `${base}/shared-1.tar.gz`, digest: sha256(set), revision: 'main@sha1:5555' });
    // Each applies the set into a namespace of its own (one object, four owners otherwise).
    const targets = ['a', 'b', 'c', 'd'].map((t) => `${ns()}-${t}`);
    await Promise.all(targets.map((t) => client.request({ method: 'POST', path: '/api/v1/namespaces', body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: t, labels: { [TEST_LABEL]: 'true' } } } })));
    try {
      const source = { artifact: { apiVersion: FLUX_SOURCE_API_VERSION, kind: 'GitRepository', name: 'shared' } };
      await Promise.all(targets.map((t, i) => applySync(client, ns(), `shared-${i}`, { defaultNamespace: t, source })));
      for (const [i, t] of targets.entries()) {
        expect((await waitForReady(client, ns(), `shared-${i}`, 'True')).status?.lastAppliedRevision).toBe('main@sha1:5555');
        expect(await find(client, `/api/v1/namespaces/${t}/configmaps/from-shared`)).toMatchObject({ data: { value: 'one' } });
      }
      // Content-addressed (the artifact's digest), fetched by the first and shared with the others,
      // those that came while it was in flight included.
      expect(served.get('/shared-1.tar.gz')).toBe(1);
    } finally {
      await Promise.all(targets.map((t) => client.request({ method: 'DELETE', path: `/api/v1/namespaces/${t}` }).catch(() => undefined)));
    }
  });

  test('a ConfigMap source is watched: editing it applies the change', async () => {
    await client.request({
      method: 'POST',
      path: `/api/v1/namespaces/${ns()}/configmaps`,
      body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'manifests' }, data: { 'a.yaml': cmYaml('from-cm', 'one') } },
    });
    await applySync(client, ns(), 'from-cm', { defaultNamespace: ns(), source: { configMap: { name: 'manifests' } } });
    await waitForReady(client, ns(), 'from-cm', 'True');
    await client.request({
      method: 'PATCH',
      path: cmPath('manifests'),
      contentType: 'application/merge-patch+json',
      body: { data: { 'a.yaml': cmYaml('from-cm', 'two') } },
    });
    await eventually('the edit to be applied', async () => {
      const got = await find<{ data: Record<string, string> }>(client, cmPath('from-cm'));
      return got?.data.value === 'two' ? true : undefined;
    }, 20_000);
  });
});

describe('sources that are not there yet', () => {
  // A source that cannot be read is retried after 30 s; these come well before that,
  // so only the watch on the missing object can have brought them.
  test('a missing ConfigMap is applied the moment it is created', async () => {
    await applySync(client, ns(), 'early', { defaultNamespace: ns(), source: { configMap: { name: 'later' } } });
    const failed = await waitForReady(client, ns(), 'early', 'False', 'SourceError');
    expect(readyOf(failed)?.message).toContain(`ConfigMap ${ns()}/later not found`);
    await client.request({
      method: 'POST',
      path: `/api/v1/namespaces/${ns()}/configmaps`,
      body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'later' }, data: { 'a.yaml': cmYaml('from-later', 'one') } },
    });
    await waitForReady(client, ns(), 'early', 'True', 'Succeeded', 15_000);
  });

  test('a Flux source without an artifact yet is applied the moment its artifact is set', async () => {
    const v1 = await tarGz([{ name: 'cm.yaml', data: cmYaml('from-pending', 'one') }]);
    files.set('/pending-1.tar.gz', v1);
    await createGitRepository(CLUSTER, ns(), 'pending');
    await applySync(client, ns(), 'pending', {
      defaultNamespace: ns(),
      source: { artifact: { apiVersion: FLUX_SOURCE_API_VERSION, kind: 'GitRepository', name: 'pending' } },
    });
    const failed = await waitForReady(client, ns(), 'pending', 'False', 'SourceError');
    expect(readyOf(failed)?.message).toContain('has no artifact');
    await setArtifact(CLUSTER, ns(), 'pending', { url: `${base}/pending-1.tar.gz`, digest: sha256(v1), revision: 'main@sha1:3333' });
    const ready = await waitForReady(client, ns(), 'pending', 'True', 'Succeeded', 15_000);
    expect(ready.status?.lastAppliedRevision).toBe('main@sha1:3333');
  });
});

describe('bad input', () => {
  const cases: { name: string; source: () => Promise<Record<string, unknown>>; reason: string; message: RegExp; spec?: Record<string, unknown> }[] = [
    {
      name: 'bad-yaml',
      reason: 'SourceError',
      message: /document 2.*line \d+/,
      source: async () => {
        files.set('/bad.yaml', Buffer.from(`${cmYaml('never-1', 'x')}---\nkind: [unclosed\n`));
        return { http: { url: `${base}/bad.yaml` } };
      },
    },
    {
      name: 'unknown-kind',
      reason: 'CRDNotInstalled',
      message: /Gizmo/,
      source: async () => ({
        inline: [
          { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'never-2' } },
          { apiVersion: 'nowhere.example.com/v1', kind: 'Gizmo', metadata: { name: 'g' } },
        ],
      }),
    },
    {
      name: 'schema-violation',
      reason: 'ApplyFailed',
      message: /Deployment .*\/broken: .*selector/,
      source: async () => ({
        inline: [{ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'broken' }, spec: { template: {} } }],
      }),
    },
    {
      name: 'traversal',
      reason: 'SourceError',
      message: /\.\.\/evil\.yaml/,
      source: async () => {
        files.set('/evil.tar.gz', await tarGz([{ name: 'ok.yaml', data: cmYaml('never-3', 'x') }, { name: '../evil.yaml', data: cmYaml('never-4', 'x') }]));
        return { http: { url: `${base}/evil.tar.gz` } };
      },
    },
    {
      name: 'bad-digest',
      reason: 'SourceError',
      message: /digest/,
      source: async () => {
        files.set('/d.yaml', Buffer.from(cmYaml('never-5', 'x')));
        return { http: { url: `${base}/d.yaml`, digest: `sha256:${'0'.repeat(64)}` } };
      },
    },
    {
      name: 'unreachable',
      reason: 'SourceError',
      message: /127\.0\.0\.1:9/,
      source: async () => ({ http: { url: 'http://127.0.0.1:9/nothing.yaml' } }),
    },
    {
      name: 'missing-cm',
      reason: 'SourceError',
      message: /ConfigMap .*absent/,
      source: async () => ({ configMap: { name: 'absent' } }),
    },
    {
      // spec.helm renders a chart (issue 47): inline objects are not one, and are never applied as plain manifests.
      name: 'helm-inline',
      reason: 'SourceError',
      message: /^spec\.helm: a chart needs an archive \(a packaged chart, \.tgz\), and spec\.source\.inline holds objects/,
      spec: { helm: { releaseName: 'web' } },
      source: async () => ({ inline: [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'never-6' } }] }),
    },
    {
      name: 'chart-without-helm',
      reason: 'SourceError',
      message: /^spec\.source\.helmRepository is a Helm chart: it is rendered only with spec\.helm/,
      source: async () => ({ helmRepository: { url: 'http://127.0.0.1:9', chart: 'web' } }),
    },
  ];

  test.each(cases)('$name ends in Ready=False ($reason) with an Event, and applies nothing', async ({ name, source, reason, message, spec }) => {
    await applySync(client, ns(), name, { defaultNamespace: ns(), source: await source(), ...spec });
    const failed = await waitForReady(client, ns(), name, 'False', reason);
    expect(readyOf(failed)?.message).toMatch(message);
    await expectWarningEvent(name, reason);
    for (const i of [1, 2, 3, 4, 5, 6]) expect(await find(client, cmPath(`never-${i}`))).toBeUndefined();
  });

  test('the operator keeps serving other Syncs meanwhile', async () => {
    await applySync(client, ns(), 'healthy', { source: { inline: [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'fine', namespace: ns() } }] } });
    await waitForReady(client, ns(), 'healthy', 'True');
    expect(op.stderr.filter((l) => /Error|uncaught/i.test(l))).toEqual([]);
    expect(await op.readyz()).toBe(200);
  });
});

