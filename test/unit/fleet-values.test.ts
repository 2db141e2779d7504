// FleetSync values and overrides, the pure parts: substitution (fleet/substitute.ts),
// overrides (fleet/overrides.ts), each cluster's template (fleet/cluster-template.ts),
// the revision that holds them, and their admission by the schema.
import { describe, expect, test } from '@jest/globals';
import { fleetSyncSpecSchema, type FleetOverride, type FleetTemplate } from '../../src/api/fleet.js';
import { tolerateReferences } from '../../src/api/fleet-references.js';
import { openAPIV3Schema } from '../../src/api/crds.js';
import { parseSyncObject } from '../../src/api/validate.js';
import { ClusterTemplates, clusterTemplate, valuesDigest } from '../../src/fleet/cluster-template.js';
import { revisionDataOf, templateRevision, type RevisionData } from '../../src/fleet/children.js';
import { applyOverrides, OverrideError, overridesOf } from '../../src/fleet/overrides.js';
import { revisionTrust } from '../../src/fleet/revisions.js';
import { MAX_SUBSTITUTION_GROWTH, substitute, SubstitutionError } from '../../src/fleet/substitute.js';

const values = { cluster_name: 'edge-1', region: 'eu-west', empty: '' };

describe('substitution', () => {
  test('${name} is the value, ${name:=default} the value or else the default, $${ a literal ${', () => {
    expect(substitute('${region}/${cluster_name}', values).value).toBe('eu-west/edge-1');
    expect(substitute('${zone:=a}-${region:=x}', values).value).toBe('a-eu-west');
    expect(substitute('${zone:=}', values).value).toBe('');
    expect(substitute('an empty value is a value: [${empty:=d}]', values).value).toBe('an empty value is a value: []');
    expect(substitute('$${region} costs $5, $$ and $ stay', values).value).toBe('${region} costs $5, $$ and $ stay');
    expect(substitute('${a:=x:=y}', values).value).toBe('x:=y');
  });

  test('what was used is said, with what it was given', () => {
    expect(substitute({ a: '${region}', b: ['${zone:=a}', '$${not}'] }, values).used).toEqual({ region: 'eu-west', zone: 'a' });
  });

  test('strings only: keys, numbers, booleans, null and the structure stay as they are', () => {
    const template = { '${region}': '${region}', n: 3, t: true, z: null, list: [{ k: '${cluster_name}' }, 7] };
    expect(substitute(template, values).value).toEqual({ '${region}': 'eu-west', n: 3, t: true, z: null, list: [{ k: 'edge-1' }, 7] });
    // A value that looks like a number stays a string.
    expect(substitute({ replicas: '${n}' }, { n: '3' }).value).toEqual({ replicas: '3' });
    // The input is not changed.
    expect(template['${region}']).toBe('${region}');
  });

  test('every unknown name without a default is named, with the first place each is used', () => {
    let err: unknown;
    try {
      substitute({ spec: { a: '${tier}', b: ['${zone}', '${tier}'], c: '${zone:=ok}' } }, values);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(SubstitutionError);
    expect((err as SubstitutionError).missing).toEqual(['tier', 'zone']);
    expect((err as Error).message).toMatch(/^no value for tier \(at spec\.a\), zone \(at spec\.b\[0\]\) and no default/);
    expect((err as Error).message).toContain('--value NAME=VALUE');
  });

  test('malformed references are refused with where they are: unclosed, not a name, shell operators', () => {
    expect(() => substitute({ x: 'a ${region' }, values)).toThrow(/^x: "\$\{" is not closed by "\}"/);
    expect(() => substitute({ x: ['${re-gion}'] }, values)).toThrow(/^x\[0\]: "\$\{re-gion\}" is not a value's name/);
    expect(() => substitute('${region:-x}', values)).toThrow(/"\$\{region:-x\}" is not a value's name/);
    expect(() => substitute('${}', values)).toThrow(/is not a value's name/);
  });

  test('names are looked up as own keys only', () => {
    expect(() => substitute('${constructor}', {})).toThrow(SubstitutionError);
    expect(() => substitute('${toString}', {})).toThrow(/no value for toString/);
  });

  test('the strings may not grow past the bound', () => {
    const big = 'x'.repeat(64 * 1024);
    const many = Array.from({ length: MAX_SUBSTITUTION_GROWTH / big.length + 1 }, () => '${big}');
    expect(() => substitute(many, { big })).toThrow(/grow by more than 1 MiB/);
    expect(substitute(many.slice(0, 10), { big }).value).toHaveLength(10);
  });
});

const template: FleetTemplate = {
  metadata: { labels: { team: 'shop' } },
  spec: { source: { inline: [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'shop', labels: { app: 'shop' } }, data: { region: '${region}' } }] } },
} as unknown as FleetTemplate;
const canary: FleetOverride = {
  clusters: { selector: { matchLabels: { tier: 'canary' } } },
  patches: [{ op: 'add', path: '/spec/source/inline/0/metadata/labels/canary', value: 'true' }],
};
const byName: FleetOverride = { clusters: { names: ['edge-2'] }, patches: [{ op: 'replace', path: '/spec/source/inline/0/data/region', value: 'fixed' }] };
const edge1 = { name: 'edge-1', labels: { tier: 'canary' }, values };
const edge2 = { name: 'edge-2', labels: {}, values: { cluster_name: 'edge-2', region: 'us-east' } };
const inlineOf = (t: FleetTemplate) => t.spec.source.inline![0] as { metadata: { labels: Record<string, string> }; data: Record<string, string> };

describe('overrides', () => {
  test('each applies, in order, to the clusters it selects (by selector, by names, both)', () => {
    expect(overridesOf([canary, byName], edge1)).toEqual([0]);
    expect(overridesOf([canary, byName], edge2)).toEqual([1]);
    expect(overridesOf([{ ...byName, clusters: { names: ['edge-2'], selector: { matchLabels: { tier: 'canary' } } } }], edge2)).toEqual([]);
    const patched = applyOverrides(template, [canary, byName], edge1);
    expect(inlineOf(patched).metadata.labels).toEqual({ app: 'shop', canary: 'true' });
    // A later override sees what an earlier one did.
    const both = applyOverrides(template, [canary, { clusters: { names: ['edge-1'] }, patches: [{ op: 'test', path: '/spec/source/inline/0/metadata/labels/canary', value: 'true' }, { op: 'remove', path: '/spec/source/inline/0/metadata/labels/app' }] }], edge1);
    expect(inlineOf(both).metadata.labels).toEqual({ canary: 'true' });
  });

  test('the template itself is never changed; with no override selected it is returned as it is', () => {
    const before = JSON.stringify(template);
    applyOverrides(template, [canary], edge1);
    expect(JSON.stringify(template)).toBe(before);
    expect(applyOverrides(template, [canary], edge2)).toBe(template);
  });

  test('an operation that does not apply names the override, the operation and its path', () => {
    const missing: FleetOverride = { clusters: { names: ['edge-1'] }, patches: [{ op: 'add', path: '/spec/source/inline/0/data/x', value: 'ok' }, { op: 'replace', path: '/spec/nothing/here', value: 1 }] };
    expect(() => applyOverrides(template, [byName, missing], edge1)).toThrow(OverrideError);
    expect(() => applyOverrides(template, [byName, missing], edge1)).toThrow('overrides[1].patches[1] (replace /spec/nothing/here): the template has no value there');
    const failedTest: FleetOverride = { clusters: { names: ['edge-1'] }, patches: [{ op: 'test', path: '/spec/source/inline/0/data/region', value: 'other' }] };
    expect(() => applyOverrides(template, [failedTest], edge1)).toThrow(/^overrides\[0\]\.patches\[0\] \(test \/spec\/source\/inline\/0\/data\/region\): the test failed/);
  });
});

const data = (extra: Partial<RevisionData> = {}): RevisionData => ({ kind: 'RemoteSync', template, substitute: {}, ...extra });

describe("each cluster's template", () => {
  test('overrides first, then the values: an override may itself use a value', () => {
    const made = clusterTemplate(data({ overrides: [{ clusters: { names: ['edge-1'] }, patches: [{ op: 'add', path: '/metadata/labels/where', value: '${region}' }] }] }), edge1);
    expect(made).toMatchObject({ ok: true, overrides: [0], used: { region: 'eu-west' } });
    if (!made.ok) throw new Error('unreachable');
    expect(made.template.metadata?.labels).toEqual({ team: 'shop', where: 'eu-west' });
    expect(inlineOf(made.template).data.region).toBe('eu-west');
    expect(made.valuesDigest).toBe(valuesDigest({ region: 'eu-west' }));
    expect(made.valuesDigest).toMatch(/^[0-9a-f]{16}$/);
  });

  test('without substitute the strings are left as written, and no digest is given', () => {
    const made = clusterTemplate({ kind: 'RemoteSync', template }, edge1);
    expect(made).toEqual({ ok: true, template, overrides: [] });
  });

  test('a missing value fails the cluster with SubstitutionFailed, naming it; an override that does not apply with OverrideFailed', () => {
    expect(clusterTemplate(data(), { ...edge2, values: { cluster_name: 'edge-2' } })).toEqual({
      ok: false,
      reason: 'SubstitutionFailed',
      message: expect.stringMatching(/^no value for region \(at spec\.source\.inline\[0\]\.data\.region\) and no default.*; nothing is written to this cluster$/),
    });
    expect(clusterTemplate(data({ overrides: [{ clusters: { names: ['edge-2'] }, patches: [{ op: 'remove', path: '/spec/gone' }] }] }), edge2)).toEqual({
      ok: false,
      reason: 'OverrideFailed',
      message: 'overrides[0].patches[0] (remove /spec/gone): the template has no value there; nothing is written to this cluster',
    });
  });

  test('a template an override or a value makes invalid fails the cluster, as does a Secret an override adds inline', () => {
    const badTimeout = clusterTemplate(data({ template: { ...template, spec: { ...template.spec, timeout: '${t}' } } as unknown as FleetTemplate }), { ...edge1, values: { ...values, t: 'soon' } });
    expect(badTimeout).toMatchObject({ ok: false, reason: 'SubstitutionFailed', message: expect.stringMatching(/^with this cluster's values the template is not valid: spec\.timeout: /) });
    const secret: FleetOverride = { clusters: { names: ['edge-1'] }, patches: [{ op: 'add', path: '/spec/source/inline/-', value: { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'creds' } } }] };
    expect(clusterTemplate(data({ overrides: [secret] }), edge1)).toMatchObject({ ok: false, reason: 'OverrideFailed', message: expect.stringContaining('may not hold Secrets inline (inline[1] Secret creds)') });
  });

  test('remembered per cluster and revision while its labels and values stay; made again when they change', () => {
    const templates = new ClusterTemplates();
    const first = templates.of('uid', 'r1', data(), edge1);
    expect(templates.of('uid', 'r1', data(), { ...edge1, values: { ...values } })).toBe(first);
    const moved = templates.of('uid', 'r1', data(), { ...edge1, values: { ...values, region: 'eu-north' } });
    expect(moved).not.toBe(first);
    expect(moved.ok && inlineOf(moved.template).data.region).toBe('eu-north');
    const relabelled = templates.of('uid', 'r1', data({ overrides: [canary] }), { ...edge1, labels: {} });
    expect(relabelled.ok && relabelled.overrides).toEqual([]);
    templates.forget('uid');
    expect(templates.of('uid', 'r1', data(), edge1)).not.toBe(first);
  });
});

describe('the revision', () => {
  const spec = { kind: 'RemoteSync' as const, template };

  test('of a FleetSync with neither overrides nor substitute is that of its kind and template alone (an upgrade rolls nothing)', () => {
    expect(revisionDataOf({ ...spec, overrides: [] })).toEqual(spec);
    expect(templateRevision({ ...spec, overrides: [] })).toBe(templateRevision(spec));
  });

  test('changes with the overrides and with substitute', () => {
    const plain = templateRevision(spec);
    const substituted = templateRevision({ ...spec, substitute: {} });
    const overridden = templateRevision({ ...spec, overrides: [canary] });
    expect(new Set([plain, substituted, overridden]).size).toBe(3);
    expect(revisionDataOf({ ...spec, substitute: {}, overrides: [canary] })).toEqual({ ...spec, substitute: {}, overrides: [canary] });
  });

  test('a ControllerRevision holding overrides and substitute is trusted when it hashes right, and not when they were changed', () => {
    const held = revisionDataOf({ ...spec, substitute: {}, overrides: [canary] });
    const digest = templateRevision(held);
    const revision = (d: unknown) => ({
      apiVersion: 'apps/v1',
      kind: 'ControllerRevision',
      metadata: { name: `shop-${digest}`, annotations: { 'syncprims.dev/fleet-revision': digest }, ownerReferences: [{ apiVersion: 'syncprims.dev/v1alpha1', kind: 'FleetSync', name: 'shop', uid: 'u', controller: true }] },
      data: d,
    });
    expect(revisionTrust(revision(held), { name: 'shop', uid: 'u' })).toEqual({ trusted: true, digest, data: held });
    expect(revisionTrust(revision({ ...held, overrides: [byName] }), { name: 'shop', uid: 'u' })).toMatchObject({ trusted: false, why: expect.stringContaining('hashes to') });
    expect(revisionTrust(revision({ ...held, extra: 1 }), { name: 'shop', uid: 'u' })).toMatchObject({ trusted: false, why: expect.stringContaining('not exactly') });
  });
});

describe('admission', () => {
  const fleet = (extra: Record<string, unknown>) => fleetSyncSpecSchema.safeParse({ clusters: { selector: {} }, kind: 'RemoteSync', template, ...extra });
  const issues = (r: ReturnType<typeof fleet>) => (r.success ? [] : r.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`));

  test('substitute is {} (nothing else yet); overrides are RFC 6902 operations', () => {
    expect(fleet({ substitute: {}, overrides: [canary, byName] }).success).toBe(true);
    expect(issues(fleet({ substitute: { strict: true } }))).toEqual([expect.stringMatching(/^substitute: /)]);
    expect(issues(fleet({ overrides: [{ clusters: {}, patches: [{ op: 'add', path: '/x', value: 1 }] }] }))).toEqual(['overrides.0.clusters: spec.clusters needs a selector, names, or both']);
    expect(issues(fleet({ overrides: [{ clusters: { names: ['a'] }, patches: [] }] }))).toEqual([expect.stringMatching(/^overrides\.0\.patches: /)]);
  });

  test('each operation: a known op, a JSON pointer (no __proto__), a value exactly for add/replace/test, from exactly for move/copy', () => {
    const op = (o: Record<string, unknown>) => issues(fleet({ overrides: [{ clusters: { names: ['a'] }, patches: [o] }] }));
    expect(op({ op: 'add', path: '/spec/x', value: null })).toEqual([expect.stringContaining('need a value')]);
    expect(op({ op: 'add', path: '/spec/x', value: 0 })).toEqual([]);
    expect(op({ op: 'merge', path: '/x', value: 1 })).toEqual([expect.stringMatching(/^overrides\.0\.patches\.0\.op: /)]);
    expect(op({ op: 'add', path: 'spec/x', value: 1 })).toEqual([expect.stringContaining('a JSON pointer')]);
    expect(op({ op: 'add', path: '/__proto__/x', value: 1 })).toEqual([expect.stringContaining('__proto__')]);
    expect(op({ op: 'remove', path: '/x', value: 1 })).toEqual([expect.stringContaining('remove, move and copy take none')]);
    expect(op({ op: 'copy', path: '/x' })).toEqual([expect.stringContaining('move and copy need from')]);
    expect(op({ op: 'move', path: '/x', from: '/y' })).toEqual([]);
  });
});

describe('references where a field has rules of its own', () => {
  const object = (spec: Record<string, unknown>) => ({
    apiVersion: 'syncprims.dev/v1alpha1',
    kind: 'FleetSync',
    metadata: { name: 'shop', namespace: 'fleet' },
    spec: { clusters: { selector: {} }, kind: 'RemoteSync', ...spec },
  });
  const placed = { spec: { source: { inline: [] }, defaultNamespace: '${namespace}', serviceAccountName: '${account:=deployer}' } };

  test('with substitute they are left for each cluster (the template kept as written); without, they are refused', () => {
    const parsed = parseSyncObject('FleetSync', object({ substitute: {}, template: placed }));
    expect(parsed).toMatchObject({ ok: true, value: { spec: { substitute: {}, template: placed } } });
    expect(parseSyncObject('FleetSync', object({ template: placed }))).toMatchObject({ ok: false, message: expect.stringContaining('spec.template.spec.defaultNamespace: must be a DNS-1123 label') });
  });

  test('with substitute, what no reference explains is still refused, and so are Secrets inline', () => {
    const wrong = { spec: { ...placed.spec, timeout: 'soon' } };
    expect(parseSyncObject('FleetSync', object({ substitute: {}, template: wrong }))).toMatchObject({ ok: false, message: expect.stringMatching(/^spec\.template\.spec\.timeout: /) });
    const secret = { spec: { ...placed.spec, source: { inline: [{ apiVersion: 'v1', kind: 'Secret', metadata: { name: 's' } }] } } };
    expect(parseSyncObject('FleetSync', object({ substitute: {}, template: secret }))).toMatchObject({ ok: false, message: expect.stringContaining('may not hold Secrets inline') });
  });

  test("the CRD lets a string holding ${ through a rule of the template's (CEL or pattern), and nowhere else", () => {
    const tolerated = tolerateReferences({ type: 'object', properties: { ns: { type: 'string', maxLength: 63, 'x-kubernetes-validations': [{ rule: "self.matches('^[a-z]+$')", message: 'a name' }] }, p: { type: 'string', pattern: '^[0-9]+s$' }, e: { type: 'string', enum: ['A', 'B'] } } });
    expect(tolerated.properties).toEqual({
      ns: { type: 'string', maxLength: 63, 'x-kubernetes-validations': [{ rule: "self.contains('${') || (self.matches('^[a-z]+$'))", message: 'a name' }] },
      p: { type: 'string', 'x-kubernetes-validations': [{ rule: "self.contains('${') || self.matches('^[0-9]+s$')", message: 'must match ^[0-9]+s$' }] },
      e: { type: 'string', enum: ['A', 'B'] },
    });
    const spec = openAPIV3Schema('FleetSync').properties!.spec!;
    const rulesOf = (node: unknown): string[] => JSON.stringify(node).match(/"rule":"(?:[^"\\]|\\.)*"/g) ?? [];
    expect(rulesOf(spec.properties!.template!.properties!.spec!.properties!.defaultNamespace)).toEqual([expect.stringContaining("self.contains('${') || ")]);
    expect(rulesOf(spec.properties!.clusters).some((r) => r.includes("contains('${')"))).toBe(false);
    expect(rulesOf(openAPIV3Schema('RemoteSync')).some((r) => r.includes("contains('${')"))).toBe(false);
  });
});
