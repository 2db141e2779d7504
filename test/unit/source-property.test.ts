// Property tests of the manifest loader (parseManifests, checkObjects) and the
// archive extractor (extractTarGz) on generated input: random bytes and text,
// YAML-ish token soup, deep nesting, alias bombs, mutated valid manifests and
// archives, hostile tar entries. Whatever the input, the only thing that may
// be thrown is a SourceError, no text parses to objects more than EXPANSION
// times its size (alias bombs), what is extracted stays inside the root and
// within the limits of files and bytes, and the memory budget is given back
// whole. No time is measured: a hang is caught by jest's timeout (generous).
//
// A short seeded run by default; SOAK=1 (make soak) runs 100 times as many
// inputs with a fresh seed. fast-check prints the seed and path of a failure:
// add them to REGRESSIONS below so that they are replayed on every run.
import { describe, expect, test } from '@jest/globals';
import fc from 'fast-check';
import { gzipSync } from 'node:zlib';
import { stringify } from 'yaml';
import { ByteBudget, checkObjects, extractTarGz, parseManifests, SourceError } from '../../src/source/index.js';
import { insideRoot } from '../../src/source/archive.js';
import { manifestFilter } from '../../src/source/select.js';
import { tarBytes, type TarEntry } from '../support/tarball.js';

const SOAK = process.env.SOAK === '1';
/** The default run is seeded, so that `make test` is the same every time. */
const SEED = 20261123;
const runs = <Ts>(n: number): fc.Parameters<Ts> => (SOAK ? { numRuns: n * 100 } : { numRuns: n, seed: SEED });

/**
 * Failing inputs found so far, replayed first on every run: `{property, seed, path}`
 * as fast-check printed them ("seed: ..., path: ..."), with what went wrong.
 */
const REGRESSIONS: { property: string; seed: number; path: string; what: string }[] = [
  // checkObjects([[0n]]): JSON.stringify of a bigint threw a TypeError while naming the value.
  { property: 'check-inline', seed: 20261123, path: '190:1', what: 'a bigint inline' },
  // Two files of the same path: the first one's bytes stayed charged to the memory budget after it was replaced.
  { property: 'extract', seed: 473046177, path: '402:115', what: 'a replaced file still counted' },
  // An entry "./\\/C:" was taken as the file "C:": a drive path that shows only once normalized.
  { property: 'extract', seed: -40823350, path: '5718:501', what: 'a drive path behind ./' },
];

/**
 * No input expands: the objects parsed from a text take at most this many
 * characters of JSON per character of the text, plus a little (an alias bomb,
 * the worst the generators make, reaches about 5 with the parser's alias limit;
 * without that limit 12 levels of 12 aliases would never finish).
 */
const EXPANSION = 32;
const EXPANSION_SLACK = 1024;

/** The characters of JSON `value` would take, counted only until `limit` is passed (so a bomb cannot hang the count). */
function jsonSizeOver(value: unknown, limit: number): boolean {
  let size = 0;
  const walk = (v: unknown): boolean => {
    if (v === null || typeof v !== 'object') size += String(v).length + 2;
    else for (const [k, child] of Object.entries(v)) if (((size += k.length + 4), size > limit) || walk(child)) return true;
    return size > limit;
  };
  return walk(value);
}

/** Asserts a property, replaying its regressions first. */
async function check<Ts>(name: string, property: fc.IRawProperty<Ts>, n: number): Promise<void> {
  for (const r of REGRESSIONS.filter((x) => x.property === name)) {
    await fc.assert(property, { seed: r.seed, path: r.path, endOnFailure: true });
  }
  await fc.assert(property, runs<Ts>(n));
}

/** Runs `fn`: it may return or throw a SourceError, and nothing else; returns what it returned, if anything. */
function onlySourceErrors<T>(fn: () => T): T | undefined {
  try {
    return fn();
  } catch (err) {
    if (!(err instanceof SourceError)) throw new Error(`threw ${String(err)} (not a SourceError)`, { cause: err });
    expect(err.message.length).toBeGreaterThan(0);
    return undefined;
  }
}

// ---- generators ----

const VALID = [
  'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  namespace: x\ndata:\n  mode: 0644\n  flag: yes\n',
  'apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Secret\n  metadata: {name: s}\n  stringData: {k: v}\n',
  'apiVersion: v1\nkind: List\nitems:\n- &c {apiVersion: v1, kind: ConfigMap, metadata: {name: c1}}\n- {<<: *c, metadata: {name: c2}}\n',
  '{"apiVersion":"v1","kind":"ConfigMapList","items":[{"metadata":{"name":"j"}}]}',
].join('---\n');

/** Pieces of YAML and JSON syntax, in any order. */
const TOKENS = [
  'apiVersion: v1', 'kind: ConfigMap', 'kind: List', 'items:', 'metadata:', 'name: a', '---', '...', '- ', '? ', ': ',
  '&a ', '*a', '&b ', '*b', '<<: *a', '{', '}', '[', ']', ',', '"', "'", '\\', '|', '>-', '!!binary ', '!!set ', '!!map ',
  '!!str ', '!!int ', '!!timestamp ', '!custom ', '%YAML 1.1\n', '%TAG ! tag:x,2000:\n', '#', '~', 'null', '.inf', '-.nan',
  '0x1F', '0644', '1:20', '2001-12-14t21:59:43.10-05:00', 'yes', '__proto__: {}', 'constructor: x', '\t', '  ', '\n',
  '\r\n', '\ufeff', '\u0000', '\u2028', 'é', '😀', '"\\u0000"', '"\\ud800"',
];
const yamlish = fc.array(fc.constantFrom(...TOKENS), { maxLength: 60 }).map((t) => t.join(''));

/** `[[[...]]]`, `{a: {a: ...}}` or `- - - ...` nested `depth` deep, as YAML or JSON. */
const deep = fc.record({ depth: fc.integer({ min: 1, max: 5_000 }), form: fc.constantFrom('flow-seq', 'flow-map', 'block-seq', 'block-map', 'json') }).map(({ depth, form }) => {
  switch (form) {
    case 'flow-seq':
      return `${'['.repeat(depth)}${']'.repeat(depth)}`;
    case 'flow-map':
      return `${'{a: '.repeat(depth)}1${'}'.repeat(depth)}`;
    case 'block-seq':
      return Array.from({ length: Math.min(depth, 500) }, (_, i) => `${'  '.repeat(i)}-`).join('\n');
    case 'block-map':
      return Array.from({ length: Math.min(depth, 500) }, (_, i) => `${'  '.repeat(i)}a:`).join('\n');
    default:
      return `{"items":${'['.repeat(depth)}${']'.repeat(depth)}}`;
  }
});

/** Billion laughs: each level lists the one before `width` times, by alias. */
function billionLaughs({ levels, width, asObject }: { levels: number; width: number; asObject: boolean }): string {
  const lines = ['a0: &a0 [lol]'];
  for (let i = 1; i <= levels; i++) lines.push(`a${i}: &a${i} [${Array.from({ length: width }, () => `*a${i - 1}`).join(', ')}]`);
  if (asObject) lines.unshift('apiVersion: v1', 'kind: ConfigMap', 'metadata: {name: bomb}');
  return `${lines.join('\n')}\n`;
}
const aliasBomb = fc.record({ levels: fc.integer({ min: 1, max: 12 }), width: fc.integer({ min: 1, max: 12 }), asObject: fc.boolean() }).map(billionLaughs);

/** A valid text with a few random edits: characters inserted, deleted or replaced. */
function mutated(text: string): fc.Arbitrary<string> {
  const edit = fc.record({ at: fc.nat(), kind: fc.constantFrom('insert', 'delete', 'replace'), with: fc.constantFrom(...TOKENS, ...'\n :-[]{}&*!|>"\'#') });
  return fc.array(edit, { minLength: 1, maxLength: 8 }).map((edits) => {
    let s = text;
    for (const e of edits) {
      const at = e.at % (s.length + 1);
      if (e.kind === 'insert') s = s.slice(0, at) + e.with + s.slice(at);
      else if (e.kind === 'delete') s = s.slice(0, at) + s.slice(at + 1);
      else s = s.slice(0, at) + e.with + s.slice(at + e.with.length);
    }
    return s;
  });
}

/** Well-formed manifests of generated objects, as YAML or JSON: the loader must return them all. */
const scalar = fc.oneof(fc.string({ maxLength: 20 }), fc.integer(), fc.boolean(), fc.constant(null));
const generatedObject = fc.record({
  apiVersion: fc.constantFrom('v1', 'apps/v1', 'example.com/v1alpha1'),
  kind: fc.constantFrom('ConfigMap', 'Deployment', 'Widget'),
  metadata: fc.record({ name: fc.stringMatching(/^[a-z][a-z0-9-]{0,20}$/), namespace: fc.option(fc.constantFrom('a', 'b'), { nil: undefined }) }, { requiredKeys: ['name'] }),
  data: fc.dictionary(fc.string({ maxLength: 10 }), scalar, { maxKeys: 5 }),
});
const manifestsOf = ({ objects, asJsonList }: { objects: unknown[]; asJsonList: boolean }): string =>
  asJsonList ? JSON.stringify({ apiVersion: 'v1', kind: 'List', items: objects }) : objects.map((o) => stringify(o, { version: '1.1' })).join('---\n');
const generatedSet = fc.record({ objects: fc.array(generatedObject, { maxLength: 6 }), asJsonList: fc.boolean() });
const generatedManifests = generatedSet.map(manifestsOf);

const anyText = fc.oneof(
  { weight: 2, arbitrary: generatedManifests },
  fc.string({ unit: 'binary', maxLength: 300 }),
  fc.uint8Array({ maxLength: 300 }).map((b) => Buffer.from(b).toString('utf8')),
  yamlish,
  deep,
  aliasBomb,
  { weight: 2, arbitrary: fc.oneof(mutated(VALID), generatedManifests.chain(mutated)) },
  fc.json({ maxDepth: 6 }),
);

// ---- the manifest loader ----

describe('parseManifests and checkObjects: only SourceErrors, nothing expands', () => {
  test('any text', async () => {
    await check(
      'parse-text',
      fc.property(anyText, fc.option(fc.integer({ min: 0, max: 20 }), { nil: undefined }), (text, maxObjects) => {
        const objects = onlySourceErrors(() => parseManifests(text, 'f.yaml', { maxObjects }));
        if (objects === undefined) return;
        // What is returned is what the loader promises: objects with apiVersion, kind and a name.
        if (maxObjects !== undefined) expect(objects.length).toBeLessThanOrEqual(maxObjects);
        expect(jsonSizeOver(objects, EXPANSION * text.length + EXPANSION_SLACK)).toBe(false);
        for (const o of objects) {
          expect(typeof o.apiVersion).toBe('string');
          expect(typeof o.kind).toBe('string');
          expect(typeof o.metadata.name).toBe('string');
          // JSON can carry it: what is applied is sent as JSON.
          expect(() => JSON.stringify(o)).not.toThrow();
        }
      }),
      SOAK ? 300 : 400,
    );
  });

  test('every alias bomb of up to 12 levels of 12 aliases: refused, or parsed to at most EXPANSION times its size', () => {
    let parsed = 0;
    for (let levels = 1; levels <= 12; levels++) {
      for (let width = 1; width <= 12; width++) {
        const text = billionLaughs({ levels, width, asObject: true });
        const objects = onlySourceErrors(() => parseManifests(text, 'f.yaml'));
        if (objects === undefined) continue;
        parsed++;
        expect({ levels, width, over: jsonSizeOver(objects, EXPANSION * text.length + EXPANSION_SLACK) }).toEqual({ levels, width, over: false });
      }
    }
    // The small ones are ordinary manifests: some are parsed, so the bound is checked.
    expect(parsed).toBeGreaterThan(10);
  });

  test('well-formed manifests come back whole, in order', async () => {
    await check(
      'parse-valid',
      fc.property(generatedSet, (set) => {
        const objects = parseManifests(manifestsOf(set), 'f.yaml');
        expect(objects.map((o) => o.metadata.name)).toEqual(set.objects.map((o) => o.metadata.name));
        expect(objects.map((o) => o.kind)).toEqual(set.objects.map((o) => o.kind));
      }),
      100,
    );
  });

  test('any data given inline', async () => {
    const value = fc.oneof(
      fc.anything({ withBigInt: true, withDate: true, withMap: true, withSet: true, withTypedArray: true, withNullPrototype: true, withSparseArray: true, maxDepth: 4 }),
      fc.record({ apiVersion: fc.anything({ maxDepth: 1 }), kind: fc.constantFrom('List', 'ConfigMapList', 'ConfigMap', 1), items: fc.anything({ maxDepth: 3 }), metadata: fc.anything({ maxDepth: 2 }) }),
    );
    await check(
      'check-inline',
      fc.property(fc.array(value, { maxLength: 5 }), (values) => {
        onlySourceErrors(() => checkObjects(values, 'spec.source.inline', { maxObjects: 10 }));
      }),
      200,
    );
  });
});

// ---- the archive extractor ----

const LIMITS = { maxUnpackedBytes: 256 * 1024, maxFiles: 20 };

/** Names a hostile archive might use. */
const entryName = fc.oneof(
  fc.constantFrom('a.yaml', 'apps/web.yaml', './x.yml', 'a/../b.json', '../evil.yaml', 'a/../../evil', '/etc/passwd', 'C:/x', 'a\\..\\..\\x', '.', './', '', 'dir/', 'a//b.yaml', '\u0000.yaml', 'é/😀.yaml'),
  fc.array(fc.constantFrom('a', 'b', '..', '.', '', 'x.yaml', '\\', 'C:'), { minLength: 1, maxLength: 5 }).map((p) => p.join('/')),
  fc.string({ maxLength: 40 }),
);
const entry: fc.Arbitrary<TarEntry> = fc.record({
  name: entryName,
  type: fc.constantFrom('file', 'file', 'file', 'directory', 'symlink', 'link', 'fifo', 'character-device', 'block-device', 'contiguous-file'),
  linkname: entryName,
  data: fc.oneof(fc.constantFrom(VALID, ''), fc.string({ maxLength: 200 }), fc.uint8Array({ maxLength: 2_000 }).map((b) => Buffer.from(b))),
}).map((e) => ({ ...e, type: e.type as TarEntry['type'] }));

/** Entries of an ordinary archive: folders, manifests and other files, links that stay inside. */
const benignEntry: fc.Arbitrary<TarEntry> = fc.record({
  name: fc.array(fc.constantFrom('apps', 'base', 'web', 'a.yaml', 'b.yml', 'c.json', 'README.md', '.'), { minLength: 1, maxLength: 4 }).map((p) => p.join('/')),
  type: fc.constantFrom<TarEntry['type']>('file', 'file', 'file', 'directory', 'symlink', 'link'),
  linkname: fc.constantFrom('a.yaml', 'apps/a.yaml', './b.yml'),
  data: fc.oneof(fc.constant(VALID), generatedManifests, fc.string({ maxLength: 100 })),
});

/** A tar.gz of generated entries, or of a valid tar that was mutated before or after compression. */
const archiveBytes = fc.oneof(
  fc.uint8Array({ maxLength: 2_000 }).map((b) => Buffer.from(b)),
  fc.array(benignEntry, { maxLength: 25 }).map((entries) => ({ entries, flips: [], where: 'none' })),
  fc.array(fc.oneof({ weight: 4, arbitrary: benignEntry }, { weight: 1, arbitrary: entry }), { maxLength: 25 }).chain((entries) =>
    fc.record({
      flips: fc.array(fc.record({ at: fc.nat(), byte: fc.integer({ min: 0, max: 255 }) }), { maxLength: 6 }),
      where: fc.constantFrom('none', 'tar', 'gzip', 'truncate'),
    }).map(({ flips, where }) => ({ entries, flips, where })),
  ),
);

async function buildArchive(input: Buffer | { entries: TarEntry[]; flips: { at: number; byte: number }[]; where: string }): Promise<Buffer> {
  if (Buffer.isBuffer(input)) return input;
  const flip = (b: Buffer): Buffer => {
    const out = Buffer.from(b);
    for (const f of input.flips) if (out.length > 0) out[f.at % out.length] = f.byte;
    return out;
  };
  let tar = await tarBytes(input.entries).catch(() => Buffer.alloc(0));
  if (input.where === 'tar') tar = flip(tar);
  let gz: Buffer = gzipSync(tar);
  if (input.where === 'gzip') gz = flip(gz);
  if (input.where === 'truncate' && input.flips[0]) gz = gz.subarray(0, input.flips[0].at % (gz.length + 1));
  return gz;
}

describe('extractTarGz: only SourceErrors; what comes out stays inside the root and the limits', () => {
  test('random bytes, generated hostile entries, mutated archives', async () => {
    await check(
      'extract',
      fc.asyncProperty(archiveBytes, fc.option(fc.array(entryName, { maxLength: 3 }), { nil: undefined }), async (input, paths) => {
        const data = await buildArchive(input);
        const budget = new ByteBudget(64 * 1024);
        const lease = budget.lease('x.tgz');
        const result = await extractTarGz(data, LIMITS, 'x.tgz', { keep: manifestFilter(paths), lease }).then(
          (files) => files,
          (err: unknown) => {
            if (!(err instanceof SourceError)) throw new Error(`rejected with ${String(err)} (not a SourceError)`, { cause: err });
            return undefined;
          },
        );
        // What is held is what was kept, and never more than the budget.
        const kept = result ? [...result.values()].reduce((n, b) => n + b.length, 0) : 0;
        if (result) expect(lease.held).toBe(kept);
        expect(budget.inUse).toBeLessThanOrEqual(64 * 1024);
        lease.release();
        expect(budget.inUse).toBe(0);
        if (!result) return;
        expect(result.size).toBeLessThanOrEqual(LIMITS.maxFiles);
        expect(kept).toBeLessThanOrEqual(LIMITS.maxUnpackedBytes);
        for (const [name, content] of result) {
          // Normalized, relative, inside the root.
          expect(insideRoot(name)).toBe(name);
          expect(name).not.toBe('');
          if (!manifestFilter(paths)(name)) expect(content.length).toBe(0);
        }
      }),
      SOAK ? 200 : 150,
    );
  });
});

