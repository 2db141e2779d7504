import { describe, expect, test } from '@jest/globals';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';
import { z } from 'zod';
import { crdFiles } from '../../src/api/crd-files.js';
import { customResourceDefinition, customResourceDefinitions } from '../../src/api/crds.js';
import { structuralSchema, type JSONSchemaProps } from '../../src/api/json-schema.js';
import { KINDS, SYNC_KINDS } from '../../src/api/kinds.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** Every schema node with its path, depth first. */
function* nodes(schema: JSONSchemaProps, at = ''): Generator<[string, JSONSchemaProps]> {
  yield [at, schema];
  for (const [k, v] of Object.entries(schema.properties ?? {})) yield* nodes(v, `${at}.${k}`);
  if (schema.items) yield* nodes(schema.items, `${at}[]`);
  if (typeof schema.additionalProperties === 'object') yield* nodes(schema.additionalProperties, `${at}{}`);
}

function at(schema: JSONSchemaProps, dotted: string): JSONSchemaProps {
  let node = schema;
  for (const part of dotted.split('.')) {
    const next = part === '[]' ? node.items : node.properties?.[part];
    if (!next) throw new Error(`no ${part} in ${dotted}`);
    node = next;
  }
  return node;
}

const schemaOf = (kind: (typeof KINDS)[number]): JSONSchemaProps =>
  customResourceDefinition(kind).spec.versions[0]!.schema.openAPIV3Schema;

describe('checked-in CRDs', () => {
  test.each(crdFiles().map((f) => [f.file, f.text]))('crds/%s is up to date', async (file, expected) => {
    const actual = await readFile(path.join(ROOT, 'crds', file), 'utf8').catch(() => '(missing)');
    if (actual !== expected) {
      throw new Error(`crds/${file} differs from what src/api generates: run \`make crds\` and check the result in`);
    }
  });

  test('one file per kind, named <group>_<plural>.yaml', () => {
    expect(crdFiles().map((f) => f.file)).toEqual([
      'syncprims.dev_syncs.yaml',
      'syncprims.dev_remotesyncs.yaml',
      'syncprims.dev_proxysyncs.yaml',
      'syncprims.dev_fleetsyncs.yaml',
      'syncprims.dev_rolloutapprovals.yaml',
    ]);
  });

  test("RolloutApproval's file also holds the admission policy that makes its approver the creator, and its binding", () => {
    const text = crdFiles().find((f) => f.file === 'syncprims.dev_rolloutapprovals.yaml')!.text;
    const docs = parseAllDocuments(text).map((d) => d.toJS() as { kind: string; metadata: { name: string } });
    expect(docs.filter((d) => d !== null).map((d) => [d.kind, d.metadata.name])).toEqual([
      ['CustomResourceDefinition', 'rolloutapprovals.syncprims.dev'],
      ['ValidatingAdmissionPolicy', 'rolloutapprovals.syncprims.dev'],
      ['ValidatingAdmissionPolicyBinding', 'rolloutapprovals.syncprims.dev'],
    ]);
  });
});

describe('generated CRDs', () => {
  test('RolloutApproval: namespaced, no status, in no category, its spec immutable', () => {
    const crd = customResourceDefinitions().at(-1)!;
    expect([crd.metadata.name, crd.spec.scope, crd.spec.names.categories, crd.spec.versions[0]!.subresources]).toEqual(['rolloutapprovals.syncprims.dev', 'Namespaced', [], undefined]);
    expect(at(crd.spec.versions[0]!.schema.openAPIV3Schema, 'spec')['x-kubernetes-validations']).toEqual([expect.objectContaining({ rule: 'self == oldSelf' })]);
  });

  test('are namespaced, with the status subresource, the category and short names', () => {
    const crds = customResourceDefinitions().filter((c) => c.spec.names.kind !== 'RolloutApproval');
    expect(crds.map((c) => [c.metadata.name, c.spec.names.kind, c.spec.names.shortNames])).toEqual([
      ['syncs.syncprims.dev', 'Sync', ['sy']],
      ['remotesyncs.syncprims.dev', 'RemoteSync', ['rsy']],
      ['proxysyncs.syncprims.dev', 'ProxySync', ['psy']],
      ['fleetsyncs.syncprims.dev', 'FleetSync', ['fsy']],
    ]);
    for (const crd of crds) {
      expect(crd.spec.scope).toBe('Namespaced');
      expect(crd.spec.names.categories).toEqual(['syncprims']);
      expect(crd.spec.versions).toHaveLength(1);
      expect(crd.spec.versions[0]).toMatchObject({
        name: 'v1alpha1',
        served: true,
        storage: true,
        subresources: { status: {} },
      });
      if (crd.spec.names.kind === 'FleetSync') {
        expect(crd.spec.versions[0]!.additionalPrinterColumns.map((c) => [c.name, c.jsonPath, c.priority ?? 0])).toEqual([
          ['Ready', '.status.conditions[?(@.type=="Ready")].status', 0],
          ['Phase', '.status.phase', 0],
          ['Clusters', '.status.readyClusters', 0],
          ['Status', '.status.conditions[?(@.type=="Ready")].message', 1],
          ['Revision', '.status.currentRevision', 1],
          ['Age', '.metadata.creationTimestamp', 0],
        ]);
        expect(crd.metadata.annotations).toEqual({ 'syncprims.dev/prune': 'disabled' });
        continue;
      }
      const cluster =
        crd.spec.names.kind === 'Sync'
          ? []
          : [
              { name: 'Cluster', type: 'string', jsonPath: '.spec.clusterRef.name', description: 'the Cluster API cluster' },
              { name: 'Kubeconfig', type: 'string', jsonPath: '.spec.kubeConfig.secretRef.name', description: 'the Secret holding the kubeconfig' },
            ];
      expect(crd.spec.versions[0]!.additionalPrinterColumns).toEqual([
        { name: 'Ready', type: 'string', jsonPath: '.status.conditions[?(@.type=="Ready")].status' },
        { name: 'Status', type: 'string', jsonPath: '.status.conditions[?(@.type=="Ready")].message' },
        // In -o wide only (issue 34: the table wrapped at about 300 columns).
        { name: 'Revision', type: 'string', jsonPath: '.status.lastAppliedRevision', priority: 1 },
        ...cluster,
        { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
      ]);
      // Never pruned, by the bootstrap Sync that installs them or any other.
      expect(crd.metadata.annotations).toEqual({ 'syncprims.dev/prune': 'disabled' });
    }
  });

  test.each(KINDS)('%s has a structural schema: typed nodes, no $ref, oneOf or closed objects', (kind) => {
    for (const [where, node] of nodes(schemaOf(kind))) {
      for (const key of ['$ref', '$schema', '$defs', 'oneOf', 'anyOf', 'allOf', 'not', 'propertyNames', 'const']) {
        expect([where, key in node]).toEqual([where, false]);
      }
      expect([where, node.additionalProperties === false]).toEqual([where, false]);
      const typed = typeof node.type === 'string' || node['x-kubernetes-preserve-unknown-fields'] === true;
      expect([where, typed]).toEqual([where, true]);
      expect([where, node.properties !== undefined && node.additionalProperties !== undefined]).toEqual([where, false]);
      if (node.type === 'integer') expect([where, node.maximum]).toEqual([where, undefined]);
    }
  });

  test('the server fills the defaults of the sync spec', () => {
    const spec = at(schemaOf('Sync'), 'spec');
    const defaults = Object.fromEntries(
      Object.entries(spec.properties ?? {}).flatMap(([k, v]) => (v.default === undefined ? [] : [[k, v.default]])),
    );
    expect(defaults).toEqual({ prune: true, wait: true, timeout: '5m', interval: '10m', deletionPolicy: 'Delete' });
    expect(at(spec, 'dependsOn.[].kind')).toMatchObject({ default: 'Sync', enum: ['Sync', 'RemoteSync', 'ProxySync', 'FleetSync'] });
    expect(at(spec, 'dependsOn.[].requiredStatus').default).toBe('Current');
    expect(at(schemaOf('ProxySync'), 'spec.template.spec.timeout').default).toBe('5m');
    expect(at(schemaOf('RemoteSync'), 'spec.kubeConfig.secretRef.key').default).toBe('value');
    expect(spec.required).toEqual(['source']);
    expect(schemaOf('Sync').required).toEqual(['spec']);
  });

  test('inline objects and unknown values keep their fields', () => {
    expect(at(schemaOf('Sync'), 'spec.source.inline.[]')).toEqual({
      type: 'object',
      'x-kubernetes-preserve-unknown-fields': true,
    });
    expect(at(schemaOf('Sync'), 'spec.commonMetadata.labels')).toEqual({
      type: 'object',
      additionalProperties: { type: 'string' },
    });
  });

  test('one-of choices, durations and the name length are CEL rules with readable messages', () => {
    const rules = (node: JSONSchemaProps): unknown => node['x-kubernetes-validations'];
    for (const kind of SYNC_KINDS) {
      expect(rules(schemaOf(kind))).toEqual([
        {
          rule: 'self.metadata.name.size() <= 63',
          message: 'metadata.name must be at most 63 characters (it is used in label values)',
        },
      ]);
    }
    expect(rules(at(schemaOf('Sync'), 'spec.source'))).toEqual([
      {
        rule:
          '[has(self.inline), has(self.configMap), has(self.secret), has(self.http), has(self.artifact), has(self.helmRepository), has(self.git), has(self.oci)]' +
          '.exists_one(x, x)',
        message: 'source must set exactly one of inline, configMap, secret, http, artifact, helmRepository, git, oci',
      },
    ]);
    for (const kind of ['RemoteSync', 'ProxySync'] as const) {
      expect(rules(at(schemaOf(kind), 'spec'))).toEqual([
        {
          rule: '[has(self.kubeConfig), has(self.clusterRef)].exists_one(x, x)',
          message: 'spec must name the cluster with exactly one of kubeConfig or clusterRef',
        },
      ]);
    }
    expect(rules(at(schemaOf('Sync'), 'spec'))).toBeUndefined();
    const timeout = at(schemaOf('Sync'), 'spec.timeout');
    expect(timeout.pattern).toBeUndefined();
    expect(rules(timeout)).toEqual([
      {
        rule: "self.matches('^([0-9]+([.][0-9]+)?(ns|us|µs|ms|s|m|h))+$')",
        message: 'must be a duration such as 30s, 5m or 1h30m (units: ns, us, ms, s, m, h)',
      },
      {
        rule: expect.stringMatching(/^!self\.matches\('\^\(\[0-9\]\+.*\) \|\| self\.matches\('\^\(\[0-9\]\{1,5\}/),
        message: 'is too long: at most 5 digits of hours (99999h, over 11 years), 7 of minutes or 9 of seconds',
      },
    ]);
  });

  test('status has the conditions as a map list keyed by type, and ProxySync adds remote', () => {
    const conditions = at(schemaOf('Sync'), 'status.conditions');
    expect(conditions).toMatchObject({ 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['type'] });
    expect(conditions.items?.required).toEqual(['type', 'status', 'lastTransitionTime', 'reason', 'message']);
    expect(Object.keys(at(schemaOf('ProxySync'), 'status.remote').properties ?? {})).toEqual([
      'cluster',
      'namespace',
      'name',
      'observedGeneration',
      'pendingDependencies',
      'lastSeenAt',
    ]);
    expect(at(schemaOf('Sync'), 'status').properties?.remote).toBeUndefined();
  });
});

describe('structuralSchema', () => {
  test('turns unknown values and maps of them into preserve-unknown-fields', () => {
    const schema = z.object({ any: z.unknown().optional(), map: z.record(z.string(), z.unknown()) });
    expect(structuralSchema(schema)).toEqual({
      type: 'object',
      properties: {
        any: { 'x-kubernetes-preserve-unknown-fields': true },
        map: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
      },
      required: ['map'],
    });
  });

  test('drops closed objects and the safe-integer bounds of zod', () => {
    expect(structuralSchema(z.strictObject({ n: z.number().int().min(1) }))).toEqual({
      type: 'object',
      properties: { n: { type: 'integer', minimum: 1 } },
      required: ['n'],
    });
  });

  test('refuses unions, naming where they are', () => {
    expect(() => structuralSchema(z.object({ a: z.object({ b: z.union([z.string(), z.number()]) }) }))).toThrow(
      ".a.b: 'anyOf' cannot be expressed in a CRD schema",
    );
  });
});
