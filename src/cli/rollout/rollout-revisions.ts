import type { FleetChildKind, FleetTemplate } from '../../api/fleet.js';
import { FLEET_REVISION_ANNOTATION, FLEETSYNC_LABEL } from '../../fleet/children.js';
import type { KubeClient } from '../../kube/client.js';
import { collectionPath, type KubeObject, type ResourceInfo } from '../../kube/resources.js';
import { CliError, describeApiError } from '../errors.js';
import { ageOf } from '../format.js';
import { formatTable } from '../table.js';

/**
 * A FleetSync's template revisions, as the operator keeps them: a
 * ControllerRevision (apps/v1) per revision, labelled with the FleetSync,
 * its `revision` the order they were rolled out in. What `rollout history`
 * lists and `rollout undo` goes back to.
 */

const CONTROLLER_REVISIONS: ResourceInfo = { group: 'apps', version: 'v1', kind: 'ControllerRevision', resource: 'controllerrevisions', namespaced: true };

export interface Revision {
  /** 1, 2, 3... in the order rolled out. */
  number: number;
  /** The template's revision (16 hex digits). */
  digest: string;
  /** When it was last rolled out (RFC 3339). */
  at?: string;
  data?: { kind?: FleetChildKind; template?: FleetTemplate };
}

interface ControllerRevision extends KubeObject {
  data?: Revision['data'];
  revision?: number;
}

/** The FleetSync's revisions, newest first. */
export async function listRevisions(client: KubeClient, namespace: string, fleet: string): Promise<Revision[]> {
  let list: { items: ControllerRevision[] };
  try {
    list = await client.request({ path: collectionPath(CONTROLLER_REVISIONS, namespace), query: { labelSelector: `${FLEETSYNC_LABEL}=${fleet}` } });
  } catch (err) {
    throw describeApiError(err, `listing the revisions of FleetSync ${namespace}/${fleet} (controllerrevisions.apps)`) ?? err;
  }
  return sortRevisions(list.items.map(revisionOf));
}

function revisionOf(obj: ControllerRevision): Revision {
  // Raised again by an undo: the last write says when, not the creation.
  const times = ((obj.metadata.managedFields ?? []) as { time?: string }[]).map((f) => f.time).filter((t): t is string => t !== undefined);
  const at = [obj.metadata.creationTimestamp, ...times].filter((t): t is string => typeof t === 'string').sort().at(-1);
  return { number: obj.revision ?? 0, digest: obj.metadata.annotations?.[FLEET_REVISION_ANNOTATION] ?? '', at, data: obj.data };
}

export function sortRevisions(revisions: Revision[]): Revision[] {
  return [...revisions].sort((a, b) => b.number - a.number);
}

/** `rollout history`: one row per revision, newest first, marked current and update. */
export function historyLines(revisions: Revision[], status: { currentRevision?: string; updateRevision?: string }, now = Date.now()): string[] {
  const rows = sortRevisions(revisions).map((r) => {
    const marks = [r.digest === status.currentRevision ? 'current' : '', r.digest === status.updateRevision ? 'update' : ''].filter((m) => m !== '');
    return [String(r.number), r.digest, marks.join(', ') || '-', ageOf(r.at, now)];
  });
  return formatTable(['REVISION', 'DIGEST', 'STATUS', 'ROLLED OUT'], rows).lines;
}

/**
 * The revision `rollout undo` writes back: number `to`, or by default the
 * newest that is not the template's now (`update`: the update revision).
 */
export function undoTarget(revisions: Revision[], update: string | undefined, to?: number): Revision {
  const sorted = sortRevisions(revisions);
  const numbers = sorted.map((r) => r.number).join(', ') || 'none';
  if (to !== undefined) {
    const found = sorted.find((r) => r.number === to);
    if (!found) throw new CliError(`there is no revision ${to} (kept: ${numbers}; see syncprims rollout history)`);
    if (found.digest === update) throw new CliError(`revision ${to} (${found.digest}) is the template already: nothing to undo`);
    return checked(found);
  }
  const before = sorted.find((r) => r.digest !== update);
  if (!before) throw new CliError(`there is no earlier revision to go back to (kept: ${numbers})`);
  return checked(before);
}

function checked(r: Revision): Revision {
  if (!r.data?.template || !r.data.kind) throw new CliError(`revision ${r.number} (${r.digest}) holds no template: it cannot be written back`);
  return r;
}
