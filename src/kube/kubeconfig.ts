// The operator's KubeConfig: the part of client-node 1.4's (dist/config.js)
// that our code uses, with the same behaviour, without what that module loads
// up front. Its config.js imports the whole generated API (dist/gen/index.js,
// about 60 MiB of RSS) for makeApiClient, node-fetch for applyToFetchOptions,
// socks-proxy-agent and hpagent for proxy-url, js-yaml, and every auth
// provider (oidc brings openid-client); the operator's requests go through
// src/kube/client.ts, which uses none of them (docs/runtime.md). This one
// loads client-node's config_types.js (parsing the entries) and its token file
// authenticator, both small, and the other authenticators only when a user
// names them (kubeconfig-credentials.ts). Left out: proxy-url (read, never
// used: our transports never used client-node's agents), applyToFetchOptions,
// makeApiClient, addAuthenticator, and the Windows fallback that reads a
// kubeconfig out of WSL.
import { accessSync, constants, readFileSync } from 'node:fs';
import type https from 'node:https';
import net from 'node:net';
import path from 'node:path';
import {
  exportCluster,
  exportContext,
  exportUser,
  newClusters,
  newContexts,
  newUsers,
  type Cluster,
  type ConfigOptions,
  type Context,
  type User,
} from '@kubernetes/client-node/dist/config_types.js';
import { parse } from 'yaml';
import { applyCredentials, applyHeaders, Authenticators } from './kubeconfig-credentials.js';
import { exportedImpersonation, impersonationFields } from './kubeconfig-impersonation.js';
import { KUBECTL_YAML } from './kubectl-yaml.js';
import { nonStringField } from './kubeconfig-strings.js';

export type { Cluster, ConfigOptions, Context, User } from '@kubernetes/client-node/dist/config_types.js';

/** What loadFromOptions takes: entries as KubeConfig holds them. */
export interface KubeConfigOptions {
  clusters: Cluster[];
  users: User[];
  contexts: Context[];
  currentContext?: string;
}

const SERVICE_ACCOUNT = '/var/run/secrets/kubernetes.io/serviceaccount';

/**
 * A kubeconfig's YAML, read as kubectl reads it, silently: the library's
 * warnings are off and its errors are told by position only, for both quote
 * the text, and a kubeconfig's text is credentials.
 */
export function parseKubeconfigYaml(text: string): unknown {
  try {
    return parse(text, KUBECTL_YAML);
  } catch (err) {
    const pos = (err as { linePos?: { line: number; col: number }[] }).linePos?.[0];
    throw new Error(`not a kubeconfig: invalid YAML${pos ? ` at line ${pos.line}, column ${pos.col}` : ''}`);
  }
}

/** Clusters, users and contexts, one of them current; applies the current one's credentials to requests. */
export class KubeConfig {
  clusters: Cluster[] = [];
  users: User[] = [];
  contexts: Context[] = [];
  /** The current context's name (undefined until something is loaded, as in client-node). */
  currentContext!: string;
  private readonly authenticators = new Authenticators();

  getContexts(): Context[] {
    return this.contexts;
  }

  getCurrentContext(): string {
    return this.currentContext;
  }

  setCurrentContext(context: string): void {
    this.currentContext = context;
  }

  getContextObject(name: string): Context | null {
    return byName(this.contexts, name);
  }

  getCluster(name: string): Cluster | null {
    return byName(this.clusters, name);
  }

  getUser(name: string): User | null {
    return byName(this.users, name);
  }

  getCurrentCluster(): Cluster | null {
    const context = this.getContextObject(this.currentContext);
    return context ? this.getCluster(context.cluster) : null;
  }

  getCurrentUser(): User | null {
    const context = this.getContextObject(this.currentContext);
    return context ? this.getUser(context.user) : null;
  }

  /**
   * Parses a kubeconfig as kubectl reads YAML (kubectl-yaml.ts: 1.1, `yes`
   * is true); client-node's config_types.js checks and maps the entries
   * (`opts.onInvalidEntry`: throw, the default, or filter).
   */
  loadFromString(text: string, opts?: Partial<ConfigOptions>): void {
    const doc = parseKubeconfigYaml(text);
    if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) {
      throw new Error('not a kubeconfig: want a YAML mapping with clusters, users and contexts');
    }
    const raw = doc as Record<string, unknown>;
    const notString = nonStringField(raw);
    if (notString) throw new Error(notString);
    this.clusters = newClusters(raw.clusters, opts);
    this.contexts = newContexts(raw.contexts, opts);
    this.users = withImpersonation(newUsers(raw.users, opts), raw.users);
    this.currentContext = raw['current-context'] as string;
  }

  /** Loads a file; relative paths of CA, certificate and key files are taken from the file's directory. */
  loadFromFile(file: string, opts?: Partial<ConfigOptions>): void {
    this.loadFromString(readFileSync(file, 'utf8'), opts);
    this.makePathsAbsolute(path.dirname(file));
  }

  loadFromOptions(options: KubeConfigOptions): void {
    this.clusters = options.clusters;
    this.contexts = options.contexts;
    this.users = options.users;
    this.currentContext = options.currentContext as string;
  }

  /**
   * `$KUBECONFIG` (several files, separated as PATH is, merged: the first
   * file's current context, unless a later one names its own and
   * `contextFromStartingConfig` is false), else `~/.kube/config`, else the
   * pod's service account, else http://localhost:8080 (as client-node).
   */
  loadFromDefault(opts?: Partial<ConfigOptions>, contextFromStartingConfig = false, platform: string = process.platform): void {
    const files = (process.env.KUBECONFIG ?? '').split(path.delimiter).filter(Boolean);
    if (process.env.KUBECONFIG && files.length > 0) {
      this.loadFromFile(files[0]!, opts);
      for (const file of files.slice(1)) {
        const next = new KubeConfig();
        next.loadFromFile(file, opts);
        this.merge(next, contextFromStartingConfig);
      }
      return;
    }
    const home = findHomeDir(platform);
    const config = home ? path.join(home, '.kube', 'config') : undefined;
    if (config && exists(config)) {
      this.loadFromFile(config, opts);
      return;
    }
    if (exists(`${SERVICE_ACCOUNT}/token`)) {
      this.loadFromCluster();
      return;
    }
    this.loadFromClusterAndUser({ name: 'cluster', server: 'http://localhost:8080' } as Cluster, { name: 'user' });
  }

  /**
   * In a pod: the API server at KUBERNETES_SERVICE_HOST and _PORT (http on
   * ports 80, 8080 and 8001), the service account's CA, its token (re-read
   * at most every minute, as it is rotated) and namespace. `pathPrefix` is
   * put before the service account's paths (for tests).
   */
  loadFromCluster(pathPrefix = ''): void {
    const host = process.env.KUBERNETES_SERVICE_HOST;
    const port = process.env.KUBERNETES_SERVICE_PORT;
    const scheme = port === '80' || port === '8080' || port === '8001' ? 'http' : 'https';
    const serverHost = host && net.isIPv6(host) ? `[${host}]` : host;
    const dir = `${pathPrefix}${SERVICE_ACCOUNT}`;
    this.clusters = [{ name: 'inCluster', caFile: `${dir}/ca.crt`, server: `${scheme}://${serverHost}:${port}`, skipTLSVerify: false }];
    this.users = [{ name: 'inClusterUser', authProvider: { name: 'tokenFile', config: { tokenFile: `${dir}/token` } } }];
    const namespace = exists(`${dir}/namespace`) ? readFileSync(`${dir}/namespace`, 'utf8') : undefined;
    this.contexts = [{ cluster: 'inCluster', name: 'inClusterContext', user: 'inClusterUser', namespace }];
    this.currentContext = 'inClusterContext';
  }

  /** The kubeconfig as JSON (a YAML document too), in kubectl's field names. */
  exportConfig(): string {
    return JSON.stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: this.clusters.map(exportCluster),
      users: this.users.map((u) => {
        const exported = exportUser(u) as { user: Record<string, unknown> };
        return { ...exported, user: { ...exported.user, ...exportedImpersonation(u) } };
      }),
      contexts: this.contexts.map(exportContext),
      preferences: {},
      'current-context': this.getCurrentContext(),
    });
  }

  /**
   * Sets the current context's TLS options and headers on `opts`
   * (kubeconfig-credentials.ts); tokens from exec plugins, token files and
   * auth providers are fetched again when they expire, so call it per request.
   */
  async applyToHTTPSOptions(opts: https.RequestOptions): Promise<void> {
    await applyCredentials(this.getCurrentCluster(), this.getCurrentUser(), this.authenticators, opts);
  }

  /**
   * The current user's headers alone (applyToHTTPSOptions less the TLS
   * options): what each request needs, without reading the CA, certificate
   * and key files again.
   */
  async applyHeaders(opts: https.RequestOptions): Promise<void> {
    await applyHeaders(this.getCurrentUser(), this.authenticators, opts);
  }

  private loadFromClusterAndUser(cluster: Cluster, user: User): void {
    this.clusters = [cluster];
    this.users = [user];
    this.currentContext = 'loaded-context';
    this.contexts = [{ cluster: cluster.name, user: user.name, name: this.currentContext }];
  }

  private makePathsAbsolute(dir: string): void {
    for (const cluster of this.clusters) if (cluster.caFile) cluster.caFile = absolute(dir, cluster.caFile);
    for (const user of this.users) {
      if (user.certFile) user.certFile = absolute(dir, user.certFile);
      if (user.keyFile) user.keyFile = absolute(dir, user.keyFile);
    }
  }

  /** client-node's mergeConfig: a name already present is an error. */
  private merge(other: KubeConfig, preserveContext: boolean): void {
    if (!preserveContext && other.currentContext) this.currentContext = other.currentContext;
    for (const [mine, theirs, what] of [
      [this.clusters, other.clusters, 'cluster'],
      [this.users, other.users, 'user'],
      [this.contexts, other.contexts, 'context'],
    ] as const) {
      for (const entry of theirs) {
        if (mine.some((e) => e.name === entry.name)) throw new Error(`Duplicate ${what}: ${entry.name}`);
        (mine as { name: string }[]).push(entry);
      }
    }
  }
}

/**
 * client-node's users with what it drops of their impersonation (`as-uid`,
 * `as-groups`, `as-user-extra`: kubeconfig-impersonation.ts), read as kubectl
 * reads them; a field of the wrong shape is refused (kubectl refuses it too).
 */
function withImpersonation(users: User[], raw: unknown): User[] {
  const entries = Array.isArray(raw) ? (raw as unknown[]) : [];
  return users.map((user) => {
    const entry = entries.find((e) => typeof e === 'object' && e !== null && (e as { name?: unknown }).name === user.name) as { user?: unknown } | undefined;
    const body = entry?.user;
    if (typeof body !== 'object' || body === null) return user;
    const fields = impersonationFields(body as Record<string, unknown>, `users[${entries.indexOf(entry)}].user`);
    if (typeof fields === 'string') throw new Error(fields);
    return { ...user, ...fields };
  });
}

function byName<T extends { name: string }>(list: T[] | undefined, name: string): T | null {
  return list?.find((e) => e.name === name) ?? null;
}

function absolute(dir: string, file: string): string {
  return !dir || path.isAbsolute(file) ? file : path.join(dir, file);
}

function exists(file: string, mode = constants.F_OK): boolean {
  try {
    accessSync(file, mode);
    return true;
  } catch {
    return false;
  }
}

/**
 * client-node's findHomeDir: $HOME if it exists; on Windows the first of
 * HOME, HOMEDRIVE+HOMEPATH and USERPROFILE that holds .kube\config, else the
 * first of HOME, USERPROFILE, HOMEDRIVE+HOMEPATH that is writable, exists, or
 * is set, in that order.
 */
function findHomeDir(platform: string): string | null {
  const env = process.env;
  if (platform !== 'win32') return env.HOME && exists(env.HOME) ? env.HOME : null;
  const homeDrive = env.HOMEDRIVE && env.HOMEPATH ? path.join(env.HOMEDRIVE, env.HOMEPATH) : '';
  const unique = (dirs: string[]): string[] => [...new Set(dirs.filter(Boolean))];
  const byHomeDrive = unique([env.HOME ?? '', homeDrive, env.USERPROFILE ?? '']);
  const byProfile = unique([env.HOME ?? '', env.USERPROFILE ?? '', homeDrive]);
  return (
    byHomeDrive.find((dir) => exists(path.join(dir, '.kube', 'config'))) ??
    byProfile.find((dir) => exists(dir, constants.W_OK)) ??
    byProfile.find((dir) => exists(dir)) ??
    byProfile[0] ??
    null
  );
}
