/**
 * Workers over a work queue: `concurrency` loops of get → handle → done, like
 * controller-runtime's `processNextWorkItem`. Retrying is the handler's business
 * (it calls addRateLimited / forget); the pool only guarantees that every key it
 * takes is marked done and that no error escapes.
 */

/** What the workers need from a queue (WorkQueue provides it). */
export interface WorkSource {
  get(signal?: AbortSignal): Promise<string | undefined>;
  done(key: string): void;
}

export type KeyHandler = (key: string, signal?: AbortSignal) => Promise<void>;
export type WorkerErrorHandler = (err: unknown, key: string) => void;

export interface WorkerPoolOptions {
  /** Called with whatever a handler threw or rejected with. Default: console.error. */
  onError?: WorkerErrorHandler;
}

/**
 * Runs `concurrency` workers until the queue shuts down (get() resolves
 * undefined) or `signal` aborts; an abort lets in-flight handlers finish and
 * takes no more keys (the queue itself is left running). Resolves when every
 * worker has stopped. The queue guarantees a key is never handled twice at once.
 */
export async function runWorkers(
  queue: WorkSource,
  concurrency: number,
  handle: KeyHandler,
  signal?: AbortSignal,
  options: WorkerPoolOptions = {},
): Promise<void> {
  if (!Number.isInteger(concurrency) || concurrency < 1) {
    throw new RangeError(`concurrency must be a positive integer, got ${concurrency}`);
  }
  const onError = options.onError ?? logError;
  const workers = Array.from({ length: concurrency }, () => work(queue, handle, signal, onError));
  await Promise.all(workers);
}

async function work(
  queue: WorkSource,
  handle: KeyHandler,
  signal: AbortSignal | undefined,
  onError: WorkerErrorHandler,
): Promise<void> {
  while (!signal?.aborted) {
    const key = await queue.get(signal);
    if (key === undefined) return;
    try {
      await handle(key, signal);
    } catch (err) {
      report(onError, err, key);
    } finally {
      queue.done(key);
    }
  }
}

function report(onError: WorkerErrorHandler, err: unknown, key: string): void {
  try {
    onError(err, key);
  } catch (failure) {
    logError(failure, key);
  }
}

function logError(err: unknown, key: string): void {
  console.error(`worker: handling ${key} failed:`, err);
}
