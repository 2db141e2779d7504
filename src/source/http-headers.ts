import http from 'node:http';
import { SourceError } from './errors.js';
import { describeRef, readKeys, type ObjectRef, type SourceReader } from './kube-refs.js';

/** Every key of the Secret is a header; values are trimmed, and never shown in messages. */
export async function secretHeaders(reader: SourceReader, namespace: string, name: string, signal?: AbortSignal): Promise<Record<string, string>> {
  const ref: ObjectRef = { apiVersion: 'v1', kind: 'Secret', name, namespace };
  const headers: Record<string, string> = {};
  for (const [key, data] of await readKeys(reader, ref, 'spec.source.http.headersSecretRef.name', signal)) {
    const value = data.toString('utf8').trim();
    try {
      http.validateHeaderName(key);
      http.validateHeaderValue(key, value);
    } catch {
      throw new SourceError(`${describeRef(ref)} key ${JSON.stringify(key)}: not a valid HTTP header name or value`);
    }
    headers[key] = value;
  }
  return headers;
}
