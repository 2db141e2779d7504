// The pure parts of rendering a chart (issue 47): the chart's folder in an
// archive, the key of a packaged chart in a ConfigMap, the revision (stable
// across clusters, changed by values), the namespace, what is followed for
// changes, the hooks' phases and order, and Helm's capabilities from discovery.
import { describe, expect, test } from '@jest/globals';
import { compareInstallKinds, hookDeletePolicies, hookPhase, renderHooks } from '../../src/apply/chart-hooks.js';
import type { Scope } from '../../src/apply/render.js';
import { apiVersionsOfGroups } from '../../src/kube/capabilities.js';
import type { KubeObject } from '../../src/kube/resources.js';
import { chartFolder, chartKey, fetchChart } from '../../src/source/chart-source.js';
import { chartRevision, helmNamespace, valuesObjectsOf, type RevisionInput } from '../../src/source/chart-values.js';
import { filesUnder } from '../../src/source/helm.js';
import { ByteBudget, DEFAULT_SOURCE_LIMITS, referencedObjectsOf, SourceError } from '../../src/source/index.js';

const refusal = (f: () => unknown): string => {
  try {
    f();
  } catch (err) {
    expect(err).toBeInstanceOf(SourceError);
    return (err as Error).message;
  }
  throw new Error('not refused');
};

describe('a chart given as files (syncprims build --path DIR)', () => {
  const given = (entries: [string, string][]) => ({ files: new Map(entries.map(([p, d]) => [p, Buffer.from(d)] as [string, Buffer])), label: 'charts/web' });
  const fetch = (g: ReturnType<typeof given>, chart?: string) => {
    const noClient = { request: () => Promise.reject(new Error('no request')) } as never;
    return fetchChart({ client: noClient, namespace: 'n', source: { inline: [] }, chart, limits: DEFAULT_SOURCE_LIMITS, lease: new ByteBudget(1 << 20).lease('t'), given: g });
  };

  test('read without the source: the folder by the archive rule, its files only, a digest of paths and contents whatever their order', async () => {
    const a = await fetch(given([['templates/a.yaml', 'a'], ['Chart.yaml', 'name: web']]));
    expect(a).toMatchObject({ chart: '', label: 'charts/web', readFrom: 'charts/web', digest: expect.stringMatching(/^sha256:[0-9a-f]{64}$/) });
    expect([...a.files.keys()]).toEqual(['Chart.yaml', 'templates/a.yaml']);
    expect((await fetch(given([['Chart.yaml', 'name: web'], ['templates/a.yaml', 'a']]))).digest).toBe(a.digest);
    expect((await fetch(given([['Chart.yaml', 'name: web'], ['templates/a.yaml', 'b']]))).digest).not.toBe(a.digest);
    expect((await fetch(given([['Chart.yaml', 'name: web'], ['templates/b.yaml', 'a']]))).digest).not.toBe(a.digest);
    const nested = await fetch(given([['web/Chart.yaml', 'x'], ['web/values.yaml', 'y'], ['other/z', 'z']]));
    expect({ chart: nested.chart, files: [...nested.files.keys()] }).toEqual({ chart: 'web', files: ['web/Chart.yaml', 'web/values.yaml'] });
    await expect(fetch(given([['app.yaml', 'x']]))).rejects.toThrow('charts/web: no Chart.yaml at the root nor in a top-level folder');
  });
});

describe('the chart folder', () => {
  test('the root when it holds Chart.yaml', () => {
    expect(chartFolder(['Chart.yaml', 'templates/a.yaml', 'charts/sub/Chart.yaml'], undefined, 'u')).toBe('');
  });

  test('else the single top-level folder holding Chart.yaml (a packaged chart)', () => {
    expect(chartFolder(['web/Chart.yaml', 'web/templates/a.yaml', 'web/charts/db/Chart.yaml', 'README.md'], undefined, 'u')).toBe('web');
  });

  test('the folder spec.helm.chart names, which must hold Chart.yaml', () => {
    const paths = ['charts/a/Chart.yaml', 'charts/b/Chart.yaml', 'charts/b/values.yaml'];
    expect(chartFolder(paths, 'charts/b', 'u')).toBe('charts/b');
    expect(refusal(() => chartFolder(paths, 'charts/c', 'https://x/c.tgz'))).toBe(
      'https://x/c.tgz: no Chart.yaml in charts/c (folders holding Chart.yaml: charts/a, charts/b): fix spec.helm.chart',
    );
  });

  test('several top-level charts, none, or only deeper ones: refused, saying what was found', () => {
    expect(refusal(() => chartFolder(['a/Chart.yaml', 'b/Chart.yaml'], undefined, 'u'))).toBe(
      "u: several top-level folders hold a Chart.yaml (a, b): name the chart's folder in spec.helm.chart",
    );
    expect(refusal(() => chartFolder(['app.yaml', 'x/y.yaml'], undefined, 'u'))).toBe(
      'u: no Chart.yaml at the root nor in a top-level folder (the archive holds app.yaml, x): is it a chart?',
    );
    expect(refusal(() => chartFolder(['repo/charts/web/Chart.yaml'], undefined, 'u'))).toMatch(
      /the archive holds repo\); Chart\.yaml found in repo\/charts\/web: name the chart's folder in spec\.helm\.chart$/,
    );
  });

  test("only the chart folder's files go to the helper", () => {
    const files = new Map([['web/Chart.yaml', Buffer.from('x')], ['webapp/x', Buffer.from('y')], ['other', Buffer.from('z')]]);
    expect([...filesUnder(files, 'web').keys()]).toEqual(['web/Chart.yaml']);
    expect(filesUnder(files, '').size).toBe(3);
  });
});

describe('a packaged chart in a ConfigMap or Secret', () => {
  test('the key named, else the one key ending in .tgz', () => {
    expect(chartKey(['README', 'web-1.0.0.tgz'], undefined, 'ConfigMap a/c', 'spec.source.configMap')).toBe('web-1.0.0.tgz');
    expect(chartKey(['chart', 'x.tgz'], 'chart', 'ConfigMap a/c', 'spec.source.configMap')).toBe('chart');
  });

  test('none, several, or a missing named key: refused, listing the keys', () => {
    expect(refusal(() => chartKey(['a.tgz', 'b.tgz'], undefined, 'Secret a/s', 'spec.source.secret'))).toBe(
      'Secret a/s has several keys ending in .tgz (keys: a.tgz, b.tgz): a chart in a ConfigMap or Secret is one packaged chart (.tgz); name its key in spec.source.secret.key',
    );
    expect(refusal(() => chartKey([], undefined, 'Secret a/s', 'spec.source.secret'))).toMatch(/^Secret a\/s has no key ending in \.tgz \(keys: none\)/);
    expect(refusal(() => chartKey(['a.tgz'], 'b.tgz', 'Secret a/s', 'spec.source.secret'))).toBe('Secret a/s has no key "b.tgz" (keys: a.tgz): fix spec.source.secret.key');
  });
});

describe('the revision', () => {
  const chart = { name: 'web', version: '1.2.3' };
  const digest = `sha256:${'ab'.repeat(32)}`;
  const input: RevisionInput = {
    values: [
      { from: 'ConfigMap apps/base key values.yaml', yaml: 'replicas: 2\n' },
      { from: 'Secret apps/db key password', targetPath: 'db.password', value: 's3cret' },
      { from: 'spec.helm.values', object: { image: { tag: 'v1', repository: 'web' } } },
    ],
    releaseName: 'web',
    namespace: 'apps',
    includeCRDs: true,
  };

  test('names the chart, its version and archive, and a hash of the values', () => {
    expect(chartRevision(chart, digest, input)).toMatch(new RegExp(`^web-1\\.2\\.3@${digest}\\+values\\.[0-9a-f]{16}$`));
  });

  test('the same chart and values give the same revision, whatever the key order', () => {
    const reordered: RevisionInput = {
      namespace: 'apps',
      includeCRDs: true,
      releaseName: 'web',
      values: [input.values[0]!, input.values[1]!, { from: 'spec.helm.values', object: { image: { repository: 'web', tag: 'v1' } } }],
    };
    expect(chartRevision(chart, digest, reordered)).toBe(chartRevision(chart, digest, input));
  });

  test('a change of any value, layer order, release, namespace, CRDs or named capability changes it', () => {
    const base = chartRevision(chart, digest, input);
    const changed: RevisionInput[] = [
      { ...input, values: [input.values[0]!, input.values[1]!, { from: 'spec.helm.values', object: { image: { tag: 'v2', repository: 'web' } } }] },
      { ...input, values: [input.values[1]!, input.values[0]!, input.values[2]!] },
      { ...input, values: [{ from: 'ConfigMap apps/base key values.yaml', yaml: 'replicas: 3\n' }, input.values[1]!, input.values[2]!] },
      { ...input, releaseName: 'web2' },
      { ...input, namespace: 'apps2' },
      { ...input, includeCRDs: false },
      { ...input, kubeVersion: 'v1.30.0' },
      { ...input, apiVersions: ['example.com/v1'] },
    ];
    const revisions = changed.map((c) => chartRevision(chart, digest, c));
    expect(revisions).toHaveLength(8);
    for (const r of revisions) expect(r).not.toBe(base);
    expect(new Set(revisions).size).toBe(revisions.length);
    expect(chartRevision(chart, `sha256:${'cd'.repeat(32)}`, input)).not.toBe(base);
    expect(chartRevision({ ...chart, version: '1.2.4' }, digest, input)).not.toBe(base);
  });
});

describe('the namespace and what is followed', () => {
  test('spec.helm.namespace, else defaultNamespace, else the sync\'s', () => {
    expect(helmNamespace({ namespace: 'a' }, 'b', 'c')).toBe('a');
    expect(helmNamespace({}, 'b', 'c')).toBe('b');
    expect(helmNamespace({}, undefined, 'c')).toBe('c');
  });

  test('the valuesFrom objects are followed beside the source; malformed ones skipped', () => {
    const helm = { valuesFrom: [{ kind: 'ConfigMap', name: 'base' }, { kind: 'Secret', name: 'db', optional: true }, { kind: 'Pod', name: 'x' }, { kind: 'Secret' }, null] };
    expect(valuesObjectsOf(helm, 'apps')).toEqual([
      { apiVersion: 'v1', kind: 'ConfigMap', name: 'base', namespace: 'apps' },
      { apiVersion: 'v1', kind: 'Secret', name: 'db', namespace: 'apps' },
    ]);
    expect(referencedObjectsOf({ helmRepository: { url: 'https://c', chart: 'web', secretRef: { name: 'auth' } } }, 'apps', helm)).toEqual([
      { apiVersion: 'v1', kind: 'Secret', name: 'auth', namespace: 'apps' },
      { apiVersion: 'v1', kind: 'ConfigMap', name: 'base', namespace: 'apps' },
      { apiVersion: 'v1', kind: 'Secret', name: 'db', namespace: 'apps' },
    ]);
    for (const bad of [undefined, null, 'x', { valuesFrom: 'x' }]) expect(valuesObjectsOf(bad, 'apps')).toEqual([]);
  });
});

describe('hooks', () => {
  test('pre-install and pre-upgrade before the set, post-* after; test, delete and rollback never', () => {
    expect(hookPhase(['pre-install'])).toBe('pre');
    expect(hookPhase(['pre-upgrade', 'post-install'])).toBe('pre');
    expect(hookPhase(['post-upgrade'])).toBe('post');
    for (const dropped of [['test'], ['test-success'], ['pre-delete', 'post-delete'], ['pre-rollback', 'post-rollback'], []]) expect(hookPhase(dropped)).toBeUndefined();
  });

  test('delete policies: before-hook-creation when none is given, unknown ones dropped', () => {
    expect(hookDeletePolicies([])).toEqual(['before-hook-creation']);
    expect(hookDeletePolicies(['hook-succeeded', 'nonsense', 'hook-failed'])).toEqual(['hook-succeeded', 'hook-failed']);
  });

  test("Helm's install order of kinds, unlisted kinds after, by name", () => {
    const kinds = ['Widget', 'Job', 'ServiceAccount', 'Alpha', 'Namespace', 'PriorityClass', 'ConfigMap'];
    expect([...kinds].sort(compareInstallKinds)).toEqual(['PriorityClass', 'Namespace', 'ServiceAccount', 'ConfigMap', 'Job', 'Alpha', 'Widget']);
  });

  const obj = (kind: string, name: string, apiVersion = 'v1'): KubeObject => ({ apiVersion, kind, metadata: { name } });
  const scopes: Record<string, Scope> = { 'v1|ConfigMap': 'Namespaced', 'batch/v1|Job': 'Namespaced', 'v1|ServiceAccount': 'Namespaced' };
  const opts = { owner: { kind: 'Sync' as const, namespace: 'apps', name: 'web' }, defaultNamespace: 'apps', scopeOf: async (v: string, k: string) => scopes[`${v}|${k}`] };

  test('rendered as the set is (namespace, owner labels), sorted by phase, weight, kind, name; test hooks left out', async () => {
    const fetched = [
      { object: obj('Job', 'migrate', 'batch/v1'), events: ['pre-upgrade'], weight: 0, deletePolicies: [] },
      { object: obj('ConfigMap', 'b'), events: ['post-install'], weight: -5, deletePolicies: ['hook-succeeded'] },
      { object: obj('ConfigMap', 'z'), events: ['pre-install'], weight: 0, deletePolicies: [] },
      { object: obj('ServiceAccount', 'y'), events: ['pre-install'], weight: 0, deletePolicies: [] },
      { object: obj('ConfigMap', 'a'), events: ['pre-install'], weight: 0, deletePolicies: [] },
      { object: obj('ConfigMap', 'first'), events: ['pre-install'], weight: -1, deletePolicies: [] },
      { object: obj('Pod', 'smoke'), events: ['test'], weight: 0, deletePolicies: [] },
      { object: obj('Job', 'cleanup', 'batch/v1'), events: ['pre-delete'], weight: 0, deletePolicies: [] },
    ];
    const { hooks, errors } = await renderHooks(fetched, opts, []);
    expect(errors).toEqual([]);
    expect(hooks.map((h) => `${h.phase} ${h.weight} ${h.object.kind}/${h.object.metadata.name}`)).toEqual([
      'pre -1 ConfigMap/first',
      'pre 0 ServiceAccount/y',
      'pre 0 ConfigMap/a',
      'pre 0 ConfigMap/z',
      'pre 0 Job/migrate',
      'post -5 ConfigMap/b',
    ]);
    expect(hooks[0]?.object.metadata.namespace).toBe('apps');
    expect(hooks[0]?.object.metadata.labels).toMatchObject({ 'syncprims.dev/owner-name': 'web', 'syncprims.dev/owner-kind': 'Sync' });
    expect(hooks.find((h) => h.object.metadata.name === 'b')?.deletePolicies).toEqual(['hook-succeeded']);
  });

  test("a hook of a kind the set's CRD defines renders; one nobody defines is an error", async () => {
    const crd: KubeObject = {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'widgets.example.com' },
      spec: { group: 'example.com', scope: 'Namespaced', names: { kind: 'Widget' }, versions: [{ name: 'v1' }] },
    };
    const fetched = [
      { object: obj('Widget', 'w', 'example.com/v1'), events: ['post-install'], weight: 0, deletePolicies: [] },
      { object: obj('Gadget', 'g', 'example.com/v1'), events: ['post-install'], weight: 0, deletePolicies: [] },
    ];
    const { hooks, errors, unknownKinds } = await renderHooks(fetched, opts, [crd]);
    expect(hooks.map((h) => h.object.metadata.name)).toEqual(['w']);
    expect(errors).toEqual(['hook Gadget/g: the server does not serve Gadget in example.com/v1, and no CustomResourceDefinition in the set defines it']);
    expect(unknownKinds).toEqual([{ apiVersion: 'example.com/v1', kind: 'Gadget' }]);
  });
});

describe('capabilities from aggregated discovery', () => {
  test("group/versions and group/version/Kinds, subresources' kinds included, as Helm builds its version set", () => {
    const groups = [
      { metadata: { name: '' }, versions: [{ version: 'v1', resources: [{ responseKind: { kind: 'Pod' }, subresources: [{ responseKind: { kind: 'Pod' } }, { responseKind: { kind: 'Eviction' } }] }, { responseKind: { kind: 'ConfigMap' } }] }] },
      { metadata: { name: 'apps' }, versions: [{ version: 'v1', resources: [{ responseKind: { kind: 'Deployment' }, subresources: [{ responseKind: { kind: 'Scale' } }] }] }] },
      { metadata: { name: 'example.com' }, versions: [{ version: 'v1beta1' }, { version: 'v1', resources: [{ responseKind: {} }] }] },
    ];
    expect(apiVersionsOfGroups(groups)).toEqual([
      'apps/v1',
      'apps/v1/Deployment',
      'apps/v1/Scale',
      'example.com/v1',
      'example.com/v1beta1',
      'v1',
      'v1/ConfigMap',
      'v1/Eviction',
      'v1/Pod',
    ]);
  });
});
