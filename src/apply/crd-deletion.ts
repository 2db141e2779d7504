import type { Requester } from '../kube/client.js';
import { CORE, objectPath } from '../kube/resources.js';
import type { ObjectResult, Owner } from './engine.js';
import { parseObjectId } from './inventory.js';

/** Written on a CRD being deleted that a sync waits for (see nudgeCrdDeletions): who waits, and since when. */
export const AWAITED_BY_ANNOTATION = 'syncprims.dev/awaited-by';

/** How soon a sync that waits for a CRD being deleted looks again (and nudges it again: see nudgeCrdDeletions). */
export const CRD_DELETION_RECHECK_MS = 5_000;

/**
 * The CRDs of an apply's results that are being deleted and owned by another
 * sync (the set pruned and applied again at once): the sync waits for each to
 * go (woken by its deletion), and each is nudged, as the API server's CRD
 * finalizer can stall (Kubernetes 1.36, issue 37): when its list of the
 * instances fails ("storage is (re)initializing", the instances' storage just
 * built) and its retry then reads a stale copy (409), it waits for an update
 * of the CRD, and ignores the one of its own status (only the Terminating
 * condition changed): nothing comes until its informer's resync, up to 5
 * minutes. Any other change requeues it: one annotation, naming the sync and
 * the time. Resolves to whether one was nudged; a refused nudge is not an
 * error (the deletion still ends, by the resync at the latest).
 */
export async function nudgeCrdDeletions(client: Requester, owner: Owner, results: readonly ObjectResult[]): Promise<boolean> {
  const leaving = results.filter((r) => r.action === 'conflict' && r.beingDeleted && parseObjectId(r.id).kind === 'CustomResourceDefinition');
  const value = `${owner.kind}/${owner.namespace}/${owner.name} ${new Date().toISOString()}`;
  await Promise.all(
    leaving.map((r) =>
      client
        .request({
          method: 'PATCH',
          path: objectPath(CORE.crds, parseObjectId(r.id).name),
          contentType: 'application/merge-patch+json',
          body: { metadata: { annotations: { [AWAITED_BY_ANNOTATION]: value } } },
          timeoutMs: 15_000,
        })
        .catch(() => undefined),
    ),
  );
  return leaving.length > 0;
}
