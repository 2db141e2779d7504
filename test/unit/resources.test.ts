import { describe, expect, test } from '@jest/globals';
import { collectionPath, objectPath, splitApiVersion, type ResourceInfo } from '../../src/kube/resources.js';
import { apiErrorFrom } from '../../src/kube/errors.js';

const configMaps: ResourceInfo = { group: '', version: 'v1', kind: 'ConfigMap', resource: 'configmaps', namespaced: true };
const crds: ResourceInfo = {
  group: 'apiextensions.k8s.io',
  version: 'v1',
  kind: 'CustomResourceDefinition',
  resource: 'customresourcedefinitions',
  namespaced: false,
};

describe('resource paths', () => {
  test('splits core and named API versions', () => {
    expect(splitApiVersion('v1')).toEqual({ group: '', version: 'v1' });
    expect(splitApiVersion('apps/v1')).toEqual({ group: 'apps', version: 'v1' });
  });

  test('builds collection paths, namespaced and across namespaces', () => {
    expect(collectionPath(configMaps, 'team-a')).toBe('/api/v1/namespaces/team-a/configmaps');
    expect(collectionPath(configMaps)).toBe('/api/v1/configmaps');
    expect(collectionPath(crds, 'ignored')).toBe('/apis/apiextensions.k8s.io/v1/customresourcedefinitions');
  });

  test('builds object paths and refuses a namespaced object without a namespace', () => {
    expect(objectPath(configMaps, 'a b', 'ns')).toBe('/api/v1/namespaces/ns/configmaps/a%20b');
    expect(objectPath(crds, 'x.example.com')).toBe('/apis/apiextensions.k8s.io/v1/customresourcedefinitions/x.example.com');
    expect(() => objectPath(configMaps, 'orphan')).toThrow('ConfigMap orphan is namespaced but has no namespace');
  });
});

describe('API errors', () => {
  test('carry the Status reason and message, and Retry-After in seconds', () => {
    const body = JSON.stringify({ kind: 'Status', reason: 'TooManyRequests', message: 'slow down' });
    const err = apiErrorFrom(429, '3', body, 'GET /api/v1/pods');
    expect(err).toMatchObject({ status: 429, reason: 'TooManyRequests', retryAfterSeconds: 3 });
    expect(err.message).toBe('GET /api/v1/pods: slow down');
    expect(err.tooManyRequests).toBe(true);
  });

  test('keep a non-JSON body as the message and ignore a Retry-After that is a date', () => {
    const err = apiErrorFrom(502, 'Wed, 21 Oct 2026 07:28:00 GMT', 'bad gateway', 'GET /x');
    expect(err).toMatchObject({ status: 502, reason: 'HTTP502', retryAfterSeconds: undefined });
    expect(err.message).toBe('GET /x: bad gateway');
  });
});
