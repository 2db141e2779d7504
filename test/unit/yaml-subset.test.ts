// The subset reader (src/source/yaml-subset.ts) against the `yaml` library:
// wherever the reader gives values, the library gives the same values and no
// error. Over the real-world sets, the examples, hand-written edge cases and
// thousands of random mutations of them.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, test } from '@jest/globals';
import { parseManifests, SourceError } from '../../src/source/index.js';
import { yamlValues } from '../../src/source/parse.js';
import { readYamlSubset } from '../../src/source/yaml-subset.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

// Not YAML: Helm charts' templates (Go templates) and values beside them.
const NOT_YAML = ['test/fixtures/helm/', 'examples/helm/web/'].map((dir) => path.join(ROOT, dir));

function yamlFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = path.join(dir, name);
    if (NOT_YAML.some((skip) => `${p}/`.startsWith(skip))) return [];
    if (statSync(p).isDirectory()) return yamlFiles(p);
    return /\.ya?ml$/.test(name) ? [p] : [];
  });
}

const FILES = [...yamlFiles(path.join(ROOT, 'test', 'fixtures')), ...yamlFiles(path.join(ROOT, 'examples'))].sort();

type Verdict = { kind: 'values'; values: unknown[] } | { kind: 'error'; message: string };

function full(text: string): Verdict {
  try {
    return { kind: 'values', values: yamlValues(text, 'full') ?? [] };
  } catch (err) {
    if (!(err instanceof SourceError)) throw err;
    return { kind: 'error', message: err.message };
  }
}

/** True when the subset reader gave values (then they must be the library's); false when it handed the text over. */
function agrees(text: string): boolean {
  const subset = yamlValues(text, 'subset');
  if (subset === undefined) return false;
  const expected = full(text);
  if (expected.kind === 'error') throw new Error(`the subset reader accepted a text the library refuses (${expected.message}):\n${text}`);
  try {
    expect(subset).toStrictEqual(expected.values);
  } catch (err) {
    throw new Error(`the subset reader's values differ from the library's for:\n${text}\n${String(err)}`);
  }
  return true;
}

describe('the subset reader gives what the yaml library gives', () => {
  test('every file of the corpus, the examples and the fixtures, most of their documents read by the subset reader', () => {
    expect(FILES.length).toBeGreaterThan(100);
    let docs = 0;
    let handedOver = 0;
    for (const file of FILES) {
      const text = readFileSync(file, 'utf8');
      expect(agrees(text)).toBe(true);
      const read = readYamlSubset(text) ?? [];
      docs += read.length;
      handedOver += read.filter((d) => 'text' in d).length;
      // And as objects, with the same errors where a file is not a set of manifests.
      const viaSubset = outcome(() => parseManifests(text, file));
      expect(viaSubset).toStrictEqual(outcome(() => parseManifests(text, file, { fullParser: true })));
    }
    expect(docs).toBeGreaterThan(150);
    expect(handedOver / docs).toBeLessThan(0.05);
  });

  // `subset`: every document read by the subset reader; `library`: some or all handed to the library.
  test.each([
    ['plain scalars of every YAML 1.1 type', 'subset', 'a: yes\nb: No\nc: ON\nd: 0644\ne: 0x1f\nf: 1e3\ng: -1\nh: ~\ni: null\nj:\nk: 1.5\nl: .5\nm: 0b11\nnn: +12\no: 1_000\np: y\nq: 2024-01-01\nr: 1:20\ns: "yes"\nt: \'0644\'\n'],
    ['values with colons, hashes and indicators inside', 'subset', 'url: http://x/y#frag\nrecord: :node:sum\nneg: -foo\nq: ?x\ntext: a, b [c] {d}\nk8s.io/name: x\n"quoted: key": 1\n\'single\': 2\n'],
    ['comments everywhere', 'subset', '# head\na: 1 # one\n  # indented\nb:\n  # before\n  c: 2\n# tail\n'],
    ['multi-line plain scalars', 'subset', 'a: one\n  two\n\n  three\nb:\n  four\n   five\nc:\n- six\n  seven\n- "q"\n'],
    ['continuation lines that start with indicators', 'subset', 'a: one (e.g.\n  "2m", "1h")\nb: x\n  [y]\n  -z\n  :w\n'],
    ['a continuation line that starts with `- `', 'library', 'a: x\n  - z\n'],
    ['multi-line quoted scalars', 'subset', 'a: \'one\n  two\n\n  it\'\'s\'\nb: "x\\\n  y\\n\n  z"\nc: "tab\\tescape \\u00e9"\n'],
    ['literal and folded block scalars', 'subset', 'a: |\n  x\n   y\n\n  z\nb: |-\n  x\n\n\nc: >\n  folded\n  line\n\n  para\n    more\n  back\nd: >-\n  x\n  y\ne: | # c\n  # not a comment\n'],
    ['block scalars with blank lines of every length', 'subset', 'a: |\n\n  x\n   \n    \n  y\n \nb: 1\nc: |-\n  x\n  \n'],
    ['a block scalar that keeps its final blank lines (`|+`)', 'library', 'a: |+\n  x\n\nb: 1\n'],
    ['a block scalar whose last lines are spaces, more than its indentation', 'library', 'a: |\n  x\n     \nb: 1\n'],
    ['sequences of mappings, and sequences at a key\'s indent', 'subset', 'a:\n- b\n- c: 1\n  d: 2\n-\n  - e\n-\ng:\n  -   h: 1\n      i: 2\n'],
    ['a sequence in a sequence on one line', 'library', '- - f\n'],
    ['empty flow collections', 'subset', 'a: []\nb: {}\nc: [] # c\nd:\n-\n- []\n'],
    ['flow collections with content', 'library', 'e: {a: 1}\nf: [1, 2]\n'],
    ['keys that are not plain strings', 'library', 'true: 1\n1: 2\nnull: 3\n~: 4\ny: 5\n<<: {a: 1}\n'],
    ['several documents, empty ones and comments', 'subset', '---\n# only a comment\n---\na: 1\n--- # c\nb: 2\n---\n\n---\n- 1\n'],
    ['a duplicate key', 'library', 'a: 1\na: 2\n'],
    ['a nested mapping on one line', 'library', 'a: b: c\n'],
    ['bad indentation', 'library', 'a:\n  b: 1\n c: 2\n'],
    ['a tab in the indentation', 'library', 'a:\n\tb: 1\n'],
    ['anchors, aliases and tags', 'library', 'a: &x 1\nb: *x\nc: !!str 2\nd: !!binary aGk=\n'],
    ['a document marker inside a block scalar', 'subset', 'a: |\n  x\n---\nb: 1\n'],
    ['an unclosed quote', 'library', 'a: "x\nb: 1\n'],
    ['`__proto__` as a key', 'subset', '__proto__: 1\nb:\n  __proto__: 2\n'],
    ['NaN and infinity', 'library', 'a: .nan\nb: .inf\n'],
    ['a scalar document', 'library', 'just text\n'],
    ['a document that starts indented', 'library', '  a: 1\n  b: 2\n'],
    ['directives', 'library', '%YAML 1.1\n---\na: 1\n'],
    ['CR LF line ends', 'library', 'a: 1\r\nb: 2\r\n'],
  ])('%s: read by the %s', (_, reader, text) => {
    const docs = readYamlSubset(text);
    expect(docs !== undefined && docs.every((d) => 'value' in d)).toBe(reader === 'subset');
    agrees(text);
  });

  test('random mutations of real documents: never a value the library would not give', () => {
    const random = mulberry32(20261126);
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)]!;
    const sources = FILES.map((f) => readFileSync(f, 'utf8').split('\n'));
    let accepted = 0;
    const runs = 8000;
    for (let n = 0; n < runs; n++) {
      const lines = window(pick(sources), random);
      const mutations = 1 + Math.floor(random() * 3);
      for (let m = 0; m < mutations; m++) mutate(lines, random, pick);
      if (agrees(lines.join('\n'))) accepted++;
    }
    // The comparison means something only if the reader takes a fair share of the mutants.
    expect(accepted).toBeGreaterThan(runs / 4);
  });
});

function outcome(fn: () => unknown): unknown {
  try {
    return { value: fn() };
  } catch (err) {
    return { error: String(err) };
  }
}

/** 5 to 60 lines of a file, from a line at indent 0 where there is one. */
function window(lines: string[], random: () => number): string[] {
  const size = 5 + Math.floor(random() * 55);
  let start = Math.floor(random() * Math.max(1, lines.length - size));
  while (start > 0 && /^[ #-]/.test(lines[start] ?? '')) start--;
  return lines.slice(start, start + size);
}

const CHARS = [' ', '  ', '+', '|+', '>', ':', ': ', '-', '- ', '#', ' #', '"', "'", '|', '>', '|-', '\t', '[', ']', '{', '}', ',', '&', '*', '!', '?', '%', '@', '`', '\\', 'a', '0', 'yes', '---', '...', '\r'] as const;

function mutate(lines: string[], random: () => number, pick: <T>(xs: readonly T[]) => T): void {
  const i = Math.floor(random() * lines.length);
  const line = lines[i] ?? '';
  const at = Math.floor(random() * (line.length + 1));
  switch (Math.floor(random() * 8)) {
    case 0: // insert characters
      lines[i] = line.slice(0, at) + pick(CHARS) + line.slice(at);
      break;
    case 1: // delete a few
      lines[i] = line.slice(0, at) + line.slice(at + 1 + Math.floor(random() * 3));
      break;
    case 2: // replace one
      lines[i] = line.slice(0, at) + pick(CHARS) + line.slice(at + 1);
      break;
    case 3: // indent or outdent
      lines[i] = random() < 0.5 ? ` ${line}` : line.replace(/^ {1,2}/, '');
      break;
    case 4: // duplicate a line
      lines.splice(i, 0, line);
      break;
    case 5: // drop a line
      lines.splice(i, 1);
      break;
    case 6: // a blank line, with some spaces
      lines.splice(i, 0, ' '.repeat(Math.floor(random() * 24)));
      break;
    default: // join with the next line
      lines.splice(i, 2, `${line}${pick([' ', '', ' # '])}${(lines[i + 1] ?? '').trimStart()}`);
  }
}

/** A small seeded PRNG, so that a failure can be reproduced. */
function mulberry32(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
