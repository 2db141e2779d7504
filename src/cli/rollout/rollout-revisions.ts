import { FLEET_REVISION_ANNOTATION, FLEETSYNC_LABEL } from '../../fleet/children.js';
import { CONTROLLER_REVISIONS, revisionTrust, type ControllerRevision, type RevisionData, type RevisionOwner } from '../../fleet/revisions.js';
import type { KubeClient } from '../../kube/client.js';
import { collectionPath } from '../../kube/resources.js';
import { CliError, describeApiError } from '../errors.js';
import { ageOf } from '../format.js';
import { formatTable } from '../table.js';

/**
 * A FleetSync's template revisions, as the operator keeps them: a
 * ControllerRevision (apps/v1) per revision, labelled with the FleetSync,
 * its `revision` the order they were rolled out in. What `rollout history`
 * lists and `rollout undo` goes back to: only those the operator wrote for
 * this FleetSync (fleet/revisions.ts); any other carrying its label is named
 * as ignored, and never written back.
 */

export interface Revision {
  /** 1, 2, 3... in the order rolled out. */
  number: number;
  /** The template's revision (16 hex digits). */
  digest: string;
  /** When it was last rolled out (RFC 3339). */
  at?: string;
  data?: Partial<RevisionData>;
  /** Why it is not the FleetSync's own (unset: it is): it is not listed, nor written back. */
  untrusted?: { name: string; why: string };
}

/** The revisions labelled with the FleetSync, newest first, each judged (its uid and `status.revisions`: fleet/revisions.ts). */
export async function listRevisions(client: KubeClient, namespace: string, fleet: RevisionOwner): Promise<Revision[]> {
  let list: { items: ControllerRevision[] };
  try {
    list = await client.request({ path: collectionPath(CONTROLLER_REVISIONS, namespace), query: { labelSelector: `${FLEETSYNC_LABEL}=${fleet.name}` } });
  } catch (err) {
    throw describeApiError(err, `listing the revisions of FleetSync ${namespace}/${fleet.name} (controllerrevisions.apps)`) ?? err;
  }
  return sortRevisions(list.items.map((obj) => revisionOf(obj, fleet)));
}

function revisionOf(obj: ControllerRevision, fleet: RevisionOwner): Revision {
  // Raised again by an undo: the last write says when, not the creation.
  const times = ((obj.metadata.managedFields ?? []) as { time?: string }[]).map((f) => f.time).filter((t): t is string => t !== undefined);
  const at = [obj.metadata.creationTimestamp, ...times].filter((t): t is string => typeof t === 'string').sort().at(-1);
  const number = typeof obj.revision === 'number' ? obj.revision : 0;
  const trust = revisionTrust(obj, fleet);
  if (trust.trusted) return { number, digest: trust.digest, at, data: trust.data };
  return { number, digest: String(obj.metadata.annotations?.[FLEET_REVISION_ANNOTATION] ?? ''), at, untrusted: { name: obj.metadata.name ?? '', why: trust.why } };
}

export function sortRevisions(revisions: Revision[]): Revision[] {
  return [...revisions].sort((a, b) => b.number - a.number);
}

/** `rollout history`: one row per revision of the FleetSync's own, newest first, marked current and update; then a line per one ignored. */
export function historyLines(revisions: Revision[], status: { currentRevision?: string; updateRevision?: string }, now = Date.now()): string[] {
  const sorted = sortRevisions(revisions);
  const rows = sorted
    .filter((r) => !r.untrusted)
    .map((r) => {
      const marks = [r.digest === status.currentRevision ? 'current' : '', r.digest === status.updateRevision ? 'update' : ''].filter((m) => m !== '');
      return [String(r.number), r.digest, marks.join(', ') || '-', ageOf(r.at, now)];
    });
  const ignored = sorted.flatMap((r) => (r.untrusted ? [`ignored: ControllerRevision ${r.untrusted.name} (revision ${r.number}): ${r.untrusted.why}`] : []));
  return [...formatTable(['REVISION', 'DIGEST', 'STATUS', 'ROLLED OUT'], rows).lines, ...ignored];
}

/**
 * The revision `rollout undo` writes back: number `to`, or by default the
 * newest that is not the template's now (`update`: the update revision).
 * One that is not the FleetSync's own is refused, saying why.
 */
export function undoTarget(revisions: Revision[], update: string | undefined, to?: number): Revision {
  const sorted = sortRevisions(revisions);
  const numbers = sorted.filter((r) => !r.untrusted).map((r) => r.number).join(', ') || 'none';
  if (to !== undefined) {
    // Of two of one number, the FleetSync's own.
    const found = sorted.find((r) => r.number === to && !r.untrusted) ?? sorted.find((r) => r.number === to);
    if (!found) throw new CliError(`there is no revision ${to} (kept: ${numbers}; see syncprims rollout history)`);
    if (!found.untrusted && found.digest === update) throw new CliError(`revision ${to} (${found.digest}) is the template already: nothing to undo`);
    return checked(found, numbers);
  }
  const before = sorted.find((r) => r.untrusted || r.digest !== update);
  if (!before) throw new CliError(`there is no earlier revision to go back to (kept: ${numbers})`);
  return checked(before, numbers);
}

function checked(r: Revision, numbers: string): Revision {
  if (r.untrusted) {
    throw new CliError(
      `revision ${r.number} (ControllerRevision ${r.untrusted.name}) is not this FleetSync's own: ${r.untrusted.why}; ` +
        `it is not written back (its own revisions: ${numbers}; choose one with --to-revision, see syncprims rollout history)`,
    );
  }
  if (!r.data?.template || !r.data.kind) throw new CliError(`revision ${r.number} (${r.digest}) holds no template: it cannot be written back`);
  return r;
}
