// The downstream operator's link to its managing cluster in pull mode
// (docs/pull.md): the join bundle read (a kubeconfig whose context names the
// assignments namespace), the Lease it renews there (LAST-SEEN, and what the
// managing side calls offline), and its token renewed by itself before it
// expires (a TokenRequest for its own service account, the only one it may
// make), written back to the bundle so that a restart finds the new one.
import { readFileSync } from 'node:fs';
import { parseDocument } from 'yaml';
import { PULL_LEASE, PULL_LEASE_SECONDS } from '../clusters/pull-names.js';
import { KubeClient } from '../kube/client.js';
import { loadKubeConfigFile } from '../kube/config.js';
import { KubeConfig } from '../kube/kubeconfig.js';
import { ApiError } from '../kube/errors.js';
import { collectionPath, CORE, objectPath } from '../kube/resources.js';
import type { Logger } from '../runtime/logger.js';
import { writePrivateFile } from '../runtime/private-file.js';
import type { Manager } from '../runtime/manager.js';
import { leasePath } from './proxysync-pull.js';
import { pullAgentController } from './pull-agent.js';

/** A service account token's claims that renewal reads. */
interface TokenClaims {
  iat: number;
  exp: number;
  namespace: string;
  account: string;
}

/** The claims of a service account token (a JWT), or undefined: not one. */
export function tokenClaims(token: string): TokenClaims | undefined {
  try {
    const payload = JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString('utf8')) as Record<string, unknown>;
    const sub = typeof payload.sub === 'string' ? payload.sub.split(':') : [];
    if (typeof payload.iat !== 'number' || typeof payload.exp !== 'number' || sub.length !== 4 || sub[0] !== 'system' || sub[1] !== 'serviceaccount') return undefined;
    return { iat: payload.iat, exp: payload.exp, namespace: sub[2]!, account: sub[3]! };
  } catch {
    return undefined;
  }
}

/** When (ms) a token is renewed: once 60% of its life is gone, so that a renewal failing for a while still has time. */
export function renewalDue(claims: Pick<TokenClaims, 'iat' | 'exp'>): number {
  return (claims.iat + (claims.exp - claims.iat) * 0.6) * 1000;
}

/** The bundle with its user's token replaced, as YAML (the rest of the file as it was). */
export function withToken(bundle: string, token: string): string {
  const doc = parseDocument(bundle);
  const users = doc.get('users') as { items?: unknown[] } | undefined;
  if (!users?.items?.length) throw new Error('the join bundle has no user');
  doc.setIn(['users', 0, 'user', 'token'], token);
  return doc.toString();
}

/** What `syncprims run` gives the link besides the bundle: --upstream-secret, --upstream-lease-duration. */
export interface UpstreamOptions {
  /** In a cluster (syncprims join): the Secret the bundle is mounted from, where a renewed token is written. */
  secret?: { namespace: string; name: string };
  /** How long a renewal of the Lease holds (default PULL_LEASE_SECONDS); it is renewed every third of it. */
  leaseSeconds?: number;
}

/** The downstream operator's link: started beside its controllers with `syncprims run --upstream-kubeconfig FILE`. */
export class PullUpstream {
  private timers: NodeJS.Timeout[] = [];
  private stopAgent: (() => Promise<void>) | undefined;
  private stopped = false;
  /** The bundle as last written (the file may be a read-only mount: see `secret`). */
  private bundle: string;
  private home: KubeClient | undefined;

  private constructor(
    private readonly file: string,
    readonly client: KubeClient,
    readonly namespace: string,
    private readonly holder: string,
    private readonly log: Logger,
    private readonly opts: UpstreamOptions,
  ) {
    this.bundle = readFileSync(file, 'utf8');
  }

  static async open(file: string, userAgent: string, holder: string, log: Logger, opts: UpstreamOptions = {}): Promise<PullUpstream> {
    const kc = loadKubeConfigFile(file);
    const namespace = kc.getContextObject(kc.getCurrentContext())?.namespace;
    if (!namespace) throw new Error(`--upstream-kubeconfig ${file}: its context names no namespace (the assignments namespace): use the join bundle syncprims cluster add --pull wrote`);
    const client = await KubeClient.create('upstream', kc, userAgent);
    return new PullUpstream(file, client, namespace, holder, log.child({ component: 'pull', upstream: client.server.origin, namespace }), opts);
  }

  private get leaseSeconds(): number {
    return this.opts.leaseSeconds ?? PULL_LEASE_SECONDS;
  }

  /** The agent's controller (once its informers are primed: the managing cluster may be away, so it is not awaited), the Lease, the token's renewal. */
  start(m: Manager): void {
    this.home = m.cache.client;
    // Only the leader (of a Deployment's replicas) writes upstream.
    void m.leading.then(() => {
      if (this.stopped) return;
      this.every(this.leaseSeconds * 333, () => this.renewLease());
      this.every(60_000, () => this.renewTokenIfDue());
      void this.startAgent(m);
    });
  }

  private async startAgent(m: Manager): Promise<void> {
    for (let attempt = 0; !this.stopped; attempt++) {
      try {
        const { controller, stop } = await pullAgentController(m, this.client, this.namespace, this.log);
        this.stopAgent = async () => {
          await controller.stop();
          await stop();
        };
        controller.start();
        this.log.info({}, 'serving the assignments of the managing cluster');
        return;
      } catch (err) {
        this.log.warn({ err: err instanceof Error ? err.message : String(err), attempt }, 'cannot watch the assignments yet: trying again');
        await new Promise((r) => setTimeout(r, Math.min(30_000, 1_000 * 2 ** attempt)));
      }
    }
  }

  private every(ms: number, fn: () => Promise<void>): void {
    void fn();
    this.timers.push(setInterval(() => void fn(), ms));
  }

  /** The Lease renewed (created the first time): the managing side reads when it was last seen. */
  private async renewLease(): Promise<void> {
    const path = leasePath(this.namespace);
    const spec = { holderIdentity: this.holder, leaseDurationSeconds: this.leaseSeconds, renewTime: new Date().toISOString().replace(/\.\d{3}Z$/, '.000000Z') };
    try {
      // One request per renewal (a merge patch of its spec: this cluster's operator is its only writer), a POST the first time.
      await this.client.request({ method: 'PATCH', path, contentType: 'application/merge-patch+json', body: { spec } }).catch(async (err: unknown) => {
        if (!(err instanceof ApiError && err.status === 404)) throw err;
        await this.client.request({ method: 'POST', path: collectionPath(CORE.leases, this.namespace), body: { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: PULL_LEASE, namespace: this.namespace }, spec } });
      });
    } catch (err) {
      this.log.warn({ err: err instanceof Error ? err.message : String(err), ...(err instanceof ApiError && { status: err.status }) }, revokedHint(err));
    }
  }

  /** A new token for our own account once the current one is 60% through its life, written to the bundle and used at once. */
  private async renewTokenIfDue(): Promise<void> {
    const kc = this.client.kubeConfig;
    const token = kc.getCurrentUser()?.token ?? '';
    const claims = tokenClaims(token);
    if (!claims || Date.now() < renewalDue(claims)) return;
    try {
      const answer = await this.client.request<{ status?: { token?: string; expirationTimestamp?: string } }>({
        method: 'POST',
        path: objectPath(CORE.serviceAccounts, claims.account, claims.namespace, 'token'),
        body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: claims.exp - claims.iat } },
      });
      const fresh = answer.status?.token;
      if (!fresh) throw new Error('the TokenRequest answer holds no token');
      const next = withToken(this.bundle, fresh);
      await this.keep(next);
      const kc = new KubeConfig();
      kc.loadFromString(next);
      await this.client.useKubeConfig(kc);
      this.bundle = next;
      this.log.info({ expires: answer.status?.expirationTimestamp }, 'upstream token renewed');
    } catch (err) {
      this.log.warn({ err: err instanceof Error ? err.message : String(err), expires: new Date(claims.exp * 1000).toISOString() }, `cannot renew the upstream token: ${revokedHint(err)}`);
    }
  }

  /** The renewed bundle kept where a restart finds it: the file, else (a read-only mount) the Secret it is mounted from. */
  private async keep(bundle: string): Promise<void> {
    const secret = this.opts.secret;
    if (secret && this.home) {
      const path = objectPath(CORE.secrets, secret.name, secret.namespace);
      await this.home.request({ method: 'PATCH', path, contentType: 'application/merge-patch+json', body: { data: { value: Buffer.from(bundle).toString('base64') } } });
      return;
    }
    writePrivateFile(this.file, bundle);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    for (const t of this.timers) clearInterval(t);
    this.timers = [];
    await this.stopAgent?.();
    this.client.close();
  }
}

/** What a refusal of the managing cluster means for a pull cluster. */
function revokedHint(err: unknown): string {
  if (err instanceof ApiError && err.status === 401) return 'the managing cluster does not accept our identity (revoked, or its token expired): register the cluster again (syncprims cluster add --pull) and join with the new bundle';
  if (err instanceof ApiError && err.status === 403) return 'the managing cluster refuses our identity this (revoked?): register the cluster again (syncprims cluster add --pull)';
  return 'cannot renew the Lease in the managing cluster (offline?): what is applied here keeps running';
}
