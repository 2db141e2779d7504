import { createHash, timingSafeEqual } from 'node:crypto';
import type { Kind } from '../api/index.js';
import type { KubeClient } from '../kube/client.js';
import type { KubeObject } from '../kube/resources.js';
import type { Informer } from '../runtime/informer.js';
import type { PushHandler } from '../runtime/webhook-server.js';
import { repositoryCache, repositoryIdentity, SourceError } from '../source/index.js';
import { readKey, type ObjectRef } from '../source/kube-refs.js';
import { pushedUrls } from '../source/push-events.js';

/**
 * What `POST /hooks/<token>` does (docs/source.md, "Webhooks"): every Sync,
 * RemoteSync and FleetSync whose Git or OCI source names a repository the
 * push event names, and whose `webhookSecretRef` holds that token (compared in
 * constant time; the Secret read as the sync's account), forgets its
 * repository's listing and is queued at once. The count woken; 0 (a 404) when
 * the token matches none.
 */

const PUSHED_KINDS = ['Sync', 'RemoteSync', 'FleetSync'] as const;
type PushedKind = (typeof PUSHED_KINDS)[number];

export interface RepositoryPushesDeps {
  client: KubeClient;
  informers: Record<Kind, Informer<KubeObject>>;
  defaultServiceAccount?: string;
  wake: (kind: PushedKind, key: string) => void;
}

interface Listener {
  kind: PushedKind;
  key: string;
  url: string;
  secret: ObjectRef;
  tokenKey: string;
  account?: string;
}

export function repositoryPushes(deps: RepositoryPushesDeps): PushHandler {
  return async (token, body) => {
    const pushed = new Set(pushedUrls(body).map(repositoryIdentity));
    if (pushed.size === 0) return 0;
    const listeners = PUSHED_KINDS.flatMap((kind) => deps.informers[kind].store.list().map((obj) => listenerOf(kind, obj, deps.defaultServiceAccount)));
    const tokens = new Map<string, Promise<Buffer | undefined>>();
    const wanted = digest(Buffer.from(token, 'utf8'));
    let woken = 0;
    for (const l of listeners) {
      if (!l || !pushed.has(repositoryIdentity(l.url))) continue;
      const at = JSON.stringify([l.secret.namespace, l.secret.name, l.tokenKey, l.account]);
      if (!tokens.has(at)) tokens.set(at, readToken(deps.client, l));
      const held = await tokens.get(at);
      if (!held || !timingSafeEqual(digest(held), wanted)) continue;
      repositoryCache().forget(l.url);
      deps.wake(l.kind, l.key);
      woken++;
    }
    return woken;
  };
}

/** The sync's source, when it is a Git or OCI source with a webhook token. */
function listenerOf(kind: PushedKind, obj: KubeObject, defaultServiceAccount: string | undefined): Listener | undefined {
  const spec = specOf(kind, obj);
  const repo = spec.source?.git ?? spec.source?.oci ?? {};
  const { name, key } = repo.webhookSecretRef ?? {};
  if (typeof repo.url !== 'string' || typeof name !== 'string') return undefined;
  const namespace = obj.metadata.namespace ?? '';
  const secret: ObjectRef = { apiVersion: 'v1', kind: 'Secret', name, namespace };
  return { kind, key: `${namespace}/${obj.metadata.name}`, url: repo.url, secret, tokenKey: typeof key === 'string' ? key : 'token', account: spec.serviceAccountName ?? defaultServiceAccount };
}

type PushedSpec = { serviceAccountName?: string; source?: Record<string, { url?: unknown; webhookSecretRef?: { name?: unknown; key?: unknown } } | undefined> };

/** The sync spec of a cached, unvalidated object (a FleetSync's: its template's). */
function specOf(kind: PushedKind, obj: KubeObject): PushedSpec {
  const top = (obj as { spec?: PushedSpec & { template?: { spec?: PushedSpec } } }).spec;
  return (kind === 'FleetSync' ? top?.template?.spec : top) ?? {};
}

/** The token its Secret holds, read as the sync's account; undefined when it cannot be read (that sync is not woken). */
async function readToken(client: KubeClient, l: Listener): Promise<Buffer | undefined> {
  const reader = l.account ? { client: client.asServiceAccount(l.secret.namespace, l.account), account: `${l.secret.namespace}/${l.account}` } : { client };
  try {
    const value = await readKey(reader, l.secret, l.tokenKey, 'spec.source.webhookSecretRef');
    return Buffer.from(value.toString('utf8').trim(), 'utf8');
  } catch (err) {
    if (err instanceof SourceError) return undefined;
    throw err;
  }
}

function digest(data: Buffer): Buffer {
  return createHash('sha256').update(data).digest();
}
