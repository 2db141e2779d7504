import type { Requester } from './client.js';
import { NotKubernetesError } from './errors.js';
import { groupVersionPath, splitApiVersion, type ResourceInfo } from './resources.js';

interface APIResourceList {
  resources: { name: string; kind: string; namespaced: boolean }[];
}

/** Raised when the server does not serve a kind (its CRD may be missing). */
export class UnknownKindError extends Error {
  constructor(
    readonly apiVersion: string,
    readonly kind: string,
  ) {
    super(`the server does not serve ${kind} in ${apiVersion} (is its CRD installed?)`);
    this.name = 'UnknownKindError';
  }
}

/** How long a lookup waits for another client's read of the same group-version before it reads itself. */
const JOIN_WAIT_MS = 5_000;

/** One group-version's answer, and the client that asked for it. */
interface Entry {
  at: number;
  list: Promise<APIResourceList | undefined>;
  by: Requester;
  /** Set once `list` has its answer (a failed one leaves the cache). */
  answered?: boolean;
}

/**
 * What one API server serves, by group-version: shared by the Discovery of
 * every identity on that server (the registry keys it by server URL and CA).
 * Discovery is not filtered by RBAC (every authenticated user may read it),
 * so one identity's answer is every identity's; what an identity may do with
 * a kind is its RBAC's business, met when it lists or writes. A failure is
 * never shared: it says something of the client that met it (a revoked
 * token), so another client asks again itself; nor is a wait longer than
 * JOIN_WAIT_MS (that client's requests may hang where others' are answered).
 */
export class DiscoveryCache {
  readonly entries = new Map<string, Entry>();
}

/**
 * Maps apiVersion + kind to a resource, one group-version at a time. Answers
 * are cached with a TTL; concurrent lookups of one group-version share one
 * request; a miss re-reads the group-version once (a CRD may have just
 * arrived). Several Discovery objects may share one cache (DiscoveryCache).
 */
export class Discovery {
  private readonly cache: Map<string, Entry>;

  constructor(
    private readonly client: Requester,
    private readonly ttlMs = 5 * 60_000,
    shared = new DiscoveryCache(),
  ) {
    this.cache = shared.entries;
  }

  async resolve(apiVersion: string, kind: string): Promise<ResourceInfo> {
    const found = await this.lookup(apiVersion, kind, false);
    if (found) return found;
    const refreshed = await this.lookup(apiVersion, kind, true);
    if (refreshed) return refreshed;
    throw new UnknownKindError(apiVersion, kind);
  }

  /** Forgets what is known, e.g. after CRDs changed. */
  invalidate(apiVersion?: string): void {
    if (apiVersion === undefined) this.cache.clear();
    else this.cache.delete(apiVersion);
  }

  private async lookup(apiVersion: string, kind: string, fresh: boolean): Promise<ResourceInfo | undefined> {
    const list = await this.groupVersion(apiVersion, fresh);
    const entry = list?.resources.find((r) => r.kind === kind && !r.name.includes('/'));
    if (!entry) return undefined;
    const { group, version } = splitApiVersion(apiVersion);
    return { group, version, kind, resource: entry.name, namespaced: entry.namespaced };
  }

  private async groupVersion(apiVersion: string, fresh: boolean): Promise<APIResourceList | undefined> {
    const cached = this.cache.get(apiVersion);
    if (!cached || fresh || Date.now() - cached.at >= this.ttlMs) return this.read(apiVersion);
    if (cached.by === this.client || cached.answered) return cached.list;
    // Another client's request still in flight: its answer is ours, its failure is not (that client's own, maybe), nor its hang.
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error('slow')), JOIN_WAIT_MS);
    });
    return Promise.race([cached.list, late])
      .finally(() => clearTimeout(timer))
      .catch(() => this.read(apiVersion));
  }

  private read(apiVersion: string): Promise<APIResourceList | undefined> {
    const { group, version } = splitApiVersion(apiVersion);
    const path = groupVersionPath(group, version);
    const entry: Entry = { at: Date.now(), by: this.client, list: Promise.resolve(undefined) };
    entry.list = this.client
      .request<APIResourceList>({ path })
      .then((answer) => {
        if (!Array.isArray((answer as Partial<APIResourceList> | undefined)?.resources)) {
          throw new NotKubernetesError(`GET ${path}`, this.client.name, 'with something else than an APIResourceList');
        }
        entry.answered = true;
        return answer;
      })
      .catch((err: unknown) => {
        if ((err as { status?: number }).status === 404) {
          entry.answered = true;
          return undefined;
        }
        if (this.cache.get(apiVersion) === entry) this.cache.delete(apiVersion);
        throw err;
      });
    this.cache.set(apiVersion, entry);
    return entry.list;
  }
}
