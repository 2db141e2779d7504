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
 */
export async function* watchEvents<T = KubeObject>(res: Readable): AsyncGenerator<WatchEvent<T>> {
  res.setEncoding('utf8');
  let rest = '';
  try {
    for await (const chunk of res as AsyncIterable<string>) {
      const text = rest + chunk;
      let start = 0;
      for (let nl = text.indexOf('\n'); nl >= 0; nl = text.indexOf('\n', start)) {
        const line = text.slice(start, nl);
        start = nl + 1;
        if (line.trim() !== '') yield JSON.parse(line) as WatchEvent<T>;
      }
      rest = text.slice(start);
    }
    if (rest.trim() !== '') yield JSON.parse(rest) as WatchEvent<T>;
  } finally {
    res.destroy();
  }
}
