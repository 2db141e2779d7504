import { describe, expect, test } from '@jest/globals';
import {
  displayName,
  displayNameOf,
  entryApiVersion,
  inventoryOf,
  objectId,
  parseObjectId,
  staleEntries,
} from '../../src/apply/inventory.js';
import type { KubeObject } from '../../src/kube/resources.js';

const deployment: KubeObject = {
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'web', namespace: 'shop' },
  spec: { replicas: 2 },
};
const configMap: KubeObject = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'settings', namespace: 'shop' } };
const clusterRole: KubeObject = {
  apiVersion: 'rbac.authorization.k8s.io/v1',
  kind: 'ClusterRole',
  metadata: { name: 'system:shop-reader' },
};
const namespace: KubeObject = { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'shop' } };

describe('object ids', () => {
  test('are <namespace>_<name>_<group>_<kind>, with empty parts for cluster scope and the core group', () => {
    expect(objectId(deployment)).toBe('shop_web_apps_Deployment');
    expect(objectId(configMap)).toBe('shop_settings__ConfigMap');
    expect(objectId(clusterRole)).toBe('_system:shop-reader_rbac.authorization.k8s.io_ClusterRole');
    expect(objectId(namespace)).toBe('_shop__Namespace');
  });

  test('do not depend on the version', () => {
    expect(objectId({ ...deployment, apiVersion: 'apps/v1beta2' })).toBe(objectId(deployment));
  });

  test('parse back into their parts', () => {
    expect(parseObjectId('shop_web_apps_Deployment')).toEqual({
      namespace: 'shop',
      name: 'web',
      group: 'apps',
      kind: 'Deployment',
    });
    expect(parseObjectId('shop_settings__ConfigMap')).toEqual({
      namespace: 'shop',
      name: 'settings',
      group: '',
      kind: 'ConfigMap',
    });
    expect(parseObjectId('_shop__Namespace')).toEqual({ namespace: '', name: 'shop', group: '', kind: 'Namespace' });
  });

  test('round-trip names holding "_" or ":" literally', () => {
    const odd: KubeObject = {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: { name: 'ci_bot:edit__x', namespace: 'ci' },
    };
    const id = objectId(odd);
    expect(id).toBe('ci_ci_bot:edit__x_rbac.authorization.k8s.io_RoleBinding');
    expect(parseObjectId(id)).toEqual({
      namespace: 'ci',
      name: 'ci_bot:edit__x',
      group: 'rbac.authorization.k8s.io',
      kind: 'RoleBinding',
    });
    expect(parseObjectId(objectId(clusterRole)).name).toBe('system:shop-reader');
  });

  test.each(['', 'web', 'shop_web', 'shop_web_apps', 'shop__apps_Deployment', 'shop_web_apps_'])(
    'refuses %j',
    (bad) => {
      expect(() => parseObjectId(bad)).toThrow('not an object id');
    },
  );

  test('display as Kind/namespace/name or Kind/name', () => {
    expect(displayName('shop_web_apps_Deployment')).toBe('Deployment/shop/web');
    expect(displayName('_shop__Namespace')).toBe('Namespace/shop');
    expect(displayNameOf(clusterRole)).toBe('ClusterRole/system:shop-reader');
    expect(displayNameOf(configMap)).toBe('ConfigMap/shop/settings');
  });
});

describe('inventory', () => {
  test('has one entry per object with the version, sorted by id', () => {
    expect(inventoryOf([deployment, namespace, configMap, clusterRole])).toEqual([
      { id: '_shop__Namespace', v: 'v1' },
      { id: '_system:shop-reader_rbac.authorization.k8s.io_ClusterRole', v: 'v1' },
      { id: 'shop_settings__ConfigMap', v: 'v1' },
      { id: 'shop_web_apps_Deployment', v: 'v1' },
    ]);
  });

  test('keeps the version of a custom resource and one entry per id', () => {
    const widget: KubeObject = { apiVersion: 'example.com/v1beta1', kind: 'Widget', metadata: { name: 'w', namespace: 'a' } };
    const widgetV1 = { ...widget, apiVersion: 'example.com/v1' };
    expect(inventoryOf([widget, widgetV1])).toEqual([{ id: 'a_w_example.com_Widget', v: 'v1' }]);
    expect(inventoryOf([])).toEqual([]);
  });

  test('stale entries are those of the previous inventory missing from the next', () => {
    const previous = inventoryOf([deployment, configMap, namespace, clusterRole]);
    const next = inventoryOf([namespace, { ...deployment, apiVersion: 'apps/v2' }]);
    expect(staleEntries(previous, next)).toEqual([
      { id: '_system:shop-reader_rbac.authorization.k8s.io_ClusterRole', v: 'v1' },
      { id: 'shop_settings__ConfigMap', v: 'v1' },
    ]);
    expect(staleEntries(previous, previous)).toEqual([]);
    expect(staleEntries([], next)).toEqual([]);
    expect(staleEntries(previous, [])).toEqual(previous);
  });

  test('entries give back the apiVersion they were applied with', () => {
    expect(entryApiVersion({ id: 'shop_web_apps_Deployment', v: 'v1' })).toBe('apps/v1');
    expect(entryApiVersion({ id: 'shop_settings__ConfigMap', v: 'v1' })).toBe('v1');
    expect(entryApiVersion({ id: 'a_w_example.com_Widget', v: 'v1beta1' })).toBe('example.com/v1beta1');
  });
});
