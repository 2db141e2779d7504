// Whether an operator runs in the cluster of each ProxySync, for `syncprims
// doctor`: without one, the Sync it keeps there is never reconciled. Its
// kubeconfig Secret is followed with the operator's checks (remote.ts); one
// look per cluster. What cannot be looked at is a warning, not a problem.
import { Reason } from '../../api/conditions.js';
import { mapLimit } from '../../apply/map-limit.js';
import type { KubeObject } from '../../kube/resources.js';
import { findCondition, type Condition } from '../../runtime/conditions.js';
import type { Cluster } from '../cluster.js';
import { clusterOf, type Finding } from './doctor-findings.js';
import { history, readOperatorLeases, watched, type LeaseRead } from './doctor-operator.js';

/** How many clusters are looked into at once (each may take its timeout when it does not answer). */
const CLUSTERS_AT_ONCE = 8;

/** Ready reasons that already say why the remote cluster cannot be looked at (another finding, or the sync's own status, tells). */
const SKIPPED: readonly string[] = [Reason.ClusterUnreachable, Reason.InvalidKubeconfig, Reason.CRDNotInstalled, Reason.InvalidSpec];

interface ProxyFields {
  spec?: { template?: { metadata?: { namespace?: string; name?: string } } };
  status?: { conditions?: Condition[]; remote?: { namespace?: string; name?: string } };
}

/** What was seen in a ProxySync's cluster: its operator Leases, why it could not be looked at, or nothing to look at. */
export type Look = { ok: true; read: LeaseRead; server: string } | { ok: false; message: string } | undefined;

export async function remoteOperatorFindings(home: Pick<Cluster, 'client'>, objects: readonly KubeObject[], now: number): Promise<Finding[]> {
  const proxies = objects.filter((o) => o.kind === 'ProxySync' && !o.metadata.deletionTimestamp && !SKIPPED.includes(readyReason(o) ?? ''));
  const byCluster = new Map<string, KubeObject[]>();
  for (const p of proxies) {
    const key = `${p.metadata.namespace}/${clusterOf(p)?.secret ?? ''}`;
    byCluster.set(key, [...(byCluster.get(key) ?? []), p]);
  }
  const found = await mapLimit([...byCluster.values()], CLUSTERS_AT_ONCE, async (group) => {
    const look = await lookInto(home, group[0]!, now);
    return group.flatMap((p) => judgeRemote(p, look, now));
  });
  return found.flat();
}

function readyReason(o: KubeObject): string | undefined {
  return findCondition((o as ProxyFields).status?.conditions, 'Ready')?.reason;
}

/** The operator Leases of the ProxySync's cluster; undefined when its kubeconfig is missing or refused (its status says so). */
async function lookInto(home: Pick<Cluster, 'client'>, proxy: KubeObject, now: number): Promise<Look> {
  const { openRemote, remoteFailure } = await import('../remote.js');
  const target = await openRemote(home, proxy);
  if (!target.ok) return target.problem === 'forbidden' ? { ok: false, message: target.message } : undefined;
  try {
    return { ok: true, read: await readOperatorLeases(target.client, now), server: target.client.server.origin };
  } catch (err) {
    const failure = remoteFailure(err, target.client);
    if (failure === undefined) throw err;
    return { ok: false, message: failure };
  } finally {
    target.client.close();
  }
}

/** Where its Sync is in its cluster: as its status says, else as its template does (proxy/remote-sync.ts's rule). */
function remoteSyncOf(proxy: KubeObject): { namespace: string; name: string } {
  const { spec, status } = proxy as ProxyFields;
  const meta = spec?.template?.metadata;
  return {
    namespace: status?.remote?.namespace || meta?.namespace || proxy.metadata.namespace || '',
    name: status?.remote?.name || meta?.name || proxy.metadata.name || '',
  };
}

/** The findings for one ProxySync from what was seen in its cluster. */
export function judgeRemote(proxy: KubeObject, look: Look, now: number): Finding[] {
  if (look === undefined) return [];
  const { namespace, name } = remoteSyncOf(proxy);
  const base = { namespace: proxy.metadata.namespace ?? '', object: `ProxySync/${proxy.metadata.name ?? ''}` };
  const byHand = `or check that cluster by hand: syncprims doctor --kubeconfig <its kubeconfig> -n ${namespace}`;
  if (!look.ok) {
    return [{ ...base, problem: 'CannotCheck', severity: 'warning', message: `could not look for an operator in its cluster: ${look.message}`, action: `see the message, ${byHand}` }];
  }
  if (!look.read.ok) {
    return [
      {
        ...base,
        problem: 'CannotCheck',
        severity: 'warning',
        message: `cannot tell whether an operator runs in its cluster (${look.server}): listing Leases there is refused (${look.read.message})`,
        action: `give its kubeconfig list on leases.coordination.k8s.io, ${byHand}`,
      },
    ];
  }
  if (watched(look.read.leases, namespace)) return [];
  return [
    {
      ...base,
      problem: 'OperatorNotRunning',
      severity: 'error',
      message: `no operator in its cluster (${look.server}) watches namespace ${namespace}, so its Sync ${namespace}/${name} there is never reconciled: ${history(look.read.leases, namespace, now)}`,
      action: `start the operator in that cluster, watching namespace ${namespace} or all`,
    },
  ];
}
