// A kubeconfig user's impersonation, as kubectl (client-go) reads and sends
// it: `as` (Impersonate-User), `as-uid` (Impersonate-Uid), `as-groups` (one
// Impersonate-Group per group) and `as-user-extra` (one
// Impersonate-Extra-<key> per value, the key escaped as client-go's
// headerKeyEscape does). client-node 1.4 reads `as` alone
// (config_types.js: impersonateUser) and drops the rest; dropping any of it
// would act with more rights than the kubeconfig gives, so it is read here.
import type { User } from '@kubernetes/client-node/dist/config_types.js';

/** Whom a kubeconfig's user acts as. */
export interface Impersonation {
  user: string;
  uid?: string;
  groups?: string[];
  extra?: Record<string, string[]>;
}

/** A user entry of our KubeConfig: client-node's (`impersonateUser`: `as`), with the fields it drops. */
type ImpersonatingUser = User & {
  readonly impersonateUid?: string;
  readonly impersonateGroups?: string[];
  readonly impersonateExtra?: Record<string, string[]>;
};

/** The fields of a kubeconfig user that ask for impersonation. */
const IMPERSONATION_FIELDS = ['as', 'as-uid', 'as-groups', 'as-user-extra'] as const;

/** What a header value may hold (printable ASCII): anything else would be refused by the HTTP client, or mean another name. */
const HEADER_VALUE = /^[\x20-\x7e]*$/;

/**
 * The impersonation fields of a user entry (its `user:` body), checked:
 * strings where strings belong (lists of them for `as-groups` and each extra
 * key), printable, and `as` set when any other is (Kubernetes refuses groups,
 * a uid or extras without a user too). Returns the fields to set on the
 * user, or a message saying what is wrong (quoting no value).
 */
export function impersonationFields(body: Record<string, unknown>, where: string): Partial<ImpersonatingUser> | string {
  const present = IMPERSONATION_FIELDS.filter((f) => body[f] !== undefined && body[f] !== null);
  if (present.length === 0) return {};
  const user = body.as;
  if (typeof user !== 'string' || user === '') {
    return `${where} sets ${present.join(', ')} without as (the user to impersonate): Kubernetes refuses groups, a uid or extras without a user; set as, or remove them`;
  }
  const uid = body['as-uid'] ?? undefined;
  if (uid !== undefined && typeof uid !== 'string') return `${where}.as-uid must be a string`;
  const groups = stringList(body['as-groups']);
  if (groups === undefined) return `${where}.as-groups must be a list of strings`;
  const extra = extraMap(body['as-user-extra']);
  if (extra === undefined) return `${where}.as-user-extra must map keys to lists of strings`;
  if (![user, uid ?? '', ...groups, ...Object.values(extra).flat()].every((t) => HEADER_VALUE.test(t))) {
    return `${where}: the impersonation fields (${present.join(', ')}) must be printable ASCII (each is sent as an HTTP header)`;
  }
  return {
    impersonateUser: user,
    ...(uid && { impersonateUid: uid }),
    ...(groups.length > 0 && { impersonateGroups: groups }),
    ...(Object.keys(extra).length > 0 && { impersonateExtra: extra }),
  };
}

/** `as-user-extra`: keys to lists of strings (absent: none); undefined when it is something else. */
function extraMap(value: unknown): Record<string, string[]> | undefined {
  if (value === undefined || value === null) return {};
  if (typeof value !== 'object' || Array.isArray(value)) return undefined;
  const extra: Record<string, string[]> = {};
  for (const [key, values] of Object.entries(value as Record<string, unknown>)) {
    const list = stringList(values);
    if (key === '' || list === undefined) return undefined;
    extra[key] = list;
  }
  return extra;
}

/** A list of strings (absent: empty); undefined when it is something else. */
function stringList(value: unknown): string[] | undefined {
  if (value === undefined || value === null) return [];
  return Array.isArray(value) && value.every((v) => typeof v === 'string') ? value : undefined;
}

/** Whom `user` impersonates, if anyone. */
export function impersonationOf(user: User | null | undefined): Impersonation | undefined {
  const u = user as ImpersonatingUser | null | undefined;
  if (!u?.impersonateUser) return undefined;
  return {
    user: u.impersonateUser,
    ...(u.impersonateUid && { uid: u.impersonateUid }),
    ...(u.impersonateGroups?.length && { groups: u.impersonateGroups }),
    ...(u.impersonateExtra && { extra: u.impersonateExtra }),
  };
}

/** The request headers of an impersonation (named as client-node names Impersonate-User; our clients send them lower case). */
export function impersonationHeaders(imp: Impersonation | undefined): Record<string, string | string[]> {
  if (!imp) return {};
  const headers: Record<string, string | string[]> = { 'Impersonate-User': imp.user };
  if (imp.uid) headers['Impersonate-Uid'] = imp.uid;
  if (imp.groups?.length) headers['Impersonate-Group'] = imp.groups;
  for (const [key, values] of Object.entries(imp.extra ?? {})) headers[`Impersonate-Extra-${headerKeyEscape(key)}`] = values;
  return headers;
}

/** The impersonation fields of `user` in kubectl's names (for exportConfig; `as` is client-node's). */
export function exportedImpersonation(user: User): Record<string, unknown> {
  const u = user as ImpersonatingUser;
  return {
    ...(u.impersonateUid && { 'as-uid': u.impersonateUid }),
    ...(u.impersonateGroups?.length && { 'as-groups': u.impersonateGroups }),
    ...(u.impersonateExtra && { 'as-user-extra': u.impersonateExtra }),
  };
}

/** The bytes client-go leaves as they are in an extra's header key (RFC 7230 token characters but `%`); others are %XX. */
const LEGAL_KEY_BYTE = /^[A-Za-z0-9!#$&'*+\-.^_`|~]$/;

/** client-go's headerKeyEscape: the key's UTF-8 bytes, each not legal in a header name percent-encoded. */
export function headerKeyEscape(key: string): string {
  let out = '';
  for (const byte of Buffer.from(key, 'utf8')) {
    const c = String.fromCharCode(byte);
    out += byte < 0x80 && LEGAL_KEY_BYTE.test(c) ? c : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

/** Describes an impersonation for messages: `user "bob" (groups team-a)`; names only, which are not credentials. */
export function describeImpersonation(imp: Impersonation): string {
  const groups = imp.groups?.length ? ` with groups ${imp.groups.join(', ')}` : '';
  return `user ${JSON.stringify(imp.user)}${groups}`;
}
