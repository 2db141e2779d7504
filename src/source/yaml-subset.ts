import { CST, Document, isScalar } from 'yaml';
import { KUBECTL_YAML } from '../kube/kubectl-yaml.js';

/**
 * A fast reader for the part of YAML that manifests use: block mappings and
 * sequences, plain and quoted scalars (over several lines too), literal and
 * folded block scalars, `[]` and `{}`. The `yaml` library reads kube-prometheus
 * (5.6 MB) in about 700 ms, most of it building a document model we throw
 * away; this reads the same in a fraction of that.
 *
 * Exactness is the point: where a document leaves the subset (anchors,
 * aliases, tags, flow collections with content, explicit keys, non-string
 * keys, a `|+` scalar, anything the reader is not sure of) it is handed back
 * as its text, for the full parser, and where the whole text does (directives,
 * `...`, CR line ends, tabs in indentation), `undefined` is returned. Scalars
 * are resolved by the library's own functions (`CST.resolveAsScalar`, its
 * YAML 1.1 schema tags), so a value read here is the value the library gives.
 * test/unit/yaml-subset.test.ts compares the two over the corpus, the
 * examples and thousands of mutations of them.
 */

/** A document read here (`value`), or one to give to the full parser (`text`, its source). */
export type SubsetDocument = { value: unknown } | { text: string };

/** The documents of `text`, or undefined when the text as a whole is for the full parser. */
export function readYamlSubset(text: string): SubsetDocument[] | undefined {
  if (UNSUPPORTED_TEXT.test(text)) return undefined;
  const docs: SubsetDocument[] = [];
  let start = 0;
  let pos = 0;
  let sawMarker = false;
  while (pos <= text.length) {
    const end = lineEnd(text, pos);
    if (text.startsWith('---', pos) && (end === pos + 3 || text[pos + 3] === ' ')) {
      if (!/^--- *(#.*)?$/.test(text.slice(pos, end))) return undefined;
      if (sawMarker || start < pos) docs.push(readDocument(text, start, pos));
      sawMarker = true;
      start = end + 1;
    } else if (text.startsWith('...', pos) || text[pos] === '%') {
      return undefined;
    }
    pos = end + 1;
  }
  if (sawMarker || start < text.length) docs.push(readDocument(text, start, Math.min(text.length, pos - 1)));
  return docs;
}

/** CR line ends, control characters, YAML 1.1's other line breaks (NEL, LS, PS), a BOM inside. */
// eslint-disable-next-line no-control-regex
const UNSUPPORTED_TEXT = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\ufeff]/;

function lineEnd(text: string, pos: number): number {
  const nl = text.indexOf('\n', pos);
  return nl === -1 ? text.length : nl;
}

/** Thrown (one shared instance, no stack) when a document leaves the subset. */
const OUTSIDE = Object.freeze({ outside: true });

function readDocument(text: string, from: number, to: number): SubsetDocument {
  try {
    return { value: new DocumentReader(text, from, to).read() };
  } catch (err) {
    if (err === OUTSIDE) return { text: text.slice(from, to) };
    throw err;
  }
}

const { tags: SCHEMA_TAGS, options: SCHEMA_OPTIONS } = (() => {
  const doc = new Document(null, KUBECTL_YAML);
  // The tags that claim plain scalars by their look (null, bool, int, float), in the library's order.
  return { tags: doc.schema.tags.filter((t) => t.default === true && t.test && !t.collection), options: doc.options };
})();

function outside(): never {
  throw OUTSIDE;
}

/** A plain scalar's value, as the library's schema resolves it. */
function plainValue(source: string): unknown {
  for (const tag of SCHEMA_TAGS) {
    if (tag.test?.test(source)) {
      let value: unknown = tag.resolve(source, outside, SCHEMA_OPTIONS);
      if (isScalar(value)) value = value.value;
      if (typeof value === 'number' && !Number.isFinite(value)) outside();
      if (typeof value !== 'number' && typeof value !== 'boolean' && value !== null) outside();
      return value;
    }
  }
  return source;
}

/** A scalar token's value by the library's resolver; any complaint is outside the subset. */
function resolved(token: CST.FlowScalar | CST.BlockScalar): string {
  const result = CST.resolveAsScalar(token, true, outside);
  if (!result) outside();
  return (result as { value: string }).value;
}

/** Characters a plain scalar may not start with here (indicators, and what the library refuses). */
const PLAIN_START_EXCLUDED = new Set([...',[]{}#&*!|>\'"%@`\t ']);
/** These start a plain scalar only before a non-space (`-1`, `:name`). */
const INDICATOR_BEFORE_SPACE = new Set([...'-?:']);

const SPACE = 32;
const MAX_KEY = 1024;

/**
 * Reads one document, line by line. `indent` is a line's count of leading
 * spaces; a collection's items all start at its indent; a value's
 * continuation lines are indented more than the collection holding it.
 */
class DocumentReader {
  private readonly starts: number[] = [];
  private readonly ends: number[] = [];
  /** Leading spaces; -1 for a blank line. */
  private readonly indents: number[] = [];

  constructor(
    private readonly text: string,
    from: number,
    to: number,
  ) {
    let pos = from;
    while (pos < to) {
      const end = Math.min(lineEnd(text, pos), to);
      let i = pos;
      while (i < end && text.charCodeAt(i) === SPACE) i++;
      this.starts.push(pos);
      this.ends.push(end);
      this.indents.push(i === end ? -1 : i - pos);
      pos = end + 1;
    }
  }

  read(): unknown {
    const first = this.nextContent(0);
    if (first === this.lines) return null;
    if (this.indents[first] !== 0) outside();
    const { value, next } = this.node(first, -1);
    if (this.nextContent(next) !== this.lines) outside();
    if (value === null || typeof value !== 'object') outside();
    return value;
  }

  private get lines(): number {
    return this.starts.length;
  }

  /** The first line from `i` that is neither blank nor a comment. */
  private nextContent(i: number): number {
    while (i < this.lines && (this.indents[i] === -1 || this.charAt(i, this.indents[i]!) === '#')) i++;
    return i;
  }

  private charAt(line: number, col: number): string {
    const p = this.starts[line]! + col;
    return p < this.ends[line]! ? this.text[p]! : '';
  }

  /** The rest of a line from `col`, for the structure (block scalars' content is not read here). */
  private rest(line: number, col: number): string {
    const s = this.text.slice(this.starts[line]! + col, this.ends[line]);
    if (s.includes('\t')) outside();
    return s;
  }

  /** A node whose first line is `i`, starting at its indent, inside a collection at `parent`. */
  private node(i: number, parent: number): { value: unknown; next: number } {
    const col = this.indents[i]!;
    if (this.isSeqItem(i, col)) return this.sequence(i, col);
    if (this.keyAt(i, col)) return this.mapping(i, col);
    if (parent < 0) outside();
    return this.scalar(i, col, parent);
  }

  private isSeqItem(i: number, col: number): boolean {
    if (this.charAt(i, col) !== '-') return false;
    const next = this.charAt(i, col + 1);
    return next === '' || next === ' ';
  }

  private sequence(i: number, indent: number): { value: unknown; next: number } {
    const items: unknown[] = [];
    let line = i;
    for (;;) {
      let col = indent + 1;
      while (this.charAt(line, col) === ' ') col++;
      const item = this.value(line, col, indent, true);
      items.push(item.value);
      line = this.nextContent(item.next);
      if (line === this.lines || this.indents[line]! < indent) break;
      if (this.indents[line]! > indent) outside();
      if (!this.isSeqItem(line, indent)) break;
    }
    return { value: items, next: line };
  }

  /** A mapping whose first key is at column `indent` of line `i` (after `- `, perhaps), the others below it. */
  private mapping(i: number, indent: number): { value: unknown; next: number } {
    const map: Record<string, unknown> = {};
    let line = i;
    for (;;) {
      const key = this.keyAt(line, indent) ?? outside();
      if (Object.prototype.hasOwnProperty.call(map, key.key)) outside();
      let valueCol = key.colon + 1;
      while (this.charAt(line, valueCol) === ' ') valueCol++;
      const item = this.value(line, valueCol, indent, false);
      // defineProperty: a `__proto__` key stays a key instead of changing the prototype.
      Object.defineProperty(map, key.key, { value: item.value, enumerable: true, writable: true, configurable: true });
      line = this.nextContent(item.next);
      if (line === this.lines || this.indents[line]! < indent) break;
      // A sequence at a mapping's indent is the value of the key above it (valueBelow), never an entry.
      if (this.indents[line]! > indent || this.isSeqItem(line, indent)) outside();
    }
    return { value: map, next: line };
  }

  /** `key:` at `col` of line `i` (a plain or quoted key, then `:` and a space or the line's end). */
  private keyAt(i: number, col: number): { key: string; colon: number } | undefined {
    const c = this.charAt(i, col);
    if (c === '"' || c === "'") return this.quotedKey(i, col, c);
    if (c === '' || PLAIN_START_EXCLUDED.has(c) || INDICATOR_BEFORE_SPACE.has(c)) return undefined;
    const line = this.rest(i, col);
    let colon = line.indexOf(': ');
    if (colon === -1 && line.endsWith(':')) colon = line.length - 1;
    if (colon <= 0) return undefined;
    const key = line.slice(0, colon);
    if (key.includes(' #') || key.endsWith(' ') || key.length > MAX_KEY || key === '<<') outside();
    if (plainValue(key) !== key) outside();
    return { key, colon: col + colon };
  }

  private quotedKey(i: number, col: number, quote: string): { key: string; colon: number } | undefined {
    const close = this.closingQuote(i, col, quote);
    if (close === undefined || this.charAt(i, close + 1) !== ':') return undefined;
    const after = this.charAt(i, close + 2);
    if (after !== '' && after !== ' ') return undefined;
    const start = this.starts[i]! + col;
    const source = this.text.slice(start, this.starts[i]! + close + 1);
    return { key: resolved({ type: quoteType(quote), offset: start, indent: col, source }), colon: close + 1 };
  }

  /** The column of the quote closing the one at `col`, on the same line; undefined if it is not there. */
  private closingQuote(i: number, col: number, quote: string): number | undefined {
    const line = this.text.slice(this.starts[i]!, this.ends[i]);
    let p = col + 1;
    for (;;) {
      const q = line.indexOf(quote, p);
      if (q === -1) return undefined;
      if (quote === "'") {
        if (line[q + 1] === "'") {
          p = q + 2;
          continue;
        }
        return q;
      }
      let backslashes = 0;
      while (line[q - 1 - backslashes] === '\\') backslashes++;
      if (backslashes % 2 === 0) return q;
      p = q + 1;
    }
  }

  /**
   * The value that starts at `col` of line `i` (after `key: ` or `- `), in a
   * collection at `parent`; at the line's end, the value is on the lines below.
   */
  private value(i: number, col: number, parent: number, inSequence: boolean): { value: unknown; next: number } {
    const c = this.charAt(i, col);
    if (c === '' || (c === '#' && this.charAt(i, col - 1) === ' ')) return this.valueBelow(i + 1, parent, inSequence);
    if (c === '|' || c === '>') return this.blockScalar(i, col, parent);
    if (c === '"' || c === "'") return this.quoted(i, col, parent);
    if (c === '[' || c === '{') return this.emptyFlow(i, col);
    if (inSequence && this.keyAt(i, col)) return this.mapping(i, col);
    return this.scalar(i, col, parent);
  }

  /** `[]` or `{}` (flow collections with content are outside the subset). */
  private emptyFlow(i: number, col: number): { value: unknown; next: number } {
    const rest = this.rest(i, col);
    if (rest[1] !== (rest[0] === '[' ? ']' : '}') || !isEnd(rest.slice(2))) outside();
    return { value: rest[0] === '[' ? [] : {}, next: i + 1 };
  }

  /** A value on the lines from `i`: a nested node, a sequence at a mapping's own indent, or null. */
  private valueBelow(i: number, parent: number, inSequence: boolean): { value: unknown; next: number } {
    const line = this.nextContent(i);
    if (line < this.lines) {
      const indent = this.indents[line]!;
      if (indent > parent) return this.node(line, parent);
      if (indent === parent && !inSequence && this.isSeqItem(line, indent)) return this.sequence(line, indent);
    }
    return { value: null, next: i };
  }

  /** A plain scalar from `col` of line `i`, continued on lines indented more than `parent`. */
  private scalar(i: number, col: number, parent: number): { value: unknown; next: number } {
    const first = this.plainLine(i, col, false);
    const start = this.starts[i]! + col;
    let end = start + first.length;
    let line = i + 1;
    let next = i + 1;
    let multiline = false;
    if (!first.commented) {
      for (;;) {
        while (line < this.lines && this.indents[line] === -1) line++;
        if (line === this.lines || this.indents[line]! <= parent) break;
        const indent = this.indents[line]!;
        if (this.charAt(line, indent) === '#') break;
        const more = this.plainLine(line, indent, true);
        if (more.commented) outside();
        multiline = true;
        end = this.starts[line]! + indent + more.length;
        line++;
        next = line;
      }
    }
    if (!multiline) return { value: plainValue(first.source), next };
    const source = this.text.slice(start, end);
    return { value: plainValue(resolved({ type: 'scalar', offset: start, indent: parent, source })), next };
  }

  /**
   * One line's part of a plain scalar: up to a comment, trailing spaces
   * dropped. Its first line may not start with an indicator (`-`, `?` and
   * `:` only before a space); a continuation line may, but not with `- `.
   */
  private plainLine(i: number, col: number, continuation: boolean): { source: string; length: number; commented: boolean } {
    const line = this.rest(i, col);
    const c = line[0] ?? '';
    const beforeSpace = line.length === 1 || line[1] === ' ';
    if (INDICATOR_BEFORE_SPACE.has(c) ? beforeSpace : !continuation && PLAIN_START_EXCLUDED.has(c)) outside();
    const hash = line.indexOf(' #');
    const body = (hash === -1 ? line : line.slice(0, hash)).trimEnd();
    if (body.includes(': ') || body.endsWith(':')) outside();
    return { source: body, length: body.length, commented: hash !== -1 };
  }

  /** A single- or double-quoted scalar from `col` of line `i`, perhaps over several lines. */
  private quoted(i: number, col: number, parent: number): { value: unknown; next: number } {
    const quote = this.charAt(i, col);
    let line = i;
    let close = this.closingQuote(i, col, quote);
    while (close === undefined) {
      line++;
      if (line === this.lines) outside();
      if (this.indents[line] !== -1 && this.indents[line]! <= parent) outside();
      close = this.closingQuote(line, -1, quote);
    }
    if (!isEnd(this.rest(line, close + 1))) outside();
    const start = this.starts[i]! + col;
    const source = this.text.slice(start, this.starts[line]! + close + 1);
    if (source.includes('\t')) outside();
    return { value: resolved({ type: quoteType(quote), offset: start, indent: parent, source }), next: line + 1 };
  }

  /** `|` or `>` with an optional `-`: the lines below indented more than `parent`. */
  private blockScalar(i: number, col: number, parent: number): { value: unknown; next: number } {
    const header = this.rest(i, col);
    const m = /^([|>]-?)( +#.*| *)$/.exec(header);
    if (!m) outside();
    const body = this.nextNonBlank(i + 1);
    if (body === this.lines || this.indents[body]! <= parent) outside();
    const indent = this.indents[body]!;
    let last = body;
    let line = body + 1;
    for (; line < this.lines; line++) {
      const lineIndent = this.indents[line]!;
      if (lineIndent === -1) continue;
      if (lineIndent < indent) break;
      last = line;
    }
    // Blank lines after the last content line count for nothing with `|`, `|-`, `>` and `>-` (not `+`); longer ones are content.
    for (let blank = last + 1; blank < line; blank++) if (this.ends[blank]! - this.starts[blank]! > indent) outside();
    const offset = this.starts[i]! + col;
    const source = `${this.text.slice(this.starts[i + 1]!, this.ends[last])}\n`;
    const props = [{ type: 'block-scalar-header' as const, offset, indent: parent, source: m[1]! }];
    return { value: resolved({ type: 'block-scalar', offset, indent: Math.max(parent, 0), props, source }), next: last + 1 };
  }

  private nextNonBlank(i: number): number {
    while (i < this.lines && this.indents[i] === -1) i++;
    return i;
  }
}

function quoteType(quote: string): 'double-quoted-scalar' | 'single-quoted-scalar' {
  return quote === '"' ? 'double-quoted-scalar' : 'single-quoted-scalar';
}

/** Nothing but spaces and perhaps a comment. */
function isEnd(rest: string): boolean {
  const t = rest.trimStart();
  return t === '' || (t[0] === '#' && t.length < rest.length);
}
