import { createHash } from 'node:crypto';
import { describe, expect, jest, test } from '@jest/globals';
import { render, revisionOf, type RenderOptions, type Scope } from '../../src/apply/render.js';
import { canonicalJson } from '../../src/kube/canonical-json.js';
import type { KubeObject } from '../../src/kube/resources.js';

/** What a server with no custom resources would say. */
const BUILT_IN: Record<string, Scope> = {
  'v1|Namespace': 'Cluster',
  'v1|ConfigMap': 'Namespaced',
  'v1|Secret': 'Namespaced',
  'v1|Service': 'Namespaced',
  'v1|ServiceAccount': 'Namespaced',
  'apps/v1|Deployment': 'Namespaced',
  'rbac.authorization.k8s.io/v1|ClusterRole': 'Cluster',
  'rbac.authorization.k8s.io/v1|ClusterRoleBinding': 'Cluster',
  'storage.k8s.io/v1|StorageClass': 'Cluster',
  'apiextensions.k8s.io/v1|CustomResourceDefinition': 'Cluster',
};

function server(extra: Record<string, Scope> = {}) {
  const table: Record<string, Scope> = { ...BUILT_IN, ...extra };
  return jest.fn(async (apiVersion: string, kind: string) => table[`${apiVersion}|${kind}`]);
}

function options(overrides: Partial<RenderOptions> = {}): RenderOptions {
  return {
    owner: { kind: 'Sync', namespace: 'flux-apps', name: 'shop' },
    scopeOf: server(),
    ...overrides,
  };
}

const OWNER_LABELS = {
  'syncprims.dev/owner-kind': 'Sync',
  'syncprims.dev/owner-namespace': 'flux-apps',
  'syncprims.dev/owner-name': 'shop',
};

function widgetCrd(scope: Scope, versions = ['v1alpha1', 'v1']): KubeObject {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: 'widgets.example.com' },
    spec: {
      group: 'example.com',
      names: { kind: 'Widget', plural: 'widgets', singular: 'widget', listKind: 'WidgetList' },
      scope,
      versions: versions.map((name) => ({
        name,
        served: true,
        storage: name === 'v1',
        schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
      })),
    },
  };
}

function widget(name: string, namespace?: string, apiVersion = 'example.com/v1'): KubeObject {
  return { apiVersion, kind: 'Widget', metadata: namespace ? { name, namespace } : { name }, spec: { size: 3 } };
}

const namespace: KubeObject = { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'shop' } };
const configMap: KubeObject = {
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: 'settings', labels: { app: 'shop', tier: 'web' }, annotations: { note: 'mine' } },
  data: { mode: 'fast' },
};
const deployment: KubeObject = {
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'web', namespace: 'payments' },
  spec: {
    replicas: 2,
    selector: { matchLabels: { app: 'web' } },
    template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'web', image: 'nginx:1.27' }] } },
  },
};
const clusterRole: KubeObject = {
  apiVersion: 'rbac.authorization.k8s.io/v1',
  kind: 'ClusterRole',
  metadata: { name: 'shop-reader' },
  rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list', 'watch'] }],
};

describe('render: namespaces', () => {
  test('a Namespace and its objects: namespaced objects without one get the default', async () => {
    const result = await render([namespace, configMap, deployment, clusterRole], options({ defaultNamespace: 'shop' }));
    expect(result.errors).toEqual([]);
    expect(result.objects.map((o) => [o.kind, o.metadata.namespace])).toEqual([
      ['Namespace', undefined],
      ['ConfigMap', 'shop'],
      ['Deployment', 'payments'],
      ['ClusterRole', undefined],
    ]);
    expect('namespace' in result.objects[0]!.metadata).toBe(false);
  });

  test('a namespaced object with no namespace and no default is an error naming it', async () => {
    const result = await render([namespace, configMap, deployment], options());
    expect(result.errors).toEqual([
      'ConfigMap/settings: ConfigMap is namespaced but names no namespace, and there is no defaultNamespace',
    ]);
    expect(result.objects.map((o) => o.kind)).toEqual(['Namespace', 'Deployment']);
  });

  test('an empty namespace counts as none', async () => {
    const blank = { ...configMap, metadata: { name: 'blank', namespace: '' } };
    const blankRole = { ...clusterRole, metadata: { name: 'blank-role', namespace: '' } };
    const result = await render([blank, blankRole], options({ defaultNamespace: 'shop' }));
    expect(result.errors).toEqual([]);
    expect(result.objects[0]?.metadata.namespace).toBe('shop');
    expect('namespace' in result.objects[1]!.metadata).toBe(false);
  });

  test('a cluster-scoped object naming a namespace is an error naming it, not silently fixed', async () => {
    const misplaced = { ...clusterRole, metadata: { name: 'shop-reader', namespace: 'shop' } };
    const result = await render([misplaced, namespace], options({ defaultNamespace: 'shop' }));
    expect(result.errors).toEqual([
      'ClusterRole/shop/shop-reader: ClusterRole is cluster-scoped but names namespace "shop"',
    ]);
    expect(result.objects.map((o) => o.kind)).toEqual(['Namespace']);
  });
});

describe('render: custom resources next to their CRD', () => {
  test('a CR of a kind the server does not serve yet takes the scope of the CRD in the set', async () => {
    const result = await render(
      [widgetCrd('Namespaced'), widget('w1'), widget('w2', 'other'), widget('w3', undefined, 'example.com/v1alpha1')],
      options({ defaultNamespace: 'shop' }),
    );
    expect(result.errors).toEqual([]);
    expect(result.unknownKinds).toEqual([]);
    expect(result.objects.map((o) => `${o.metadata.namespace ?? ''}/${o.metadata.name}`)).toEqual([
      '/widgets.example.com',
      'shop/w1',
      'other/w2',
      'shop/w3',
    ]);
  });

  test('a cluster-scoped CRD makes a namespaced CR an error, and leaves a bare one alone', async () => {
    const result = await render([widgetCrd('Cluster'), widget('w1'), widget('w2', 'shop')], options({ defaultNamespace: 'shop' }));
    expect(result.errors).toEqual(['Widget/shop/w2: Widget is cluster-scoped but names namespace "shop"']);
    expect(result.objects.map((o) => [o.metadata.name, o.metadata.namespace])).toEqual([
      ['widgets.example.com', undefined],
      ['w1', undefined],
    ]);
  });

  test("the server's answer comes first when it serves the kind", async () => {
    const scopeOf = server({ 'example.com/v1|Widget': 'Namespaced' });
    const result = await render([widgetCrd('Cluster'), widget('w1')], options({ defaultNamespace: 'shop', scopeOf }));
    expect(result.objects[1]?.metadata.namespace).toBe('shop');
  });

  test('a kind neither the server nor the set defines is an error, and listed as unknown', async () => {
    const gadget: KubeObject = { apiVersion: 'example.com/v1', kind: 'Gadget', metadata: { name: 'g', namespace: 'shop' } };
    const result = await render(
      [widgetCrd('Namespaced', ['v1']), widget('old', 'shop', 'example.com/v1beta1'), gadget, { ...gadget, metadata: { name: 'h' } }],
      options({ defaultNamespace: 'shop' }),
    );
    expect(result.errors).toEqual([
      'Widget/shop/old: the server does not serve Widget in example.com/v1beta1, and no CustomResourceDefinition in the set defines it',
      'Gadget/shop/g: the server does not serve Gadget in example.com/v1, and no CustomResourceDefinition in the set defines it',
      'Gadget/h: the server does not serve Gadget in example.com/v1, and no CustomResourceDefinition in the set defines it',
    ]);
    expect(result.unknownKinds).toEqual([
      { apiVersion: 'example.com/v1beta1', kind: 'Widget' },
      { apiVersion: 'example.com/v1', kind: 'Gadget' },
    ]);
    expect(result.objects.map((o) => o.kind)).toEqual(['CustomResourceDefinition']);
  });

  test('a v1beta1 CRD with spec.version is understood', async () => {
    const legacy: KubeObject = {
      apiVersion: 'apiextensions.k8s.io/v1beta1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'widgets.example.com' },
      spec: { group: 'example.com', version: 'v1', names: { kind: 'Widget', plural: 'widgets' }, scope: 'Namespaced' },
    };
    const scopeOf = server({ 'apiextensions.k8s.io/v1beta1|CustomResourceDefinition': 'Cluster' });
    const result = await render([legacy, widget('w1')], options({ defaultNamespace: 'shop', scopeOf }));
    expect(result.errors).toEqual([]);
    expect(result.objects[1]?.metadata.namespace).toBe('shop');
  });

  test('asks the server once per kind', async () => {
    const scopeOf = server();
    const maps = Array.from({ length: 20 }, (_, i) => ({ ...configMap, metadata: { name: `cm-${i}` } }));
    await render([...maps, namespace, widgetCrd('Namespaced'), widget('w1'), widget('w2')], options({ defaultNamespace: 'shop', scopeOf }));
    expect(scopeOf.mock.calls.map((c) => c.join(' ')).sort()).toEqual([
      'apiextensions.k8s.io/v1 CustomResourceDefinition',
      'example.com/v1 Widget',
      'v1 ConfigMap',
      'v1 Namespace',
    ]);
  });

  test('rejects when the server cannot be asked', async () => {
    const scopeOf = jest.fn(async () => {
      throw new Error('connect ECONNREFUSED');
    });
    await expect(render([namespace], options({ scopeOf }))).rejects.toThrow('ECONNREFUSED');
  });
});

describe('render: metadata', () => {
  test('adds commonMetadata, which wins over the object; owner labels win over both', async () => {
    const own = {
      ...configMap,
      metadata: {
        name: 'settings',
        namespace: 'shop',
        labels: { app: 'shop', tier: 'web', 'syncprims.dev/owner-name': 'someone-else' },
        annotations: { note: 'mine', keep: 'yes' },
      },
    };
    const result = await render(
      [own],
      options({
        commonMetadata: {
          labels: { tier: 'platform', team: 'payments', 'syncprims.dev/owner-kind': 'ProxySync' },
          annotations: { note: 'common' },
        },
      }),
    );
    expect(result.objects[0]?.metadata.labels).toEqual({ app: 'shop', tier: 'platform', team: 'payments', ...OWNER_LABELS });
    expect(result.objects[0]?.metadata.annotations).toEqual({ note: 'common', keep: 'yes' });
  });

  test('always sets the owner labels, and no annotations when there are none', async () => {
    const result = await render([namespace], options({ owner: { kind: 'RemoteSync', namespace: 'fleet', name: 'edge-1' } }));
    expect(result.objects[0]?.metadata).toEqual({
      name: 'shop',
      labels: {
        'syncprims.dev/owner-kind': 'RemoteSync',
        'syncprims.dev/owner-namespace': 'fleet',
        'syncprims.dev/owner-name': 'edge-1',
      },
    });
  });

  test('sets the origin label when given, and removes one from the manifests when not', async () => {
    const claimed = { ...namespace, metadata: { name: 'shop', labels: { 'syncprims.dev/origin': 'forged' } } };
    const remote = await render([claimed], options({ origin: 'cluster-uid-1234' }));
    expect(remote.objects[0]?.metadata.labels?.['syncprims.dev/origin']).toBe('cluster-uid-1234');
    const local = await render([claimed], options());
    expect(local.objects[0]?.metadata.labels).toEqual(OWNER_LABELS);
  });

  test('leaves labels inside pod templates alone, and keeps the prune annotation', async () => {
    const kept = { ...deployment, metadata: { ...deployment.metadata, annotations: { 'syncprims.dev/prune': 'disabled' } } };
    const result = await render([kept], options({ commonMetadata: { labels: { team: 'payments' } } }));
    const out = result.objects[0] as KubeObject & { spec: { template: { metadata: { labels: Record<string, string> } } } };
    expect(out.spec.template.metadata.labels).toEqual({ app: 'web' });
    expect(out.metadata.annotations).toEqual({ 'syncprims.dev/prune': 'disabled' });
  });

  test('strips server-owned fields and status', async () => {
    const exported: KubeObject = {
      ...deployment,
      metadata: {
        ...deployment.metadata,
        uid: '7d0f2a9e-1b5c-4a53-9a7e-0c1d2e3f4a5b',
        resourceVersion: '48213',
        generation: 4,
        creationTimestamp: '2025-01-01T00:00:00Z',
        selfLink: '/apis/apps/v1/namespaces/payments/deployments/web',
        managedFields: [{ manager: 'kubectl', operation: 'Update' }],
        labels: { app: 'web' },
      },
      status: { replicas: 2, readyReplicas: 2 },
    };
    const result = await render([exported], options());
    const out = result.objects[0]!;
    expect(Object.keys(out.metadata).sort()).toEqual(['labels', 'name', 'namespace']);
    expect('status' in out).toBe(false);
    expect(out.spec).toEqual(deployment.spec);
    const clean = { ...deployment, metadata: { ...deployment.metadata, labels: { app: 'web' } } };
    expect(revisionOf(result.objects)).toBe(revisionOf((await render([clean], options())).objects));
  });

  test("a Secret's stringData is merged into data, base64-encoded, as the API server stores it; a non-string value is left alone", async () => {
    const secret = (fields: Record<string, unknown>): KubeObject => ({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 's', namespace: 'shop' }, ...fields });
    const b64 = (v: string): string => Buffer.from(v, 'utf8').toString('base64');
    const input = [secret({ data: { a: b64('old'), b: b64('kept') }, stringData: { a: 'new ünïcode', c: '' } })];
    const [out] = (await render(input, options())).objects;
    expect(out).toMatchObject({ data: { a: b64('new ünïcode'), b: b64('kept'), c: '' } });
    expect('stringData' in out!).toBe(false);
    expect(input[0]!.stringData).toEqual({ a: 'new ünïcode', c: '' });
    const [only] = (await render([secret({ stringData: { k: 'v' } })], options())).objects;
    expect(only).toMatchObject({ data: { k: b64('v') } });
    const [odd] = (await render([secret({ stringData: { n: 5 } })], options())).objects;
    expect(odd).toMatchObject({ stringData: { n: 5 } });
    expect('data' in odd!).toBe(false);
    // Only the core Secret.
    const [other] = (await render([{ apiVersion: 'example.com/v1', kind: 'Secret', metadata: { name: 'x', namespace: 'shop' }, stringData: { k: 'v' } }], options({ scopeOf: async () => 'Namespaced' }))).objects;
    expect(other).toMatchObject({ stringData: { k: 'v' } });
  });

  test('never changes its input, and returns copies', async () => {
    const input = [structuredClone(deployment), structuredClone(configMap), structuredClone(widgetCrd('Namespaced')), widget('w1')];
    const before = structuredClone(input);
    const result = await render(input, options({ defaultNamespace: 'shop', commonMetadata: { labels: { team: 'x' } } }));
    expect(input).toEqual(before);
    (result.objects[0]!.spec as { replicas: number }).replicas = 9;
    expect((input[0]!.spec as { replicas: number }).replicas).toBe(2);
  });
});

describe('render: errors', () => {
  test('two objects with one id are an error naming the id; the first is kept', async () => {
    const again = { ...configMap, metadata: { name: 'settings', namespace: 'shop' }, data: { mode: 'slow' } };
    const olderDeployment = { ...deployment, apiVersion: 'apps/v1beta2' };
    const result = await render([configMap, deployment, again, olderDeployment], options({ defaultNamespace: 'shop', scopeOf: server({ 'apps/v1beta2|Deployment': 'Namespaced' }) }));
    expect(result.errors).toEqual([
      'ConfigMap/shop/settings appears more than once in the set (id shop_settings__ConfigMap)',
      'Deployment/payments/web appears more than once in the set (id payments_web_apps_Deployment)',
    ]);
    expect(result.objects).toHaveLength(2);
    expect(result.objects[0]?.data).toEqual({ mode: 'fast' });
  });

  test('a defaulted namespace can make a duplicate', async () => {
    const explicit = { ...configMap, metadata: { name: 'settings', namespace: 'shop' } };
    const result = await render([configMap, explicit], options({ defaultNamespace: 'shop' }));
    expect(result.errors).toEqual(['ConfigMap/shop/settings appears more than once in the set (id shop_settings__ConfigMap)']);
  });

  test('malformed objects are errors naming their place in the set', async () => {
    const result = await render(
      [
        null,
        'text',
        { kind: 'ConfigMap', metadata: { name: 'a' } },
        { apiVersion: 'v1', metadata: { name: 'b' } },
        { apiVersion: 'v1', kind: 'ConfigMap' },
        { apiVersion: 'v1', kind: 'ConfigMap', metadata: { generateName: 'c-' } },
        { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'd', namespace: 7 } },
        { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'e', namespace: 'shop', labels: { version: 2 } } },
        { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'f', annotations: ['x'] } },
        namespace,
      ],
      options(),
    );
    expect(result.errors).toEqual([
      'object 1 (null): not an object',
      'object 2 (a string): not an object',
      'object 3 (ConfigMap/a): apiVersion is missing',
      'object 4 (<no kind>/b): kind is missing',
      'object 5 (ConfigMap/<no name>): metadata is missing',
      'object 6 (ConfigMap/<no name>): metadata.name is missing (generateName cannot be applied)',
      'object 7 (ConfigMap/d): metadata.namespace is not a string',
      'object 8 (Deployment/shop/e): metadata.labels.version is not a string (quote it)',
      'object 9 (ConfigMap/f): metadata.annotations is not a map',
    ]);
    expect(result.objects.map((o) => o.kind)).toEqual(['Namespace']);
  });

  test('null labels and annotations are treated as absent', async () => {
    const bare = { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'x', labels: null, annotations: null } };
    const result = await render([bare], options());
    expect(result.errors).toEqual([]);
    expect(result.objects[0]?.metadata).toEqual({ name: 'x', labels: OWNER_LABELS });
  });

  test('an empty set renders to nothing', async () => {
    expect(await render([], options())).toEqual({ objects: [], errors: [], unknownKinds: [] });
  });
});

describe('canonical JSON and revision', () => {
  test('canonical JSON sorts keys at every depth, keeps array order, drops undefined', () => {
    expect(canonicalJson({ b: 1, a: { d: [3, { z: 1, y: 2 }], c: undefined } })).toBe('{"a":{"d":[3,{"y":2,"z":1}]},"b":1}');
    expect(canonicalJson([2, 1])).toBe('[2,1]');
    expect(canonicalJson(undefined)).toBe('null');
    expect(canonicalJson({ when: new Date(0), n: null })).toBe('{"n":null,"when":"1970-01-01T00:00:00.000Z"}');
    // structuredClone makes objects of another realm under jest: still sorted
    expect(canonicalJson(structuredClone({ b: 1, a: { d: 1, c: 2 } }))).toBe('{"a":{"c":2,"d":1},"b":1}');
  });

  test('is sha256 of the canonical JSON of the objects sorted by id', () => {
    const a: KubeObject = { kind: 'ConfigMap', apiVersion: 'v1', metadata: { namespace: 'shop', name: 'a' } };
    const ns: KubeObject = { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'shop' } };
    const expected =
      '[{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"shop"}},' +
      '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","namespace":"shop"}}]';
    expect(revisionOf([a, ns])).toBe(`sha256:${createHash('sha256').update(expected).digest('hex')}`);
    expect(revisionOf([])).toBe(`sha256:${createHash('sha256').update('[]').digest('hex')}`);
  });

  test('does not depend on key order or object order', async () => {
    const set = [namespace, configMap, deployment, clusterRole, widgetCrd('Namespaced'), widget('w1')];
    const reordered = [...set].reverse().map(reverseKeys);
    const opts = options({ defaultNamespace: 'shop' });
    const first = (await render(set, opts)).objects;
    const second = (await render(reordered, opts)).objects;
    expect(revisionOf(first)).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(revisionOf(second)).toBe(revisionOf(first));
  });

  test('changes when content, defaults, marks or owner change', async () => {
    const set = [namespace, configMap, deployment];
    const base = revisionOf((await render(set, options({ defaultNamespace: 'shop' }))).objects);
    const variants = [
      await render([namespace, { ...configMap, data: { mode: 'slow' } }, deployment], options({ defaultNamespace: 'shop' })),
      await render(set, options({ defaultNamespace: 'shop-2' })),
      await render(set, options({ defaultNamespace: 'shop', commonMetadata: { annotations: { a: 'b' } } })),
      await render(set, options({ defaultNamespace: 'shop', origin: 'c1' })),
      await render(set, options({ defaultNamespace: 'shop', owner: { kind: 'Sync', namespace: 'flux-apps', name: 'shop-2' } })),
      await render([namespace, deployment], options({ defaultNamespace: 'shop' })),
    ];
    const revisions = variants.map((r) => revisionOf(r.objects));
    expect(revisions).not.toContain(base);
    expect(new Set(revisions).size).toBe(revisions.length);
  });

  test('array order is content', () => {
    const rules = (verbs: string[]) => [{ ...clusterRole, rules: [{ apiGroups: [''], resources: ['pods'], verbs }] }];
    expect(revisionOf(rules(['get', 'list']))).not.toBe(revisionOf(rules(['list', 'get'])));
  });
});

function reverseKeys<T>(value: T): T {
  if (Array.isArray(value)) return value.map(reverseKeys) as T;
  if (typeof value !== 'object' || value === null) return value;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value).reverse()) out[key] = reverseKeys((value as Record<string, unknown>)[key]);
  return out as T;
}
