// The bounds of every answer from an API server (issue 43): a byte limit
// fitted to what was asked, read as the body arrives, and the limits of one
// event of a watch stream. A server that passes one is not a Kubernetes API
// server (or not one to trust): the request fails, naming the limit.
import { Transform, pipeline, type Readable, type TransformCallback } from 'node:stream';

/** What a request asks for, which fixes how large its answer may be. */
export type AnswerKind = 'object' | 'list page' | 'discovery document';

const MiB = 2 ** 20;

/**
 * The defaults, chosen so that no real cluster meets them (docs/remote.md
 * "Every answer bounded" says why each): etcd stores at most 1.5 MiB an
 * object (`--max-request-bytes`), 3 MiB with a raised limit; its JSON, with a
 * Secret's bytes in base64 and managedFields, stays well under 16 MiB. A page
 * holds up to 500 objects (the informers' page size): 64 MiB is 128 KiB for
 * each. Discovery documents are a few hundred KiB (an aggregated `/apis` of
 * a cluster with a thousand CRDs, about 2 MiB). A watch event wraps one object.
 */
export const DEFAULT_MAX_BYTES: Record<AnswerKind, number> = {
  object: 16 * MiB,
  'list page': 64 * MiB,
  'discovery document': 8 * MiB,
};
export const DEFAULT_MAX_EVENT_BYTES = 16 * MiB;
/** While a body streams, a gap longer than this fails it (unless the whole deadline is shorter). */
export const DEFAULT_BODY_IDLE_MS = 10_000;

/** Paths that serve discovery (and the server's version and health), never objects. */
const DISCOVERY = /^\/(version|api|apis|openapi|healthz|readyz|livez)(\/|$)/;
/** `/api/v1/...` or `/apis/<group>/<version>/...`: what follows the group-version. */
const RESOURCE = /^\/(?:api\/[^/]+|apis\/[^/]+\/[^/]+)\/(.+)$/;

/** What a request to `path` asks for: a page of a list (GET of a collection), one object, or a discovery document. */
export function answerKind(method: string, path: string): AnswerKind {
  const rest = RESOURCE.exec(path)?.[1];
  if (rest === undefined) return DISCOVERY.test(path) ? 'discovery document' : 'object';
  let segments = rest.split('/');
  // `namespaces/<ns>/<resource>...` is in a namespace; `namespaces/<ns>` alone is the Namespace object.
  if (segments[0] === 'namespaces' && segments.length >= 3) segments = segments.slice(2);
  return method === 'GET' && segments.length === 1 ? 'list page' : 'object';
}

/** `16 MiB`, `512 KiB`, `100 bytes`. */
export function bytesText(n: number): string {
  if (n >= MiB && n % MiB === 0) return `${n / MiB} MiB`;
  if (n >= 1024 && n % 1024 === 0) return `${n / 1024} KiB`;
  return `${n} bytes`;
}

/**
 * Reads `body` whole, failing with `tooLarge()` (and destroying it, which
 * closes its HTTP/1.1 socket or resets its HTTP/2 stream) once it passes
 * `maxBytes`. Whoever gave the body its deadlines destroys it when they pass.
 */
export async function readBounded(body: Readable, maxBytes: number, tooLarge: () => Error): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of body) {
    total += (chunk as Buffer).length;
    if (total > maxBytes) {
      const err = tooLarge();
      body.destroy(err);
      throw err;
    }
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks, total);
}

export interface EventBounds {
  /** One event (a line of the stream) longer than this fails the stream. */
  maxBytes: number;
  /** An event begun must end (its newline) within this. */
  deadlineMs: number;
  tooLarge: () => Error;
  tooSlow: () => Error;
}

/**
 * The watch stream `source`, the same bytes, failed (and `source` destroyed)
 * once one event passes its size or its deadline. Destroying what it returns
 * destroys `source` too.
 */
export function boundedEvents(source: Readable, bounds: EventBounds): Readable {
  const bounded = new BoundedLines(bounds);
  pipeline(source, bounded, () => bounded.stopTimer());
  return bounded;
}

class BoundedLines extends Transform {
  /** Bytes of the event begun and not yet ended. */
  private partial = 0;
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly bounds: EventBounds) {
    super();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    const first = chunk.indexOf(10);
    if (first < 0) {
      this.partial += chunk.length;
    } else {
      // A chunk longer than the limit may hold a whole event that passes it between its newlines.
      const longest = Math.max(this.partial + first, chunk.length > this.bounds.maxBytes ? longestLine(chunk, first) : 0);
      if (longest > this.bounds.maxBytes) return callback(this.bounds.tooLarge());
      this.partial = chunk.length - chunk.lastIndexOf(10) - 1;
      this.stopTimer();
    }
    if (this.partial > this.bounds.maxBytes) return callback(this.bounds.tooLarge());
    if (this.partial > 0 && !this.timer) this.timer = setTimeout(() => this.destroy(this.bounds.tooSlow()), this.bounds.deadlineMs);
    callback(null, chunk);
  }

  override _destroy(err: Error | null, callback: (error?: Error | null) => void): void {
    this.stopTimer();
    callback(err);
  }

  stopTimer(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }
}

/** The longest line between the newlines of `chunk`, from the one at `first` on. */
function longestLine(chunk: Buffer, first: number): number {
  let longest = 0;
  for (let at = first, next = chunk.indexOf(10, at + 1); next >= 0; at = next, next = chunk.indexOf(10, at + 1)) {
    longest = Math.max(longest, next - at - 1);
  }
  return longest;
}
