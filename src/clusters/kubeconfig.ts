import type { AddressPolicy } from '../kube/address-policy.js';
import { KubeConfig, parseKubeconfigYaml, type Cluster, type Context, type User } from '../kube/kubeconfig.js';
import { impersonationFields } from '../kube/kubeconfig-impersonation.js';
import { nonStringField } from '../kube/kubeconfig-strings.js';

/**
 * Kubeconfigs that come from Secrets (RemoteSync, ProxySync, and the CLI
 * following them) are checked here, before any use, and built into a
 * KubeConfig from the checked fields only. A tenant who can write a Secret
 * must not make the operator (or an admin's CLI) run a command, read a file
 * on its machine (such as the operator's own service-account token), or talk
 * to a server whose certificate is not verified. A user's impersonation
 * (`as`, `as-groups`, `as-uid`, `as-user-extra`) is kept and sent, never dropped.
 */

/** The flag that lets kubeconfigs of Secrets run commands: refusals name it. */
export const ALLOW_EXEC_FLAG = '--allow-kubeconfig-exec';

export interface KubeconfigPolicy {
  /**
   * Accept `exec` and `auth-provider` users (`--allow-kubeconfig-exec`):
   * `true` from Secrets of every namespace, a list from Secrets of those
   * namespaces only; false or absent from none.
   */
  allowExec?: boolean | readonly string[];
  /** Accept `insecure-skip-tls-verify: true` (`--allow-insecure-kubeconfig-tls`). */
  allowInsecureTls?: boolean;
  /**
   * Servers never connected to (`--source-deny-cidrs`): a server that is
   * such an address is refused here; one named by a host name, when a
   * connection resolves it (the clients of remote clusters take the policy).
   */
  addressPolicy?: AddressPolicy;
}

/** A kubeconfig that cannot be used, and why; the message names no credential. */
export class KubeconfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'KubeconfigError';
  }
}

type Raw = Record<string, unknown>;

interface Named<T> {
  name: string;
  body: T;
}

/** Fields that name a file on the machine that reads the kubeconfig: always refused. */
const FILE_FIELDS: Record<string, string> = {
  'certificate-authority': 'certificate-authority-data',
  'client-certificate': 'client-certificate-data',
  'client-key': 'client-key-data',
  tokenFile: 'token',
};

/**
 * Parses and checks a kubeconfig; `label` names where it came from in
 * messages (e.g. `Secret team/edge-1-kubeconfig key value`). Every cluster,
 * user and context is checked, used or not. Returns a KubeConfig holding the
 * checked fields of the current context's cluster and user.
 */
export function checkedKubeconfig(text: string, label: string, policy: KubeconfigPolicy = {}, secretNamespace?: string): KubeConfig {
  const raw = parseDocument(text, label);
  const notString = nonStringField(raw);
  if (notString) throw new KubeconfigError(`${label}: ${notString}`);
  const clusters = namedList(raw.clusters, 'cluster', label);
  const users = namedList(raw.users, 'user', label);
  const contexts = namedList(raw.contexts, 'context', label);
  for (const c of clusters) checkCluster(c, label, policy);
  for (const u of users) checkUser(u, label, policy, secretNamespace);
  const context = currentContext(raw, contexts, label);
  const cluster = clusters.find((c) => c.name === context.cluster);
  const user = users.find((u) => u.name === context.user);
  if (!cluster) throw new KubeconfigError(`${label}: context "${context.name}" names cluster "${context.cluster}", which is not in the kubeconfig`);
  if (!user) throw new KubeconfigError(`${label}: context "${context.name}" names user "${context.user}", which is not in the kubeconfig`);
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [clusterOf(cluster)],
    users: [userOf(user)],
    contexts: [{ name: context.name, cluster: cluster.name, user: user.name, namespace: context.namespace }],
    currentContext: context.name,
  });
  return kc;
}

/** A server whose address the policy denies is refused before anything connects to it. */
function checkServerAddress(server: string, what: string, label: string, policy: KubeconfigPolicy): void {
  let host: string;
  try {
    host = new URL(server).hostname;
  } catch {
    throw new KubeconfigError(`${label}: ${what} has a server that is not a URL (want https://host:port)`);
  }
  try {
    policy.addressPolicy?.checkHost(host);
  } catch (err) {
    throw new KubeconfigError(`${label}: ${what} has server ${server}: ${(err as Error).message}`);
  }
}

function parseDocument(text: string, label: string): Raw {
  let doc: unknown;
  try {
    // Silently, and told by position only: the parser's warnings and messages quote the text, a credential maybe.
    doc = parseKubeconfigYaml(text);
  } catch (err) {
    throw new KubeconfigError(`${label}: ${(err as Error).message}`);
  }
  if (!isObject(doc) || (doc.kind !== undefined && doc.kind !== 'Config')) {
    throw new KubeconfigError(`${label}: not a kubeconfig (want a YAML document of kind Config with clusters, users and contexts)`);
  }
  return doc;
}

function namedList(value: unknown, field: 'cluster' | 'user' | 'context', label: string): Named<Raw>[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw new KubeconfigError(`${label}: ${field}s must be a list`);
  return value.map((entry: unknown, i) => {
    if (!isObject(entry) || typeof entry.name !== 'string' || entry.name === '' || !isObject(entry[field])) {
      throw new KubeconfigError(`${label}: ${field}s[${i}] needs a name and a ${field}`);
    }
    return { name: entry.name, body: entry[field] };
  });
}

function checkCluster({ name, body }: Named<Raw>, label: string, policy: KubeconfigPolicy): void {
  refuseFiles(body, `cluster "${name}"`, label);
  if (typeof body.server !== 'string' || !/^https?:\/\//.test(body.server)) {
    throw new KubeconfigError(`${label}: cluster "${name}" has no server URL (want https://host:port)`);
  }
  // client-node sends to an http:// server only with insecure-skip-tls-verify (and the token in clear).
  if (body.server.startsWith('http://') && !(body['insecure-skip-tls-verify'] === true && policy.allowInsecureTls)) {
    throw new KubeconfigError(
      `${label}: cluster "${name}" has a plain http:// server, so its credentials would cross the network unencrypted: refused; use https://, or set insecure-skip-tls-verify and run the operator with --allow-insecure-kubeconfig-tls`,
    );
  }
  checkServerAddress(body.server, `cluster "${name}"`, label, policy);
  if (body['insecure-skip-tls-verify'] === true && !policy.allowInsecureTls) {
    throw new KubeconfigError(
      `${label}: cluster "${name}" sets insecure-skip-tls-verify, so its server's certificate would not be checked: refused; set certificate-authority-data, or run the operator with --allow-insecure-kubeconfig-tls`,
    );
  }
}

function checkUser({ name, body }: Named<Raw>, label: string, policy: KubeconfigPolicy, secretNamespace: string | undefined): void {
  refuseFiles(body, `user "${name}"`, label);
  const impersonation = impersonationFields(body, `user "${name}"`);
  if (typeof impersonation === 'string') throw new KubeconfigError(`${label}: ${impersonation}`);
  for (const [field, what] of [
    ['exec', 'runs a command to get its credentials'],
    ['auth-provider', 'uses an auth-provider plugin'],
  ] as const) {
    if (body[field] === undefined || body[field] === null || execAllowed(policy, secretNamespace)) continue;
    const why = "since a tenant's kubeconfig must not run anything on the operator's machine; use a token or a client certificate, or";
    const list = policy.allowExec;
    throw new KubeconfigError(
      Array.isArray(list) && secretNamespace !== undefined
        ? `${label}: user "${name}" ${what} (${field}): refused in namespace ${secretNamespace}, which ${ALLOW_EXEC_FLAG}=${list.join(',')} does not name (${why} add ${secretNamespace} to ${ALLOW_EXEC_FLAG})`
        : `${label}: user "${name}" ${what} (${field}): refused, ${why} run the operator with ${ALLOW_EXEC_FLAG}=${secretNamespace ?? '<namespace>'}`,
    );
  }
}

/** Whether the policy lets a kubeconfig from a Secret of `namespace` run a command (exec, auth-provider). */
function execAllowed(policy: KubeconfigPolicy, namespace: string | undefined): boolean {
  const allow = policy.allowExec;
  if (allow === true) return true;
  return Array.isArray(allow) && namespace !== undefined && allow.includes(namespace);
}

function refuseFiles(body: Raw, what: string, label: string): void {
  for (const [field, inline] of Object.entries(FILE_FIELDS)) {
    if (body[field] === undefined || body[field] === null || body[field] === '') continue;
    throw new KubeconfigError(
      `${label}: ${what} names a file (${field}): refused, since it would be read on the operator's machine; put the content inline (${inline})`,
    );
  }
}

function currentContext(raw: Raw, contexts: Named<Raw>[], label: string): Context {
  const wanted = typeof raw['current-context'] === 'string' && raw['current-context'] !== '' ? raw['current-context'] : undefined;
  const found = wanted ? contexts.find((c) => c.name === wanted) : contexts.length === 1 ? contexts[0] : undefined;
  if (!found) {
    const why = wanted ? `current-context "${wanted}" is not among its contexts` : 'it sets no current-context (and has not exactly one context)';
    throw new KubeconfigError(`${label}: ${why}`);
  }
  const { cluster, user, namespace } = found.body;
  if (typeof cluster !== 'string' || typeof user !== 'string') throw new KubeconfigError(`${label}: context "${found.name}" needs a cluster and a user`);
  return { name: found.name, cluster, user, namespace: typeof namespace === 'string' ? namespace : undefined };
}

function clusterOf({ name, body }: Named<Raw>): Cluster {
  return {
    name,
    server: String(body.server),
    caData: str(body['certificate-authority-data']),
    tlsServerName: str(body['tls-server-name']),
    skipTLSVerify: body['insecure-skip-tls-verify'] === true,
    proxyUrl: str(body['proxy-url']),
  };
}

function userOf({ name, body }: Named<Raw>): User {
  return {
    // Checked in checkUser: a string here is a problem found there.
    ...(impersonationFields(body, name) as Partial<User>),
    name,
    token: str(body.token),
    certData: str(body['client-certificate-data']),
    keyData: str(body['client-key-data']),
    username: str(body.username),
    password: str(body.password),
    exec: body.exec ?? undefined,
    authProvider: body['auth-provider'] ?? undefined,
  };
}

function str(v: unknown): string | undefined {
  return typeof v === 'string' && v !== '' ? v : undefined;
}

function isObject(v: unknown): v is Raw {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
