import type { IncomingMessage } from 'node:http';
import { createInterface } from 'node:readline';
import type { KubeObject } from './resources.js';

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';

export interface WatchEvent<T = KubeObject> {
  type: WatchEventType;
  object: T;
}

/** Reads a watch response: one JSON event per line, until the stream ends. */
export async function* watchEvents<T = KubeObject>(res: IncomingMessage): AsyncGenerator<WatchEvent<T>> {
  const lines = createInterface({ input: res, crlfDelay: Infinity });
  try {
    for await (const line of lines) {
      if (line.trim() === '') continue;
      yield JSON.parse(line) as WatchEvent<T>;
    }
  } finally {
    lines.close();
    res.destroy();
  }
}
