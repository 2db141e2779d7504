import { ApiError } from '../kube/errors.js';

/** What the CLI's watches (`get --watch`, `reconcile`) share. */

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
