// A FleetSync's template revisions, kept as ControllerRevisions (apps/v1, as
// a StatefulSet keeps its own): `<fleetsync>-<revision>`, its data the kind and
// template, its `revision` the order they were rolled out in (an undo to an
// old revision raises its number again). The last 10 are kept, and any that a
// child or the current revision still has. Read from the operator's watch.
import type { FleetTemplate } from '../api/fleet.js';
import { API_VERSION } from '../api/kinds.js';
import type { FleetChildKind } from '../api/fleet.js';
import { FLEET_REVISION_ANNOTATION, FLEETSYNC_LABEL, type FleetOwner } from '../fleet/children.js';
import type { Requester } from '../kube/client.js';
import { ApiError } from '../kube/errors.js';
import { collectionPath, objectPath, type KubeObject, type ResourceInfo } from '../kube/resources.js';
import type { Informer } from '../runtime/informer.js';

/** How many revisions of a FleetSync are kept (besides those still in use). */
export const KEPT_REVISIONS = 10;

export const CONTROLLER_REVISIONS: ResourceInfo = { group: 'apps', version: 'v1', kind: 'ControllerRevision', resource: 'controllerrevisions', namespaced: true };

const BY_FLEET = 'syncprims.dev/fleetsync-revisions';

/** What a revision holds: what each child of that revision is made from. */
export interface RevisionData {
  kind: FleetChildKind;
  template: FleetTemplate;
}

interface ControllerRevision extends KubeObject {
  data?: RevisionData;
  revision?: number;
}

export class FleetRevisions {
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

  /** The FleetSync's revisions, newest (highest number) first. */
  list(owner: Pick<FleetOwner, 'namespace' | 'name'>): ControllerRevision[] {
    const all = this.informer.store.byIndex(BY_FLEET, `${owner.namespace}/${owner.name}`) as ControllerRevision[];
    return all.sort((a, b) => (b.revision ?? 0) - (a.revision ?? 0));
  }

  /** What revision `revision` of the FleetSync holds, if it is still kept. */
  data(owner: Pick<FleetOwner, 'namespace' | 'name'>, revision: string): RevisionData | undefined {
    return (this.informer.store.get(`${owner.namespace}/${revisionName(owner.name, revision)}`) as ControllerRevision | undefined)?.data;
  }

  /**
   * Records `revision` as the newest: created when new, its number raised
   * when it is an old one rolled out again; then the oldest beyond
   * KEPT_REVISIONS go, but for those in `inUse`.
   */
  async record(owner: FleetOwner, revision: string, data: RevisionData, inUse: Set<string>): Promise<void> {
    const list = this.list(owner);
    const newest = list[0]?.revision ?? 0;
    const mine = list.find((r) => r.metadata.annotations?.[FLEET_REVISION_ANNOTATION] === revision);
    if (!mine) await this.create(owner, revision, data, newest + 1);
    else if ((mine.revision ?? 0) < newest) {
      await this.client.request({
        method: 'PATCH',
        path: objectPath(CONTROLLER_REVISIONS, mine.metadata.name!, owner.namespace),
        contentType: 'application/merge-patch+json',
        body: { revision: newest + 1 },
      });
    }
    const keep = new Set([...inUse, revision]);
    const old = this.list(owner)
      .slice(KEPT_REVISIONS)
      .filter((r) => !keep.has(r.metadata.annotations?.[FLEET_REVISION_ANNOTATION] ?? ''));
    for (const r of old) {
      await this.client.request({ method: 'DELETE', path: objectPath(CONTROLLER_REVISIONS, r.metadata.name!, owner.namespace) }).catch(ignoreGone);
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

/** `<fleetsync>-<revision>` (a revision is 16 hex digits: at most 80 characters). */
export function revisionName(fleet: string, revision: string): string {
  return `${fleet}-${revision}`;
}

function ignoreGone(err: unknown): void {
  if (!(err instanceof ApiError && err.notFound)) throw err;
}
