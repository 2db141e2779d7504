// What /debug/cache shows of Secrets (src/runtime/redact.ts): their values
// become their length wherever a Secret is, at any depth.
import { describe, expect, test } from '@jest/globals';
import type { KubeObject } from '../../src/kube/resources.js';
import { LAST_APPLIED, redactSecrets } from '../../src/runtime/redact.js';

const SECRET = { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's' }, data: { password: 'c2VjcmV0' }, stringData: { token: 'hunter2' }, type: 'Opaque' };
const REDACTED = { password: '(redacted: 8 characters)' };
const REDACTED_STRING = { token: '(redacted: 7 characters)' };

const sync = (kind: string, spec: unknown, annotations?: Record<string, string>): KubeObject =>
  ({ apiVersion: 'syncprims.dev/v1alpha1', kind, metadata: { name: 'x', namespace: 'ns', ...(annotations && { annotations }) }, spec }) as KubeObject;

describe('redactSecrets', () => {
  test('a cached Secret: values become their length, kubectl’s copy of it goes, the rest stays', () => {
    const cached = { ...SECRET, metadata: { name: 's', annotations: { [LAST_APPLIED]: JSON.stringify(SECRET), keep: 'me' } } } as KubeObject;
    expect(redactSecrets(cached)).toEqual({ ...SECRET, metadata: { name: 's', annotations: { keep: 'me' } }, data: REDACTED, stringData: REDACTED_STRING });
  });

  test('inline Secrets of a Sync, a RemoteSync, a ProxySync template and a List inside them', () => {
    const list = { apiVersion: 'v1', kind: 'List', items: [SECRET] };
    const cases = [
      sync('Sync', { source: { inline: [SECRET, { kind: 'ConfigMap', data: { a: 'visible' } }] } }),
      sync('RemoteSync', { kubeConfig: { secretRef: { name: 'kc' } }, source: { inline: [list] } }),
      sync('ProxySync', { template: { spec: { source: { inline: [SECRET] } } } }),
    ];
    const text = JSON.stringify(cases.map(redactSecrets));
    expect(text).not.toContain('c2VjcmV0');
    expect(text).not.toContain('hunter2');
    expect(text.match(/\(redacted: 8 characters\)/g)).toHaveLength(3);
    // Not a Secret: as it was.
    expect(text).toContain('"data":{"a":"visible"}');
    expect(redactSecrets(cases[0]!).spec).toEqual({ source: { inline: [{ ...SECRET, data: REDACTED, stringData: REDACTED_STRING }, { kind: 'ConfigMap', data: { a: 'visible' } }] } });
  });

  test('kubectl’s copy of a sync is redacted as the sync is; one that is not JSON is replaced', () => {
    const spec = { source: { inline: [SECRET] } };
    const out = redactSecrets(sync('Sync', spec, { [LAST_APPLIED]: JSON.stringify({ kind: 'Sync', spec }) }));
    const copy = JSON.parse(out.metadata.annotations![LAST_APPLIED]!) as { spec: { source: { inline: { data: unknown }[] } } };
    expect(copy.spec.source.inline[0]!.data).toEqual(REDACTED);
    const broken = redactSecrets(sync('Sync', {}, { [LAST_APPLIED]: '{"kind":"Secret","data":{"a":"hunter2"' }));
    expect(broken.metadata.annotations![LAST_APPLIED]).toBe('(redacted: not JSON, 38 characters)');
  });

  test('leaves the object it was given as it was', () => {
    const obj = sync('Sync', { source: { inline: [SECRET] } });
    const before = JSON.stringify(obj);
    redactSecrets(obj);
    expect(JSON.stringify(obj)).toBe(before);
  });
});
