// What a kubeconfig's current cluster and user put on a request: the TLS
// options (CA, client certificate and key, server name, whether to verify the
// server) and the headers (Authorization; Impersonate-User, and what
// client-node drops: Impersonate-Uid, -Group and -Extra-*, see
// kubeconfig-impersonation.ts), as client-node 1.4's
// KubeConfig.applyToHTTPSOptions sets them (dist/config.js). Its
// authenticators are client-node's own, each loaded when a user first needs
// it: the token file one (in-cluster) is small and loaded with this module;
// exec (node:child_process) and the auth-provider plugins azure, gcp
// (jsonpath-plus) and oidc (openid-client) only by a user that names them.
import { readFileSync } from 'node:fs';
import type { OutgoingHttpHeaders } from 'node:http';
import type https from 'node:https';
import type { Authenticator } from '@kubernetes/client-node/dist/auth.js';
import type { Cluster, User } from '@kubernetes/client-node/dist/config_types.js';
import { FileAuth } from '@kubernetes/client-node/dist/file_auth.js';
import { impersonationHeaders, impersonationOf } from './kubeconfig-impersonation.js';

type AuthenticatorKind = 'azure' | 'gcp' | 'exec' | 'file' | 'oidc';

interface AuthProvider {
  name?: string;
  config?: Record<string, unknown>;
}

const LOADERS: Record<AuthenticatorKind, () => Promise<Authenticator>> = {
  azure: async () => new (await import('@kubernetes/client-node/dist/azure_auth.js')).AzureAuth(),
  gcp: async () => new (await import('@kubernetes/client-node/dist/gcp_auth.js')).GoogleCloudPlatformAuth(),
  exec: async () => new (await import('@kubernetes/client-node/dist/exec_auth.js')).ExecAuth(),
  file: async () => new FileAuth(),
  oidc: async () => new (await import('@kubernetes/client-node/dist/oidc_auth.js')).OpenIDConnectAuth(),
};

/** client-node's authenticators in its order, each with its isAuthProvider test, repeated here so that choosing loads none of them. */
const TESTS: [AuthenticatorKind, (user: User, provider: AuthProvider | undefined) => unknown][] = [
  ['azure', (_, provider) => provider?.name === 'azure'],
  ['gcp', (_, provider) => provider?.name === 'gcp'],
  ['exec', (user, provider) => user.exec || provider?.name === 'exec' || provider?.config?.exec],
  ['file', (_, provider) => provider?.config?.tokenFile],
  ['oidc', (_, provider) => provider?.name === 'oidc'],
];

/** The authenticator client-node would pick for `user`: the first whose test says yes. */
function authenticatorKind(user: User): AuthenticatorKind | undefined {
  const provider = (user.authProvider ?? undefined) as AuthProvider | undefined;
  return TESTS.find(([, test]) => test(user, provider))?.[0];
}

/**
 * One kubeconfig's authenticators, made when first needed and kept: they
 * cache what they fetch (an exec plugin's credential until it expires, a
 * token file's content for a minute), as client-node's do per KubeConfig.
 */
export class Authenticators {
  private readonly made = new Map<AuthenticatorKind, Promise<Authenticator>>();

  /** The authenticator for `user`, if it needs one. */
  async for(user: User): Promise<Authenticator | undefined> {
    const kind = authenticatorKind(user);
    if (!kind) return undefined;
    let made = this.made.get(kind);
    if (!made) {
      made = LOADERS[kind]();
      this.made.set(kind, made);
    }
    return made;
  }
}

/**
 * Sets on `opts` what `cluster` and `user` give a request: TLS options,
 * then the Authorization header (an authenticator's, then the user's token
 * over it), then basic auth. Throws for an http:// server unless the
 * kubeconfig says insecure-skip-tls-verify (client-node refuses it too).
 */
export async function applyCredentials(cluster: Cluster | null, user: User | null, authenticators: Authenticators, opts: https.RequestOptions): Promise<void> {
  applyTls(cluster, user, opts);
  await applyHeaders(user, authenticators, opts);
  // client-node refuses this when it makes its agent; a proxy-url let it pass.
  if (cluster?.server?.startsWith('http:') && !cluster.skipTLSVerify && !cluster.proxyUrl) {
    throw new Error('HTTP protocol is not allowed when skipTLSVerify is not set or false');
  }
}

/**
 * The headers alone (impersonation, Authorization, basic auth), for each
 * request: no file is read and nothing decoded for TLS, which is bound when
 * a connection is made (applyCredentials).
 */
export async function applyHeaders(user: User | null, authenticators: Authenticators, opts: https.RequestOptions): Promise<void> {
  Object.assign(headersOf(opts), impersonationHeaders(impersonationOf(user)));
  await applyAuthorization(user, authenticators, opts);
  if (user?.username) {
    // client-node sets `auth` (which https.request turns into the header);
    // our transports read headers only, so the header is set as well.
    opts.auth = `${user.username}:${user.password}`;
    const headers = headersOf(opts);
    if (!Object.keys(headers).some((k) => k.toLowerCase() === 'authorization')) {
      headers.Authorization = `Basic ${Buffer.from(opts.auth).toString('base64')}`;
    }
  }
}

/** client-node's applyHTTPSOptions: nothing at all without a user. */
function applyTls(cluster: Cluster | null, user: User | null, opts: https.RequestOptions): void {
  if (!user) return;
  if (cluster?.skipTLSVerify) opts.rejectUnauthorized = false;
  if (cluster?.tlsServerName) opts.servername = cluster.tlsServerName;
  const ca = cluster ? fileOrBase64(cluster.caFile, cluster.caData) : null;
  if (ca) opts.ca = ca;
  const cert = fileOrBase64(user.certFile, user.certData);
  if (cert) opts.cert = cert;
  const key = fileOrBase64(user.keyFile, user.keyData);
  if (key) opts.key = key;
}

/**
 * How long an authenticator (an exec plugin, an auth provider) may take to
 * hand over credentials: a request waits for them before its own deadline
 * starts, so a plugin that hangs would hold the request, and its reconcile's
 * worker, for ever. (A plugin left running past it is client-node's child.)
 */
const CREDENTIALS_TIMEOUT_MS = 30_000;

/** client-node's applyAuthorizationHeader, the authenticator given CREDENTIALS_TIMEOUT_MS. */
async function applyAuthorization(user: User | null, authenticators: Authenticators, opts: https.RequestOptions): Promise<void> {
  if (!user) return;
  const headers = headersOf(opts);
  const authenticator = await authenticators.for(user);
  // A command or a provider may hang; a token file (the in-cluster user) is read at once: no timer for it on every request.
  const kind = authenticatorKind(user);
  const plugin = kind === 'exec' ? 'exec plugin' : kind !== undefined && kind !== 'file' ? 'auth provider' : undefined;
  const credentials = authenticator?.applyAuthentication(user, opts);
  if (credentials && plugin) await withDeadline(credentials, `user "${user.name}": no credentials from its ${plugin} within ${CREDENTIALS_TIMEOUT_MS / 1000} s`);
  else await credentials;
  if (user.token) headers.Authorization = `Bearer ${user.token}`;
}

function withDeadline<T>(work: Promise<T>, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(message)), CREDENTIALS_TIMEOUT_MS);
  });
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}

/** A file's content (read on every call, so a renewed file is used), else base64 data decoded. */
function fileOrBase64(file: string | undefined, data: string | undefined): Buffer | null {
  if (file) return readFileSync(file);
  if (data) return Buffer.from(data, 'base64');
  return null;
}

function headersOf(opts: https.RequestOptions): OutgoingHttpHeaders {
  opts.headers ??= {};
  return opts.headers as OutgoingHttpHeaders;
}
