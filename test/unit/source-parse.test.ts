// Parsing manifests as kubectl does: YAML 1.1, several documents, Lists, JSON,
// and errors that name the file, the document and the line.
import { describe, expect, test } from '@jest/globals';
import { checkObjects, parseManifests, SourceError } from '../../src/source/index.js';

function errorOf(fn: () => unknown): SourceError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(SourceError);
    return err as SourceError;
  }
  throw new Error('expected a SourceError, but nothing was thrown');
}

describe('YAML 1.1, as kubectl reads it', () => {
  test('octal modes, yes/no/on/off booleans, hex, and strings that YAML 1.2 would not change', () => {
    const [cm] = parseManifests(
      [
        'apiVersion: v1',
        'kind: Secret',
        'metadata: {name: s}',
        'spec:',
        '  defaultMode: 0644',
        '  a: yes',
        '  b: no',
        '  c: on',
        '  d: off',
        '  e: y',
        '  f: 0x1F',
        '  g: "0644"',
        '  h: 1e3',
        '  i: 0b101',
      ].join('\n'),
      'secret.yaml',
    );
    expect(cm?.spec).toEqual({ defaultMode: 420, a: true, b: false, c: true, d: false, e: true, f: 31, g: '0644', h: 1000, i: 5 });
  });

  test('timestamps and sexagesimal numbers stay strings, as with go-yaml v2', () => {
    const [obj] = parseManifests(
      'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata:\n  date: 2001-12-14\n  ports: 22:22\n  when: 2020-01-01T00:00:00Z\n',
      'c.yaml',
    );
    expect(obj?.data).toEqual({ date: '2001-12-14', ports: '22:22', when: '2020-01-01T00:00:00Z' });
  });

  test('several documents; empty ones and comment-only ones are skipped; merge keys work', () => {
    const text = [
      '# leading comment',
      '---',
      'base: &base {apiVersion: v1, kind: ConfigMap}',
      '<<: *base',
      'metadata: {name: one}',
      '---',
      '---',
      '# only a comment',
      '---',
      'apiVersion: v1',
      'kind: ConfigMap',
      'metadata:',
      '  name: two',
      '...',
    ].join('\n');
    const objs = parseManifests(text, 'many.yaml');
    expect(objs.map((o) => [o.kind, o.metadata.name])).toEqual([
      ['ConfigMap', 'one'],
      ['ConfigMap', 'two'],
    ]);
  });

  test('an empty file or a file of comments has no objects', () => {
    expect(parseManifests('', 'empty.yaml')).toEqual([]);
    expect(parseManifests('# nothing\n---\n', 'comments.yaml')).toEqual([]);
  });

  test('a byte-order mark is ignored', () => {
    expect(parseManifests('\ufeffapiVersion: v1\nkind: ConfigMap\nmetadata: {name: bom}\n', 'bom.yaml')).toHaveLength(1);
  });

  test('.inf and .nan cannot be sent as JSON: named, with the field', () => {
    const err = errorOf(() => parseManifests('apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\nspec: {r: .inf}\n', 'inf.yaml'));
    expect(err.message).toBe('inf.yaml: document 1 (line 1): spec.r: Infinity is not a valid value in Kubernetes (JSON) objects');
  });

  test('an alias bomb is refused', () => {
    const lines = ['a: &a [x, x, x, x, x, x, x, x, x, x]'];
    for (let i = 0; i < 12; i++) {
      const prev = String.fromCharCode(97 + i);
      const next = String.fromCharCode(98 + i);
      lines.push(`${next}: &${next} [*${prev}, *${prev}, *${prev}, *${prev}, *${prev}, *${prev}, *${prev}, *${prev}, *${prev}, *${prev}]`);
    }
    lines.push('apiVersion: v1', 'kind: ConfigMap', 'metadata: {name: bomb}');
    const err = errorOf(() => parseManifests(lines.join('\n'), 'bomb.yaml'));
    expect(err.message).toMatch(/^bomb\.yaml: document 1 \(line 1\): .*alias/i);
  });

  test('a __proto__ key stays data', () => {
    const [obj] = parseManifests('apiVersion: v1\nkind: ConfigMap\nmetadata: {name: p}\ndata:\n  __proto__: x\n', 'p.yaml');
    expect(Object.keys(obj?.data as object)).toEqual(['__proto__']);
    expect(Object.getPrototypeOf(obj?.data)).toBe(Object.prototype);
  });
});

describe('errors name the file, the document and the line', () => {
  test('a YAML syntax error: document number and line:column', () => {
    const text = 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ok}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: [unclosed\n';
    const err = errorOf(() => parseManifests(text, 'apps/broken.yaml'));
    expect(err.message).toMatch(/^apps\/broken\.yaml: document 2 \(line \d+:\d+\): YAML syntax error: /);
    expect(err.message).not.toContain('\n');
  });

  test('a key that is a mapping or a list is refused, as kubectl does, and nothing is written to stderr', async () => {
    const warnings: unknown[] = [];
    const onWarning = (w: unknown) => warnings.push(w);
    process.on('warning', onWarning);
    try {
      for (const [key, what] of [['{ secret: s3cret }', 'mapping'], ['[a, b]', 'list']] as const) {
        const err = errorOf(() => parseManifests(`apiVersion: v1\nkind: ConfigMap\nmetadata: {name: k}\ndata:\n  ? ${key}\n  : x\n`, 'k.yaml'));
        expect(err.message).toBe(`k.yaml: document 1 (line 1): a mapping key is itself a ${what} (invalid map key, as kubectl says)`);
      }
      await new Promise((r) => setImmediate(r)); // process warnings are emitted on a later tick
    } finally {
      process.off('warning', onWarning);
    }
    expect(warnings).toEqual([]);
  });

  test('a duplicate key is an error at its line', () => {
    const err = errorOf(() => parseManifests('apiVersion: v1\nkind: ConfigMap\nmetadata: {name: d}\nkind: Secret\n', 'dup.yaml'));
    expect(err.message).toMatch(/^dup\.yaml: document 1 \(line 4:1\): YAML syntax error: Map keys must be unique/);
  });

  test('a missing metadata.name names the document and the line it starts on', () => {
    const text = 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\n# about b\n\napiVersion: v1\nkind: ConfigMap\nmetadata: {labels: {x: y}}\n';
    const err = errorOf(() => parseManifests(text, 'cms.yaml'));
    expect(err.message).toBe(
      'cms.yaml: document 2 (line 7): ConfigMap has no metadata.name (every object needs apiVersion, kind and metadata.name; generateName is not supported)',
    );
  });

  test.each([
    ['kind: ConfigMap\nmetadata: {name: a}\n', 'missing apiVersion'],
    ['apiVersion: v1\nmetadata: {name: a}\n', 'missing kind'],
    ['apiVersion: v1\nkind: ConfigMap\n', 'ConfigMap has no metadata'],
    ['apiVersion: v1\nkind: ConfigMap\nmetadata: [a]\n', 'ConfigMap: metadata must be a mapping, found a list'],
    ['apiVersion: v1\nkind: ConfigMap\nmetadata: {name: 12}\n', 'ConfigMap: metadata.name must be a string, found a number'],
    ['apiVersion: 1\nkind: ConfigMap\nmetadata: {name: a}\n', 'apiVersion must be a string, found a number'],
    ['- a\n- b\n', 'expected a Kubernetes object (a mapping), found a list'],
    ['just a string\n', 'expected a Kubernetes object (a mapping), found a string (13 characters)'],
  ])('%j is refused: %s', (text, what) => {
    const err = errorOf(() => parseManifests(text, 'f.yaml'));
    expect(err.message).toMatch(new RegExp(`^f\\.yaml: document 1 \\(line 1\\): ${what.replace(/[()[\]{}.*+?^$|\\]/g, '\\$&')}`));
  });
});

describe('Lists', () => {
  test('kind: List is flattened, in order; a null items list is empty', () => {
    const text = [
      'apiVersion: v1',
      'kind: List',
      'items:',
      '- apiVersion: v1',
      '  kind: ConfigMap',
      '  metadata: {name: a}',
      '- apiVersion: v1',
      '  kind: Secret',
      '  metadata: {name: b}',
      '---',
      'apiVersion: v1',
      'kind: List',
      'items: null',
    ].join('\n');
    expect(parseManifests(text, 'list.yaml').map((o) => `${o.kind}/${o.metadata.name}`)).toEqual(['ConfigMap/a', 'Secret/b']);
  });

  test('a typed list (ConfigMapList) gives its kind to items that have none', () => {
    const text = 'apiVersion: v1\nkind: ConfigMapList\nitems:\n- metadata: {name: a}\n- apiVersion: v1\n  kind: Secret\n  metadata: {name: b}\n';
    expect(parseManifests(text, 'typed.yaml').map((o) => `${o.apiVersion} ${o.kind}/${o.metadata.name}`)).toEqual([
      'v1 ConfigMap/a',
      'v1 Secret/b',
    ]);
  });

  test('nested lists are flattened too', () => {
    const text = JSON.stringify({
      apiVersion: 'v1',
      kind: 'List',
      items: [
        { apiVersion: 'v1', kind: 'List', items: [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'deep' } }] },
        { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'flat' } },
      ],
    });
    expect(parseManifests(text, 'nested.json').map((o) => o.metadata.name)).toEqual(['deep', 'flat']);
  });

  test('a bad item names its index and its own line', () => {
    const text = [
      'apiVersion: v1',
      'kind: List',
      'items:',
      '- apiVersion: v1',
      '  kind: ConfigMap',
      '  metadata: {name: a}',
      '- apiVersion: v1',
      '  kind: ConfigMap',
      '  metadata: {}',
    ].join('\n');
    const err = errorOf(() => parseManifests(text, 'list.yaml'));
    expect(err.message).toMatch(/^list\.yaml: document 1 \(line 7\): items\[1\]: ConfigMap has no metadata\.name/);
  });

  test('a kind that merely ends in List, without items, is an ordinary object', () => {
    const [obj] = parseManifests('apiVersion: x.dev/v1\nkind: AllowList\nmetadata: {name: a}\nspec: {}\n', 'a.yaml');
    expect(obj?.kind).toBe('AllowList');
  });
});

describe('JSON', () => {
  test('a JSON object is read as JSON (1e3 and "0644" as JSON says)', () => {
    const [obj] = parseManifests('{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"j"},"spec":{"n":1e3,"s":"0644"}}', 'j.json');
    expect(obj).toEqual({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'j' }, spec: { n: 1000, s: '0644' } });
  });

  test('a JSON syntax error names the line and column', () => {
    const text = '{\n  "apiVersion": "v1",\n  "kind": "ConfigMap",\n  "metadata": {"name": "j"},\n  "data": {"a": }\n}\n';
    const err = errorOf(() => parseManifests(text, 'bad.json'));
    expect(err.message).toBe('bad.json: document 1 (line 5:17): invalid JSON: unexpected "}"');
  });

  test('trailing garbage after a JSON object is an error with a position', () => {
    const err = errorOf(() => parseManifests('{"a": 1}\n{"b": 2}', 'two.json'));
    expect(err.message).toBe('two.json: document 1 (line 2:1): invalid JSON: unexpected "{"');
  });

  test('truncated JSON and bad escapes are located too', () => {
    expect(errorOf(() => parseManifests('{"apiVersion": "v1",\n "kind": ', 't.json')).message).toBe(
      't.json: document 1 (line 2:10): invalid JSON: unexpected end of input',
    );
    expect(errorOf(() => parseManifests('{"a": "x\\q"}', 'e.json')).message).toBe(
      'e.json: document 1 (line 1:10): invalid JSON: unexpected "q"',
    );
  });

  test('a JSON List is flattened', () => {
    const text = JSON.stringify({ apiVersion: 'v1', kind: 'List', items: [{ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'n' } }] });
    expect(parseManifests(text, 'l.json')).toEqual([{ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'n' } }]);
  });
});

describe('limits', () => {
  const many = (n: number): string =>
    Array.from({ length: n }, (_, i) => `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c${i}}`).join('\n---\n');

  test('exactly maxObjects is fine; one more is refused', () => {
    expect(parseManifests(many(5), 'five.yaml', { maxObjects: 5 })).toHaveLength(5);
    const err = errorOf(() => parseManifests(many(6), 'six.yaml', { maxObjects: 5 }));
    expect(err.message).toContain('six.yaml: more than 5 objects (the source limit, --source-max-objects)');
  });

  test('objects inside Lists count', () => {
    const list = JSON.stringify({
      apiVersion: 'v1',
      kind: 'List',
      items: Array.from({ length: 4 }, (_, i) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `c${i}` } })),
    });
    expect(() => parseManifests(list, 'l.json', { maxObjects: 3 })).toThrow(/more than 3 objects/);
  });
});

describe('inline objects are checked like parsed ones', () => {
  test('copies, Lists flattened', () => {
    const given = [
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a' } },
      { apiVersion: 'v1', kind: 'List', items: [{ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'b' } }] },
    ];
    const objs = checkObjects(given, 'spec.source.inline');
    expect(objs.map((o) => o.metadata.name)).toEqual(['a', 'b']);
    objs[0]!.metadata.name = 'changed';
    expect(given[0]!.metadata!.name).toBe('a');
  });

  test('a bad object is named by its position', () => {
    const err = errorOf(() => checkObjects([{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a' } }, { kind: 'Secret' }], 'spec.source.inline'));
    expect(err.message).toBe('spec.source.inline: object 2: missing apiVersion (every object needs apiVersion, kind and metadata.name)');
  });

  test('a value JSON cannot carry (a bigint, found by the property test) is a SourceError naming it', () => {
    expect(errorOf(() => checkObjects([[0n]], 'inline')).message).toBe('inline: object 1: [0]: 0 is not a valid value in Kubernetes (JSON) objects');
    expect(errorOf(() => checkObjects([{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 5n } }], 'inline')).message).toContain('metadata.name: 5 is not a valid value');
  });

  test('maxObjects', () => {
    const objs = Array.from({ length: 3 }, (_, i) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `c${i}` } }));
    expect(() => checkObjects(objs, 'inline', { maxObjects: 2 })).toThrow(SourceError);
  });
});
