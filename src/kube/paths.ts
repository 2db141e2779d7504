/**
 * The one way to build an API request path. Every segment is checked and
 * encoded: a name such as `../../kube-system/secrets/x` cannot leave the
 * collection it was meant for, because `.`, `..`, an empty segment and a `/`
 * inside a segment are refused, and everything else is percent-encoded.
 * Nothing in src/ builds an API path any other way (test/unit/api-paths.test.ts
 * fails on a template literal or a concatenation that does).
 */

/** A path segment that would change the path's meaning: a bug or an attack, never sent. */
export class InvalidPathSegmentError extends Error {
  constructor(
    readonly what: string,
    readonly segment: string,
  ) {
    super(`${what} ${JSON.stringify(segment.slice(0, 100))} is not usable in an API path (empty, '.', '..' or containing '/')`);
    this.name = 'InvalidPathSegmentError';
  }
}

/** One segment, encoded; `what` names it in the error (`name`, `namespace`). */
export function pathSegment(value: string, what: string): string {
  if (value === '' || value === '.' || value === '..' || value.includes('/')) throw new InvalidPathSegmentError(what, value);
  return encodeURIComponent(value);
}

/** What a request is about: a resource of a group and version, optionally in a namespace, one object, a subresource. */
export interface ApiPathParts {
  /** `''` for the core group (`/api/v1`). */
  group: string;
  version: string;
  /** The plural resource name (`configmaps`); none for the group version itself (discovery). */
  resource?: string;
  namespace?: string;
  name?: string;
  subresource?: string;
}

/** `/api/v1/namespaces/<ns>/configmaps/<name>`, `/apis/<group>/<version>/<resource>`, ... */
export function apiPath(parts: ApiPathParts): string {
  const base =
    parts.group === ''
      ? `/api/${pathSegment(parts.version, 'version')}`
      : `/apis/${pathSegment(parts.group, 'group')}/${pathSegment(parts.version, 'version')}`;
  if (parts.resource === undefined) {
    if (parts.namespace !== undefined || parts.name !== undefined) throw new Error('an API path that names an object names its resource');
    return base;
  }
  const segments = [base];
  if (parts.namespace !== undefined) segments.push('namespaces', pathSegment(parts.namespace, 'namespace'));
  segments.push(pathSegment(parts.resource, 'resource'));
  if (parts.name !== undefined) segments.push(pathSegment(parts.name, 'name'));
  if (parts.subresource !== undefined) {
    if (parts.name === undefined) throw new Error('a subresource belongs to an object: name it');
    segments.push(pathSegment(parts.subresource, 'subresource'));
  }
  return segments.join('/');
}

/**
 * Whether `path` is one that apiPath could have built (or a fixed path such
 * as `/version`): no segment that a URL parser would fold (`.`, `..`, their
 * encodings) and no empty segment. The client refuses any other before sending.
 */
export function isPlainPath(path: string): boolean {
  if (!path.startsWith('/') || path.includes('?') || path.includes('#') || path.includes('\\')) return false;
  return path
    .slice(1)
    .split('/')
    .every((s) => {
      let decoded: string;
      try {
        decoded = decodeURIComponent(s);
      } catch {
        return false;
      }
      return s !== '' && decoded !== '.' && decoded !== '..';
    });
}
