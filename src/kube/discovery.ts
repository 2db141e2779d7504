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

/**
 * Maps apiVersion + kind to a resource, one group-version at a time. Answers
 * are cached with a TTL; concurrent lookups of one group-version share one
 * request; a miss re-reads the group-version once (a CRD may have just arrived).
 */
export class Discovery {
  private readonly cache = new Map<string, { at: number; list: Promise<APIResourceList | undefined> }>();

  constructor(
    private readonly client: Requester,
    private readonly ttlMs = 5 * 60_000,
  ) {}

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

  private groupVersion(apiVersion: string, fresh: boolean): Promise<APIResourceList | undefined> {
    const cached = this.cache.get(apiVersion);
    if (cached && !fresh && Date.now() - cached.at < this.ttlMs) return cached.list;
    const { group, version } = splitApiVersion(apiVersion);
    const path = groupVersionPath(group, version);
    const list = this.client
      .request<APIResourceList>({ path, timeoutMs: 15_000 })
      .then((answer) => {
        if (!Array.isArray((answer as Partial<APIResourceList> | undefined)?.resources)) {
          throw new NotKubernetesError(`GET ${path}`, this.client.name, 'with something else than an APIResourceList');
        }
        return answer;
      })
      .catch((err: unknown) => {
        if ((err as { status?: number }).status === 404) return undefined;
        this.cache.delete(apiVersion);
        throw err;
      });
    this.cache.set(apiVersion, { at: Date.now(), list });
    return list;
  }
}
