import type { z } from 'zod';
import { isSyncKind, type Kind } from './kinds.js';
import { KIND_SCHEMAS, type FleetSync, type ProxySync, type RemoteSync, type Sync } from './objects.js';

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
  return { ok: false, message: describeIssues(result.error) };
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
export function describeIssues(error: z.ZodError): string {
  return error.issues
    .map((issue) => {
      const path = issue.path.map((p) => (typeof p === 'number' ? `[${p}]` : `.${String(p)}`)).join('');
      return path ? `${path.replace(/^\./, '')}: ${issue.message}` : issue.message;
    })
    .join('; ');
}
