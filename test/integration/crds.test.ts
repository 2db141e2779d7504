// The generated CRDs on a real API server: installed, served with the category
// and short names, defaults filled by the server, and invalid objects refused
// with messages a person understands.
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { API_VERSION, GROUP, KIND_NAMES, KINDS, SYNC_KINDS, VERSION, type Kind, type SyncKind } from '../../src/api/kinds.js';
import {
  API_VERSION_MESSAGE,
  CONFIG_MAP_KEY_MESSAGE,
  DNS1123_LABEL_MESSAGE,
  DNS1123_SUBDOMAIN_MESSAGE,
  KIND_MESSAGE,
} from '../../src/api/names.js';
import { parseSyncObject } from '../../src/api/validate.js';
import type { KubeClient } from '../../src/kube/client.js';
import { ApiError } from '../../src/kube/errors.js';
import { collectionPath, objectPath, type KubeObject } from '../../src/kube/resources.js';
import { closeClients, clusterClient } from '../support/controlplane.js';
import { installCrds, syncResource } from '../support/crds.js';
import { useTestNamespace } from '../support/namespace.js';

const CLUSTER = 'mgmt';
const namespace = useTestNamespace(CLUSTER, 'crds');
let client: KubeClient;

beforeAll(async () => {
  client = await clusterClient(CLUSTER);
  await installCrds(CLUSTER);
});
afterAll(closeClients);

const inline = { inline: [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm' }, data: { k: 'v' } }] };
const clusterRef = { clusterRef: { name: 'edge-1' } };
const serverDefaults = { prune: true, wait: true, timeout: '5m', interval: '10m', deletionPolicy: 'Delete' };

function object(kind: Kind, name: string, spec: unknown): KubeObject {
  const obj: KubeObject = { apiVersion: API_VERSION, kind, metadata: { name, namespace: namespace() } };
  if (spec !== undefined) obj.spec = spec;
  return obj;
}

/** A valid spec of each kind. */
function validSpec(kind: SyncKind): Record<string, unknown> {
  if (kind === 'Sync') return { source: inline };
  if (kind === 'RemoteSync') return { source: inline, ...clusterRef };
  return { ...clusterRef, template: { spec: { source: inline } } };
}

function create(obj: KubeObject, dryRun = false): Promise<KubeObject> {
  return client.request<KubeObject>({
    method: 'POST',
    path: collectionPath(syncResource(obj.kind as Kind), namespace()),
    query: { dryRun: dryRun ? 'All' : undefined },
    body: obj,
  });
}

/** Creates (dry run) and returns the server's refusal message; fails when it is accepted. */
async function refusal(obj: KubeObject): Promise<string> {
  const err = await create(obj, true).then(
    () => new Error(`the API server accepted ${JSON.stringify(obj.spec)}`),
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ApiError);
  expect((err as ApiError).status).toBe(422);
  return (err as ApiError).message;
}

const crdPath = (name: string): string => `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${name}`;

type Rule = 'name' | 'namespace' | 'key' | 'kind' | 'apiVersion';
/** What each rule refuses here, and the message the API server (and zod) give. */
const BAD: Record<Rule, string> = {
  name: '../../kube-system/secrets/crown-jewels',
  namespace: 'kube-system/secrets',
  key: '../value',
  kind: 'secrets/x',
  apiVersion: 'v1/../../x',
};
const RULES: Record<Rule, string> = {
  name: DNS1123_SUBDOMAIN_MESSAGE,
  namespace: DNS1123_LABEL_MESSAGE,
  key: CONFIG_MAP_KEY_MESSAGE,
  kind: KIND_MESSAGE,
  apiVersion: API_VERSION_MESSAGE,
};

/** Every field of the three kinds that names an object, a namespace or a key, with a value that leaves its place. */
const TRAVERSALS: [SyncKind, Record<string, unknown>, string, Rule][] = (() => {
  const source = (s: unknown) => ({ source: s });
  const http = (extra: Record<string, unknown>) => source({ http: { url: 'https://127.0.0.1/a.yaml', ...extra } });
  const syncCases: [Record<string, unknown>, string, Rule][] = [
    [source({ configMap: { name: BAD.name } }), 'source.configMap.name', 'name'],
    [source({ configMap: { name: 'cm', key: BAD.key } }), 'source.configMap.key', 'key'],
    [source({ secret: { name: BAD.name } }), 'source.secret.name', 'name'],
    [source({ secret: { name: 's', key: BAD.key } }), 'source.secret.key', 'key'],
    [http({ caSecretRef: { name: BAD.name } }), 'source.http.caSecretRef.name', 'name'],
    [http({ caSecretRef: { name: 'ca', key: BAD.key } }), 'source.http.caSecretRef.key', 'key'],
    [http({ headersSecretRef: { name: BAD.name } }), 'source.http.headersSecretRef.name', 'name'],
    [source({ artifact: { apiVersion: 'source.toolkit.fluxcd.io/v1', kind: 'GitRepository', name: BAD.name } }), 'source.artifact.name', 'name'],
    [source({ artifact: { apiVersion: 'source.toolkit.fluxcd.io/v1', kind: BAD.kind, name: 'repo' } }), 'source.artifact.kind', 'kind'],
    [source({ artifact: { apiVersion: BAD.apiVersion, kind: 'GitRepository', name: 'repo' } }), 'source.artifact.apiVersion', 'apiVersion'],
    [{ ...source(inline), dependsOn: [{ name: BAD.name }] }, 'dependsOn[0].name', 'name'],
    [{ ...source(inline), dependsOn: [{ name: 'a', namespace: BAD.namespace }] }, 'dependsOn[0].namespace', 'namespace'],
    [{ ...source(inline), defaultNamespace: BAD.namespace }, 'defaultNamespace', 'namespace'],
    [{ ...source(inline), serviceAccountName: BAD.name }, 'serviceAccountName', 'name'],
  ];
  const cases: [SyncKind, Record<string, unknown>, string, Rule][] = [];
  for (const [spec, field, rule] of syncCases) {
    cases.push(['Sync', spec, `spec.${field}`, rule]);
    cases.push(['RemoteSync', { ...spec, ...clusterRef }, `spec.${field}`, rule]);
    cases.push(['ProxySync', { ...clusterRef, template: { spec } }, `spec.template.spec.${field}`, rule]);
  }
  const template = { spec: { source: inline } };
  for (const kind of ['RemoteSync', 'ProxySync'] as const) {
    const rest = kind === 'RemoteSync' ? { source: inline } : { template };
    cases.push([kind, { ...rest, kubeConfig: { secretRef: { name: BAD.name } } }, 'spec.kubeConfig.secretRef.name', 'name']);
    cases.push([kind, { ...rest, kubeConfig: { secretRef: { name: 'k', key: BAD.key } } }, 'spec.kubeConfig.secretRef.key', 'key']);
    cases.push([kind, { ...rest, clusterRef: { name: BAD.name } }, 'spec.clusterRef.name', 'name']);
  }
  cases.push(['ProxySync', { ...clusterRef, dependsOn: [{ name: BAD.name }], template }, 'spec.dependsOn[0].name', 'name']);
  cases.push(['ProxySync', { ...clusterRef, dependsOn: [{ name: 'a', namespace: BAD.namespace }], template }, 'spec.dependsOn[0].namespace', 'namespace']);
  cases.push(['ProxySync', { ...clusterRef, template: { ...template, metadata: { name: BAD.name } } }, 'spec.template.metadata.name', 'name']);
  cases.push(['ProxySync', { ...clusterRef, template: { ...template, metadata: { namespace: BAD.namespace } } }, 'spec.template.metadata.namespace', 'namespace']);
  return cases;
})();

describe('installation', () => {
  test('the CRDs are Established, applied by syncprims, and installing again changes nothing', async () => {
    const names = KINDS.map((k) => `${KIND_NAMES[k].plural}.${GROUP}`);
    const before = await Promise.all(names.map((n) => client.request<KubeObject>({ path: crdPath(n) })));
    await installCrds(CLUSTER, true);
    for (const crd of before) {
      const after = await client.request<KubeObject>({ path: crdPath(crd.metadata.name ?? '') });
      expect(after.metadata.generation).toBe(crd.metadata.generation);
      const conditions = (after.status as { conditions: { type: string; status: string }[] }).conditions;
      expect(conditions.find((c) => c.type === 'Established')?.status).toBe('True');
      const appliers = (after.metadata.managedFields as { manager: string; operation: string }[])
        .filter((m) => m.operation === 'Apply')
        .map((m) => m.manager);
      // Someone may have applied them by hand as well (kubectl apply --server-side -f crds/).
      expect(appliers).toContain('syncprims');
      expect(after.metadata.resourceVersion).toBe(crd.metadata.resourceVersion);
    }
  });

  test('discovery lists the four kinds with the category syncprims and their short names', async () => {
    const list = await client.request<{
      resources: { name: string; kind: string; namespaced: boolean; categories?: string[]; shortNames?: string[] }[];
    }>({ path: `/apis/${GROUP}/${VERSION}` });
    const byName = new Map(list.resources.map((r) => [r.name, r]));
    for (const kind of KINDS) {
      const { plural, shortName } = KIND_NAMES[kind];
      expect(byName.get(plural)).toMatchObject({
        kind,
        namespaced: true,
        categories: ['syncprims'],
        shortNames: [shortName],
      });
      expect(byName.has(`${plural}/status`)).toBe(true);
    }
  });
});

describe('valid objects', () => {
  test('a Sync is accepted, the server fills the defaults the zod schema has, inline objects stay whole', async () => {
    const dependsOn = [{ name: 'db' }, { kind: 'ProxySync', name: 'edge', requiredStatus: 'InProgress' }];
    const created = await create(object('Sync', 'app', { source: inline, dependsOn }));
    expect(created.spec).toEqual({
      source: inline,
      dependsOn: [
        { kind: 'Sync', name: 'db', requiredStatus: 'Current' },
        { kind: 'ProxySync', name: 'edge', requiredStatus: 'InProgress' },
      ],
      ...serverDefaults,
    });
    const parsed = parseSyncObject('Sync', created);
    if (!parsed.ok) throw new Error(parsed.message);
    expect(parsed.value.spec).toEqual(created.spec);
  });

  test('every source form and every optional field is accepted as written', async () => {
    const digest = `sha256:${'ab'.repeat(32)}`;
    const spec = {
      source: { http: { url: 'https://example.com/app.tgz', digest, caSecretRef: { name: 'ca' } } },
      paths: ['deploy/base', 'extra.yaml'],
      defaultNamespace: 'apps',
      prune: false,
      wait: false,
      timeout: '1m30s',
      interval: '1h',
      suspend: true,
      serviceAccountName: 'deployer',
      force: true,
      deletionPolicy: 'Orphan',
      commonMetadata: { labels: { team: 'a' }, annotations: { note: 'x' } },
    };
    expect((await create(object('Sync', 'full', spec), true)).spec).toEqual(spec);
    for (const source of [
      { configMap: { name: 'manifests' } },
      { secret: { name: 'manifests', key: 'all.yaml' } },
      { artifact: { apiVersion: 'source.toolkit.fluxcd.io/v1', kind: 'GitRepository', name: 'repo' } },
    ]) {
      expect((await create(object('Sync', 'form', { source }), true)).spec).toMatchObject({ source });
    }
  });

  test('a RemoteSync names its cluster by kubeConfig (key defaults to value) or by clusterRef', async () => {
    const kubeConfig = { secretRef: { name: 'edge-1' } };
    const byKubeConfig = await create(object('RemoteSync', 'edge', { source: inline, kubeConfig }));
    expect(byKubeConfig.spec).toEqual({
      source: inline,
      kubeConfig: { secretRef: { name: 'edge-1', key: 'value' } },
      ...serverDefaults,
    });
    const byClusterRef = await create(object('RemoteSync', 'edge-ref', validSpec('RemoteSync')));
    expect(byClusterRef.spec).toEqual({ source: inline, ...clusterRef, ...serverDefaults });
  });

  test('a ProxySync gets the defaults inside its template', async () => {
    const template = { metadata: { namespace: 'apps', labels: { a: 'b' } }, spec: { source: inline } };
    const created = await create(object('ProxySync', 'edge-app', { ...clusterRef, template }));
    expect(created.spec).toEqual({
      ...clusterRef,
      template: { metadata: template.metadata, spec: { source: inline, ...serverDefaults } },
    });
  });

  test('a name of 63 characters is fine', async () => {
    for (const kind of SYNC_KINDS) {
      const created = await create(object(kind, 'a'.repeat(63), validSpec(kind)), true);
      expect(created.metadata.name).toHaveLength(63);
    }
  });

  test('status is a subresource, and the printer columns read it', async () => {
    const current = await create(object('Sync', 'with-status', { source: inline }));
    const path = objectPath(syncResource('Sync'), 'with-status', namespace());
    const ready = {
      type: 'Ready',
      status: 'True',
      reason: 'Succeeded',
      message: 'Applied revision sha256:abc',
      lastTransitionTime: '2026-01-01T00:00:00Z',
    };
    const status = {
      observedGeneration: 1,
      lastAppliedRevision: 'sha256:abc',
      conditions: [ready],
      inventory: { entries: [{ id: `${namespace()}_cm__ConfigMap`, v: 'v1' }] },
      summary: { total: 1, current: 1, inProgress: 0, failed: 0, terminating: 0, notFound: 0, unknown: 0 },
    };
    const statusPath = `${path}/status`;
    const updated = await client.request<KubeObject>({ method: 'PUT', path: statusPath, body: { ...current, status } });
    expect(updated.status).toEqual(status);
    // The main resource ignores status: writing it there changes nothing.
    const body = { ...updated, status: { lastAppliedRevision: 'other' } };
    const ignored = await client.request<KubeObject>({ method: 'PUT', path, body });
    expect(ignored.status).toEqual(status);

    const table = await client.request<{ columnDefinitions: { name: string }[]; rows: { cells: unknown[] }[] }>(
      { path },
      { accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' },
    );
    expect(table.columnDefinitions.map((c) => c.name)).toEqual(['Name', 'Ready', 'Status', 'Revision', 'Age']);
    expect(table.rows[0]?.cells.slice(0, 4)).toEqual(['with-status', 'True', ready.message, 'sha256:abc']);
  });
});

describe('invalid objects are refused with readable messages', () => {
  test('no spec, or a spec without source', async () => {
    expect(await refusal(object('Sync', 'nospec', undefined))).toContain('spec: Required value');
    expect(await refusal(object('Sync', 'nosource', {}))).toContain('spec.source: Required value');
  });

  test('no source form, or two', async () => {
    const message = 'source must set exactly one of inline, configMap, secret, http, artifact, helmRepository, git, oci';
    const empty = await refusal(object('Sync', 'empty', { source: {} }));
    expect(empty).toContain(`spec.source: Invalid value: ${message}`);
    const two = await refusal(object('Sync', 'two', { source: { ...inline, configMap: { name: 'cm' } } }));
    expect(two).toContain(`spec.source: Invalid value: ${message}`);
    const inTemplate = await refusal(object('ProxySync', 'two', { ...clusterRef, template: { spec: { source: {} } } }));
    expect(inTemplate).toContain(`spec.template.spec.source: Invalid value: ${message}`);
  });

  test('spec.helm and source.helmRepository: accepted as written, each bad field refused with what it must be', async () => {
    const helm = { chart: 'charts/web', releaseName: 'web-1', namespace: 'apps', values: { replicas: 2, image: { tag: 'v1' } }, valuesFrom: [{ kind: 'Secret', name: 'web-values', key: 'values.yaml', targetPath: 'a.b', optional: true }], includeCRDs: false, kubeVersion: 'v1.36.0', apiVersions: ['apps/v1'] };
    const source = { helmRepository: { url: 'https://charts.example/stable', chart: 'web', version: '>=1.2 <2', secretRef: { name: 'repo' }, caSecretRef: { name: 'repo-ca' } } };
    const stored = await create(object('Sync', 'helm-ok', { source, helm }), true);
    expect((stored.spec as Record<string, unknown>).helm).toEqual(helm);
    expect(await refusal(object('Sync', 'helm-chart', { source: inline, helm: { chart: '../outside' } }))).toContain('must be a relative path inside the source (no leading /, no .. segment)');
    expect(await refusal(object('Sync', 'helm-chart-2', { source: inline, helm: { chart: '/abs' } }))).toContain('must be a relative path inside the source');
    expect(await refusal(object('Sync', 'helm-release', { source: inline, helm: { releaseName: 'Web_1' } }))).toContain('must be a Helm release name');
    expect(await refusal(object('Sync', 'helm-kube', { source: inline, helm: { kubeVersion: 'latest' } }))).toContain('must be a Kubernetes version such as v1.36.0 or 1.36');
    expect(await refusal(object('Sync', 'helm-from', { source: inline, helm: { valuesFrom: [{ kind: 'Pod', name: 'x' }] } }))).toContain('spec.helm.valuesFrom[0].kind: Unsupported value: "Pod"');
    expect(await refusal(object('Sync', 'helm-repo', { source: { helmRepository: { url: 'oci://charts.example/web', chart: 'web' } }, helm: {} }))).toContain('must be an http:// or https:// URL');
    const inTemplate = await refusal(object('ProxySync', 'helm-t', { ...clusterRef, template: { spec: { source: inline, helm: { releaseName: 'Web_1' } } } }));
    expect(inTemplate).toContain('spec.template.spec.helm.releaseName');
  });

  test('a bad duration', async () => {
    const message = 'must be a duration such as 30s, 5m or 1h30m';
    const timeout = await refusal(object('Sync', 'bad', { source: inline, timeout: '5 minutes' }));
    expect(timeout).toContain(`spec.timeout: Invalid value: "5 minutes": ${message}`);
    const interval = await refusal(object('RemoteSync', 'bad', { ...validSpec('RemoteSync'), interval: '1d' }));
    expect(interval).toContain(`spec.interval: Invalid value: "1d": ${message}`);
    const template = { spec: { source: inline, interval: '-1m' } };
    const inTemplate = await refusal(object('ProxySync', 'bad', { ...clusterRef, template }));
    expect(inTemplate).toContain(`spec.template.spec.interval: Invalid value: "-1m": ${message}`);
  });

  test('an interval under 1s (it would re-read the source without pause)', async () => {
    const message = 'must be at least 1s: a shorter interval re-reads the source and re-checks every object without pause';
    expect(await refusal(object('Sync', 'hot', { source: inline, interval: '0s' }))).toContain(`spec.interval: Invalid value: "0s": ${message}`);
    const template = { spec: { source: inline, interval: '999ms' } };
    expect(await refusal(object('ProxySync', 'hot', { ...clusterRef, template }))).toContain(`spec.template.spec.interval: Invalid value: "999ms": ${message}`);
  });

  test('an interval longer than a Go duration holds is refused as too long, not with a conversion error', async () => {
    const message = 'is too long: at most 5 digits of hours (99999h, over 11 years), 7 of minutes or 9 of seconds';
    const refused = await refusal(object('Sync', 'long', { source: inline, interval: '99999999999h' }));
    expect(refused).toContain(`spec.interval: Invalid value: "99999999999h": ${message}`);
    expect(refused).not.toContain('conversion error');
    expect(refused).not.toContain('at least 1s');
    const template = { spec: { source: inline, interval: '3000000h' } };
    expect(await refusal(object('ProxySync', 'long', { ...clusterRef, template }))).toContain(`spec.template.spec.interval: Invalid value: "3000000h": ${message}`);
    // A timeout as long would never end: refused the same way.
    const timeout = await refusal(object('RemoteSync', 'long', { ...validSpec('RemoteSync'), timeout: '100000h' }));
    expect(timeout).toContain(`spec.timeout: Invalid value: "100000h": ${message}`);
    expect(timeout).not.toContain('must be a duration');
  });

  test('an unknown dependsOn kind', async () => {
    const dependsOn = [{ kind: 'Kustomization', name: 'x' }];
    expect(await refusal(object('Sync', 'dep', { source: inline, dependsOn }))).toContain(
      'spec.dependsOn[0].kind: Unsupported value: "Kustomization": supported values: "Sync", "RemoteSync", "ProxySync"',
    );
  });

  test('a name over 63 characters', async () => {
    for (const kind of SYNC_KINDS) {
      expect(await refusal(object(kind, 'a'.repeat(64), validSpec(kind)))).toContain(
        'metadata.name must be at most 63 characters (it is used in label values)',
      );
    }
  });

  test('a RemoteSync or ProxySync with both cluster fields or neither', async () => {
    const message = 'spec: Invalid value: spec must name the cluster with exactly one of kubeConfig or clusterRef';
    const both = { ...clusterRef, kubeConfig: { secretRef: { name: 'k' } } };
    const template = { spec: { source: inline } };
    expect(await refusal(object('RemoteSync', 'both', { source: inline, ...both }))).toContain(message);
    expect(await refusal(object('RemoteSync', 'neither', { source: inline }))).toContain(message);
    expect(await refusal(object('ProxySync', 'both', { ...both, template }))).toContain(message);
    expect(await refusal(object('ProxySync', 'neither', { template }))).toContain(message);
  });

  test('an http source that is not http(s), or a malformed digest', async () => {
    const ftp = await refusal(object('Sync', 'ftp', { source: { http: { url: 'ftp://example.com/a.yaml' } } }));
    expect(ftp).toContain(
      'spec.source.http.url: Invalid value: "ftp://example.com/a.yaml": must be an http:// or https:// URL',
    );
    const http = { url: 'https://x/a.yaml', digest: 'md5:00' };
    const md5 = await refusal(object('Sync', 'md5', { source: { http } }));
    expect(md5).toContain(
      'spec.source.http.digest: Invalid value: "md5:00": must be sha256: followed by 64 lowercase hex digits',
    );
  });

  test('a ProxySync whose template reads a Flux artifact (the remote cluster cannot)', async () => {
    const template = { spec: { source: { artifact: { apiVersion: 'source.toolkit.fluxcd.io/v1', kind: 'GitRepository', name: 'repo' } } } };
    expect(await refusal(object('ProxySync', 'artifact', { ...clusterRef, template }))).toContain(
      'spec.template: Invalid value: an artifact source cannot be proxied: the remote cluster cannot read the Flux objects of the managing cluster; serve the artifact over http and use source.http',
    );
  });

  test('a reference that is not a name of the API server is refused at admission, in every reference field', async () => {
    for (const [kind, spec, field, rule] of TRAVERSALS) {
      const refused = await refusal(object(kind, 'traversal', spec));
      expect([field, refused]).toEqual([field, expect.stringContaining(`${field}: Invalid value: "${BAD[rule]}": ${RULES[rule]}`)]);
    }
  });

  test('every object refused above is refused by the zod schema too', () => {
    const cases: [SyncKind, unknown][] = [
      ['Sync', {}],
      ['Sync', { source: {} }],
      ['Sync', { source: { ...inline, configMap: { name: 'cm' } } }],
      ['Sync', { source: inline, timeout: '5 minutes' }],
      ['Sync', { source: inline, dependsOn: [{ kind: 'Kustomization', name: 'x' }] }],
      ['Sync', { source: { http: { url: 'ftp://example.com/a.yaml' } } }],
      ['Sync', { source: { http: { url: 'https://x/a.yaml', digest: 'md5:00' } } }],
      ['RemoteSync', { source: inline }],
      ['RemoteSync', { ...validSpec('RemoteSync'), interval: '1d' }],
      ['Sync', { source: inline, interval: '0s' }],
      ['Sync', { source: inline, interval: '99999999999h' }],
      ['RemoteSync', { ...validSpec('RemoteSync'), timeout: '100000h' }],
      ['RemoteSync', { ...validSpec('RemoteSync'), interval: '0.5s' }],
      ['ProxySync', { ...validSpec('ProxySync'), kubeConfig: { secretRef: { name: 'k' } } }],
      ['ProxySync', { ...clusterRef, template: { spec: { source: inline, interval: '-1m' } } }],
      ['ProxySync', { ...clusterRef, template: { spec: { source: { artifact: { apiVersion: 'source.toolkit.fluxcd.io/v1', kind: 'GitRepository', name: 'repo' } } } } }],
      ...TRAVERSALS.map(([kind, spec]) => [kind, spec] as [SyncKind, unknown]),
    ];
    for (const [kind, spec] of cases) {
      expect([kind, spec, parseSyncObject(kind, object(kind, 'x', spec)).ok]).toEqual([kind, spec, false]);
    }
    for (const kind of SYNC_KINDS) {
      expect(parseSyncObject(kind, object(kind, 'a'.repeat(64), validSpec(kind))).ok).toBe(false);
      expect(parseSyncObject(kind, object(kind, 'a'.repeat(63), validSpec(kind))).ok).toBe(true);
    }
  });
});

describe('FleetSync', () => {
  const template = { spec: { source: inline } };
  const artifact = { source: { artifact: { apiVersion: 'source.toolkit.fluxcd.io/v1', kind: 'GitRepository', name: 'repo' } } };

  test('is accepted with ProxySync children by default, the defaults of the template filled in', async () => {
    const created = await create(object('FleetSync', 'fleet', { clusters: { selector: { matchLabels: { env: 'prod' } } }, template }), true);
    expect(created.spec).toMatchObject({ kind: 'ProxySync', template: { spec: { source: inline, ...serverDefaults } } });
    const remote = await create(object('FleetSync', 'fleet', { kind: 'RemoteSync', clusters: { names: ['a'] }, template: { spec: artifact } }), true);
    expect(remote.spec).toMatchObject({ kind: 'RemoteSync' });
  });

  test('refuses what its children could not be, with readable messages, as zod does', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ clusters: {}, template }, 'spec.clusters needs a selector, names, or both'],
      [{ clusters: { names: ['a'] }, template: { spec: artifact } }, 'an artifact source cannot be proxied'],
      [{ kind: 'RemoteSync', clusters: { names: ['a'] }, template: { ...template, metadata: { name: 'x' } } }, 'only for ProxySync children'],
      [{ clusters: { selector: { matchExpressions: [{ key: 'env', operator: 'In' }] } }, template }, 'In and NotIn need values'],
      [{ clusters: { names: [BAD.name] }, template }, DNS1123_SUBDOMAIN_MESSAGE],
      [{ clusters: { names: ['a'] }, kind: 'Sync', template }, 'spec.kind: Unsupported value'],
    ];
    for (const [spec, message] of cases) {
      expect([spec, await refusal(object('FleetSync', 'bad', spec))]).toEqual([spec, expect.stringContaining(message)]);
      expect([spec, parseSyncObject('FleetSync', object('FleetSync', 'bad', spec)).ok]).toEqual([spec, false]);
    }
  });
});
