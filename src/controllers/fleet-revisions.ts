// A FleetSync's template revisions, kept as ControllerRevisions (apps/v1, as
// a StatefulSet keeps its own): `<fleetsync>-<revision>`, its data the kind and
// template, its `revision` the order they were rolled out in (an undo to an
// old revision raises its number again). The last 10 are kept, and any that a
// child or the current revision still has. Read from the operator's watch.
// Only revisions the operator wrote for this FleetSync are used, raised or
// deleted (fleet/revisions.ts says which): any other that carries the
// FleetSync's label (planted, edited, or a StatefulSet's history whose pod
// template has our label) is left alone, and told once.
import { MAX_RECORDED_REVISIONS } from '../api/fleet.js';
import { API_VERSION } from '../api/kinds.js';
import { FLEET_REVISION_ANNOTATION, FLEETSYNC_LABEL, type FleetOwner } from '../fleet/children.js';
import { CONTROLLER_REVISIONS, revisionName, revisionTrust, type ControllerRevision, type RevisionData, type RevisionOwner } from '../fleet/revisions.js';
import type { Requester } from '../kube/client.js';
import { ApiError } from '../kube/errors.js';
import { collectionPath, objectPath, type KubeObject } from '../kube/resources.js';
import type { Informer } from '../runtime/informer.js';

export type { RevisionData } from '../fleet/revisions.js';

/** How many revisions of a FleetSync are kept (besides those still in use). */
export const KEPT_REVISIONS = 10;

const BY_FLEET = 'syncprims.dev/fleetsync-revisions';
/** How many untrusted revisions (by uid and resourceVersion) are remembered as told; past it the memory starts again. */
const MAX_TOLD = 10_000;

/** The FleetSync, and the digests its status says were recorded (fleet/revisions.ts). */
type Owner = Pick<FleetOwner, 'namespace'> & RevisionOwner;

/** A revision carrying the FleetSync's label that is not its own, and why. */
export interface UntrustedRevision {
  name: string;
  why: string;
}

export class FleetRevisions {
  /** `uid@resourceVersion` of the untrusted revisions already told. */
  private readonly told = new Set<string>();

  constructor(
    private readonly client: Requester,
    private readonly informer: Informer<KubeObject>,
  ) {
    if (!informer.store.hasIndex(BY_FLEET)) {
      informer.store.addIndex(BY_FLEET, (obj) => {
        const fleet = obj.metadata.labels?.[FLEETSYNC_LABEL];
        return fleet ? [`${obj.metadata.namespace}/${fleet}`] : [];
      });
    }
  }

  private labelled(owner: Owner): ControllerRevision[] {
    return this.informer.store.byIndex(BY_FLEET, `${owner.namespace}/${owner.name}`) as ControllerRevision[];
  }

  /** The FleetSync's own revisions, newest (highest number) first. */
  list(owner: Owner): ControllerRevision[] {
    return this.labelled(owner)
      .filter((r) => revisionTrust(r, owner).trusted)
      .sort((a, b) => (b.revision ?? 0) - (a.revision ?? 0));
  }

  /** What revision `revision` of the FleetSync holds, if it is still kept and is the FleetSync's own. */
  data(owner: Owner, revision: string): RevisionData | undefined {
    const obj = this.informer.store.get(`${owner.namespace}/${revisionName(owner.name, revision)}`) as ControllerRevision | undefined;
    const trust = obj && revisionTrust(obj, owner);
    return trust?.trusted && trust.digest === revision ? trust.data : undefined;
  }

  /** The digests of the own revisions kept, `update` (just recorded) first: what the status lists as recorded (`status.revisions`). */
  recorded(owner: Owner, update: string): string[] {
    const digests = this.list(owner).map((r) => r.metadata.annotations?.[FLEET_REVISION_ANNOTATION] ?? '');
    return [...new Set([update, ...digests])].slice(0, MAX_RECORDED_REVISIONS);
  }

  /** The bytes (as JSON) of the own revisions kept besides `except`, newest first: those the next record keeps. */
  keptBytes(owner: Owner, except: string): number[] {
    return this.list(owner)
      .filter((r) => r.metadata.annotations?.[FLEET_REVISION_ANNOTATION] !== except)
      .slice(0, KEPT_REVISIONS - 1)
      .map((r) => Buffer.byteLength(JSON.stringify(r.data)));
  }

  /** The revisions labelled with the FleetSync that are not its own, not told before (each is told once per version of it). */
  untold(owner: Owner): UntrustedRevision[] {
    const found: UntrustedRevision[] = [];
    for (const r of this.labelled(owner)) {
      const trust = revisionTrust(r, owner);
      const key = `${r.metadata.uid}@${r.metadata.resourceVersion}`;
      if (trust.trusted || this.told.has(key)) continue;
      if (this.told.size >= MAX_TOLD) this.told.clear();
      this.told.add(key);
      found.push({ name: r.metadata.name ?? '', why: trust.why });
    }
    return found.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  /**
   * Records `revision` as the newest: created when new, its number raised
   * when it is an old one rolled out again; then the oldest beyond
   * KEPT_REVISIONS go, but for those in `inUse`. Only the FleetSync's own
   * revisions are raised or deleted; an untrusted one of the same name stays
   * (the create is refused: the revision is then not kept).
   */
  async record(owner: FleetOwner & Owner, revision: string, data: RevisionData, inUse: Set<string>): Promise<void> {
    const list = this.list(owner);
    const newest = list[0]?.revision ?? 0;
    const mine = list.find((r) => r.metadata.annotations?.[FLEET_REVISION_ANNOTATION] === revision);
    if (!mine) await this.create(owner, revision, data, newest + 1);
    else if ((mine.revision ?? 0) < newest) {
      await this.client.request({
        method: 'PATCH',
        path: objectPath(CONTROLLER_REVISIONS, mine.metadata.name!, owner.namespace),
        contentType: 'application/merge-patch+json',
        // Only that object as it was read: one replaced meanwhile is not ours to raise.
        body: { metadata: { uid: mine.metadata.uid, resourceVersion: mine.metadata.resourceVersion }, revision: newest + 1 },
      }).catch(ignoreGoneOrReplaced);
    }
    const keep = new Set([...inUse, revision]);
    const old = this.list(owner)
      .slice(KEPT_REVISIONS)
      .filter((r) => !keep.has(r.metadata.annotations?.[FLEET_REVISION_ANNOTATION] ?? ''));
    for (const r of old) {
      await this.client
        .request({
          method: 'DELETE',
          path: objectPath(CONTROLLER_REVISIONS, r.metadata.name!, owner.namespace),
          // Only the revision as it was judged: one replaced meanwhile is not deleted.
          body: { apiVersion: 'v1', kind: 'DeleteOptions', preconditions: { uid: r.metadata.uid, resourceVersion: r.metadata.resourceVersion } },
        })
        .catch(ignoreGoneOrReplaced);
    }
  }

  private async create(owner: FleetOwner, revision: string, data: RevisionData, number: number): Promise<void> {
    const body: ControllerRevision = {
      apiVersion: 'apps/v1',
      kind: 'ControllerRevision',
      metadata: {
        name: revisionName(owner.name, revision),
        namespace: owner.namespace,
        labels: { [FLEETSYNC_LABEL]: owner.name },
        annotations: { [FLEET_REVISION_ANNOTATION]: revision },
        ownerReferences: [{ apiVersion: API_VERSION, kind: 'FleetSync', name: owner.name, uid: owner.uid, controller: true }],
      },
      data,
      revision: number,
    };
    await this.client.request({ method: 'POST', path: collectionPath(CONTROLLER_REVISIONS, owner.namespace), body }).catch((err: unknown) => {
      if (!(err instanceof ApiError && err.status === 409)) throw err;
    });
  }
}

/** Gone already (404), or changed since it was judged (409: a precondition failed): left alone. */
function ignoreGoneOrReplaced(err: unknown): void {
  if (!(err instanceof ApiError && (err.notFound || err.status === 409))) throw err;
}
