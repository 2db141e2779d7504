import type { KubeObject } from '../kube/resources.js';

export interface ParsedSetsOptions {
  /** The fetched bytes of all sets kept, together (their parsed objects take a few times more). */
  maxBytes: number;
  maxEntries: number;
  /** A set not asked for within this long is dropped. */
  ttlMs: number;
}

const DEFAULTS: ParsedSetsOptions = { maxBytes: 4 * 2 ** 20, maxEntries: 64, ttlMs: 120_000 };

/** A parsed set and the digest its bytes were verified against. */
export interface ParsedSet {
  objects: KubeObject[];
  digest: string;
}

interface Entry {
  set: ParsedSet;
  bytes: number;
  usedAt: number;
}

/**
 * The parsed objects of content-addressed sources (an artifact, or an http
 * source with a digest: the same digest is the same bytes), kept a short
 * while so that Syncs sharing one artifact revision fetch and parse it once:
 * 1,000 Syncs of 10 artifacts GET and parse 10 files, not 1,000 (`load`:
 * callers asking while the first is still fetching wait for its set). Small
 * sets only (`maxBytes` in all), the least recently used dropped first; a set
 * with a Secret in it is never kept (Secret content is not held beyond its
 * use). Each caller gets a copy of its own (render changes what it gets).
 */
export class ParsedSets {
  private readonly entries = new Map<string, Entry>();
  private bytes = 0;
  /** Loads in flight: each settles to the set as kept, or undefined where it failed or could not be kept. */
  private readonly loading = new Map<string, Promise<ParsedSet | undefined>>();

  constructor(
    private readonly opts: ParsedSetsOptions = DEFAULTS,
    private readonly now: () => number = Date.now,
  ) {}

  get(key: string): ParsedSet | undefined {
    this.expire();
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    entry.usedAt = this.now();
    this.entries.delete(key);
    this.entries.set(key, entry);
    return structuredClone(entry.set);
  }

  /**
   * The set of `key`: kept, or fetched by `fetch` (and kept where it can
   * be). A caller that comes while another's fetch of the same key is in
   * flight waits for that one's set instead of fetching too; where that
   * fetch fails, or its set cannot be kept, it fetches on its own (its own
   * error, its own lease of the memory budget).
   */
  async load(key: string, fetch: () => Promise<{ set: ParsedSet; bytes: number }>): Promise<ParsedSet> {
    const kept = this.get(key);
    if (kept) return kept;
    const pending = this.loading.get(key);
    if (pending) {
      const shared = await pending;
      return shared ? structuredClone(shared) : (await fetch()).set;
    }
    const own = fetch();
    const shared = own.then(({ set, bytes }) => this.put(key, set, bytes), () => undefined);
    this.loading.set(key, shared);
    try {
      await shared;
    } finally {
      this.loading.delete(key);
    }
    return (await own).set;
  }

  /** Keeps a copy of `set` (fetched as `bytes` bytes) unless it is too large or holds a Secret: the copy kept, if it was. */
  put(key: string, set: ParsedSet, bytes: number): ParsedSet | undefined {
    if (bytes > this.opts.maxBytes || set.objects.some((o) => o.kind === 'Secret')) return undefined;
    this.drop(key);
    const copy = structuredClone(set);
    this.entries.set(key, { set: copy, bytes, usedAt: this.now() });
    this.bytes += bytes;
    this.expire();
    return copy;
  }

  get size(): number {
    return this.entries.size;
  }

  private expire(): void {
    const stale = this.now() - this.opts.ttlMs;
    for (const [key, entry] of this.entries) {
      const over = this.bytes > this.opts.maxBytes || this.entries.size > this.opts.maxEntries;
      if (!over && entry.usedAt > stale) continue;
      this.drop(key);
    }
  }

  private drop(key: string): void {
    const entry = this.entries.get(key);
    if (!entry) return;
    this.bytes -= entry.bytes;
    this.entries.delete(key);
  }
}
