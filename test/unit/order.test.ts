import { describe, expect, test } from '@jest/globals';
import { objectId } from '../../src/apply/inventory.js';
import { applyOrder, applyStages, kindRank, pruneOrder, stageOf } from '../../src/apply/order.js';
import type { KubeObject } from '../../src/kube/resources.js';

function obj(apiVersion: string, kind: string, name: string, namespace?: string): KubeObject {
  return { apiVersion, kind, metadata: namespace === undefined ? { name } : { name, namespace } };
}

const crd = obj('apiextensions.k8s.io/v1', 'CustomResourceDefinition', 'widgets.example.com');
const widget = obj('example.com/v1', 'Widget', 'w1', 'shop');
const ns = obj('v1', 'Namespace', 'shop');
const clusterRole = obj('rbac.authorization.k8s.io/v1', 'ClusterRole', 'shop-reader');
const clusterRoleBinding = obj('rbac.authorization.k8s.io/v1', 'ClusterRoleBinding', 'shop-reader');
const role = obj('rbac.authorization.k8s.io/v1', 'Role', 'deployer', 'shop');
const roleBinding = obj('rbac.authorization.k8s.io/v1', 'RoleBinding', 'deployer', 'shop');
const serviceAccount = obj('v1', 'ServiceAccount', 'web', 'shop');
const configMap = obj('v1', 'ConfigMap', 'settings', 'shop');
const secret = obj('v1', 'Secret', 'creds', 'shop');
const service = obj('v1', 'Service', 'web', 'shop');
const deployment = obj('apps/v1', 'Deployment', 'web', 'shop');
const deployment2 = obj('apps/v1', 'Deployment', 'api', 'shop');
const storageClass = obj('storage.k8s.io/v1', 'StorageClass', 'fast');
const priorityClass = obj('scheduling.k8s.io/v1', 'PriorityClass', 'high');
const gatewayClass = obj('gateway.networking.k8s.io/v1', 'GatewayClass', 'public');
const webhook = obj('admissionregistration.k8s.io/v1', 'ValidatingWebhookConfiguration', 'shop-policy');
const mutating = obj('admissionregistration.k8s.io/v1', 'MutatingWebhookConfiguration', 'shop-defaults');
const knativeService = obj('serving.knative.dev/v1', 'Service', 'hello', 'shop');

const all = [
  webhook,
  deployment,
  widget,
  knativeService,
  service,
  gatewayClass,
  roleBinding,
  secret,
  clusterRoleBinding,
  configMap,
  priorityClass,
  serviceAccount,
  mutating,
  role,
  clusterRole,
  storageClass,
  deployment2,
  ns,
  crd,
];

const ids = (objects: KubeObject[]) => objects.map(objectId);

describe('apply stages', () => {
  test('cluster definitions first, then classes, then the rest in kind order', () => {
    const stages = applyStages(all);
    expect(stages.map(ids)).toEqual([
      ids([ns, crd, clusterRole]),
      ids([priorityClass, storageClass, gatewayClass]),
      ids([
        serviceAccount,
        role,
        roleBinding,
        clusterRoleBinding,
        configMap,
        secret,
        service,
        deployment2,
        deployment,
        knativeService,
        widget,
        mutating,
        webhook,
      ]),
    ]);
  });

  test('an unknown kind sorts by kind, group and id, after the known kinds and before webhooks', () => {
    const gadget = obj('example.com/v1', 'Gadget', 'g', 'shop');
    const widgetB = obj('b.example.com/v1', 'Widget', 'a', 'shop');
    const widgetOther = obj('example.com/v1', 'Widget', 'w0', 'other');
    const order = applyOrder([webhook, widget, widgetB, widgetOther, gadget, deployment]);
    expect(ids(order)).toEqual(ids([deployment, gadget, widgetB, widgetOther, widget, webhook]));
  });

  test('does not depend on input order and does not change the input', () => {
    const copy = structuredClone(all);
    const forward = applyStages(all).map(ids);
    expect(applyStages([...all].reverse()).map(ids)).toEqual(forward);
    expect(applyStages([...all.slice(7), ...all.slice(0, 7)]).map(ids)).toEqual(forward);
    expect(all).toEqual(copy);
  });

  test('returns the input objects themselves and leaves out empty stages', () => {
    const stages = applyStages([deployment, configMap]);
    expect(stages).toHaveLength(1);
    expect(stages[0]?.[0]).toBe(configMap);
    expect(applyStages([crd, deployment]).map(ids)).toEqual([ids([crd]), ids([deployment])]);
    expect(applyStages([])).toEqual([]);
  });

  test('matches built-in kinds with their group', () => {
    expect(stageOf({ group: '', kind: 'Namespace' })).toBe(0);
    expect(stageOf({ group: 'example.com', kind: 'Namespace' })).toBe(2);
    expect(stageOf({ group: 'apiextensions.k8s.io', kind: 'CustomResourceDefinition' })).toBe(0);
    expect(stageOf({ group: 'rbac.authorization.k8s.io', kind: 'ClusterRole' })).toBe(0);
    expect(stageOf({ group: 'cluster.x-k8s.io', kind: 'ClusterClass' })).toBe(1);
    expect(kindRank({ group: '', kind: 'Service' })).toBeLessThan(0);
    expect(kindRank({ group: 'serving.knative.dev', kind: 'Service' })).toBe(0);
    expect(kindRank({ group: 'admissionregistration.k8s.io', kind: 'ValidatingWebhookConfiguration' })).toBeGreaterThan(0);
  });
});

describe('prune order', () => {
  test('is the reverse of the apply order: webhooks first, Namespaces and CRDs last', () => {
    const applyIds = ids(applyOrder(all));
    const shuffled = [...applyIds].sort();
    expect(pruneOrder(shuffled)).toEqual([...applyIds].reverse());
    const order = pruneOrder(shuffled);
    expect(order[0]).toBe(objectId(webhook));
    expect(order.slice(-3)).toEqual(ids([clusterRole, crd, ns]));
  });

  test('deletes a Deployment before its Namespace and leaves the input alone', () => {
    const input = [objectId(ns), objectId(deployment), objectId(configMap)];
    expect(pruneOrder(input)).toEqual([objectId(deployment), objectId(configMap), objectId(ns)]);
    expect(input[0]).toBe(objectId(ns));
    expect(pruneOrder([])).toEqual([]);
  });

  test('refuses a string that is not an id', () => {
    expect(() => pruneOrder(['nonsense'])).toThrow('not an object id');
  });
});
