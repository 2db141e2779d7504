// What `syncprims doctor` finds in FleetSyncs (pure): one that is not Ready,
// with the clusters that fail it (its status.failures) and what to do; each
// cluster whose template it cannot make (cli/unmade-read.ts), and how to fix it.
import { Reason } from '../../api/conditions.js';
import type { FleetSyncStatus } from '../../api/fleet.js';
import type { KubeObject } from '../../kube/resources.js';
import { findCondition, type Condition } from '../../runtime/conditions.js';
import type { UnmadeTemplate } from '../../views/fleet-unmade.js';
import type { Finding } from './doctor-findings.js';

/** Failing clusters named in a finding; the rest are counted. */
const NAMED = 5;

/** FleetSyncs with Ready=False: which clusters fail it and why, or what else holds it. */
export function fleetFindings(objects: readonly KubeObject[]): Finding[] {
  return objects.flatMap((o): Finding[] => {
    if (o.kind !== 'FleetSync') return [];
    const status = (o.status ?? {}) as FleetSyncStatus;
    const ready = findCondition(status.conditions as Condition[] | undefined, 'Ready');
    if (ready?.status !== 'False') return [];
    const namespace = o.metadata.namespace ?? '';
    const name = o.metadata.name ?? '';
    return [
      {
        problem: 'FleetSyncNotReady',
        severity: 'error',
        namespace,
        object: `FleetSync/${name}`,
        message: fleetMessage(status, ready),
        action: fleetAction(ready.reason, namespace, name),
        since: ready.lastTransitionTime,
      },
    ];
  });
}

function fleetMessage(status: FleetSyncStatus, ready: Condition): string {
  const failures = status.failures ?? [];
  const counts = status.clusters;
  const of = counts ? `${counts.ready}/${counts.selected} clusters Ready` : undefined;
  if (failures.length === 0) return [ready.reason, of, ready.message].filter(Boolean).join(': ');
  const named = failures.slice(0, NAMED).map((f) => `${f.cluster} (${f.reason}: ${oneLine(f.message)})`);
  const failed = counts?.failed ?? failures.length;
  const more = failed > named.length ? `, and ${failed - named.length} more` : '';
  const unreachable = counts && counts.unreachable > 0 ? `; ${counts.unreachable} unreachable` : '';
  return `${of ?? ready.reason}; failing: ${named.join(', ')}${more}${unreachable}`;
}

function fleetAction(reason: string, namespace: string, name: string): string {
  const tree = `syncprims tree fleetsync/${name} -n ${namespace}`;
  if (reason === Reason.Suspended) return `resume it (syncprims resume fleetsync/${name} -n ${namespace}), or let it be: it is suspended`;
  if (reason === Reason.ClusterUnreachable) {
    return `make those clusters reachable from the operator (syncprims get clusters -n ${namespace} shows which answer); their children recover by themselves`;
  }
  if (reason === Reason.ClustersFailing) return `fix what each failing cluster's child says (${tree} shows them and what they applied); the FleetSync follows its children`;
  return `fix what its Ready condition says (${tree})`;
}

/** One finding per FleetSync and cluster whose template cannot be made. */
export function unmadeFindings(unmade: readonly UnmadeTemplate[]): Finding[] {
  return unmade.map((u) => ({
    problem: u.reason,
    severity: 'error',
    namespace: u.namespace,
    object: `FleetSync/${u.fleetSync}`,
    message: `cluster ${u.cluster}: ${oneLine(u.message)}`,
    action: unmadeAction(u),
  }));
}

function unmadeAction({ reason, namespace, fleetSync, cluster }: UnmadeTemplate): string {
  const check = `syncprims build fleetsync/${fleetSync} --cluster ${cluster} -n ${namespace} prints its child once it can be made`;
  if (reason === Reason.SubstitutionFailed) {
    return `give cluster ${cluster} the value named (syncprims cluster add ${cluster} --kubeconfig FILE --value NAME=VALUE -n ${namespace} for a Secret's cluster: it sets all its labels and values anew; else the annotation values.syncprims.dev/NAME on its Cluster or ClusterProfile), or write a default in the template (\${NAME:=default}); ${check}`;
  }
  return `fix the override named in FleetSync ${fleetSync} (a patch's path must be in the template, the parent of an add's; or narrow the override's clusters so that it does not select ${cluster}); ${check}`;
}

function oneLine(text: string): string {
  return text.replace(/\s*\n\s*/g, ' ').trim();
}
