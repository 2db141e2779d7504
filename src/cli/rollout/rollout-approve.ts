// `syncprims rollout approve`: creates a RolloutApproval of the wave the
// rollout waits at, for its update revision, with the current user (as the
// API server names them: SelfSubjectReview) as its approver. It writes
// nothing to the FleetSync: approving is a right of its own (create
// rolloutapprovals), apart from editing it.
import { API_VERSION } from '../../api/kinds.js';
import { APPROVAL_KIND, APPROVAL_RESOURCE, APPROVER_MESSAGE, type RolloutApprovalSpec } from '../../api/approval.js';
import { approvalName } from '../../fleet/approvals.js';
import type { Requester } from '../../kube/client.js';
import { ApiError } from '../../kube/errors.js';
import { collectionPath, objectPath, type KubeObject } from '../../kube/resources.js';
import type { ClusterFlags } from '../cluster.js';
import { MARK } from '../drive/progress.js';
import { CliError, describeApiError, serverMessage, UsageError } from '../errors.js';
import { withFleet, type Subject } from './rollout-run.js';
import { awaitingWave, type FleetObject } from './rollout-state.js';

const FIELD_MANAGER = 'syncprims-cli';

interface SelfSubjectReview {
  status?: { userInfo?: { username?: string } };
}

/** The username the API server knows the client by (authentication.k8s.io/v1 SelfSubjectReview, GA since 1.28). */
async function currentUser(client: Requester): Promise<string> {
  let review: SelfSubjectReview;
  try {
    review = await client.request<SelfSubjectReview>({
      method: 'POST',
      path: '/apis/authentication.k8s.io/v1/selfsubjectreviews',
      body: { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' },
    });
  } catch (err) {
    throw describeApiError(err, 'asking the API server who this is (SelfSubjectReview)') ?? err;
  }
  const username = review.status?.userInfo?.username;
  if (!username) throw new CliError('the API server did not say who this is (SelfSubjectReview without a username): an approval must name its approver');
  return username;
}

/** The wave to approve: `--wave`, else the one the rollout waits at; refused when nothing awaits approval or the wave has no approval gate. */
function waveToApprove(subject: Subject, obj: FleetObject, asked: string | undefined): { wave: string; revision: string } {
  const status = obj.status ?? {};
  const waiting = awaitingWave(obj);
  if (waiting === undefined || !status.updateRevision) {
    const seen = status.observedGeneration === obj.metadata.generation ? `it is ${status.phase ?? 'not rolling'}` : 'the operator has not yet seen its latest change';
    throw new CliError(`nothing of ${subject.what} awaits approval: ${seen}${status.message ? ` (${status.message})` : ''}`);
  }
  const wave = asked ?? waiting;
  const gated = (obj.spec?.rollout?.waves ?? []).filter((w) => w.approval).map((w) => w.name);
  if (!gated.includes(wave)) throw new UsageError(`--wave ${wave}: no wave of ${subject.what} by that name waits for approval (waves with approval: ${gated.join(', ') || 'none'})`);
  return { wave, revision: status.updateRevision };
}

/** Creates the RolloutApproval; one already there for the wave and revision is said, not doubled. */
export async function rolloutApprove(target: string, flags: ClusterFlags & { wave?: string }): Promise<void> {
  await withFleet(target, flags, async (subject, obj) => {
    const { wave, revision } = waveToApprove(subject, obj, flags.wave);
    const approver = await currentUser(subject.client);
    const name = approvalName(subject.name, wave, revision);
    const spec: RolloutApprovalSpec = { fleetSync: subject.name, revision, wave, approver };
    const what = `RolloutApproval ${subject.namespace}/${name}`;
    const body: KubeObject = { apiVersion: API_VERSION, kind: APPROVAL_KIND, metadata: { name, namespace: subject.namespace }, spec };
    try {
      await subject.client.request({ method: 'POST', path: collectionPath(APPROVAL_RESOURCE, subject.namespace), query: { fieldManager: FIELD_MANAGER }, body });
    } catch (err) {
      if (err instanceof ApiError && err.status === 409) return sayExisting(subject, name, what);
      if (err instanceof ApiError && err.status === 403 && !serverMessage(err).includes(APPROVER_MESSAGE)) {
        throw new CliError(`creating ${what}: forbidden (${serverMessage(err)}): ask for create on syncprims.dev rolloutapprovals in ${subject.namespace}`, undefined, { cause: err });
      }
      if (err instanceof ApiError && (err.status === 403 || err.status === 422)) throw new CliError(`the API server refused ${what}: ${serverMessage(err)}`, undefined, { cause: err });
      throw describeApiError(err, `creating ${what}`) ?? err;
    }
    console.log(`${MARK.action} wave ${wave} of ${subject.what} approved for revision ${revision} by ${approver} (${what}); follow it: syncprims rollout status ${subject.ref}`);
  });
}

/** The approval of that name is there already: who gave it. */
async function sayExisting(subject: Subject, name: string, what: string): Promise<void> {
  let existing: { spec?: Partial<RolloutApprovalSpec>; metadata?: { creationTimestamp?: string } };
  try {
    existing = await subject.client.request({ path: objectPath(APPROVAL_RESOURCE, name, subject.namespace) });
  } catch (err) {
    throw describeApiError(err, `reading ${what}`) ?? err;
  }
  const { wave, revision, approver } = existing.spec ?? {};
  console.log(`${MARK.done} wave ${wave} of ${subject.what} is already approved for revision ${revision} by ${approver} at ${existing.metadata?.creationTimestamp} (${what})`);
}
