import { describe, expect, test } from '@jest/globals';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse, parseAllDocuments } from 'yaml';
import { bootstrapManifests, MANIFESTS_KEY } from '../../src/cli/install/bootstrap-manifests.js';
import { bootstrapSource, type BootstrapFlags } from '../../src/cli/install/bootstrap-run.js';
import { installManifests } from '../../src/cli/install/install-manifests.js';
import type { KubeObject } from '../../src/kube/resources.js';
import { ROOT } from '../support/controlplane.js';

const key = (o: KubeObject) => `${o.kind}/${o.metadata.namespace ?? ''}/${o.metadata.name}`;
const flags = (more: Partial<BootstrapFlags> = {}): BootstrapFlags => ({ artifactApiVersion: 'source.toolkit.fluxcd.io/v1', ...more });

describe('bootstrap', () => {
  test('examples/bootstrap/syncprims.yaml is the Sync that bootstrap writes', () => {
    const example = parse(readFileSync(path.join(ROOT, 'examples', 'bootstrap', 'syncprims.yaml'), 'utf8'), { version: '1.1' }) as KubeObject;
    const sync = bootstrapManifests({}).find((o) => o.kind === 'Sync');
    expect(example).toEqual(sync);
  });

  test('the ConfigMap holds exactly what install prints, for the same options', () => {
    const opts = { namespace: 'platform', clusterId: 'mgmt', image: 'registry.example/syncprims:v1' };
    const [configMap, sync] = bootstrapManifests(opts);
    expect(configMap?.metadata).toMatchObject({ name: 'syncprims-manifests', namespace: 'platform' });
    const docs = parseAllDocuments((configMap as unknown as { data: Record<string, string> }).data[MANIFESTS_KEY]!, { version: '1.1' }).map((d) => d.toJS() as KubeObject);
    expect(docs).toEqual(installManifests(opts));
    expect(sync?.metadata.namespace).toBe('platform');
    expect(sync?.spec).toMatchObject({ deletionPolicy: 'Orphan', source: { configMap: { name: 'syncprims-manifests', key: MANIFESTS_KEY } } });
  });

  test('--url and --artifact: no ConfigMap, the Sync reads from there', () => {
    const byUrl = bootstrapManifests({}, bootstrapSource(flags({ url: 'https://example.com/install.yaml', digest: 'sha256:ab' })));
    expect(byUrl.map((o) => o.kind)).toEqual(['Sync']);
    expect(byUrl[0]?.spec).toMatchObject({ source: { http: { url: 'https://example.com/install.yaml', digest: 'sha256:ab' } } });
    const byArtifact = bootstrapManifests({}, bootstrapSource(flags({ artifact: 'GitRepository/platform' })));
    expect(byArtifact[0]?.spec).toMatchObject({ source: { artifact: { apiVersion: 'source.toolkit.fluxcd.io/v1', kind: 'GitRepository', name: 'platform' } } });
  });

  test.each([
    [{ url: 'https://a', artifact: 'GitRepository/x' }, '--url and --artifact: give one source, not both'],
    [{ digest: 'sha256:ab' }, '--digest goes with --url'],
    [{ url: 'ftp://a' }, '--url ftp://a: want an http(s) URL'],
    [{ artifact: 'platform' }, '--artifact platform: want kind/name of a Flux source, e.g. GitRepository/platform'],
    [{ artifact: 'sync/platform' }, '--artifact sync/platform: want kind/name of a Flux source, e.g. GitRepository/platform'],
  ])('bad usage %j: %s', (more, message) => {
    expect(() => bootstrapSource(flags(more))).toThrow(message);
  });
});

describe('bootstrap --multi-tenant', () => {
  type Rule = { apiGroups: string[]; resources: string[]; resourceNames?: string[]; verbs: string[] };
  const rulesOf = (objects: KubeObject[], kind: string) => (objects.find((o) => o.kind === kind && o.metadata.name === 'syncprims-bootstrap') as unknown as { rules: Rule[] }).rules;

  test('the Sync applies as syncprims-bootstrap, made before it, with the ConfigMap holding the multi-tenant install', () => {
    const objects = bootstrapManifests({ multiTenant: true });
    expect(objects.map(key)).toEqual([
      'ServiceAccount/syncprims-system/syncprims-bootstrap',
      'ClusterRole//syncprims-bootstrap',
      'ClusterRoleBinding//syncprims-bootstrap',
      'Role/syncprims-system/syncprims-bootstrap',
      'RoleBinding/syncprims-system/syncprims-bootstrap',
      'ConfigMap/syncprims-system/syncprims-manifests',
      'Sync/syncprims-system/syncprims',
    ]);
    expect(objects.at(-1)?.spec).toMatchObject({ serviceAccountName: 'syncprims-bootstrap' });
    const configMap = objects.find((o) => o.kind === 'ConfigMap') as unknown as { data: Record<string, string> };
    const docs = parseAllDocuments(configMap.data[MANIFESTS_KEY]!, { version: '1.1' }).map((d) => d.toJS() as KubeObject);
    expect(docs).toEqual(installManifests({ multiTenant: true }));
    for (const b of objects.filter((o) => o.kind.endsWith('Binding'))) {
      expect((b as unknown as { subjects: unknown[] }).subjects).toEqual([{ kind: 'ServiceAccount', name: 'syncprims-bootstrap', namespace: 'syncprims-system' }]);
    }
    // The default mode adds no account and names none.
    expect(bootstrapManifests({}).map((o) => o.kind)).toEqual(['ConfigMap', 'Sync']);
  });

  test('its account may change the operator\'s objects of either mode, by name, and read its source; nothing else', () => {
    const objects = bootstrapManifests({ multiTenant: true });
    const cluster = rulesOf(objects, 'ClusterRole');
    const namespaced = rulesOf(objects, 'Role');
    for (const rule of [...cluster, ...namespaced]) expect(rule.resourceNames?.length).toBeGreaterThan(0);
    const named = (rules: Rule[]) => rules.flatMap((r) => r.resourceNames!.map((n) => `${r.resources[0]}/${n}`)).sort();
    const managed = [...installManifests(), ...installManifests({ multiTenant: true })];
    const names = (keep: (o: KubeObject) => boolean) => [...new Set(managed.filter(keep).map((o) => `${o.kind.toLowerCase().replace(/([^aeiou])y$/, '$1ie')}s/${o.metadata.name}`))].sort();
    expect(named(cluster)).toEqual(names((o) => o.metadata.namespace === undefined));
    expect(named(cluster)).toEqual(expect.arrayContaining(['clusterroles/syncprims-apply', 'clusterrolebindings/syncprims-apply', 'clusterroles/syncprims-read']));
    expect(named(namespaced)).toEqual([...names((o) => o.metadata.namespace !== undefined), 'configmaps/syncprims-manifests'].sort());
    // Roles may be granted and bound (RBAC's escalation check), those of the operator only.
    const roles = cluster.find((r) => r.resources[0] === 'clusterroles')!;
    expect(roles.verbs).toEqual(expect.arrayContaining(['patch', 'bind', 'escalate']));
    // Its source, read as it: the Flux source named by --artifact.
    const byArtifact = bootstrapManifests({ multiTenant: true }, bootstrapSource(flags({ artifact: 'GitRepository/platform' })));
    expect(rulesOf(byArtifact, 'Role')).toContainEqual({ apiGroups: ['source.toolkit.fluxcd.io'], resources: ['gitrepositories'], resourceNames: ['platform'], verbs: ['get', 'list', 'watch'] });
  });
});
