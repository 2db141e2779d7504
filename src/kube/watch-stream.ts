import type { Readable } from 'node:stream';
import type { KubeObject } from './resources.js';

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';

export interface WatchEvent<T = KubeObject> {
  type: WatchEventType;
  object: T;
}

/**
 * Reads a watch response: one JSON event per line, until the stream ends.
 * A stream destroyed with an error (or cut short) makes the iteration throw.
 * Each chunk is searched once: a long event costs its length, not its
 * length times its chunks (the client bounds an event's size, see
 * KubeClient.stream).
 */
export async function* watchEvents<T = KubeObject>(res: Readable): AsyncGenerator<WatchEvent<T>> {
  res.setEncoding('utf8');
  /** The event begun in earlier chunks, not yet ended. */
  let pending: string[] = [];
  try {
    for await (const chunk of res as AsyncIterable<string>) {
      let start = 0;
      for (let nl = chunk.indexOf('\n'); nl >= 0; nl = chunk.indexOf('\n', start)) {
        const line = pending.length > 0 ? pending.join('') + chunk.slice(start, nl) : chunk.slice(start, nl);
        pending = [];
        start = nl + 1;
        if (line.trim() !== '') yield JSON.parse(line) as WatchEvent<T>;
      }
      if (start < chunk.length) pending.push(chunk.slice(start));
    }
    const rest = pending.join('');
    if (rest.trim() !== '') yield JSON.parse(rest) as WatchEvent<T>;
  } finally {
    res.destroy();
  }
}
