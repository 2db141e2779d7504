import type { z } from 'zod';
import { templateProblems, type FleetTemplate } from './fleet.js';
import { issuesLeft } from './fleet-references.js';
import { isSyncKind, type Kind } from './kinds.js';
import { fleetSyncSchema, KIND_SCHEMAS, type FleetSync, type ProxySync, type RemoteSync, type Sync } from './objects.js';

/** Checks an object read from the API server against its kind's schema (for `InvalidSpec`). */

export interface KindTypes {
  Sync: Sync;
  RemoteSync: RemoteSync;
  ProxySync: ProxySync;
  FleetSync: FleetSync;
}

export type ParseResult<T> = { ok: true; value: T } | { ok: false; message: string };

/** Parses one object of a known kind: defaults filled, unknown spec fields dropped. */
export function parseSyncObject<K extends Kind>(kind: K, obj: unknown): ParseResult<KindTypes[K]> {
  const result = KIND_SCHEMAS[kind].object.safeParse(obj);
  if (result.success) return { ok: true, value: result.data as KindTypes[K] };
  if (kind === 'FleetSync' && substitutes(obj)) return parseWithReferences(obj, result.error) as ParseResult<KindTypes[K]>;
  return { ok: false, message: describeIssues(result.error) };
}

function substitutes(obj: unknown): obj is { spec: { template?: unknown } } {
  return (obj as { spec?: { substitute?: unknown } } | null)?.spec?.substitute !== undefined;
}

/**
 * A FleetSync with `substitute` whose only issues are strings holding `${`
 * (fleet-references.ts): parsed with an empty template, then given its own
 * back as written; each cluster's is parsed once its values are in
 * (fleet/cluster-template.ts), with its defaults.
 */
function parseWithReferences(obj: { spec: { template?: unknown } }, error: z.ZodError): ParseResult<FleetSync> {
  const left = issuesLeft(error.issues, obj);
  if (left.length > 0) return { ok: false, message: describeIssues({ issues: left }) };
  const masked = { ...obj, spec: { ...obj.spec, template: { spec: { source: { inline: [] } } } } };
  const parsed = fleetSyncSchema.safeParse(masked);
  if (!parsed.success) return { ok: false, message: describeIssues(parsed.error) };
  const template = obj.spec.template as FleetTemplate;
  const problems = templateProblems(parsed.data.spec.kind, template);
  if (problems.length > 0) return { ok: false, message: problems.map((p) => `spec.template.${p.path.join('.')}: ${p.message}`).join('; ') };
  return { ok: true, value: { ...parsed.data, spec: { ...parsed.data.spec, template } } };
}

/** Parses an object of any of the three sync kinds (Sync, RemoteSync, ProxySync), by its `kind`. */
export function parseAnySyncObject(obj: unknown): ParseResult<Sync | RemoteSync | ProxySync> {
  const kind = (obj as { kind?: unknown } | null)?.kind;
  if (!isSyncKind(kind)) {
    return { ok: false, message: `kind: expected Sync, RemoteSync or ProxySync, got ${String(kind)}` };
  }
  return parseSyncObject(kind, obj);
}

/** `spec.timeout: must be a duration ...; spec.source: ...`: one line, paths first. */
export function describeIssues(error: { issues: readonly z.core.$ZodIssue[] }): string {
  return error.issues
    .map((issue) => {
      const path = issue.path.map((p) => (typeof p === 'number' ? `[${p}]` : `.${String(p)}`)).join('');
      return path ? `${path.replace(/^\./, '')}: ${issue.message}` : issue.message;
    })
    .join('; ');
}
