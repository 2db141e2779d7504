// `syncprims build` as a user runs it: the examples render with no cluster,
// exactly as the operator applies them (compared with the live objects), and
// broken files, plain manifests, URLs and kinds it cannot know are handled.
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import path from 'node:path';
import { parseAllDocuments, stringify } from 'yaml';
import type { KubeClient } from '../../src/kube/client.js';
import { objectPath, type KubeObject } from '../../src/kube/resources.js';
import { packageChart } from '../support/chart-repository.js';
import { assertHelmCli, helmObjects, helmTemplate, type HelmCase } from '../support/helm-cases.js';
import { assertCliBuilt, runCli, tempDir, unreachableKubeconfig } from '../support/cli.js';
import { createBareRepo } from '../support/git-repos.js';
import { startGitServer } from '../support/git-server.js';
import { closeClients, clusterApi, clusterClient, kubeconfigPath, ROOT } from '../support/controlplane.js';
import { eventually } from '../support/eventually.js';
import { useOperatedNamespace } from '../support/operated-namespace.js';
import { applySync, find, syncPath, waitForReady, type SyncObject } from '../support/syncs.js';

const CLUSTER = 'mgmt';
const KUBECONFIG = kubeconfigPath(CLUSTER);
const EXAMPLES = path.join(ROOT, 'examples');
let client: KubeClient;
const ns = useOperatedNamespace(CLUSTER, 'cli-build', (o) => ({ client } = o));
afterAll(async () => {
  const admin = await clusterClient(CLUSTER);
  await Promise.all([...extraNamespaces].map((n) => admin.request({ method: 'DELETE', path: `/api/v1/namespaces/${n}` }).catch(() => undefined)));
  await closeClients();
  rmSync(dir, { recursive: true, force: true });
});

const dir = tempDir();
let unreachable: string;
/** Namespaces the examples' objects create (renamed into this test's), removed after. */
const extraNamespaces = new Set<string>();

beforeAll(async () => {
  assertCliBuilt();
  unreachable = (await unreachableKubeconfig(dir)).file;
});

const docsOf = (text: string): KubeObject[] =>
  parseAllDocuments(text, { version: '1.1' })
    .map((d) => d.toJS() as KubeObject | null)
    .filter((d): d is KubeObject => d !== null);

/** The examples whose every document is a Sync with an inline source. */
const inlineSyncExamples = readdirSync(EXAMPLES)
  .filter((f) => f.endsWith('.yaml'))
  .filter((f) => docsOf(readFileSync(path.join(EXAMPLES, f), 'utf8')).every((d) => d.kind === 'Sync' && (d.spec as { source?: { inline?: unknown } }).source?.inline !== undefined));

/** `# Sync ns/name: 2 objects, revision sha256:...` comments of build's YAML output, by label. */
function revisionsOf(stdout: string): Map<string, string> {
  return new Map([...stdout.matchAll(/^# (.+?): \d+ objects?, revision (\S+)$/gm)].map((m) => [m[1]!, m[2]!]));
}

type Crd = KubeObject & { spec: { group: string; names: { plural: string } } };
const isCrd = (obj: KubeObject): obj is Crd => obj.kind === 'CustomResourceDefinition' && obj.apiVersion === 'apiextensions.k8s.io/v1';

/** The groups of the CRDs the syncs of an example apply (one sync may apply a CRD, another objects of its kind). */
function crdGroupsOf(syncs: SyncObject[]): Set<string> {
  return new Set(syncs.flatMap((s) => (s.spec.source as { inline: KubeObject[] }).inline.filter(isCrd).map((c) => c.spec.group)));
}

/**
 * The example moved into this test's namespace: the syncs live there, their
 * defaultNamespace is it, and the namespaces they name and the groups of the
 * CRDs they apply (in `crdGroups`: the CRDs and the objects of their kinds)
 * get its prefix, so that nothing else on the cluster owns what they apply
 * (a CRD is cluster-scoped: a fixed name would be another run's too).
 */
function isolate(sync: SyncObject, namespace: string, crdGroups: Set<string>): SyncObject {
  const renamed = (n: string): string => {
    extraNamespaces.add(`${namespace}-${n}`);
    return `${namespace}-${n}`;
  };
  const spec = structuredClone(sync.spec) as { defaultNamespace?: string; source: { inline: KubeObject[] } };
  if (spec.defaultNamespace) spec.defaultNamespace = namespace;
  for (const obj of spec.source.inline) {
    if (obj.kind === 'Namespace' && obj.apiVersion === 'v1') obj.metadata.name = renamed(obj.metadata.name!);
    if (obj.metadata.namespace) obj.metadata.namespace = renamed(obj.metadata.namespace);
    if (isCrd(obj)) {
      obj.spec.group = `${namespace}.${obj.spec.group}`;
      obj.metadata.name = `${obj.spec.names.plural}.${obj.spec.group}`;
    }
    const [group, version] = obj.apiVersion.split('/');
    if (version !== undefined && crdGroups.has(group!)) obj.apiVersion = `${namespace}.${group}/${version}`;
  }
  return { ...sync, metadata: { ...sync.metadata, namespace }, spec };
}

describe('build of the examples', () => {
  test('every example that is a Sync with an inline source renders with no cluster (an unreachable one changes nothing)', async () => {
    expect(inlineSyncExamples.length).toBeGreaterThan(0);
    const results = await Promise.all(inlineSyncExamples.map((f) => runCli(['build', path.join(EXAMPLES, f), '--kubeconfig', unreachable])));
    results.forEach((res, i) => {
      const syncs = docsOf(readFileSync(path.join(EXAMPLES, inlineSyncExamples[i]!), 'utf8')) as SyncObject[];
      expect({ file: inlineSyncExamples[i], code: res.code, stderr: res.stderr }).toEqual({ file: inlineSyncExamples[i], code: 0, stderr: '' });
      const objects = docsOf(res.stdout);
      expect(objects).toHaveLength(syncs.reduce((n, s) => n + (s.spec.source as { inline: unknown[] }).inline.length, 0));
      for (const obj of objects) expect(obj.metadata.labels).toMatchObject({ 'syncprims.dev/owner-kind': 'Sync', 'syncprims.dev/owner-namespace': 'default' });
      expect([...revisionsOf(res.stdout).keys()]).toEqual(syncs.map((s) => `Sync default/${s.metadata.name}`));
    });
  });

  test.each(inlineSyncExamples)('%s: what build prints is what the operator applies', async (file) => {
    const originals = docsOf(readFileSync(path.join(EXAMPLES, file), 'utf8')) as SyncObject[];
    const crdGroups = crdGroupsOf(originals);
    const syncs = originals.map((s) => isolate(s, ns(), crdGroups));
    const copy = path.join(dir, file);
    writeFileSync(copy, syncs.map((s) => stringify(s)).join('---\n'));
    const built = await runCli(['build', copy]);
    expect({ code: built.code, stderr: built.stderr }).toEqual({ code: 0, stderr: '' });
    const rendered = docsOf(built.stdout);
    const revisions = revisionsOf(built.stdout);

    for (const s of syncs) await applySync(client, ns(), s.metadata.name!, s.spec);
    const { discovery } = await clusterApi(CLUSTER);
    for (const s of syncs) {
      const name = s.metadata.name!;
      const live = await waitForReady(client, ns(), name, 'True', 'Succeeded', 30_000);
      expect(live.status?.lastAppliedRevision).toBe(revisions.get(`Sync ${ns()}/${name}`));
      const mine = rendered.filter((o) => o.metadata.labels?.['syncprims.dev/owner-name'] === name);
      expect(live.status?.inventory?.entries.length).toBe(mine.length);
    }
    for (const obj of rendered) {
      const info = await discovery.resolve(obj.apiVersion, obj.kind);
      const live = (await client.request<KubeObject>({ path: objectPath(info, obj.metadata.name!, obj.metadata.namespace) }))!;
      // The server adds fields (uid, defaults, a Namespace's name label); everything build printed is there as printed.
      const { 'kubernetes.io/metadata.name': _, ...labels } = live.metadata.labels ?? {};
      expect(labels).toEqual(obj.metadata.labels);
      expect(live.metadata.annotations ?? {}).toMatchObject(obj.metadata.annotations ?? {});
      expect(live).toMatchObject(obj);
      if ('data' in obj) expect(live.data).toEqual(obj.data);
    }

    // Deleted, the syncs prune what they applied (the namespaces they made too).
    await Promise.all(syncs.map((s) => client.request({ method: 'DELETE', path: syncPath(ns(), s.metadata.name!) })));
    await eventually('the syncs pruned and gone', async () => {
      const left = await Promise.all(syncs.map((s) => find(client, syncPath(ns(), s.metadata.name!))));
      return left.every((l) => l === undefined) ? true : undefined;
    }, 30_000);
  });
});

describe('errors, with no cluster', () => {
  const broken = [
    'apiVersion: syncprims.dev/v1alpha1',
    'kind: Sync',
    'metadata: {name: one}',
    'spec: {source: {inline: []}}',
    '---',
    'apiVersion: syncprims.dev/v1alpha1',
    'kind: Sync',
    'metadata:',
    '  name: two',
    'spec:',
    '  source:',
    '    inline:',
    '      - apiVersion: v1',
    '        kind: ConfigMap',
    '       metadata: {name: x}',
    '',
  ].join('\n');

  test('a YAML syntax error names the file, the document and the line; --kubeconfig does not matter', async () => {
    const file = path.join(dir, 'broken.yaml');
    writeFileSync(file, broken);
    const results = await Promise.all([
      runCli(['build', file]),
      runCli(['build', file, '--kubeconfig', '/nonexistent/kubeconfig']),
      runCli(['build', file, '--kubeconfig', unreachable]),
    ]);
    for (const res of results) {
      expect(res.code).toBe(1);
      expect(res.stdout).toBe('');
      expect(res.stderr).toMatch(new RegExp(`^syncprims: ${file.replace(/[.]/g, '\\.')}: document 2 \\(line 15:\\d+\\): YAML syntax error: [^\\n]+\\n$`));
    }
  });

  test('an invalid spec, an object that is not a sync, a missing file', async () => {
    const invalid = path.join(dir, 'invalid.yaml');
    writeFileSync(invalid, 'apiVersion: syncprims.dev/v1alpha1\nkind: Sync\nmetadata: {name: bad}\nspec: {source: {}, timeout: soon}\n');
    const plain = path.join(dir, 'plain.yaml');
    writeFileSync(plain, 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n');
    const [a, b, c] = await Promise.all([runCli(['build', invalid]), runCli(['build', plain]), runCli(['build', path.join(dir, 'nothing.yaml')])]);
    expect(a).toMatchObject({ code: 1, stderr: expect.stringMatching(new RegExp(`^syncprims: ${invalid}: Sync default/bad: .*spec\\.timeout.*\\n$`)) });
    expect(b).toMatchObject({ code: 1, stderr: expect.stringContaining('use --path') });
    expect(c).toMatchObject({ code: 1, stderr: `syncprims: cannot read ${path.join(dir, 'nothing.yaml')}: no such file or directory\n` });
  });
});

describe('a kind whose CRD another sync of the file applies', () => {
  const crd = (plural: string, kind: string) => ({
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.x.example.com` },
    spec: { group: 'x.example.com', scope: 'Namespaced', names: { kind, plural }, versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } }] },
  });
  const obj = (kind: string, name: string) => ({ apiVersion: 'x.example.com/v1', kind, metadata: { name } });
  const edge = { kubeConfig: { secretRef: { name: 'edge-1-kubeconfig' } } };
  const sync = (kind: string, name: string, spec: Record<string, unknown>) => ({ apiVersion: 'syncprims.dev/v1alpha1', kind, metadata: { name }, spec });

  test('takes its scope when that sync applies to the same cluster; not when it goes to another (a RemoteSync\'s CRD serves a ProxySync to its cluster, not a Sync)', async () => {
    const file = path.join(dir, 'crd-elsewhere.yaml');
    const syncs = [
      sync('RemoteSync', 'installer', { ...edge, source: { inline: [crd('gadgets', 'Gadget')] } }),
      sync('Sync', 'home-crd', { source: { inline: [crd('widgets', 'Widget')] } }),
      sync('Sync', 'home-user', { defaultNamespace: 'default', source: { inline: [obj('Widget', 'w1')] } }),
      sync('Sync', 'stranded', { source: { inline: [obj('Gadget', 'g1')] } }),
      sync('ProxySync', 'proxied', { ...edge, template: { spec: { defaultNamespace: 'default', source: { inline: [obj('Gadget', 'g2')] } } } }),
    ];
    writeFileSync(file, syncs.map((s) => stringify(s)).join('---\n'));
    const res = await runCli(['build', file]);
    // The stranded Gadget (its CRD goes to another cluster) is rendered as written, with a warning: no scope to give it.
    expect(res.code).toBe(0);
    expect(res.stderr.trim().split('\n')).toEqual([
      'syncprims build: warning: Sync default/stranded: kind Gadget in x.example.com/v1 is not a built-in kind and no CustomResourceDefinition in the set defines it: rendered as written, its namespace untouched (the operator gives a namespaced kind the defaultNamespace); pass --kubeconfig to look up its scope',
      "syncprims build: note: RemoteSync default/installer: without --cluster-id the syncprims.dev/origin label the operator adds is left out (and so the revision differs from the operator's)",
    ]);
    const rendered = docsOf(res.stdout).map((o) => `${o.kind} ${o.metadata.namespace ?? ''}/${o.metadata.name}`);
    expect(rendered).toEqual(expect.arrayContaining(['Widget default/w1', 'Gadget default/g2', 'Gadget /g1']));
  });
});

describe('plain manifests and URLs', () => {
  test('--path of a folder: its manifest files in path order, owned as --owner says', async () => {
    const tree = path.join(dir, 'tree');
    mkdirSync(path.join(tree, 'b'), { recursive: true });
    mkdirSync(path.join(tree, '.hidden'), { recursive: true });
    writeFileSync(path.join(tree, 'b', '2.yaml'), 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: two}\ndata: {mode: 0644}\n');
    writeFileSync(path.join(tree, 'a.yaml'), 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: one}\n');
    writeFileSync(path.join(tree, '.hidden', 'x.yaml'), 'not: [valid');
    writeFileSync(path.join(tree, 'notes.txt'), 'not a manifest');
    const res = await runCli(['build', '--path', tree, '--owner', 'rsy/fleet', '-n', 'apps', '--default-namespace', 'web', '--cluster-id', 'mgmt-id', '-o', 'json']);
    expect({ code: res.code, stderr: res.stderr }).toEqual({ code: 0, stderr: '' });
    const items = (JSON.parse(res.stdout) as { items: KubeObject[] }).items;
    expect(items.map((o) => `${o.metadata.namespace}/${o.metadata.name}`)).toEqual(['web/one', 'web/two']);
    expect(items[1]).toMatchObject({ data: { mode: 420 } }); // YAML 1.1, as kubectl reads it
    expect(items[0]!.metadata.labels).toEqual({
      'syncprims.dev/owner-kind': 'RemoteSync',
      'syncprims.dev/owner-namespace': 'apps',
      'syncprims.dev/owner-name': 'fleet',
      'syncprims.dev/origin': 'mgmt-id',
    });
  });

  test('the source limits as given to the operator: a source past one is refused naming the flag; a bad value is bad usage', async () => {
    const two = path.join(dir, 'two.yaml');
    writeFileSync(two, 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, namespace: x}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: b, namespace: x}\n');
    const syncFile = path.join(dir, 'two-inline.yaml');
    const inline = ['a', 'b'].map((name) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'x' } }));
    writeFileSync(syncFile, JSON.stringify({ apiVersion: 'syncprims.dev/v1alpha1', kind: 'Sync', metadata: { name: 'two' }, spec: { source: { inline } } }));
    const [byDefault, path1, sync1, sync2, bad] = await Promise.all([
      runCli(['build', '--path', two]),
      runCli(['build', '--path', two, '--source-max-objects', '1']),
      runCli(['build', syncFile, '--source-max-objects', '1']),
      runCli(['build', syncFile, '--source-max-objects', '2']),
      runCli(['build', syncFile, '--source-max-objects', 'many']),
    ]);
    expect(byDefault.code).toBe(0);
    expect(path1).toMatchObject({ code: 1, stderr: `syncprims: ${two}: more than 1 objects (the source limit, --source-max-objects): split the manifests into several syncs\n` });
    expect(sync1).toMatchObject({ code: 1, stderr: expect.stringContaining('spec.source.inline: more than 1 objects (the source limit, --source-max-objects)') });
    expect(sync2.code).toBe(0);
    expect(bad).toMatchObject({ code: 2, stderr: expect.stringContaining('--source-max-objects many: want a whole number of objects, at least 1') });
  });

  test('--url: fetched as source.http, the revision is the digest of the bytes', async () => {
    const body = 'apiVersion: v1\nkind: Namespace\nmetadata: {name: served}\n';
    const server: Server = createServer((_req, res) => res.end(body));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(server.address() as { port: number }).port}/app.yaml`;
      const res = await runCli(['build', '--url', url]);
      expect({ code: res.code, stderr: res.stderr }).toEqual({ code: 0, stderr: '' });
      const digest = `sha256:${createHash('sha256').update(body).digest('hex')}`;
      expect(res.stdout.split('\n')[0]).toBe(`# Sync default/app: 1 object, revision ${digest}`);
      expect(docsOf(res.stdout)[0]?.metadata.labels?.['syncprims.dev/owner-name']).toBe('app');
    } finally {
      server.close();
    }
  });
});

describe('a Helm chart (spec.helm)', () => {
  const chart = {
    name: 'web',
    version: '1.2.0',
    files: {
      'values.yaml': 'replicas: 1\n',
      'templates/cm.yaml':
        'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-info\ndata:\n  kube: {{ .Capabilities.KubeVersion.Version | quote }}\n' +
        '  monitoring: {{ .Capabilities.APIVersions.Has "monitoring.coreos.com/v1" | quote }}\n  replicas: {{ .Values.replicas | quote }}\n  namespace: {{ .Release.Namespace }}\n',
    },
  };

  test('renders offline as helm template does, with the values, the release and the capabilities the flags name; the revision names the chart', async () => {
    const body = await packageChart(chart);
    const server: Server = createServer((_req, res) => res.end(body));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(server.address() as { port: number }).port}/web-1.2.0.tgz`;
      const file = path.join(dir, 'chart-sync.yaml');
      writeFileSync(file, stringify({ apiVersion: 'syncprims.dev/v1alpha1', kind: 'Sync', metadata: { name: 'site', namespace: 'apps' }, spec: { source: { http: { url } }, helm: { values: { replicas: 3 } } } }));
      const [plain, named] = await Promise.all([runCli(['build', file]), runCli(['build', file, '--kube-version', 'v1.30.2', '--api-versions', 'monitoring.coreos.com/v1'])]);
      expect({ code: plain.code, stderr: plain.stderr }).toEqual({ code: 0, stderr: '' });
      expect({ code: named.code, stderr: named.stderr }).toEqual({ code: 0, stderr: '' });
      const info = (stdout: string) => docsOf(stdout).find((o) => o.kind === 'ConfigMap');
      expect(info(plain.stdout)).toMatchObject({ metadata: { name: 'site-info', namespace: 'apps', labels: { 'syncprims.dev/owner-name': 'site' } }, data: { replicas: '3', namespace: 'apps', monitoring: 'false' } });
      expect(info(named.stdout)).toMatchObject({ data: { kube: 'v1.30.2', monitoring: 'true' } });
      expect(plain.stdout.split('\n')[0]).toMatch(/^# Sync apps\/site: 1 object, revision web-1\.2\.0@sha256:[0-9a-f]{64}\+values\.[0-9a-f]{16}$/);
    } finally {
      server.close();
    }
  });
});

describe('a chart folder (--path DIR holding Chart.yaml)', () => {
  const crd = [
    'apiVersion: apiextensions.k8s.io/v1',
    'kind: CustomResourceDefinition',
    'metadata: {name: gadgets.shop.example.com}',
    'spec:',
    '  group: shop.example.com',
    '  scope: Namespaced',
    '  names: {kind: Gadget, plural: gadgets}',
    '  versions: [{name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}}]',
    '',
  ].join('\n');
  /** A chart with a helper template, a CRD, a cluster-scoped object and a .helmignore (which hides a template that would not render). */
  const files: Record<string, string> = {
    'Chart.yaml': 'apiVersion: v2\nname: shop\nversion: 0.3.0\nappVersion: "2.1"\n',
    'values.yaml': 'replicas: 1\nmessage: default\nlimits: {cpu: 100m, memory: 64Mi}\n',
    '.helmignore': '*.bak\n',
    'crds/gadgets.yaml': crd,
    'templates/_helpers.tpl': '{{- define "shop.fullname" -}}{{ .Release.Name }}-{{ .Chart.Name }}{{- end -}}\n',
    'templates/configmap.yaml': [
      'apiVersion: v1',
      'kind: ConfigMap',
      'metadata:',
      '  name: {{ include "shop.fullname" . }}',
      '  labels: {app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}}',
      'data:',
      '  message: {{ .Values.message | quote }}',
      '  replicas: {{ .Values.replicas | quote }}',
      '  limits: {{ toJson .Values.limits | quote }}',
      '  namespace: {{ .Release.Namespace }}',
      '',
    ].join('\n'),
    'templates/clusterrole.yaml': 'apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: {{ include "shop.fullname" . }}-reader\nrules: []\n',
    'templates/broken.yaml.bak': '{{ this does not parse }}\n',
  };
  const write = (root: string, tree: Record<string, string>): string => {
    for (const [p, data] of Object.entries(tree)) {
      mkdirSync(path.dirname(path.join(root, p)), { recursive: true });
      writeFileSync(path.join(root, p), data);
    }
    return root;
  };
  const shopChart = (): string => write(path.join(dir, 'charts', 'shop'), files);
  const CLUSTER_SCOPED = new Set(['ClusterRole', 'CustomResourceDefinition']);

  test('renders as helm template renders it (-f files merged in order, --include-crds), given the namespace and owner labels the operator gives', async () => {
    assertHelmCli();
    const chart = shopChart();
    const a = path.join(dir, 'values-a.yaml');
    const b = path.join(dir, 'values-b.yaml');
    writeFileSync(a, 'message: from-a\nlimits: {cpu: 200m}\n');
    writeFileSync(b, 'replicas: 3\nlimits: {cpu: 300m, memory: 128Mi}\n');
    const helmCase: HelmCase = {
      name: 'cli-build', dir: chart, chart: '', releaseName: 'shop-eu', namespace: 'apps',
      values: [{ yaml: readFileSync(a, 'utf8') }, { yaml: readFileSync(b, 'utf8') }], includeCRDs: true, kubeVersion: '', apiVersions: [], expectExit: 0,
    };
    const [ours, theirs, byDefault] = await Promise.all([
      runCli(['build', '--path', chart, '--values', a, '--values', b, '--release-name', 'shop-eu', '-n', 'apps']),
      helmTemplate(helmCase),
      runCli(['build', '--path', chart, '-o', 'json']),
    ]);
    expect({ code: theirs.code, stderr: theirs.stderr }).toEqual({ code: 0, stderr: '' });
    expect({ code: ours.code, stderr: ours.stderr }).toEqual({ code: 0, stderr: '' });
    const owner = { 'syncprims.dev/owner-kind': 'Sync', 'syncprims.dev/owner-namespace': 'apps', 'syncprims.dev/owner-name': 'shop' };
    // helm template's objects, as the operator applies them: namespaced ones given .Release.Namespace, all the owner labels, the CRD never pruned.
    const expected = helmObjects(theirs.stdout).map(({ object }) => {
      const o = object as unknown as KubeObject;
      const crdMark = o.kind === 'CustomResourceDefinition' ? { annotations: { ...o.metadata.annotations, 'syncprims.dev/prune': 'disabled' } } : {};
      const namespace = CLUSTER_SCOPED.has(o.kind) ? {} : { namespace: o.metadata.namespace ?? 'apps' };
      return { ...o, metadata: { ...o.metadata, ...namespace, ...crdMark, labels: { ...o.metadata.labels, ...owner } } };
    });
    // Helm's order: the CRDs of crds/ first, then its install order of kinds.
    expect(expected.map((o) => o.kind)).toEqual(['CustomResourceDefinition', 'ConfigMap', 'ClusterRole']);
    expect(expected[1]).toMatchObject({ metadata: { name: 'shop-eu-shop' }, data: { message: 'from-a', replicas: '3', limits: '{"cpu":"300m","memory":"128Mi"}', namespace: 'apps' } });
    expect(docsOf(ours.stdout)).toEqual(expected);
    expect(ours.stdout.split('\n')[0]).toMatch(/^# Sync apps\/shop: 3 objects, revision shop-0\.3\.0@sha256:[0-9a-f]{64}\+values\.[0-9a-f]{16}$/);
    // No flags: the chart's own values, .Release.Name the sync's name (the folder's), .Release.Namespace -n's default.
    expect({ code: byDefault.code, stderr: byDefault.stderr }).toEqual({ code: 0, stderr: '' });
    const config = (JSON.parse(byDefault.stdout) as { items: KubeObject[] }).items.find((o) => o.kind === 'ConfigMap');
    expect(config).toMatchObject({ metadata: { name: 'shop-shop', namespace: 'default' }, data: { message: 'default', replicas: '1', namespace: 'default' } });
  });

  test('a --values file that is not there; a dependency not vendored in charts/ (as helm template refuses it); --values without a chart folder', async () => {
    const chart = write(path.join(dir, 'charts', 'shop-deps'), {
      ...files,
      'Chart.yaml': 'apiVersion: v2\nname: shop\nversion: 0.3.0\ndependencies:\n  - {name: redis, version: 1.0.0, repository: "https://charts.invalid"}\n',
    });
    const missing = path.join(dir, 'no-such-values.yaml');
    const plain = path.join(dir, 'plain-folder');
    write(plain, { 'cm.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n' });
    const [noValues, notVendored, helm, notChart] = await Promise.all([
      runCli(['build', '--path', shopChart(), '--values', missing]),
      runCli(['build', '--path', chart]),
      helmTemplate({ name: 'deps', dir: chart, chart: '', releaseName: 'shop', namespace: 'default', values: [], includeCRDs: false, kubeVersion: '', apiVersions: [], expectExit: 0 }),
      runCli(['build', '--path', plain, '--values', missing]),
    ]);
    expect(noValues).toEqual({ code: 1, stdout: '', stderr: `syncprims: --values ${missing}: no such file or directory\n` });
    expect(helm).toMatchObject({ code: 1, stderr: expect.stringContaining('found in Chart.yaml, but missing in charts/ directory: redis') });
    expect(notVendored).toMatchObject({ code: 1, stdout: '' });
    const lines = notVendored.stderr.trim().split('\n');
    expect(lines[0]).toMatch(new RegExp(`^syncprims build: Sync default/shop-deps: ${chart.replace(/[.]/g, '\\.')}: Chart\\.yaml of chart "shop": a dependency is not vendored \\(found in Chart\\.yaml, but missing in charts/ directory: redis\\).*helm dependency build`));
    expect(lines[1]).toBe('syncprims: 1 of 1 sync did not render (Sync default/shop-deps)');
    expect(notChart).toMatchObject({ code: 2, stderr: expect.stringContaining('--values and --release-name go with --path of a chart folder (one holding Chart.yaml)') });
  });
});

describe('a Git source', () => {
  test('fetched as the operator fetches it: the branch resolved (its revision), its Secret read with --kubeconfig; without it, no credentials and a clear refusal', async () => {
    const server = await startGitServer({ auth: { username: 'builder', password: 'p4ss' } });
    try {
      const repo = createBareRepo(server.root, 'apps');
      const commit = await repo.commit({ 'apps/cm.yaml': stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'from-git' }, data: { a: '1' } }), 'README.md': 'not a manifest' });
      const secret = { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'git-creds' }, stringData: { username: 'builder', password: 'p4ss' } };
      await client.request({ method: 'POST', path: `/api/v1/namespaces/${ns()}/secrets`, body: secret });
      const file = path.join(dir, 'git-sync.yaml');
      const source = { git: { url: server.repoUrl('apps'), ref: { branch: 'main' }, secretRef: { name: 'git-creds' } } };
      writeFileSync(file, stringify({ apiVersion: 'syncprims.dev/v1alpha1', kind: 'Sync', metadata: { name: 'from-git', namespace: ns() }, spec: { defaultNamespace: ns(), source, paths: ['apps'] } }));
      const [withCluster, alone] = await Promise.all([runCli(['build', file, '--kubeconfig', KUBECONFIG]), runCli(['build', file])]);
      expect({ code: withCluster.code, stderr: withCluster.stderr }).toEqual({ code: 0, stderr: '' });
      expect(docsOf(withCluster.stdout).map((o) => `${o.kind} ${o.metadata.namespace}/${o.metadata.name}`)).toEqual([`ConfigMap ${ns()}/from-git`]);
      expect(revisionsOf(withCluster.stdout).get(`Sync ${ns()}/from-git`)).toBe(`main@sha1:${commit}`);
      expect(alone.code).toBe(1);
      expect(alone.stderr).toContain('source.git.secretRef is read from the cluster the sync lives in: pass --kubeconfig');
      expect(`${alone.stderr}${withCluster.stdout}`).not.toContain('p4ss');
    } finally {
      await server.close();
    }
  });
});

describe('what needs a cluster', () => {
  test("a Flux user's repository offline (HelmReleases, ClusterIssuers, Gateways: kinds only a cluster knows): rendered as written, one warning per kind, exit 0", async () => {
    const repo = path.join(dir, 'flux-repo');
    mkdirSync(path.join(repo, 'apps', 'production'), { recursive: true });
    mkdirSync(path.join(repo, 'infrastructure', 'configs'), { recursive: true });
    writeFileSync(path.join(repo, 'apps', 'production', 'kustomization.yaml'), stringify({ apiVersion: 'kustomize.config.k8s.io/v1beta1', kind: 'Kustomization', resources: ['podinfo.yaml'] }));
    writeFileSync(
      path.join(repo, 'apps', 'production', 'podinfo.yaml'),
      stringify({ apiVersion: 'helm.toolkit.fluxcd.io/v2', kind: 'HelmRelease', metadata: { name: 'podinfo', namespace: 'podinfo' }, spec: { interval: '10m', chart: { spec: { chart: 'podinfo' } } } }),
    );
    writeFileSync(
      path.join(repo, 'infrastructure', 'configs', 'issuers.yaml'),
      [
        stringify({ apiVersion: 'cert-manager.io/v1', kind: 'ClusterIssuer', metadata: { name: 'letsencrypt' }, spec: { acme: { server: 'https://acme.invalid/directory' } } }),
        stringify({ apiVersion: 'gateway.networking.k8s.io/v1', kind: 'Gateway', metadata: { name: 'public', namespace: 'edge' }, spec: { gatewayClassName: 'any', listeners: [] } }),
      ].join('---\n'),
    );
    const [apps, configs] = await Promise.all([runCli(['build', '--path', path.join(repo, 'apps', 'production')]), runCli(['build', '--path', path.join(repo, 'infrastructure', 'configs')])]);
    expect({ code: apps.code, warnings: apps.stderr.trim().split('\n').map((l) => l.replace(/ is not a built-in kind.*$/, '')) }).toEqual({
      code: 0,
      warnings: ['syncprims build: warning: Sync default/production: kind HelmRelease in helm.toolkit.fluxcd.io/v2'],
    });
    expect(docsOf(apps.stdout).map((o) => `${o.kind} ${o.metadata.namespace ?? ''}/${o.metadata.name}`)).toEqual(['HelmRelease podinfo/podinfo']);
    expect(configs.code).toBe(0);
    expect(configs.stderr.match(/warning: .*?: kind \S+/g)).toEqual(['warning: Sync default/configs: kind ClusterIssuer', 'warning: Sync default/configs: kind Gateway']);
    // As written: the cluster-scoped one gets no namespace, the one that names its namespace keeps it.
    expect(docsOf(configs.stdout).map((o) => `${o.kind} ${o.metadata.namespace ?? ''}/${o.metadata.name}`)).toEqual(['ClusterIssuer /letsencrypt', 'Gateway edge/public']);
  });

  test('a kind neither built in nor defined in the set: rendered as written without a cluster (a warning), discovered with --kubeconfig', async () => {
    const file = path.join(dir, 'nested.yaml');
    const inner = { apiVersion: 'syncprims.dev/v1alpha1', kind: 'Sync', metadata: { name: 'inner' }, spec: { source: { inline: [] } } };
    writeFileSync(file, stringify({ apiVersion: 'syncprims.dev/v1alpha1', kind: 'Sync', metadata: { name: 'outer' }, spec: { defaultNamespace: 'team', source: { inline: [inner] } } }));
    const [alone, withCluster, unreachableCluster] = await Promise.all([
      runCli(['build', file]),
      runCli(['build', file, '--kubeconfig', KUBECONFIG]),
      runCli(['build', file, '--kubeconfig', unreachable]),
    ]);
    expect(alone.code).toBe(0);
    expect(alone.stderr.split('\n')[0]).toBe(
      'syncprims build: warning: Sync default/outer: kind Sync in syncprims.dev/v1alpha1 is not a built-in kind and no CustomResourceDefinition in the set defines it: rendered as written, its namespace untouched (the operator gives a namespaced kind the defaultNamespace); pass --kubeconfig to look up its scope',
    );
    expect(docsOf(alone.stdout)[0]?.metadata.namespace).toBeUndefined();
    expect({ code: withCluster.code, stderr: withCluster.stderr }).toEqual({ code: 0, stderr: '' });
    expect(docsOf(withCluster.stdout)[0]?.metadata).toMatchObject({ name: 'inner', namespace: 'team' });
    expect(unreachableCluster).toMatchObject({ code: 3, stderr: expect.stringMatching(/^syncprims: cannot reach the cluster at https:\/\/127\.0\.0\.1:\d+ /) });
  });

  test('an http source whose kind only the cluster knows is fetched once: the lookup renders again what was read', async () => {
    const body = stringify({ apiVersion: 'syncprims.dev/v1alpha1', kind: 'Sync', metadata: { name: 'inner' }, spec: { source: { inline: [] } } });
    let fetched = 0;
    const server: Server = createServer((_req, res) => void (fetched++, res.end(body)));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(server.address() as { port: number }).port}/inner.yaml`;
      const file = path.join(dir, 'http-outer.yaml');
      writeFileSync(file, stringify({ apiVersion: 'syncprims.dev/v1alpha1', kind: 'Sync', metadata: { name: 'outer' }, spec: { defaultNamespace: 'team', source: { http: { url } } } }));
      const res = await runCli(['build', file, '--kubeconfig', KUBECONFIG]);
      expect({ code: res.code, stderr: res.stderr }).toEqual({ code: 0, stderr: '' });
      expect(docsOf(res.stdout)[0]?.metadata).toMatchObject({ name: 'inner', namespace: 'team' });
      expect(fetched).toBe(1);
    } finally {
      server.close();
    }
  });

  test('a ProxySync whose source is a ConfigMap: read with --kubeconfig in its namespace, rendered as its remote Sync', async () => {
    const manifests = 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: app-config}\ndata: {greeting: hi}\n';
    await client.request({
      method: 'POST',
      path: `/api/v1/namespaces/${ns()}/configmaps`,
      body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'app-manifests' }, data: { 'app.yaml': manifests } },
    });
    const example = path.join(dir, 'proxysync-configmap.yaml');
    writeFileSync(
      example,
      stringify({
        apiVersion: 'syncprims.dev/v1alpha1',
        kind: 'ProxySync',
        metadata: { name: 'app' },
        spec: {
          kubeConfig: { secretRef: { name: 'edge-1-kubeconfig' } },
          template: { spec: { source: { configMap: { name: 'app-manifests' } }, defaultNamespace: 'app' } },
        },
      }),
    );
    const [withCluster, alone] = await Promise.all([runCli(['build', example, '-n', ns(), '--kubeconfig', KUBECONFIG]), runCli(['build', example, '-n', ns()])]);
    expect({ code: withCluster.code, stderr: withCluster.stderr }).toEqual({ code: 0, stderr: '' });
    expect(docsOf(withCluster.stdout)).toEqual([
      {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: {
          name: 'app-config',
          namespace: 'app',
          labels: { 'syncprims.dev/owner-kind': 'Sync', 'syncprims.dev/owner-namespace': ns(), 'syncprims.dev/owner-name': 'app' },
        },
        data: { greeting: 'hi' },
      },
    ]);
    expect(alone.code).toBe(1);
    expect(alone.stderr).toContain(`ProxySync ${ns()}/app (remote Sync ${ns()}/app): source.configMap is read from the cluster the sync lives in: pass --kubeconfig`);
  });
});
