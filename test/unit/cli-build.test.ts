// `syncprims build` without a cluster: inputs from sync objects, the built-in scopes, CRDs in the set, unknown kinds.
import { describe, expect, test } from '@jest/globals';
import { render, revisionOf } from '../../src/apply/render.js';
import { buildInputsOf, buildOne, clusterReadOf, unknownKindWarning } from '../../src/cli/build/build-render.js';
import { builtinScope } from '../../src/cli/build/builtin-scopes.js';
import { CliError } from '../../src/cli/errors.js';
import type { KubeObject } from '../../src/kube/resources.js';

const API = 'syncprims.dev/v1alpha1';
const configMap = (name: string, namespace?: string): KubeObject => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace }, data: { k: 'v' } });

function syncObject(kind: string, spec: Record<string, unknown>, namespace?: string): KubeObject {
  return { apiVersion: API, kind, metadata: { name: 'app', namespace }, spec };
}

describe('built-in scopes', () => {
  test('core and common kinds by apiVersion and kind; anything else unknown', () => {
    expect(builtinScope('v1', 'ConfigMap')).toBe('Namespaced');
    expect(builtinScope('v1', 'Namespace')).toBe('Cluster');
    expect(builtinScope('apps/v1', 'Deployment')).toBe('Namespaced');
    expect(builtinScope('rbac.authorization.k8s.io/v1', 'ClusterRole')).toBe('Cluster');
    expect(builtinScope('apiextensions.k8s.io/v1', 'CustomResourceDefinition')).toBe('Cluster');
    expect(builtinScope('apps/v1beta1', 'Deployment')).toBeUndefined();
    expect(builtinScope('example.com/v1', 'Widget')).toBeUndefined();
  });
});

describe('inputs of sync objects', () => {
  test('a Sync: its owner, defaultNamespace and commonMetadata; the namespace given when it names none', () => {
    const input = buildInputsOf(syncObject('Sync', { source: { inline: [] }, defaultNamespace: 'web', commonMetadata: { labels: { team: 'a' } } }), 'f.yaml', { namespace: 'apps' });
    expect(input).toMatchObject({
      label: 'Sync apps/app',
      owner: { kind: 'Sync', namespace: 'apps', name: 'app' },
      defaultNamespace: 'web',
      commonMetadata: { labels: { team: 'a' } },
    });
    expect(input.origin).toBeUndefined();
  });

  test('a RemoteSync carries the origin (the managing cluster id) when one is given', () => {
    const input = buildInputsOf(syncObject('RemoteSync', { clusterRef: { name: 'edge-1' }, source: { inline: [] } }, 'fleet'), 'f.yaml', { namespace: 'x', clusterId: 'mgmt-uid' });
    expect(input).toMatchObject({ owner: { kind: 'RemoteSync', namespace: 'fleet', name: 'app' }, origin: 'mgmt-uid' });
  });

  test('a ProxySync renders as the remote Sync its template makes', () => {
    const proxy = syncObject('ProxySync', { clusterRef: { name: 'edge-1' }, template: { metadata: { namespace: 'remote-ns' }, spec: { source: { inline: [] } } } }, 'fleet');
    expect(buildInputsOf(proxy, 'f.yaml', { namespace: 'x' })).toMatchObject({
      label: 'ProxySync fleet/app (remote Sync remote-ns/app)',
      owner: { kind: 'Sync', namespace: 'remote-ns', name: 'app' },
      namespace: 'fleet',
    });
  });

  test('an invalid spec or another kind is refused with the file and what is wrong', () => {
    expect(() => buildInputsOf(syncObject('Sync', { source: {} }), 'f.yaml', { namespace: 'x' })).toThrow(/^f\.yaml: Sync x\/app: .*source must set exactly one of/);
    expect(() => buildInputsOf(configMap('c'), 'f.yaml', { namespace: 'x' })).toThrow(CliError);
    expect(() => buildInputsOf(configMap('c'), 'f.yaml', { namespace: 'x' })).toThrow('use --path');
  });

  test('sources that read the cluster are named', () => {
    expect(clusterReadOf({ inline: [] })).toBeUndefined();
    expect(clusterReadOf({ http: { url: 'https://x/y.yaml' } })).toBeUndefined();
    expect(clusterReadOf({ configMap: { name: 'c' } })).toBe('source.configMap');
    expect(clusterReadOf({ http: { url: 'https://x/y.yaml', headersSecretRef: { name: 'h' } } })).toBe('source.http.headersSecretRef');
    expect(clusterReadOf({ git: { url: 'https://g.invalid/r.git' } })).toBeUndefined();
    expect(clusterReadOf({ git: { url: 'https://g.invalid/r.git', secretRef: { name: 'creds' } } })).toBe('source.git.secretRef');
    expect(clusterReadOf({ oci: { url: 'oci://r.invalid/a', verify: { provider: 'cosign', secretRef: { name: 'keys' } } } })).toBe('source.oci.verify.secretRef');
    expect(clusterReadOf({ helmRepository: { url: 'https://c.invalid', chart: 'web', caSecretRef: { name: 'ca' } } })).toBe('source.helmRepository.caSecretRef');
  });
});

describe('buildOne without a cluster', () => {
  const input = (objects: unknown[], extra: Record<string, unknown> = {}) =>
    buildInputsOf(syncObject('Sync', { source: { inline: objects }, ...extra }), 'f.yaml', { namespace: 'apps' });

  test('renders as render.ts does with the server scopes, and the revision is the operator\'s', async () => {
    const objects = [configMap('a'), { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'web' } }];
    const built = await buildOne(input(objects, { defaultNamespace: 'web' }), undefined);
    expect(built.errors).toEqual([]);
    const expected = await render(objects, {
      owner: { kind: 'Sync', namespace: 'apps', name: 'app' },
      defaultNamespace: 'web',
      scopeOf: async (_v, kind) => (kind === 'Namespace' ? 'Cluster' : 'Namespaced'),
    });
    expect(built.objects).toEqual(expected.objects);
    expect(built.revision).toBe(revisionOf(expected.objects));
  });

  test('a kind defined by a CRD in the set takes its scope; an unknown kind is rendered as written, its namespace untouched, and listed', async () => {
    const crd = {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'widgets.example.com' },
      spec: { group: 'example.com', names: { kind: 'Widget', plural: 'widgets' }, scope: 'Namespaced', versions: [{ name: 'v1' }] },
    };
    const widget = { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w' } };
    const ok = await buildOne(input([crd, widget], { defaultNamespace: 'web' }), undefined);
    expect(ok.errors).toEqual([]);
    expect(ok.objects[1]?.metadata.namespace).toBe('web');

    const gadget = { apiVersion: 'example.com/v1', kind: 'Gadget', metadata: { name: 'g' } };
    const placed = { apiVersion: 'example.com/v1', kind: 'Gadget', metadata: { name: 'h', namespace: 'elsewhere' } };
    const unknown = await buildOne(input([gadget, placed], { defaultNamespace: 'web' }), undefined);
    expect(unknown.errors).toEqual([]);
    expect(unknown.discovered).toBe(false);
    expect(unknown.unknownKinds).toEqual([{ apiVersion: 'example.com/v1', kind: 'Gadget' }]);
    expect(unknown.objects.map((o) => o.metadata.namespace)).toEqual([undefined, 'elsewhere']);
    expect(unknown.objects[0]?.metadata.labels?.['syncprims.dev/owner-name']).toBe('app');
    expect(unknownKindWarning(unknown.unknownKinds[0]!)).toBe(
      'kind Gadget in example.com/v1 is not a built-in kind and no CustomResourceDefinition in the set defines it: rendered as written, its namespace untouched (the operator gives a namespaced kind the defaultNamespace); pass --kubeconfig to look up its scope',
    );
  });

  test('render errors come as the operator words them; a ConfigMap source needs a cluster', async () => {
    const noNamespace = await buildOne(input([configMap('a')]), undefined);
    expect(noNamespace.errors).toEqual(['ConfigMap/a: ConfigMap is namespaced but names no namespace, and there is no defaultNamespace']);
    const fromCm = await buildOne(buildInputsOf(syncObject('Sync', { source: { configMap: { name: 'm' } } }), 'f.yaml', { namespace: 'apps' }), undefined);
    expect(fromCm.errors).toEqual(['source.configMap is read from the cluster the sync lives in: pass --kubeconfig (and --context) to read it']);
  });
});
