import { canonicalJson } from '../kube/canonical-json.js';
import type { KubeObject } from '../kube/resources.js';
import { ourEntry, type FieldPath, type FieldSet } from './managed-fields.js';

/**
 * Whether applying a rendered object would change the live one, decided
 * from the live object and our field manager's managedFields entry alone,
 * without asking the API server.
 *
 * `noop: true` only when it is certain: the fields we would apply are
 * exactly the fields our entry owns (at the same apiVersion) and each of
 * our values equals the live value. Anything else is `noop: false` with
 * the reason. `differs` lists the fields where the apply certainly changes
 * the object: a value of ours differs from the live one (unless the server
 * stores it in another form), a field we set is not ours (someone else took
 * it), a field ours is no longer set (the apply removes it, or at least our
 * ownership). Empty, the answer is unsure: the caller asks the API server
 * (a dry run).
 */
export type NoopDecision = { noop: true } | { noop: false; why: string; differs: FieldPath[] };

/** Identity, not content: not in any field set. */
const IDENTITY = new Set(['apiVersion', 'kind']);
const METADATA_IDENTITY = new Set(['name', 'namespace']);

export function decideNoop(rendered: KubeObject, live: KubeObject): NoopDecision {
  const entry = ourEntry(live);
  if (!entry?.fieldsV1) return unsure('we own no field of it');
  if (entry.apiVersion !== rendered.apiVersion) return unsure(`our fields were applied as ${entry.apiVersion ?? 'unknown'}`);
  const walk = new Walk();
  walk.map(contentOf(rendered), live as unknown as Record<string, unknown>, entry.fieldsV1, []);
  if (walk.differs.length > 0) return { noop: false, why: walk.why ?? 'differs', differs: walk.differs };
  if (walk.why) return unsure(walk.why);
  return { noop: true };
}

function unsure(why: string): NoopDecision {
  return { noop: false, why, differs: [] };
}

/** What of a rendered object is in a field set: all but apiVersion, kind, name and namespace. */
function contentOf(obj: KubeObject): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(obj)) if (!IDENTITY.has(k)) out[k] = v;
  const metadata: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(obj.metadata)) if (!METADATA_IDENTITY.has(k)) metadata[k] = v;
  if (Object.keys(metadata).length > 0) out.metadata = metadata;
  else delete out.metadata;
  return out;
}

type Json = Record<string, unknown>;

function isMap(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function isScalar(v: unknown): v is string | number | boolean {
  return typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean';
}

/** The children of a field set node other than `.` (the element itself). */
function childKeys(node: FieldSet): string[] {
  return Object.keys(node).filter((k) => k !== '.');
}

/** Walks the rendered object, the live one and our field set together; the first doubt is kept in `why`. */
class Walk {
  why: string | undefined;
  readonly differs: FieldPath[] = [];

  private doubt(why: string): void {
    this.why ??= why;
  }

  private differ(path: FieldPath, why: string): void {
    this.differs.push(path);
    this.doubt(why);
  }

  map(ours: Json, live: unknown, node: FieldSet, path: FieldPath): void {
    const keys = Object.keys(ours);
    if (keys.length === 0) return this.empty(live, node, isMap, path);
    if (!isMap(live)) return this.differ(path, `not an object at ${path.join('/')}`);
    if (path.length > 0 && childKeys(node).length === 0) return this.atomic(ours, live, path);
    const expected = new Set(keys.map((k) => `f:${k}`));
    for (const k of childKeys(node)) if (!expected.has(k)) this.differ([...path, k], `we own ${[...path, k].join('/')} but no longer set it`);
    for (const k of keys) {
      const child = node[`f:${k}`];
      const at = [...path, `f:${k}`];
      if (!child) this.differ(at, `we do not own ${at.join('/')}`);
      else this.value(ours[k], live[k], child, at);
    }
  }

  private value(ours: unknown, live: unknown, node: FieldSet, path: FieldPath): void {
    if (Array.isArray(ours)) return this.list(ours, live, node, path);
    if (isMap(ours)) return this.map(ours, live, node, path);
    if (!isScalar(ours)) return this.doubt(`null at ${path.join('/')}`);
    if (childKeys(node).length > 0) return this.doubt(`a value where we own an object at ${path.join('/')}`);
    if (ours !== live) this.differ(path, `value differs at ${path.join('/')}`);
  }

  private list(ours: unknown[], live: unknown, node: FieldSet, path: FieldPath): void {
    const children = childKeys(node);
    if (ours.length === 0) return this.empty(live, node, Array.isArray, path);
    if (!Array.isArray(live)) return this.differ(path, `not a list at ${path.join('/')}`);
    if (children.length === 0) return this.atomic(ours, live, path);
    if (children.every((k) => k.startsWith('k:'))) return this.associative(ours, live, node, children, path);
    if (children.every((k) => k.startsWith('v:'))) return this.set(ours, live, children, path);
    this.doubt(`a list of mixed kinds at ${path.join('/')}`);
  }

  /**
   * An empty object or list we set (`data: {}`): the server keeps no value
   * (or an empty one) and our entry owns the field with nothing under it.
   * Applying it again changes nothing, whatever others added under it.
   */
  private empty(live: unknown, node: FieldSet, sameType: (v: unknown) => boolean, path: FieldPath): void {
    if (childKeys(node).length > 0) return this.differ(path, `we own fields under ${path.join('/')} but set it empty`);
    if (live !== undefined && live !== null && !sameType(live)) this.differ(path, `not the same type at ${path.join('/')}`);
  }

  /** An atomic object or list (`f:roleRef: {}`): the whole value is ours, and compared whole. */
  private atomic(ours: unknown, live: unknown, path: FieldPath): void {
    if (canonicalJson(ours) !== canonicalJson(live)) this.differ(path, `value differs at ${path.join('/')}`);
  }

  /** A list of objects identified by keys (`k:{"name":"web"}`): each item is walked as an object. */
  private associative(ours: unknown[], live: unknown[], node: FieldSet, children: string[], path: FieldPath): void {
    const keys = parseKeys(children);
    if (!keys || keys.size !== ours.length) return this.differs.length ? undefined : this.doubt(`list items differ at ${path.join('/')}`);
    let last = -1;
    const seen = new Set<string>();
    for (const item of ours) {
      const key = isMap(item) ? [...keys.entries()].find(([, fields]) => matches(item, fields))?.[0] : undefined;
      if (key === undefined || seen.has(key)) return this.doubt(`an item we set is not one we own at ${path.join('/')}`);
      seen.add(key);
      const at = live.findIndex((l) => isMap(l) && matches(l, keys.get(key)!));
      if (at <= last || live.findIndex((l, i) => i > at && isMap(l) && matches(l, keys.get(key)!)) >= 0) {
        return this.differ([...path, key], `list item ${key} moved, missing or repeated at ${path.join('/')}`);
      }
      last = at;
      this.map(item as Json, live[at], node[key]!, [...path, key]);
    }
  }

  /** A set of scalars (`v:"a"`). */
  private set(ours: unknown[], live: unknown[], children: string[], path: FieldPath): void {
    if (!ours.every(isScalar)) return this.doubt(`a set of non-scalars at ${path.join('/')}`);
    const mine = ours.map((v) => `v:${JSON.stringify(v)}`);
    const owned = new Set(children);
    if (new Set(mine).size !== mine.length || mine.length !== owned.size || !mine.every((v) => owned.has(v))) {
      return this.differ(path, `set items differ at ${path.join('/')}`);
    }
    let last = -1;
    for (const v of ours) {
      const at = live.indexOf(v);
      if (at <= last) return this.differ(path, `set item ${JSON.stringify(v)} moved or missing at ${path.join('/')}`);
      last = at;
    }
  }
}

/** `k:{...}` keys parsed; undefined if any does not parse. */
function parseKeys(children: string[]): Map<string, Json> | undefined {
  const keys = new Map<string, Json>();
  for (const k of children) {
    try {
      const fields = JSON.parse(k.slice(2)) as unknown;
      if (!isMap(fields)) return undefined;
      keys.set(k, fields);
    } catch {
      return undefined;
    }
  }
  return keys;
}

/** An item has every key field with exactly the key's value (a key field the server defaulted is not matched). */
function matches(item: Json, fields: Json): boolean {
  return Object.entries(fields).every(([k, v]) => canonicalJson(item[k]) === canonicalJson(v));
}
