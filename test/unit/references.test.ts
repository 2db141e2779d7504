// What sync objects reference and what their inventories need watched: read
// from cached, unvalidated objects, so malformed input must be skipped.
import { describe, expect, test } from '@jest/globals';
import { inventoryKindsOf } from '../../src/apply/owned-objects.js';
import { referencesOf } from '../../src/controllers/references.js';
import type { KubeObject } from '../../src/kube/resources.js';
import { kindKey, referenceKey } from '../../src/runtime/referenced-objects.js';
import { referencedObjectsOf } from '../../src/source/index.js';

const obj = (kind: string, spec: unknown, status?: unknown): KubeObject => ({
  apiVersion: 'syncprims.dev/v1alpha1',
  kind,
  metadata: { name: 'x', namespace: 'team' },
  spec,
  status,
});
const secret = (name: string) => ({ apiVersion: 'v1', kind: 'Secret', namespace: 'team', name });

describe('referencedObjectsOf', () => {
  test('each source form names what it reads', () => {
    expect(referencedObjectsOf({ configMap: { name: 'm', key: 'k' } }, 'team')).toEqual([{ apiVersion: 'v1', kind: 'ConfigMap', namespace: 'team', name: 'm' }]);
    expect(referencedObjectsOf({ secret: { name: 's' } }, 'team')).toEqual([secret('s')]);
    expect(referencedObjectsOf({ artifact: { apiVersion: 'source.toolkit.fluxcd.io/v1', kind: 'OCIRepository', name: 'o' } }, 'team')).toEqual([
      { apiVersion: 'source.toolkit.fluxcd.io/v1', kind: 'OCIRepository', namespace: 'team', name: 'o' },
    ]);
    expect(referencedObjectsOf({ http: { url: 'https://x/y.yaml', caSecretRef: { name: 'ca' }, headersSecretRef: { name: 'h' } } }, 'team')).toEqual([
      secret('ca'),
      secret('h'),
    ]);
    expect(referencedObjectsOf({ git: { url: 'ssh://git@x/y.git', secretRef: { name: 'ssh' }, caSecretRef: { name: 'ca' }, webhookSecretRef: { name: 'hook' } } }, 'team')).toEqual([secret('ssh'), secret('ca')]);
    expect(referencedObjectsOf({ oci: { url: 'oci://x/y', secretRef: { name: 'pull' }, caSecretRef: { name: 'ca' }, verify: { provider: 'cosign', secretRef: { name: 'keys' } } } }, 'team')).toEqual([
      secret('pull'),
      secret('ca'),
      secret('keys'),
    ]);
    expect(referencedObjectsOf({ inline: [] }, 'team')).toEqual([]);
  });

  test('malformed specs name nothing rather than throw', () => {
    for (const source of [undefined, null, 'x', { configMap: {} }, { configMap: { name: '' } }, { secret: { name: 3 } }, { artifact: { name: 'a' } }, { http: { caSecretRef: 'ca' } }, { git: null }, { oci: 'x' }, { oci: { verify: 'keys', secretRef: {} } }]) {
      expect(referencedObjectsOf(source, 'team')).toEqual([]);
    }
  });
});

describe('referencesOf', () => {
  test('a Sync: its source', () => {
    expect(referencesOf('Sync', obj('Sync', { source: { secret: { name: 's' } } }))).toEqual([secret('s')]);
  });

  test('a RemoteSync: its source and its kubeconfig Secret (kubeConfig.secretRef, or clusterRef <name>-kubeconfig)', () => {
    expect(referencesOf('RemoteSync', obj('RemoteSync', { kubeConfig: { secretRef: { name: 'edge' } }, source: { secret: { name: 's' } } }))).toEqual([secret('s'), secret('edge')]);
    expect(referencesOf('RemoteSync', obj('RemoteSync', { clusterRef: { name: 'edge-1' }, source: { inline: [] } }))).toEqual([secret('edge-1-kubeconfig')]);
  });

  test('a ProxySync: the template source (its related objects) and the kubeconfig Secret', () => {
    const spec = { clusterRef: { name: 'c' }, template: { spec: { source: { configMap: { name: 'm' } } } } };
    expect(referencesOf('ProxySync', obj('ProxySync', spec))).toEqual([{ apiVersion: 'v1', kind: 'ConfigMap', namespace: 'team', name: 'm' }, secret('c-kubeconfig')]);
    expect(referencesOf('ProxySync', obj('ProxySync', undefined))).toEqual([]);
  });

  test("a chart's valuesFrom, beside the source, for each kind (a ProxySync's in its template)", () => {
    const helm = { valuesFrom: [{ kind: 'Secret', name: 'v' }] };
    const source = { http: { url: 'https://x/c.tgz' } };
    expect(referencesOf('Sync', obj('Sync', { source, helm }))).toEqual([secret('v')]);
    expect(referencesOf('RemoteSync', obj('RemoteSync', { kubeConfig: { secretRef: { name: 'edge' } }, source, helm }))).toEqual([secret('v'), secret('edge')]);
    expect(referencesOf('ProxySync', obj('ProxySync', { clusterRef: { name: 'c' }, template: { spec: { source, helm } } }))).toEqual([secret('v'), secret('c-kubeconfig')]);
  });

  test('keys of the index and of a kind watch', () => {
    expect(referenceKey(secret('s'))).toBe('v1|Secret|team|s');
    expect(kindKey(secret('s'))).toBe('v1|Secret');
  });
});

describe('inventoryKindsOf', () => {
  test('every entry counts, one key per kind, with the entry version', () => {
    const status = {
      inventory: {
        entries: [
          { id: 'team_a_apps_Deployment', v: 'v1' },
          { id: 'team_b_apps_Deployment', v: 'v1' },
          { id: '_reader_rbac.authorization.k8s.io_ClusterRole', v: 'v1' },
          { id: 'team_c__ConfigMap', v: 'v1' },
        ],
      },
    };
    expect(inventoryKindsOf(obj('Sync', {}, status)).sort()).toEqual(['apps/v1|Deployment', 'rbac.authorization.k8s.io/v1|ClusterRole', 'v1|ConfigMap']);
  });

  test('a malformed inventory names nothing rather than throw', () => {
    expect(inventoryKindsOf(obj('Sync', {}, undefined))).toEqual([]);
    expect(inventoryKindsOf(obj('Sync', {}, { inventory: { entries: 'x' } }))).toEqual([]);
    expect(inventoryKindsOf(obj('Sync', {}, { inventory: { entries: [{ id: 'nope', v: 'v1' }, { id: 3 }, null] } }))).toEqual([]);
  });
});
