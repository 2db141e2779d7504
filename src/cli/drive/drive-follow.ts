import type { Kind } from '../../api/kinds.js';
import type { KubeClient } from '../../kube/client.js';
import { ApiError, TransportError } from '../../kube/errors.js';
import type { KubeObject } from '../../kube/resources.js';
import type { Verdict } from './drive-state.js';
import { CliError, errorLine, findCause } from '../errors.js';
import { getSync, withKind } from '../../views/sync-api.js';
import { MAX_BACKOFF_MS, sleep, syncWatch } from '../watch-events.js';

/**
 * Follows one sync by a watch (no polling) from the resourceVersion the
 * request left it at, judging each version, until a verdict is final or the
 * time is up. A watch that ends is resumed; an expired one (410) read again;
 * a cluster that stops answering is retried with a capped backoff, said
 * through `onWaiting`.
 */

export interface FollowTarget {
  client: KubeClient;
  kind: Kind;
  namespace: string;
  name: string;
}

export interface FollowOptions {
  judge: (obj: KubeObject) => Verdict;
  /** Told what it is doing while it is not settled (each new text). */
  onWaiting: (doing: string) => void;
  timeoutMs: number;
  /** Stops early (SIGINT). */
  signal?: AbortSignal;
}

export type Settled = Exclude<Verdict, { state: 'working' }>;

export type FollowResult =
  | { settled: Settled; obj: KubeObject }
  /** Not settled in time (or interrupted): what it was doing last. */
  | { stopped: 'timeout' | 'interrupted'; doing: string };

export async function followSync(target: FollowTarget, from: KubeObject, opts: FollowOptions): Promise<FollowResult> {
  let verdict = opts.judge(from);
  if (verdict.state !== 'working') return { settled: verdict, obj: from };
  opts.onWaiting(verdict.doing);
  const stop = new AbortController();
  let why: 'timeout' | 'interrupted' = 'timeout';
  // setTimeout takes at most 2^31-1 ms (about 24 days); a longer --timeout is that long.
  const timer = setTimeout(() => stop.abort(), Math.min(opts.timeoutMs, 2 ** 31 - 1));
  const interrupt = (): void => {
    why = 'interrupted';
    stop.abort();
  };
  opts.signal?.addEventListener('abort', interrupt, { once: true });
  try {
    let doing = verdict.doing;
    const trouble = (text: string): void => opts.onWaiting(`${text}; retrying (it was: ${doing})`);
    for await (const obj of versionsOf(target, String(from.metadata.resourceVersion ?? ''), stop.signal, trouble)) {
      verdict = opts.judge(obj);
      if (verdict.state !== 'working') return { settled: verdict, obj };
      doing = verdict.doing;
      opts.onWaiting(doing);
    }
    return { stopped: why, doing };
  } finally {
    clearTimeout(timer);
    opts.signal?.removeEventListener('abort', interrupt);
  }
}

/** Each new version of the object, until `signal` aborts; a deletion ends it with a CliError. */
async function* versionsOf(target: FollowTarget, from: string, signal: AbortSignal, trouble: (text: string) => void): AsyncGenerator<KubeObject> {
  const { client, kind, namespace, name } = target;
  let resourceVersion = from;
  let failures = 0;
  while (!signal.aborted) {
    try {
      for await (const event of syncWatch(client, { kind, namespace, name }, resourceVersion, signal)) {
        failures = 0;
        resourceVersion = event.object.metadata.resourceVersion ?? resourceVersion;
        if (event.type === 'BOOKMARK') continue;
        if (event.type === 'DELETED') throw new CliError(`${kind} ${namespace}/${name} was deleted while it was followed`);
        yield withKind(event.object, kind);
      }
    } catch (err) {
      if (signal.aborted) return;
      if (err instanceof ApiError && err.gone) {
        const obj = await getSync(client, kind, namespace, name);
        resourceVersion = String(obj.metadata.resourceVersion ?? '');
        yield obj;
        continue;
      }
      if (!findCause(err, TransportError)) throw err;
      trouble(`cannot reach the cluster (${errorLine(err)})`);
      await sleep(Math.min(MAX_BACKOFF_MS, 500 * 2 ** ++failures) * (1 + Math.random() * 0.2), signal);
    }
  }
}
