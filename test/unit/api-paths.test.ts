// One way to build an API path (src/kube/paths.ts): every segment checked and
// encoded, so that a name cannot leave the collection it names; and nothing
// else in src/ builds one.
import { describe, expect, test } from '@jest/globals';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { apiPath, InvalidPathSegmentError, isPlainPath, pathSegment } from '../../src/kube/paths.js';
import { CORE, objectPath } from '../../src/kube/resources.js';

const SRC = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../src');

describe('apiPath', () => {
  test('builds core, group, namespaced, cluster-wide, object and subresource paths', () => {
    expect(apiPath({ group: '', version: 'v1' })).toBe('/api/v1');
    expect(apiPath({ group: 'apps', version: 'v1', resource: 'deployments' })).toBe('/apis/apps/v1/deployments');
    expect(apiPath({ group: '', version: 'v1', resource: 'secrets', namespace: 'team-a', name: 'x' })).toBe('/api/v1/namespaces/team-a/secrets/x');
    expect(apiPath({ group: 'syncprims.dev', version: 'v1alpha1', resource: 'syncs', namespace: 'a', name: 's', subresource: 'status' })).toBe(
      '/apis/syncprims.dev/v1alpha1/namespaces/a/syncs/s/status',
    );
  });

  test('a traversal in any segment is refused, never folded into another path', () => {
    for (const bad of ['..', '.', '', '../../kube-system/secrets/crown-jewels', 'a/b']) {
      expect(() => objectPath(CORE.secrets, bad, 'team-x')).toThrow(InvalidPathSegmentError);
      if (bad !== '') expect(() => objectPath(CORE.secrets, 'x', bad)).toThrow(InvalidPathSegmentError);
    }
    expect(() => objectPath(CORE.secrets, '../../kube-system/secrets/crown-jewels', 'team-x')).toThrow(
      'name "../../kube-system/secrets/crown-jewels" is not usable in an API path',
    );
  });

  test('anything else is percent-encoded', () => {
    expect(pathSegment('a b?c#d%e', 'name')).toBe('a%20b%3Fc%23d%25e');
    expect(pathSegment('..x', 'name')).toBe('..x');
  });

  test('isPlainPath: what the client refuses to send', () => {
    expect(isPlainPath('/api/v1/namespaces/a/secrets/b')).toBe(true);
    expect(isPlainPath('/version')).toBe(true);
    for (const folded of ['/api/v1/namespaces/a/secrets/../../b', '/api/v1/./x', '/api/v1/%2e%2e/x', '/api/v1/%2E/x', '/api//v1', 'api/v1', '/api/v1?x=1', '/api/v1/%zz']) {
      expect([folded, isPlainPath(folded)]).toEqual([folded, false]);
    }
  });
});

/** Every .ts file under src/ but the path builder itself (and the browser's code, which builds no API path). */
function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name);
    if (e.isDirectory()) return sourceFiles(full);
    return e.name.endsWith('.ts') && full !== path.join(SRC, 'kube', 'paths.ts') ? [full] : [];
  });
}

/** A fragment that names an API path: its roots, the namespaces segment, or a resource of ours or of the core group. */
const API_PATH_TEXT = /\/(api|apis)\/|\/namespaces\/|\/(secrets|configmaps|syncs|remotesyncs|proxysyncs|events|leases|customresourcedefinitions|status)\b/;

/** The places in `text` where an API path is built from parts: a template literal with `${`, or a concatenation with `+`. */
function builtPaths(text: string): string[] {
  const found: string[] = [];
  for (const m of text.matchAll(/`(?:[^`\\]|\\.)*`/g)) {
    const literal = m[0];
    if (literal.includes('${') && API_PATH_TEXT.test(literal.replace(/\$\{[^}]*\}/g, 'X'))) found.push(literal);
  }
  for (const m of text.matchAll(/(['"])(?:(?!\1)[^\\\n]|\\.)*\1\s*\+|\+\s*(['"])(?:(?!\2)[^\\\n]|\\.)*\2/g)) {
    if (API_PATH_TEXT.test(m[0])) found.push(m[0]);
  }
  return found;
}

describe('no other way to build an API path in src/', () => {
  test('the scan finds the ways it forbids (so that it can fail)', () => {
    expect(builtPaths('const p = `/api/v1/namespaces/${ns}/secrets/${name}`;')).toHaveLength(1);
    expect(builtPaths('return `${this.path(obj)}/status`;')).toHaveLength(1);
    expect(builtPaths("const p = '/apis/' + group + '/v1';")).toHaveLength(1);
    expect(builtPaths("const p = base + '/namespaces/' + ns;")).toHaveLength(1);
    expect(builtPaths('`${ref.namespace}/${ref.name}`; "/api/view"; `Secret ${ns}/${name}`')).toEqual([]);
  });

  test('every request path in src/ comes from src/kube/paths.ts', () => {
    const offenders = sourceFiles(SRC).flatMap((file) =>
      builtPaths(readFileSync(file, 'utf8')).map((literal) => `${path.relative(SRC, file)}: ${literal}`),
    );
    expect(offenders).toEqual([]);
  });
});
