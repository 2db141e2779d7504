// The lock behind leader election: one coordination.k8s.io/v1 Lease, read and
// written as raw JSON with optimistic concurrency (resourceVersion on PUT).
import { performance } from 'node:perf_hooks';
import type { RequestOptions } from '../kube/client.js';
import { ApiError, TransportError } from '../kube/errors.js';
import { collectionPath, CORE, objectPath } from '../kube/resources.js';

/** What the lock needs of a cluster client (KubeClient has it; tests wrap it). */
export interface LeaseClient {
  request<T = unknown>(opts: RequestOptions): Promise<T>;
}

/** The leader election record, as Lease.spec holds it. */
export interface LeaseSpec {
  holderIdentity?: string | null;
  leaseDurationSeconds?: number | null;
  acquireTime?: string | null;
  renewTime?: string | null;
  leaseTransitions?: number | null;
}

export interface Lease {
  apiVersion: 'coordination.k8s.io/v1';
  kind: 'Lease';
  metadata: { name: string; namespace?: string; resourceVersion?: string; [key: string]: unknown };
  spec?: LeaseSpec;
}

/**
 * For one attempt, which may take several requests: when it must be over (on
 * the clock of performance.now()) and the signal that cancels it. Each
 * request gets what is left of the time.
 */
export interface CallOptions {
  deadline: number;
  signal?: AbortSignal;
}

/** The Lease cannot be created because its namespace does not exist. */
export class MissingNamespaceError extends Error {
  constructor(
    readonly namespace: string,
    readonly lease: string,
  ) {
    super(
      `leader election: namespace "${namespace}" does not exist, so Lease ${namespace}/${lease} cannot be created; ` +
        'create the namespace or choose another leader election namespace',
    );
    this.name = 'MissingNamespaceError';
  }
}

export class LeaseLock {
  /** `labels` are put on the Lease when it is created, and added by a write that finds them missing; `annotations` are put on it when created. */
  constructor(
    private readonly client: LeaseClient,
    readonly namespace: string,
    readonly name: string,
    private readonly labels: Readonly<Record<string, string>> = {},
    private readonly annotations: Readonly<Record<string, string>> = {},
  ) {}

  /** `namespace/name`, for logs. */
  get description(): string {
    return `${this.namespace}/${this.name}`;
  }

  /** The Lease, or undefined when there is none. */
  async get(call: CallOptions): Promise<Lease | undefined> {
    try {
      return await this.client.request<Lease>({ method: 'GET', path: this.itemPath(), ...this.limits(call) });
    } catch (err) {
      if (err instanceof ApiError && err.notFound) return undefined;
      throw err;
    }
  }

  /** Creates the Lease; a 409 (ApiError.conflict) means another process created it first. */
  async create(spec: LeaseSpec, call: CallOptions): Promise<Lease> {
    const body: Lease = {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name: this.name, namespace: this.namespace, ...this.labelled(undefined), ...(Object.keys(this.annotations).length > 0 && { annotations: { ...this.annotations } }) },
      spec,
    };
    try {
      const limits = this.limits(call);
      return await this.client.request<Lease>({ method: 'POST', path: this.collectionPath(), body, ...limits });
    } catch (err) {
      // A POST into a namespaced collection is only "not found" when the namespace is.
      if (err instanceof ApiError && err.notFound) throw new MissingNamespaceError(this.namespace, this.name);
      throw err;
    }
  }

  /**
   * Replaces the spec of `observed`, guarded by its resourceVersion: a 409
   * (ApiError.conflict) means someone wrote the Lease since we read it.
   */
  async update(observed: Lease, spec: LeaseSpec, call: CallOptions): Promise<Lease> {
    const body: Lease = { ...observed, metadata: { ...observed.metadata, ...this.labelled(observed.metadata.labels) }, spec };
    return this.client.request<Lease>({ method: 'PUT', path: this.itemPath(), body, ...this.limits(call) });
  }

  /** `{labels}` with ours added to `existing`, or nothing when none are missing (the metadata stays as it was). */
  private labelled(existing: unknown): { labels?: Record<string, string> } {
    const have = (existing ?? {}) as Record<string, string>;
    const missing = Object.entries(this.labels).some(([k, v]) => have[k] !== v);
    return missing ? { labels: { ...have, ...this.labels } } : {};
  }

  /** The request's share of the attempt: the time left, and the signal. */
  private limits(call: CallOptions): { timeoutMs: number; signal?: AbortSignal } {
    const timeoutMs = Math.floor(call.deadline - performance.now());
    if (timeoutMs <= 0) throw new TransportError(`Lease ${this.description}: no time left for another request`);
    return { timeoutMs, signal: call.signal };
  }

  /** Deletes the Lease if it is still the version `observed` (a 409 otherwise); gone already is done. */
  async delete(observed: Lease, call: CallOptions): Promise<void> {
    const body = { apiVersion: 'v1', kind: 'DeleteOptions', preconditions: { resourceVersion: observed.metadata.resourceVersion } };
    try {
      await this.client.request({ method: 'DELETE', path: this.itemPath(), body, ...this.limits(call) });
    } catch (err) {
      if (!(err instanceof ApiError && err.notFound)) throw err;
    }
  }

  private collectionPath(): string {
    return collectionPath(CORE.leases, this.namespace);
  }

  private itemPath(): string {
    return objectPath(CORE.leases, this.name, this.namespace);
  }
}

/** A Kubernetes MicroTime (RFC 3339 with six fractional digits, UTC). */
export function microTime(date: Date): string {
  return date.toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

/** Whether two records are the same (the way a change of holder or renewal is noticed). */
export function sameRecord(a: LeaseSpec | undefined, b: LeaseSpec | undefined): boolean {
  const fields = (s: LeaseSpec | undefined): unknown[] => [
    s?.holderIdentity ?? '',
    s?.leaseDurationSeconds ?? 0,
    s?.acquireTime ?? '',
    s?.renewTime ?? '',
    s?.leaseTransitions ?? 0,
  ];
  return JSON.stringify(fields(a)) === JSON.stringify(fields(b));
}
