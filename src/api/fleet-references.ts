// A FleetSync template with `substitute` holds `${name}` references in strings
// whose fields have rules of their own (`defaultNamespace: ${namespace}` is no
// namespace name yet): such a string is checked once the cluster's values are
// in (fleet/cluster-template.ts), not at admission. Here: the CRD's rules of
// the template's strings made to let a reference through, and the parse of a
// FleetSync that leaves its references for later.
import type { z } from 'zod';
import { CEL_KEY, type CelRule } from './cel.js';
import type { JSONSchemaProps } from './json-schema.js';

/** Whether a string holds a reference: substitution would change it. */
export function holdsReference(value: unknown): value is string {
  return typeof value === 'string' && value.includes('${');
}

const TOLERATE = "self.contains('${') || ";

/**
 * The schema of the template with every string rule (CEL, `pattern`,
 * `format`) satisfied by a string holding `${` too; types, required fields,
 * lengths and enums stay (a choice among words, such as a deletionPolicy, is
 * not substituted: an unbounded string in a CEL rule is past its cost budget).
 * Applied to the FleetSync CRD's `spec.template`.
 */
export function tolerateReferences(node: JSONSchemaProps): JSONSchemaProps {
  const out: JSONSchemaProps = { ...node };
  if (out.type === 'string') {
    const rules = ((out[CEL_KEY] as CelRule[] | undefined) ?? []).map((r) => ({ ...r, rule: `${TOLERATE}(${r.rule})` }));
    if (typeof out.pattern === 'string') rules.push({ rule: `${TOLERATE}self.matches(${celString(out.pattern)})`, message: `must match ${out.pattern}` });
    delete out.pattern;
    delete out.format;
    if (rules.length > 0) out[CEL_KEY] = rules;
  }
  if (out.properties) out.properties = Object.fromEntries(Object.entries(out.properties).map(([k, v]) => [k, tolerateReferences(v)]));
  if (out.items) out.items = tolerateReferences(out.items);
  if (typeof out.additionalProperties === 'object') out.additionalProperties = tolerateReferences(out.additionalProperties);
  return out;
}

function celString(s: string): string {
  return `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}

/**
 * The issues of a parse that a template's references explain: at a path
 * whose value in `raw` is a string holding `${` (checked per cluster, once
 * substituted). The others stand.
 */
export function issuesLeft(issues: readonly z.core.$ZodIssue[], raw: unknown): z.core.$ZodIssue[] {
  return issues.filter((issue) => !holdsReference(valueAt(raw, issue.path)));
}

function valueAt(raw: unknown, path: readonly PropertyKey[]): unknown {
  let at = raw;
  for (const key of path) {
    if (typeof at !== 'object' || at === null) return undefined;
    at = (at as Record<PropertyKey, unknown>)[key];
  }
  return at;
}
