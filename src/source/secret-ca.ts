import type { KeyRef } from '../api/source.js';
import { SourceError } from './errors.js';
import { describeRef, readKey, type ObjectRef, type SourceReader } from './kube-refs.js';

/** The PEM CA bundle in a Secret's key (`ca.crt` unless the ref names one), read as the sync's reader. */
export async function secretCa(reader: SourceReader, namespace: string, keyRef: KeyRef, field: string, signal?: AbortSignal): Promise<string> {
  const ref: ObjectRef = { apiVersion: 'v1', kind: 'Secret', name: keyRef.name, namespace };
  const key = keyRef.key ?? 'ca.crt';
  const pem = (await readKey(reader, ref, key, field, signal)).toString('utf8');
  if (!pem.includes('-----BEGIN CERTIFICATE-----')) {
    throw new SourceError(`${describeRef(ref)} key ${key}: not a PEM certificate bundle (-----BEGIN CERTIFICATE-----)`);
  }
  return pem;
}
