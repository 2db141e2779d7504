import type { Fetched, Resolution } from './fetch-helper.js';

/**
 * What the process has resolved and fetched of Git repositories and OCI
 * artifacts (docs/source.md, "Git and OCI"): every sync naming the same URL,
 * ref and credentials shares one resolution per interval (a ref listing, a
 * tag's manifest), and one download per new commit or digest (the trees kept,
 * the least recently used dropped first, `maxBytes` in all). Callers that ask
 * while a resolution or a download is in flight wait for it. Keys are hashes
 * of the request, credentials included: a sync never gets a tree fetched with
 * credentials it was not given.
 */

export interface RepositoryCacheOptions {
  /** The trees (and layers) kept, together. */
  maxTreeBytes: number;
  maxTrees: number;
  now?: () => number;
}

interface ResolutionEntry {
  at: number;
  url: string;
  promise: Promise<Resolution>;
  settled: boolean;
}

interface TreeEntry {
  bytes: number;
  promise: Promise<Fetched>;
}

/** Counts, for tests, metrics and the benchmark. */
export interface RepositoryCounts {
  resolutions: number;
  fetches: number;
}

export class RepositoryCache {
  private readonly resolutions = new Map<string, ResolutionEntry>();
  private readonly trees = new Map<string, TreeEntry>();
  private treeBytes = 0;
  readonly counts: RepositoryCounts = { resolutions: 0, fetches: 0 };
  private readonly now: () => number;

  constructor(private readonly opts: RepositoryCacheOptions) {
    this.now = opts.now ?? Date.now;
  }

  /**
   * The resolution of `key`: one in flight, or made less than `maxAgeMs`
   * ago, else a new one by `load`. A failed one is not kept.
   */
  resolve(key: string, url: string, maxAgeMs: number, load: () => Promise<Resolution>): Promise<Resolution> {
    const kept = this.resolutions.get(key);
    if (kept && (!kept.settled || this.now() - kept.at < maxAgeMs)) return kept.promise;
    this.counts.resolutions++;
    const promise = load();
    const entry: ResolutionEntry = { at: this.now(), url, promise, settled: false };
    this.resolutions.set(key, entry);
    promise.then(
      () => {
        entry.settled = true;
      },
      () => {
        if (this.resolutions.get(key) === entry) this.resolutions.delete(key);
      },
    );
    return promise;
  }

  /** The tree of `key` (a request and what it resolved to): kept or in flight, else fetched by `load`. */
  tree(key: string, load: () => Promise<Fetched>): Promise<Fetched> {
    const kept = this.trees.get(key);
    if (kept) {
      this.trees.delete(key);
      this.trees.set(key, kept);
      return kept.promise;
    }
    this.counts.fetches++;
    const promise = load();
    const entry: TreeEntry = { bytes: 0, promise };
    this.trees.set(key, entry);
    promise.then(
      (fetched) => {
        if (this.trees.get(key) !== entry) return;
        entry.bytes = fetched.data.length;
        this.treeBytes += entry.bytes;
        this.evict();
      },
      () => {
        if (this.trees.get(key) === entry) this.trees.delete(key);
      },
    );
    return promise;
  }

  /** Forgets the resolutions of `url` (a webhook said it moved): the next sync of it resolves at once. How many were forgotten. */
  forget(url: string): number {
    const wanted = repositoryIdentity(url);
    let n = 0;
    for (const [key, entry] of this.resolutions) {
      if (repositoryIdentity(entry.url) !== wanted) continue;
      this.resolutions.delete(key);
      n++;
    }
    return n;
  }

  private evict(): void {
    for (const [key, entry] of this.trees) {
      if (this.treeBytes <= this.opts.maxTreeBytes && this.trees.size <= this.opts.maxTrees) return;
      this.trees.delete(key);
      this.treeBytes -= entry.bytes;
    }
  }
}

/**
 * A repository's URL reduced to `host[:port]/path` (lowercase host, no user,
 * no scheme, no trailing `/` or `.git`): the https and ssh URLs of one
 * repository, as a push event names them, are the same repository.
 */
export function repositoryIdentity(url: string): string {
  const scp = /^[^@/]+@([^:/]+):(.+)$/.exec(url);
  let host: string;
  let path: string;
  if (scp) {
    host = scp[1] as string;
    path = scp[2] as string;
  } else {
    try {
      const u = new URL(url);
      host = u.protocol === 'ssh:' ? u.hostname : u.host;
      path = u.pathname;
    } catch {
      return url;
    }
  }
  const trimmed = path.replace(/^\/+/, '').replace(/\/+$/, '').replace(/\.git$/, '');
  return `${host.toLowerCase()}/${trimmed}`;
}
