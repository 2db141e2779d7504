// A FleetSync's substitution (API.md, `substitute`): in every string of a
// template, `${name}` becomes the cluster's value, `${name:=default}` the
// value or else the default, and `$${` a literal `${` (Flux's postBuild
// syntax, without its shell operators). Strings only: keys, numbers, booleans
// and the template's structure never change. Pure.

/** What a value's name may be (the names clusters/cluster-values.ts makes). */
const NAME = /^[A-Za-z0-9_]+$/;
/** How much longer the strings of one cluster's template may grow: past it the child could not be stored (the API server takes about 1.5 MiB an object). */
export const MAX_SUBSTITUTION_GROWTH = 1024 * 1024;

/** Why a template could not be given a cluster's values: what is missing, or where the syntax is wrong. */
export class SubstitutionError extends Error {
  constructor(
    message: string,
    /** The names used without a value or a default (empty for a syntax error). */
    readonly missing: readonly string[] = [],
  ) {
    super(message);
    this.name = 'SubstitutionError';
  }
}

export interface Substituted<T> {
  value: T;
  /** Each name the template used, with what it was given (its value, or its default). */
  used: Record<string, string>;
}

/** `value` with every string substituted from `values`; throws a SubstitutionError naming every missing value (or the first syntax error, with where it is). */
export function substitute<T>(value: T, values: Readonly<Record<string, string>>): Substituted<T> {
  const state: Walk = { values, used: {}, missing: new Map(), growth: 0 };
  const out = walk(value, '', state) as T;
  if (state.missing.size > 0) {
    const names = [...state.missing.keys()].sort();
    const where = names.map((n) => `${n} (at ${state.missing.get(n)})`).join(', ');
    throw new SubstitutionError(`no value for ${where} and no default: set it on the cluster (syncprims cluster add --value NAME=VALUE, or the annotation values.syncprims.dev/NAME) or write \${NAME:=default}`, names);
  }
  return { value: out, used: state.used };
}

interface Walk {
  values: Readonly<Record<string, string>>;
  used: Record<string, string>;
  /** Missing name -> the first place it is used. */
  missing: Map<string, string>;
  growth: number;
}

function walk(value: unknown, path: string, state: Walk): unknown {
  if (typeof value === 'string') return substituteString(value, path, state);
  if (Array.isArray(value)) return value.map((v, i) => walk(v, `${path}[${i}]`, state));
  if (typeof value === 'object' && value !== null) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = walk(v, path === '' ? k : `${path}.${k}`, state);
    return out;
  }
  return value;
}

function substituteString(s: string, path: string, state: Walk): string {
  let i = s.indexOf('$');
  if (i < 0) return s;
  let out = s.slice(0, i);
  while (i < s.length) {
    if (s.startsWith('$${', i)) {
      out += '${';
      i += 3;
    } else if (s.startsWith('${', i)) {
      const end = s.indexOf('}', i + 2);
      if (end < 0) throw new SubstitutionError(`${where(path)}: "\${" is not closed by "}" (write $\${ for a literal \${)`);
      out += valueOf(s.slice(i + 2, end), path, state);
      i = end + 1;
    } else {
      out += s[i];
      i++;
    }
    const next = s.indexOf('$', i);
    const stop = next < 0 ? s.length : next;
    out += s.slice(i, stop);
    i = stop;
  }
  state.growth += out.length - s.length;
  if (state.growth > MAX_SUBSTITUTION_GROWTH) {
    throw new SubstitutionError(`${where(path)}: with this cluster's values the template's strings grow by more than ${MAX_SUBSTITUTION_GROWTH / 1024 / 1024} MiB, more than a child may hold`);
  }
  return out;
}

/** What `${body}` becomes: `name` or `name:=default`. */
function valueOf(body: string, path: string, state: Walk): string {
  const split = body.indexOf(':=');
  const name = split < 0 ? body : body.slice(0, split);
  if (!NAME.test(name)) {
    throw new SubstitutionError(`${where(path)}: "\${${body}}" is not a value's name (letters, digits and _, then optionally :=default); write $\${ for a literal \${`);
  }
  const given = Object.hasOwn(state.values, name) ? state.values[name] : split < 0 ? undefined : body.slice(split + 2);
  if (given === undefined) {
    if (!state.missing.has(name)) state.missing.set(name, where(path));
    return '';
  }
  state.used[name] = given;
  return given;
}

function where(path: string): string {
  return path === '' ? 'the template' : path;
}
