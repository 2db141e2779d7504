// `syncprims trace`'s pure parts: resource names as kubectl reads them, the
// owner from the labels, the source and target of a sync, and the text.
import { describe, expect, test } from '@jest/globals';
import { UsageError } from '../../src/cli/errors.js';
import { PLAIN } from '../../src/cli/terminal.js';
import { linkOf, ownerOf, sourceOf, targetOf, unfoundLink, type Trace } from '../../src/cli/trace/trace-chain.js';
import { renderTrace } from '../../src/cli/trace/trace-render.js';
import { matchResource, parseResourceArg, servedResources } from '../../src/cli/trace/trace-resource.js';
import type { KubeObject } from '../../src/kube/resources.js';

describe('resource names', () => {
  test('resource/name, or one line saying how to name it', () => {
    expect(parseResourceArg('cm/app')).toEqual({ resource: 'cm', name: 'app' });
    expect(parseResourceArg('deployments.apps/web')).toEqual({ resource: 'deployments.apps', name: 'web' });
    for (const bad of ['cm', 'cm/', '/x', 'a/b/c', '']) expect(() => parseResourceArg(bad)).toThrow(UsageError);
    expect(() => parseResourceArg('deploy')).toThrow('e.g. deploy/my-object or deployments.apps/web');
  });

  // What aggregated discovery says, cut down: the core group, then the others in the server's order.
  const core = {
    items: [
      {
        metadata: {},
        versions: [
          {
            version: 'v1',
            resources: [
              { resource: 'configmaps', responseKind: { kind: 'ConfigMap' }, scope: 'Namespaced', singularResource: 'configmap', shortNames: ['cm'] },
              { resource: 'namespaces', responseKind: { kind: 'Namespace' }, scope: 'Cluster', singularResource: 'namespace', shortNames: ['ns'] },
              { resource: 'pods/log', responseKind: { kind: 'Pod' }, scope: 'Namespaced' },
            ],
          },
        ],
      },
    ],
  };
  const groups = {
    items: [
      { metadata: { name: 'apps' }, versions: [{ version: 'v1', resources: [{ resource: 'deployments', responseKind: { kind: 'Deployment' }, scope: 'Namespaced', singularResource: 'deployment', shortNames: ['deploy'] }] }] },
      {
        metadata: { name: 'autoscaling' },
        versions: [
          { version: 'v2', resources: [{ resource: 'horizontalpodautoscalers', responseKind: { kind: 'HorizontalPodAutoscaler' }, scope: 'Namespaced', singularResource: 'horizontalpodautoscaler', shortNames: ['hpa'] }] },
          { version: 'v1', resources: [{ resource: 'horizontalpodautoscalers', responseKind: { kind: 'HorizontalPodAutoscaler' }, scope: 'Namespaced', singularResource: 'horizontalpodautoscaler', shortNames: ['hpa'] }] },
        ],
      },
      { metadata: { name: 'example.com' }, versions: [{ version: 'v1', resources: [{ resource: 'configmaps', responseKind: { kind: 'ConfigMap' }, scope: 'Namespaced', singularResource: 'configmap' }] }] },
      { metadata: { name: 'syncprims.dev' }, versions: [{ version: 'v1alpha1', resources: [{ resource: 'syncs', responseKind: { kind: 'Sync' }, scope: 'Namespaced', singularResource: 'sync', shortNames: ['sy'] }] }] },
    ],
  };
  const served = [...servedResources(core), ...servedResources(groups)];
  const pick = (text: string) => {
    const r = matchResource(served, text);
    return r && `${r.group || 'core'}/${r.version}/${r.resource}/${r.namespaced ? 'ns' : 'cluster'}`;
  };

  test('by plural, singular, short name or kind (any case); subresources are not resources', () => {
    expect(['configmaps', 'configmap', 'cm', 'ConfigMap', 'CONFIGMAP'].map(pick)).toEqual(Array(5).fill('core/v1/configmaps/ns'));
    expect(pick('ns')).toBe('core/v1/namespaces/cluster');
    expect(['deploy', 'Deployment', 'sy', 'sync'].map(pick)).toEqual(['apps/v1/deployments/ns', 'apps/v1/deployments/ns', 'syncprims.dev/v1alpha1/syncs/ns', 'syncprims.dev/v1alpha1/syncs/ns']);
    expect(pick('pods')).toBeUndefined();
    expect(pick('nope')).toBeUndefined();
  });

  test('a group, or a version and a group, narrow it; the preferred version otherwise', () => {
    expect(pick('configmaps.example.com')).toBe('example.com/v1/configmaps/ns');
    expect(pick('deployments.apps')).toBe('apps/v1/deployments/ns');
    expect(pick('deployment.v1.apps')).toBe('apps/v1/deployments/ns');
    expect(pick('syncs.syncprims.dev')).toBe('syncprims.dev/v1alpha1/syncs/ns');
    expect(pick('hpa')).toBe('autoscaling/v2/horizontalpodautoscalers/ns');
    expect(pick('hpa.v1.autoscaling')).toBe('autoscaling/v1/horizontalpodautoscalers/ns');
    expect(pick('ConfigMap.v1')).toBe('core/v1/configmaps/ns');
    expect(pick('deployments.extensions')).toBeUndefined();
  });
});

const labelled = (labels: Record<string, string>): KubeObject => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm', namespace: 'apps', labels } });

describe('the owner labels', () => {
  test('kind, namespace and name; the origin when applied from another cluster; nothing without them', () => {
    const owner = { 'syncprims.dev/owner-kind': 'RemoteSync', 'syncprims.dev/owner-namespace': 'fleet', 'syncprims.dev/owner-name': 'edge' };
    expect(ownerOf(labelled(owner))).toEqual({ kind: 'RemoteSync', namespace: 'fleet', name: 'edge' });
    expect(ownerOf(labelled({ ...owner, 'syncprims.dev/origin': 'uid-1' }))).toEqual({ kind: 'RemoteSync', namespace: 'fleet', name: 'edge', origin: 'uid-1' });
    expect(ownerOf(labelled({}))).toBeUndefined();
    expect(ownerOf(labelled({ ...owner, 'syncprims.dev/owner-kind': 'Kustomization' }))).toBeUndefined();
    expect(ownerOf(labelled({ ...owner, 'syncprims.dev/owner-name': '' }))).toBeUndefined();
  });
});

describe('a sync in the chain', () => {
  test('sources in a few words: no credentials or query of a URL', () => {
    expect(sourceOf({ source: { inline: [{}, {}] } })).toEqual({ source: 'inline, 2 objects' });
    expect(sourceOf({ source: { configMap: { name: 'm', key: 'all.yaml' } } })).toEqual({ source: 'ConfigMap m key all.yaml' });
    expect(sourceOf({ source: { secret: { name: 's' } } })).toEqual({ source: 'Secret s' });
    expect(sourceOf({ source: { http: { url: 'https://user:pw@example.com/app.tgz?token=x', digest: 'sha256:ab' } }, paths: ['base', 'prod'] })).toEqual({
      source: 'https://example.com/app.tgz?... (digest sha256:ab)',
      paths: ['base', 'prod'],
    });
    expect(sourceOf({ source: { artifact: { apiVersion: 'source.toolkit.fluxcd.io/v1', kind: 'GitRepository', name: 'repo' } } })).toEqual({ source: 'GitRepository repo (source.toolkit.fluxcd.io/v1)' });
    expect(targetOf({ clusterRef: { name: 'edge-1' } })).toBe('Cluster edge-1');
    expect(targetOf({ kubeConfig: { secretRef: { name: 'k' } } })).toBe('kubeconfig Secret k key value');
    expect(targetOf({})).toBeUndefined();
  });

  test('a ProxySync: the template\'s source, its cluster, the Sync it keeps, and whether its inventory lists what it applied', () => {
    const proxy: KubeObject = {
      apiVersion: 'syncprims.dev/v1alpha1',
      kind: 'ProxySync',
      metadata: { name: 'p', namespace: 'fleet', generation: 2 },
      spec: { clusterRef: { name: 'edge' }, suspend: true, template: { spec: { source: { configMap: { name: 'm' } } } } },
      status: {
        lastAttemptedRevision: 'sha256:new',
        lastAppliedRevision: 'sha256:old',
        remote: { namespace: 'fleet', name: 'p' },
        inventory: { entries: [{ id: 'fleet_p_syncprims.dev_Sync', v: 'v1alpha1' }] },
        conditions: [{ type: 'Ready', status: 'True', reason: 'Suspended', message: 'suspended' }],
      },
    };
    const remoteSync: KubeObject = { apiVersion: 'syncprims.dev/v1alpha1', kind: 'Sync', metadata: { name: 'p', namespace: 'fleet' } };
    expect(linkOf(proxy, 'https://mgmt', remoteSync, 'uid-1')).toEqual({
      kind: 'ProxySync',
      namespace: 'fleet',
      name: 'p',
      server: 'https://mgmt',
      origin: 'uid-1',
      found: true,
      source: 'ConfigMap m',
      target: 'Cluster edge',
      remoteSync: 'Sync fleet/p',
      revision: 'sha256:old',
      attemptedRevision: 'sha256:new',
      ready: 'True',
      reason: 'Suspended',
      message: 'suspended',
      suspended: true,
      listsObject: true,
    });
    expect(linkOf(proxy, 'https://mgmt', labelled({})).listsObject).toBe(false);
  });

  test('the text of a chain cut short: what the labels name, not looked up', () => {
    const trace: Trace = {
      object: { apiVersion: 'v1', kind: 'ConfigMap', namespace: 'apps', name: 'cm', server: 'https://edge' },
      appliedBy: [unfoundLink({ kind: 'RemoteSync', namespace: 'fleet', name: 'edge', origin: 'uid-1' })],
      unresolved: 'pass --mgmt-kubeconfig',
    };
    expect(renderTrace(trace, PLAIN)).toEqual([
      'Object:      ConfigMap/cm',
      'Namespace:   apps',
      'Cluster:     https://edge',
      'Applied by:  RemoteSync fleet/edge (in the managing cluster)',
      '---',
      'RemoteSync:  edge',
      'Namespace:   fleet',
      'Cluster:     the managing cluster, id uid-1 (not given: --mgmt-kubeconfig)',
      'Status:      not looked up',
    ]);
    const missing = { ...trace, appliedBy: [unfoundLink({ kind: 'Sync', namespace: 'apps', name: 'gone' }, 'https://edge')] };
    expect(renderTrace(missing, PLAIN).slice(4)).toEqual(['---', 'Sync:        gone', 'Namespace:   apps', 'Cluster:     https://edge', 'Status:      not found']);
  });
});
