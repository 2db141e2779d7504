import { isCollection, isMap, isSeq, LineCounter, parseAllDocuments, visit, type Document } from 'yaml';
import { KUBECTL_YAML } from '../kube/kubectl-yaml.js';
import type { KubeObject } from '../kube/resources.js';
import { messageOf, SourceError } from './errors.js';
import { jsonErrorOffset, lineColumn } from './json-position.js';
import { SOURCE_LIMIT_FLAGS } from './limits.js';
import { readYamlSubset } from './yaml-subset.js';

/**
 * Manifests as kubectl reads them: YAML 1.1 (`0644` is 420, `yes` is true),
 * several documents per file, empty documents skipped, JSON when the text
 * starts with `{`; `kind: List` and other `*List` kinds with `items` flattened.
 */

export interface ParseOptions {
  /** More objects than this in the text is a SourceError. */
  maxObjects?: number;
  /** Every document by the `yaml` library, none by the subset reader (tests compare the two). */
  fullParser?: boolean;
}

/** One document of a file, before it is checked. */
interface RawDocument {
  /** 1-based position in the file (counting empty documents). */
  index: number;
  /** 1-based line where its content starts. */
  line: number;
  value: unknown;
  /** The line of `items[i]` when the document is a List. */
  itemLine?: (i: number) => number | undefined;
}

/** Where an object sits, for messages: `file: document 2 (line 7): `. */
interface Place {
  file: string;
  /** `document` in a file; `object` in a list given as data. */
  unit: 'document' | 'object';
  doc: number;
  /** Unknown for data that was not parsed here. */
  line?: number;
  /** `items[3]` within a List, if any. */
  within: string;
}

const MAX_LIST_DEPTH = 8;

/** Parses one file's text into objects; every problem is a SourceError naming file, document and line. */
export function parseManifests(text: string, file: string, options: ParseOptions = {}): KubeObject[] {
  const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  if (/^\s*[{[]/.test(body)) return objectsOf(parseJson(body, file), file, options);
  const quick = options.fullParser ? undefined : subsetDocuments(body);
  if (quick) {
    try {
      return objectsOf(quick, file, options);
    } catch (err) {
      // The full parser's documents know their lines: the message is told from them.
      if (!(err instanceof SourceError)) throw err;
    }
  }
  return objectsOf(parseYaml(body, file), file, options);
}

function objectsOf(docs: RawDocument[], file: string, options: ParseOptions): KubeObject[] {
  const out: KubeObject[] = [];
  const max = options.maxObjects ?? Infinity;
  for (const doc of docs) {
    if (doc.value === null || doc.value === undefined) continue;
    const place: Place = { file, unit: 'document', doc: doc.index, line: doc.line, within: '' };
    collect(doc.value, place, doc.itemLine, out, 0);
    if (out.length > max) {
      throw new SourceError(
        `${file}: more than ${max} objects (the source limit, ${SOURCE_LIMIT_FLAGS.maxObjects}): split the manifests into several syncs`,
      );
    }
  }
  return out;
}

function where(p: Place): string {
  const line = p.line === undefined ? '' : ` (line ${p.line})`;
  return `${p.file}: ${p.unit} ${p.doc}${line}: ${p.within ? `${p.within}: ` : ''}`;
}

// ---- YAML ----

function parseYaml(text: string, file: string): RawDocument[] {
  const lineCounter = new LineCounter();
  const docs = yamlStream(text, file, lineCounter);
  const lineAt = (offset: number): number => lineCounter.linePos(offset).line;
  return docs.map((doc, i) => {
    const index = i + 1;
    const line = lineAt(doc.contents?.range[0] ?? doc.range[0]);
    const error = doc.errors[0];
    if (error) {
      const pos = error.linePos?.[0] ?? { line, col: 1 };
      const what = error.message.split('\n')[0]?.replace(/ at line \d+, column \d+:?$/, '') ?? error.code;
      throw new SourceError(`${file}: document ${index} (line ${pos.line}:${pos.col}): YAML syntax error: ${what}`);
    }
    return { index, line, value: yamlValue(doc, `${file}: document ${index} (line ${line})`), itemLine: itemLines(doc, lineAt) };
  });
}

/** A mapping key that is itself a mapping or a list: JSON has no such key, and kubectl refuses it ("invalid map key"). */
function refuseCollectionKeys(doc: Document): void {
  visit(doc, {
    Pair(_, pair) {
      if (isCollection(pair.key)) throw new Error(`a mapping key is itself a ${isMap(pair.key) ? 'mapping' : 'list'} (invalid map key, as kubectl says)`);
    },
  });
}

/**
 * The documents by the subset reader (yaml-subset.ts), those outside it by
 * the full parser; undefined when the text is wholly outside it or a document
 * is wrong, for parseYaml to tell where.
 */
function subsetDocuments(text: string): RawDocument[] | undefined {
  const docs = readYamlSubset(text);
  if (!docs) return undefined;
  const out: RawDocument[] = [];
  for (const [i, doc] of docs.entries()) {
    if ('value' in doc) {
      out.push({ index: i + 1, line: 0, value: doc.value });
      continue;
    }
    const parsed = parseAllDocuments(doc.text, KUBECTL_YAML);
    if (parsed.length > 1 || parsed.some((d) => d.errors.length > 0)) return undefined;
    let value: unknown = null;
    try {
      if (parsed[0]) value = yamlValue(parsed[0], '');
    } catch {
      return undefined;
    }
    out.push({ index: i + 1, line: 0, value });
  }
  return out;
}

function yamlStream(text: string, file: string, lineCounter: LineCounter) {
  try {
    // logLevel error: the library's warnings (a stringified key) went to the process's stderr, content and all.
    return parseAllDocuments(text, { ...KUBECTL_YAML, lineCounter });
  } catch (err) {
    throw new SourceError(`${file}: YAML syntax error: ${messageOf(err)}`, { cause: err });
  }
}

function yamlValue(doc: Document, at: string): unknown {
  try {
    refuseCollectionKeys(doc);
    return jsonValue(doc.toJS({ maxAliasCount: 100 }), '');
  } catch (err) {
    throw new SourceError(`${at}: ${messageOf(err)}`, { cause: err });
  }
}

function itemLines(doc: Document, lineAt: (offset: number) => number): (i: number) => number | undefined {
  return (i) => {
    if (!isMap(doc.contents)) return undefined;
    const items = doc.contents.get('items', true);
    if (!isSeq(items)) return undefined;
    const item = items.items[i] as { range?: [number, number, number] } | undefined;
    return item?.range ? lineAt(item.range[0]) : undefined;
  };
}

/** What JSON can carry: no NaN or Infinity (`.nan`, `.inf`), no bigint; sets, maps and bytes converted. */
function jsonValue(value: unknown, path: string): unknown {
  if ((typeof value === 'number' && !Number.isFinite(value)) || typeof value === 'bigint') {
    throw new Error(`${path || 'the document'}: ${value} is not a valid value in Kubernetes (JSON) objects`);
  }
  if (value instanceof Uint8Array) return Buffer.from(value).toString('base64');
  if (value instanceof Date) return value.toISOString();
  if (value instanceof Set) return jsonValue([...value], path);
  if (value instanceof Map) return jsonValue(Object.fromEntries(value), path);
  if (Array.isArray(value)) return value.map((v, i) => jsonValue(v, `${path}[${i}]`));
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      // defineProperty: a `__proto__` key stays a key instead of changing the prototype.
      Object.defineProperty(out, k, { value: jsonValue(v, path ? `${path}.${k}` : k), enumerable: true, writable: true, configurable: true });
    }
    return out;
  }
  return value;
}

// ---- JSON ----

function parseJson(text: string, file: string): RawDocument[] {
  try {
    return [{ index: 1, line: 1, value: JSON.parse(text) as unknown }];
  } catch (err) {
    // Our own words: V8's message quotes the text, which may come from a Secret.
    throw new SourceError(`${file}: document 1 (line ${jsonErrorWhere(text)}`, { cause: err });
  }
}

/** `line:column): invalid JSON: <what>` of a syntax error, found by a scanner (V8's messages name a position only sometimes). */
function jsonErrorWhere(text: string): string {
  const offset = jsonErrorOffset(text);
  if (offset === undefined) return '1): invalid JSON';
  const what = offset >= text.length ? 'unexpected end of input' : `unexpected ${JSON.stringify(text[offset])}`;
  return `${lineColumn(text, offset)}): invalid JSON: ${what}`;
}

// ---- objects ----

function isRecord(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

function collect(
  value: unknown,
  place: Place,
  itemLine: ((i: number) => number | undefined) | undefined,
  out: KubeObject[],
  depth: number,
): void {
  if (isRecord(value) && isList(value)) {
    if (depth >= MAX_LIST_DEPTH) throw new SourceError(`${where(place)}Lists nested more than ${MAX_LIST_DEPTH} deep`);
    const items = Array.isArray(value.items) ? (value.items as unknown[]) : [];
    items.forEach((item, i) => {
      const line = (depth === 0 ? itemLine?.(i) : undefined) ?? place.line;
      const within = `${place.within ? `${place.within}.` : ''}items[${i}]`;
      collect(withListKind(item, value), { ...place, line, within }, undefined, out, depth + 1);
    });
    return;
  }
  out.push(checkObject(value, place));
}

/** `kind: List` (items may be null), or any `*List` kind with an `items` array. */
function isList(v: Record<string, unknown>): boolean {
  if (typeof v.kind !== 'string') return false;
  if (v.kind === 'List') return v.items === undefined || v.items === null || Array.isArray(v.items);
  return v.kind.endsWith('List') && Array.isArray(v.items);
}

/** Items of a typed list (`ConfigMapList`) may leave out their apiVersion and kind, as the API server does. */
function withListKind(item: unknown, list: Record<string, unknown>): unknown {
  const kind = list.kind as string;
  if (!isRecord(item) || kind === 'List' || item.kind !== undefined || item.apiVersion !== undefined) return item;
  return { apiVersion: list.apiVersion, kind: kind.slice(0, -'List'.length), ...item };
}

const NEEDS = 'every object needs apiVersion, kind and metadata.name';

function checkObject(value: unknown, place: Place): KubeObject {
  const problem = problemOf(value);
  if (problem) throw new SourceError(`${where(place)}${problem}`);
  return value as KubeObject;
}

function problemOf(value: unknown): string | undefined {
  if (!isRecord(value)) return `expected a Kubernetes object (a mapping), found ${typeName(value)}`;
  const problem = fieldProblem(value, 'apiVersion') ?? fieldProblem(value, 'kind');
  if (problem) return problem;
  const kind = value.kind as string;
  const meta = value.metadata;
  if (meta === undefined || meta === null) return `${kind} has no metadata (${NEEDS})`;
  if (!isRecord(meta)) return `${kind}: metadata must be a mapping, found ${typeName(meta)}`;
  if (isMissing(meta.name)) return `${kind} has no metadata.name (${NEEDS}; generateName is not supported)`;
  if (typeof meta.name !== 'string') return `${kind}: metadata.name must be a string, found ${typeName(meta.name)}`;
  if (meta.namespace !== undefined && typeof meta.namespace !== 'string') {
    return `${kind} ${meta.name}: metadata.namespace must be a string, found ${typeName(meta.namespace)}`;
  }
  return undefined;
}

function isMissing(v: unknown): boolean {
  return v === undefined || v === null || v === '';
}

function fieldProblem(obj: Record<string, unknown>, field: 'apiVersion' | 'kind'): string | undefined {
  const v = obj[field];
  if (isMissing(v)) return `missing ${field} (${NEEDS})`;
  if (typeof v !== 'string') return `${field} must be a string, found ${typeName(v)}`;
  return undefined;
}

/**
 * What a value is, never what it says: a source may be a Secret (a password,
 * a private key read as one YAML string) or a URL that answers with anything,
 * and this goes into the status, an Event and the log. The line says where.
 */
function typeName(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'a list';
  if (typeof v === 'object') return 'a mapping';
  if (typeof v === 'string') return `a string (${v.length} characters)`;
  return typeof v === 'number' || typeof v === 'bigint' ? 'a number' : typeof v === 'boolean' ? 'a boolean' : typeof v;
}

/**
 * Checks objects given as data (the `inline` form) as parsed ones are: Lists
 * flattened, apiVersion, kind and metadata.name required. Returns copies.
 */
export function checkObjects(values: unknown[], label: string, options: ParseOptions = {}): KubeObject[] {
  const out: KubeObject[] = [];
  values.forEach((value, i) => {
    let copy: unknown;
    try {
      copy = jsonValue(structuredClone(value), '');
    } catch (err) {
      throw new SourceError(`${label}: object ${i + 1}: ${messageOf(err)}`, { cause: err });
    }
    collect(copy, { file: label, unit: 'object', doc: i + 1, within: '' }, undefined, out, 0);
  });
  const max = options.maxObjects ?? Infinity;
  if (out.length > max) throw new SourceError(`${label}: more than ${max} objects (the source limit, ${SOURCE_LIMIT_FLAGS.maxObjects})`);
  return out;
}

/**
 * The values of a YAML text's documents, empty ones left out, by the subset
 * reader (undefined where it hands the text to the full parser) or by the
 * full parser (which throws a SourceError where the text is wrong). For the
 * tests that compare the two.
 */
export function yamlValues(text: string, reader: 'subset' | 'full'): unknown[] | undefined {
  const docs = reader === 'full' ? parseYaml(text, 'text') : subsetDocuments(text);
  return docs?.map((d) => d.value).filter((v) => v !== null && v !== undefined);
}
