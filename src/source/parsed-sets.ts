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
 * 1,000 Syncs of 10 artifacts GET and parse 10 files, not 1,000. Small sets
 * only (`maxBytes` in all), the least recently used dropped first; a set
 * with a Secret in it is never kept (Secret content is not held beyond its
 * use). Each caller gets a copy of its own (render changes what it gets).
 */
export class ParsedSets {
  private readonly entries = new Map<string, Entry>();
  private bytes = 0;

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

  /** Keeps a copy of `set` (fetched as `bytes` bytes) unless it is too large or holds a Secret. */
  put(key: string, set: ParsedSet, bytes: number): void {
    if (bytes > this.opts.maxBytes || set.objects.some((o) => o.kind === 'Secret')) return;
    this.drop(key);
    this.entries.set(key, { set: structuredClone(set), bytes, usedAt: this.now() });
    this.bytes += bytes;
    this.expire();
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
