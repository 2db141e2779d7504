// The managing cluster of an object applied from another cluster (its
// `syncprims.dev/origin` label): `--mgmt-kubeconfig`/`--mgmt-context`, whose
// id must be that origin; else the current cluster, when it is the one. A
// cluster's id is what the operator labels with: its `--cluster-id`, by
// default the uid of its kube-system namespace (run.ts).
import { kubeSystemUid } from '../../kube/cluster-id.js';
import { ApiError } from '../../kube/errors.js';
import type { KubeClient } from '../../kube/client.js';
import { connect, unreachable, type Cluster } from '../cluster.js';
import { UsageError } from '../errors.js';

export interface ManagingFlags {
  mgmtKubeconfig?: string;
  mgmtContext?: string;
  mgmtClusterId?: string;
}

export type Managing = { ok: true; cluster: Cluster } | { ok: false; unresolved: string };

/** The cluster's id (the uid of its kube-system namespace); undefined when it may not be read. */
export async function clusterIdOf(client: KubeClient): Promise<string | undefined> {
  try {
    return await kubeSystemUid(client);
  } catch (err) {
    if (err instanceof ApiError && (err.status === 403 || err.status === 404)) return undefined;
    throw err;
  }
}

/** Finds (and connects to, once) the managing cluster of an origin; close() when done. */
export class ManagingClusters {
  private mgmt: Promise<Cluster> | undefined;
  private homeId: Promise<string | undefined> | undefined;

  constructor(
    private readonly home: Cluster,
    private readonly flags: ManagingFlags,
  ) {}

  /** The cluster whose id is `origin`; `what` (e.g. `ConfigMap ns/x`) names what carries it, in messages. */
  async find(origin: string, what: string): Promise<Managing> {
    if (this.flags.mgmtKubeconfig || this.flags.mgmtContext) return this.fromFlags(origin, what);
    this.homeId ??= this.flags.mgmtClusterId !== undefined ? Promise.resolve(this.flags.mgmtClusterId) : clusterIdOf(this.home.client);
    if ((await this.homeId) === origin) return { ok: true, cluster: this.home };
    return {
      ok: false,
      unresolved: `${what} was applied from the managing cluster with id ${origin}, not this one: pass --mgmt-kubeconfig (and --mgmt-context) of that cluster to follow it`,
    };
  }

  private async fromFlags(origin: string, what: string): Promise<Managing> {
    this.mgmt ??= connect({ kubeconfig: this.flags.mgmtKubeconfig, context: this.flags.mgmtContext }).catch((err: unknown) => {
      // connect() words its errors for --context: these are about --mgmt-context.
      if (err instanceof UsageError) throw new UsageError(err.message.replace(/^--context /, '--mgmt-context '));
      throw err;
    });
    const mgmt = await this.mgmt;
    let id: string | undefined;
    try {
      id = this.flags.mgmtClusterId ?? (await clusterIdOf(mgmt.client));
    } catch (err) {
      throw unreachable(err, mgmt) ?? err;
    }
    if (id === origin) return { ok: true, cluster: mgmt };
    const server = mgmt.client.server.origin;
    const told = this.flags.mgmtClusterId !== undefined ? `--mgmt-cluster-id is ${id}` : `its id (the uid of its kube-system namespace) is ${id ?? 'unreadable'}`;
    const hint = this.flags.mgmtClusterId !== undefined ? '' : ', or --mgmt-cluster-id if its operator runs with --cluster-id';
    return {
      ok: false,
      unresolved: `${what} was applied from the managing cluster with id ${origin}, and the cluster at ${server} is not it (${told}): pass the kubeconfig of that cluster${hint}`,
    };
  }

  /** Runs a request against the managing cluster: a failure to reach it is said as such (exit 3). */
  async guard<T>(cluster: Cluster, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      throw (cluster === this.home ? undefined : unreachable(err, cluster)) ?? err;
    }
  }

  close(): void {
    void this.mgmt?.then((c) => c.client.close(), () => undefined);
  }
}
