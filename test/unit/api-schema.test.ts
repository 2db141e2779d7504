import { describe, expect, test } from '@jest/globals';
import {
  API_VERSION,
  FINALIZER,
  KIND_NAMES,
  OWNER_KIND_LABEL,
  Reason,
  SPEC_DEFAULTS,
  SYNC_KINDS,
  kubeconfigSecret,
  parseAnySyncObject,
  parseSyncObject,
  sourceForm,
  syncSpecSchema,
  type SyncSpecInput,
} from '../../src/api/index.js';
import type { KubeObject } from '../../src/kube/resources.js';

const inline: SyncSpecInput['source'] = {
  inline: [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a' }, data: { k: 'v' } }],
};

function sync(spec: unknown, name = 'app'): unknown {
  return { apiVersion: API_VERSION, kind: 'Sync', metadata: { name, namespace: 'team-a' }, spec };
}

describe('constants', () => {
  test('names of the API contract', () => {
    expect(API_VERSION).toBe('syncprims.dev/v1alpha1');
    expect(SYNC_KINDS).toEqual(['Sync', 'RemoteSync', 'ProxySync']);
    expect(Object.values(KIND_NAMES).map((k) => [k.plural, k.shortName])).toEqual([
      ['syncs', 'sy'],
      ['remotesyncs', 'rsy'],
      ['proxysyncs', 'psy'],
      ['fleetsyncs', 'fsy'],
    ]);
    expect(OWNER_KIND_LABEL).toBe('syncprims.dev/owner-kind');
    expect(FINALIZER).toBe('syncprims.dev/finalizer');
    expect(Reason.HealthCheckFailed).toBe('HealthCheckFailed');
  });
});

describe('the sync spec', () => {
  test('fills the defaults of API.md', () => {
    const spec = syncSpecSchema.parse({ source: inline, dependsOn: [{ name: 'db' }] });
    expect(spec).toEqual({
      source: inline,
      dependsOn: [{ kind: 'Sync', name: 'db', requiredStatus: 'Current' }],
      prune: true,
      wait: true,
      timeout: '5m',
      interval: '10m',
      deletionPolicy: 'Delete',
    });
    expect(SPEC_DEFAULTS).toEqual({
      prune: true,
      wait: true,
      timeout: '5m',
      interval: '10m',
      deletionPolicy: 'Delete',
    });
    expect(sourceForm(spec.source)).toBe('inline');
  });

  test('keeps inline objects whole, unknown fields included', () => {
    const spec = { deep: { list: [1, { a: null }] } };
    const obj = { apiVersion: 'x/v1', kind: 'Thing', metadata: { name: 't' }, spec };
    expect(syncSpecSchema.parse({ source: { inline: [obj] } }).source.inline).toEqual([obj]);
  });

  test.each([
    [{ source: {} }, 'source: source must set exactly one of inline, configMap, secret, http, artifact, helmRepository, git, oci'],
    [
      { source: { ...inline, configMap: { name: 'cm' } } },
      'source: source must set exactly one of inline, configMap, secret, http, artifact, helmRepository, git, oci (found inline, configMap)',
    ],
    [{}, 'source: Invalid input: expected object, received undefined'],
    [{ source: inline, timeout: '5 minutes' }, 'timeout: must be a duration such as 30s, 5m or 1h30m'],
    [{ source: inline, interval: '0s' }, 'interval: must be at least 1s'],
    [{ source: inline, dependsOn: [{ kind: 'Kustomization', name: 'x' }] }, 'dependsOn[0].kind: Invalid option'],
    [{ source: inline, deletionPolicy: 'Keep' }, 'deletionPolicy: Invalid option'],
    [{ source: { http: { url: 'ftp://example.com/a.yaml' } } }, 'source.http.url: must be an http:// or https:// URL'],
    [
      { source: { http: { url: 'https://example.com/a.yaml', digest: 'sha256:abc' } } },
      'source.http.digest: must be sha256: followed by 64 lowercase hex digits',
    ],
  ])('refuses %j: %s', (spec, message) => {
    const result = parseSyncObject('Sync', sync(spec));
    expect(result.ok).toBe(false);
    expect(result.ok ? '' : result.message).toContain(`spec.${message}`);
  });

  test('refuses a name over 63 characters', () => {
    const result = parseSyncObject('Sync', sync({ source: inline }, 'a'.repeat(64)));
    expect(result.ok).toBe(false);
    expect(result.ok || result.message).toContain('metadata.name');
    expect(parseSyncObject('Sync', sync({ source: inline }, 'a'.repeat(63))).ok).toBe(true);
  });

  test("serviceAccountName is a service account's name: no namespace, no capitals", () => {
    for (const good of ['deployer', 'team-a.deployer', 'a1']) expect(parseSyncObject('Sync', sync({ source: inline, serviceAccountName: good })).ok).toBe(true);
    for (const bad of ['kube-system:generic-garbage-collector', 'Deployer', '-x', 'x-', 'a..b', 'system:serviceaccount:kube-system:default']) {
      const result = parseSyncObject('Sync', sync({ source: inline, serviceAccountName: bad }));
      expect(result.ok || result.message).toContain('spec.serviceAccountName');
    }
  });
});

describe('RemoteSync and ProxySync', () => {
  const ofKind =
    (kind: string) =>
    (spec: unknown): unknown => ({ apiVersion: API_VERSION, kind, metadata: { name: 'x' }, spec });
  const remote = ofKind('RemoteSync');
  const proxy = ofKind('ProxySync');
  const kubeConfig = { secretRef: { name: 's' } };

  test('name their cluster with exactly one of kubeConfig or clusterRef', () => {
    const both = parseSyncObject('RemoteSync', remote({ source: inline, kubeConfig, clusterRef: { name: 'c' } }));
    const neither = parseSyncObject('RemoteSync', remote({ source: inline }));
    for (const r of [both, neither]) {
      expect(r.ok ? '' : r.message).toBe(
        'spec: spec must name the cluster with exactly one of kubeConfig or clusterRef',
      );
    }
    const neitherProxy = parseSyncObject('ProxySync', proxy({ template: { spec: { source: inline } } }));
    expect(neitherProxy.ok ? '' : neitherProxy.message).toContain('exactly one of kubeConfig or clusterRef');
  });

  test('kubeConfig key defaults to value; clusterRef means <name>-kubeconfig', () => {
    const r = parseSyncObject('RemoteSync', remote({ source: inline, kubeConfig: { secretRef: { name: 'edge' } } }));
    if (!r.ok) throw new Error(r.message);
    expect(r.value.spec.kubeConfig).toEqual({ secretRef: { name: 'edge', key: 'value' } });
    expect(kubeconfigSecret(r.value.spec)).toEqual({ name: 'edge', key: 'value' });
    expect(kubeconfigSecret({ clusterRef: { name: 'edge-1' } })).toEqual({ name: 'edge-1-kubeconfig', key: 'value' });
  });

  test('a ProxySync template carries a full sync spec with its defaults', () => {
    const p = parseSyncObject(
      'ProxySync',
      proxy({ kubeConfig, template: { metadata: { namespace: 'apps' }, spec: { source: inline } } }),
    );
    if (!p.ok) throw new Error(p.message);
    expect(p.value.spec.template.metadata).toEqual({ namespace: 'apps' });
    expect(p.value.spec.template.spec).toMatchObject({ prune: true, timeout: '5m', deletionPolicy: 'Delete' });
    const template = { spec: { source: inline, interval: '1x' } };
    const badTemplate = parseSyncObject('ProxySync', proxy({ kubeConfig, template }));
    expect(badTemplate.ok ? '' : badTemplate.message).toContain('spec.template.spec.interval: must be a duration');
  });

  test('parseAnySyncObject dispatches on kind and refuses others', () => {
    expect(parseAnySyncObject(sync({ source: inline })).ok).toBe(true);
    const other = parseAnySyncObject({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x' } });
    expect(other).toEqual({ ok: false, message: 'kind: expected Sync, RemoteSync or ProxySync, got ConfigMap' });
    const v1 = { ...(sync({ source: inline }) as object), apiVersion: 'syncprims.dev/v1' };
    const wrongVersion = parseAnySyncObject(v1);
    expect(wrongVersion.ok ? '' : wrongVersion.message).toContain('apiVersion');
  });

  test('parsed objects are KubeObjects and keep status', () => {
    const r = parseSyncObject('Sync', {
      ...(sync({ source: inline }) as object),
      status: {
        observedGeneration: 2,
        conditions: [
          {
            type: 'Ready',
            status: 'True',
            reason: 'Succeeded',
            message: 'applied',
            lastTransitionTime: '2026-01-01T00:00:00Z',
          },
        ],
        inventory: { entries: [{ id: 'team-a_a__ConfigMap', v: 'v1' }] },
      },
    });
    if (!r.ok) throw new Error(r.message);
    const asKube: KubeObject = r.value;
    expect(asKube.metadata.name).toBe('app');
    expect(r.value.status?.inventory?.entries).toEqual([{ id: 'team-a_a__ConfigMap', v: 'v1' }]);
  });
});
