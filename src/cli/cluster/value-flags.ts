// `syncprims cluster add --value key=value`: the cluster's values, as the
// annotations `values.syncprims.dev/<key>` of its Secret (API.md, "Clusters"),
// and how `get clusters` shows them. Pure.
import { CLUSTER_NAME_VALUE, valueName, VALUES_ANNOTATION_PREFIX } from '../../clusters/cluster-values.js';
import { UsageError } from '../errors.js';

/** The name part of an annotation key, as the API server checks it: `<key>` comes after `values.syncprims.dev/`. */
const ANNOTATION_NAME = /^[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/;

/** `--value k=v` (repeated) as the annotations that hold them (`values.syncprims.dev/k: v`); `k=` is the empty string. */
export function valueAnnotations(flags: readonly string[]): Record<string, string> {
  const annotations: Record<string, string> = {};
  /** Value name -> the key that gave it: two keys must not give one name. */
  const names = new Map<string, string>();
  for (const flag of flags) {
    const eq = flag.indexOf('=');
    if (eq < 0) throw new UsageError(`--value ${flag}: want key=value (key= for the empty string)`);
    const key = flag.slice(0, eq);
    checkKey(flag, key);
    const name = valueName(key);
    const other = names.get(name);
    if (other === key) throw new UsageError(`--value ${flag}: ${key} is given twice: give it once`);
    if (other !== undefined) throw new UsageError(`--value ${other}=… and --value ${flag}: both are the value \${${name}} (every character outside [A-Za-z0-9_] is written _): give one of them`);
    names.set(name, key);
    annotations[`${VALUES_ANNOTATION_PREFIX}${key}`] = flag.slice(eq + 1);
  }
  return annotations;
}

function checkKey(flag: string, key: string): void {
  if (key === '') throw new UsageError(`--value ${flag}: the key is empty: want key=value`);
  if (key.includes('/')) throw new UsageError(`--value ${flag}: ${key} holds a '/': a key is the name part of the annotation ${VALUES_ANNOTATION_PREFIX}<key>, which has its prefix already`);
  if (!ANNOTATION_NAME.test(key)) {
    throw new UsageError(`--value ${flag}: ${key} is not a valid key: want at most 63 letters, digits, '-', '_' or '.', beginning and ending with a letter or digit (it is the name part of the annotation ${VALUES_ANNOTATION_PREFIX}<key>)`);
  }
  if (valueName(key) === CLUSTER_NAME_VALUE) throw new UsageError(`--value ${flag}: \${${CLUSTER_NAME_VALUE}} is always the cluster's name; choose another key`);
}

/** The value annotations of `annotations` that `wanted` does not hold: what a new `cluster add` removes. */
export function staleValueAnnotations(annotations: Record<string, string> | undefined, wanted: Record<string, string>): string[] {
  return Object.keys(annotations ?? {}).filter((k) => k.startsWith(VALUES_ANNOTATION_PREFIX) && !(k in wanted));
}

/** A value shown in a table is cut here; the column, past VALUES_WIDTH. */
const VALUE_WIDTH = 24;
const VALUES_WIDTH = 80;

/** `k=v,k2=v2` of a cluster's values for a table: cluster_name left out (it is the NAME column), by name, each value and the whole cut with `…`. */
export function valuesCell(values: Readonly<Record<string, string>>): string {
  const text = Object.entries(values)
    .filter(([k]) => k !== CLUSTER_NAME_VALUE)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([k, v]) => `${k}=${cut(oneLine(v), VALUE_WIDTH)}`)
    .join(',');
  return cut(text, VALUES_WIDTH);
}

function cut(text: string, width: number): string {
  const chars = [...text];
  return chars.length <= width ? text : `${chars.slice(0, width - 1).join('')}…`;
}

/** A value's newlines and tabs (which would break the table's rows) as spaces; other control characters go at the output filter (sanitize.ts). */
function oneLine(text: string): string {
  return text.replace(/[\r\n\t]+/g, ' ');
}
