import type { z } from 'zod';
import { createHash } from 'node:crypto';
import { matchingString } from './cel.js';

/**
 * The API server's own rules for names, namespaces and keys, as zod checks
 * that carry the same rule as a CEL validation in the CRDs: a reference that
 * is not a name of the API server (`../../kube-system/secrets/x`) is refused
 * at admission, with a message that says the rule, and by the zod schema the
 * operator and the CLI parse with. The patterns avoid backslashes (`[.]`),
 * so that they read the same in RE2 (CEL) and JavaScript.
 */

const LABEL = '[a-z0-9]([-a-z0-9]*[a-z0-9])?';

/** An object's name (most kinds): a DNS-1123 subdomain, at most 253 characters. */
export const DNS1123_SUBDOMAIN = `^${LABEL}([.]${LABEL})*$`;
export const DNS1123_SUBDOMAIN_MESSAGE =
  "must be a DNS-1123 subdomain (an object name): lowercase letters, digits, '-' and '.', starting and ending with a letter or digit";

/** A namespace's name: a DNS-1123 label, at most 63 characters. */
export const DNS1123_LABEL = `^${LABEL}$`;
export const DNS1123_LABEL_MESSAGE =
  "must be a DNS-1123 label (a namespace name): lowercase letters, digits and '-', starting and ending with a letter or digit, at most 63 characters";

/**
 * A key of a ConfigMap or Secret: `[-._a-zA-Z0-9]+`, neither `.` nor `..`
 * nor starting with `..` (the API server's IsConfigMapKey).
 */
export const CONFIG_MAP_KEY = '^[.]?[-_a-zA-Z0-9][-._a-zA-Z0-9]*$';
export const CONFIG_MAP_KEY_MESSAGE =
  "must be a ConfigMap or Secret key: letters, digits, '-', '_' and '.', not '.' or '..' and not starting with '..'";

/** A kind: `GitRepository`. */
export const KIND_PATTERN = '^[A-Z][A-Za-z0-9]*$';
export const KIND_MESSAGE = 'must be a kind: a capital letter, then letters and digits';

/** An API version: `v1`, or `<group>/<version>` with a DNS-1123 subdomain as group. */
export const API_VERSION_PATTERN = `^(${LABEL}([.]${LABEL})*/)?v[0-9]+((alpha|beta)[0-9]+)?$`;
export const API_VERSION_MESSAGE = 'must be an API version: v1, or <group>/<version> such as source.toolkit.fluxcd.io/v1';

/** The name of an object of the namespace (at most `maxLength`, 253 unless a kind asks for less). */
export function objectName(maxLength = 253): z.ZodString {
  return matchingString(DNS1123_SUBDOMAIN, DNS1123_SUBDOMAIN_MESSAGE, maxLength).min(1);
}

/** The name of a namespace. */
export function namespaceName(): z.ZodString {
  return matchingString(DNS1123_LABEL, DNS1123_LABEL_MESSAGE, 63).min(1);
}

/** A key of a ConfigMap or Secret. */
export function dataKey(): z.ZodString {
  return matchingString(CONFIG_MAP_KEY, CONFIG_MAP_KEY_MESSAGE, 253).min(1);
}

export function kindName(): z.ZodString {
  return matchingString(KIND_PATTERN, KIND_MESSAGE, 63).min(1);
}

export function apiVersion(): z.ZodString {
  return matchingString(API_VERSION_PATTERN, API_VERSION_MESSAGE, 316).min(1);
}

/** `full`, or past `max` characters (a DNS label's 63) a prefix of it and a hash of the whole: two names never meet. */
export function boundedName(full: string, max = 63): string {
  if (full.length <= max) return full;
  const hash = createHash('sha256').update(full).digest('hex').slice(0, 10);
  const prefix = full.slice(0, max - hash.length - 1).replace(/[-.]+$/, '');
  return `${prefix}-${hash}`;
}
