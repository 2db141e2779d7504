import type { Kind } from '../api/kinds.js';
import type { KubeClient } from '../kube/client.js';
import { ApiError } from '../kube/errors.js';
import { watchEvents, type WatchEvent } from '../kube/watch-stream.js';
import { syncCollectionPath } from '../views/sync-api.js';

/** What the CLI's watches (`get --watch`, `reconcile`, `rollout status`) share. */

/** The server ends a watch after this long (it is resumed from its last resourceVersion). */
const WATCH_TIMEOUT_SECONDS = 300;
/** A watch that says nothing, not even a bookmark, for this long is taken as dead. */
const IDLE_TIMEOUT_MS = 120_000;
/** The longest pause between attempts while the cluster does not answer. */
export const MAX_BACKOFF_MS = 10_000;

/**
 * One watch stream of a kind's syncs in a namespace (or all), or of one by
 * name, from `from` (none: now), until the server ends it or `signal` aborts:
 * each event, bookmarks too (their resourceVersion is where to resume); an
 * ERROR event throws as the ApiError it stands for (a 410: read again).
 */
export async function* syncWatch(
  client: KubeClient,
  where: { kind: Kind; namespace?: string; name?: string },
  from: string,
  signal: AbortSignal,
): AsyncGenerator<WatchEvent> {
  const res = await client.stream({
    path: syncCollectionPath(where.kind, where.namespace),
    query: {
      watch: 1,
      allowWatchBookmarks: true,
      resourceVersion: from || undefined,
      timeoutSeconds: WATCH_TIMEOUT_SECONDS,
      fieldSelector: where.name === undefined ? undefined : `metadata.name=${where.name}`,
    },
    idleTimeoutMs: IDLE_TIMEOUT_MS,
    signal,
  });
  const destroy = (): void => void res.destroy();
  signal.addEventListener('abort', destroy, { once: true });
  try {
    for await (const event of watchEvents(res)) {
      if (event.type === 'ERROR') throw watchError(event.object);
      yield event;
    }
  } finally {
    signal.removeEventListener('abort', destroy);
  }
}

/** A watch's ERROR event as the ApiError it stands for. */
export function watchError(status: unknown): ApiError {
  const s = (status ?? {}) as { code?: number; reason?: string; message?: string };
  return new ApiError(s.code ?? 500, s.reason ?? 'WatchError', `watch: ${s.message ?? 'error event'}`);
}

/** Waits `ms`, or less when `signal` aborts. */
export function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => {
      clearTimeout(timer);
      resolve();
    }, { once: true });
  });
}
