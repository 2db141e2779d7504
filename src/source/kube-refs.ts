import type { Requester } from '../kube/client.js';
import { ApiError } from '../kube/errors.js';
import { CORE, objectPath } from '../kube/resources.js';
import { messageOf, SourceError } from './errors.js';

/**
 * Reading the ConfigMaps, Secrets and Flux objects a source names, as the
 * sync's account when it has one (API.md: a sync reads only what its account
 * may read), else as the operator.
 */

/** Who reads: a client, and the service account it acts as (`namespace/name`), if any. */
export interface SourceReader {
  client: Requester;
  /** The account the client impersonates, for messages: `team-a/deployer`. */
  account?: string;
}

export interface ObjectRef {
  apiVersion: string;
  kind: string;
  name: string;
  namespace: string;
}

/** `ConfigMap team-a/manifests`. */
export function describeRef(ref: ObjectRef): string {
  return `${ref.kind} ${ref.namespace}/${ref.name}`;
}

/** GETs an object; a missing or unreadable one is a SourceError that says so. */
export async function getReferenced<T>(
  reader: SourceReader,
  path: string,
  ref: ObjectRef,
  field: string,
  signal?: AbortSignal,
): Promise<T> {
  try {
    return await reader.client.request<T>({ path, timeoutMs: 30_000, signal });
  } catch (err) {
    const what = describeRef(ref);
    if (err instanceof ApiError && err.notFound) {
      throw new SourceError(`${what} not found: create it, or fix ${field}`, { cause: err });
    }
    if (err instanceof ApiError && err.status === 403) throw forbidden(reader, what, field, err);
    throw new SourceError(`reading ${what}: ${messageOf(err)}`, { cause: err });
  }
}

/** A read refused by RBAC: who may not do what, and what to grant. */
function forbidden(reader: SourceReader, what: string, field: string, err: ApiError): SourceError {
  const message = reader.account
    ? `service account ${reader.account} may not get ${what} (a sync reads its source as its service account): grant that account get on it, or change ${field} (${err.message})`
    : `not allowed to read ${what}: grant the operator get on it (${err.message})`;
  return new SourceError(message, { cause: err });
}

interface ConfigMapLike {
  data?: Record<string, string>;
  binaryData?: Record<string, string>;
}

/** The keys and values of a ConfigMap (data and binaryData) or a Secret (data, base64), sorted by key. */
export async function readKeys(
  reader: SourceReader,
  ref: ObjectRef,
  field: string,
  signal?: AbortSignal,
): Promise<[string, Buffer][]> {
  const secret = ref.kind === 'Secret';
  const path = objectPath(secret ? CORE.secrets : CORE.configMaps, ref.name, ref.namespace);
  const obj = await getReferenced<ConfigMapLike>(reader, path, ref, field, signal);
  const entries: [string, Buffer][] = [];
  for (const [k, v] of Object.entries(obj.data ?? {})) {
    entries.push([k, secret ? Buffer.from(v, 'base64') : Buffer.from(v, 'utf8')]);
  }
  for (const [k, v] of Object.entries(obj.binaryData ?? {})) entries.push([k, Buffer.from(v, 'base64')]);
  return entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

/** One key of a ConfigMap or Secret; a missing key is a SourceError listing the keys there are. */
export async function readKey(
  reader: SourceReader,
  ref: ObjectRef,
  key: string,
  field: string,
  signal?: AbortSignal,
): Promise<Buffer> {
  const entries = await readKeys(reader, ref, field, signal);
  const found = entries.find(([k]) => k === key);
  if (!found) {
    const keys = entries.map(([k]) => k);
    throw new SourceError(
      `${describeRef(ref)} has no key ${JSON.stringify(key)} (keys: ${keys.length ? keys.join(', ') : 'none'}): fix ${field}`,
    );
  }
  return found[1];
}
