// `syncprims rollout pause|resume|undo`: each one write to the
// FleetSync, as the CLI's field manager (the drive commands' own), then a
// line that says what was done and how to follow it (approve, which writes
// a RolloutApproval instead, is rollout-approve.ts).
import { ApiError } from '../../kube/errors.js';
import type { ClusterFlags } from '../cluster.js';
import { MARK } from '../drive/progress.js';
import { CliError, describeApiError, serverMessage } from '../errors.js';
import { syncObjectPath } from '../../views/sync-api.js';
import { listRevisions, undoTarget } from './rollout-revisions.js';
import { withFleet, type Subject } from './rollout-run.js';
import type { FleetObject } from './rollout-state.js';

/** The field manager of the CLI's writes (the operator's is `syncprims`). */
const FIELD_MANAGER = 'syncprims-cli';

type Patch = { type: 'merge'; body: Record<string, unknown> } | { type: 'json'; ops: Record<string, unknown>[] };

async function patchFleet(subject: Subject, patch: Patch): Promise<void> {
  const { client, namespace, name, what } = subject;
  try {
    await client.request({
      method: 'PATCH',
      path: syncObjectPath('FleetSync', namespace, name),
      query: { fieldManager: FIELD_MANAGER },
      contentType: patch.type === 'merge' ? 'application/merge-patch+json' : 'application/json-patch+json',
      body: patch.type === 'merge' ? patch.body : patch.ops,
    });
  } catch (err) {
    if (err instanceof ApiError && err.status === 403) {
      throw new CliError(`patching ${what}: forbidden (${serverMessage(err)}): ask for patch on syncprims.dev fleetsyncs`, undefined, { cause: err });
    }
    if (err instanceof ApiError && err.notFound) throw new CliError(`${what} not found (it was deleted just now)`, undefined, { cause: err });
    // A `test` of the JSON patch failed: the spec changed since it was read.
    if (err instanceof ApiError && (err.status === 409 || err.status === 422)) {
      throw new CliError(`${what} changed while this command ran (${serverMessage(err)}): look again and run it again`, undefined, { cause: err });
    }
    throw describeApiError(err, `patching ${what}`) ?? err;
  }
}

/** A JSON patch that applies only to the spec that was read (its generation). */
const atGeneration = (obj: FleetObject): Record<string, unknown> => ({ op: 'test', path: '/metadata/generation', value: obj.metadata.generation });

const followHint = (subject: Subject): string => `follow it: syncprims rollout status ${subject.ref}`;

/** `spec.rollout.paused: true`: no more clusters are admitted. */
export async function rolloutPause(target: string, flags: ClusterFlags): Promise<void> {
  await withFleet(target, flags, async (subject, obj) => {
    if (obj.spec?.rollout?.paused === true) return console.log(`${MARK.done} ${subject.what} is already paused`);
    await patchFleet(subject, { type: 'merge', body: { spec: { rollout: { paused: true } } } });
    console.log(`${MARK.action} ${subject.what} paused (spec.rollout.paused: true): no more clusters take the update revision; ${followHint(subject)}`);
  });
}

/** `spec.rollout.paused` removed (and `spec.rollout` with it when pausing made it). */
export async function rolloutResume(target: string, flags: ClusterFlags): Promise<void> {
  await withFleet(target, flags, async (subject, obj) => {
    const rollout = obj.spec?.rollout;
    if (rollout?.paused !== true) return console.log(`${MARK.done} ${subject.what} is not paused`);
    const onlyPaused = Object.keys(rollout).every((k) => k === 'paused');
    await patchFleet(subject, { type: 'merge', body: { spec: { rollout: onlyPaused ? null : { paused: null } } } });
    console.log(`${MARK.action} ${subject.what} resumed (spec.rollout.paused removed); ${followHint(subject)}`);
  });
}

/** Writes revision `to` (by default the one before the template's) back into `spec.template`, `spec.kind`, `spec.overrides` and `spec.substitute`: it rolls as any change. */
export async function rolloutUndo(target: string, flags: ClusterFlags & { toRevision?: number }): Promise<void> {
  await withFleet(target, flags, async (subject, obj) => {
    const revisions = await listRevisions(subject.client, subject.namespace, { name: subject.name, uid: obj.metadata.uid ?? '', recorded: obj.status?.revisions });
    const update = obj.status?.observedGeneration === obj.metadata.generation ? obj.status?.updateRevision : undefined;
    if (update === undefined) throw new CliError(`${subject.what}: the operator has not yet seen its latest change; wait for it (syncprims rollout status ${subject.ref}) and run undo again`);
    const back = undoTarget(revisions, update, flags.toRevision);
    // Replaced whole (not merged): a field the later template added must not stay; overrides and substitute as the revision had them.
    const ops = [atGeneration(obj), { op: 'add', path: '/spec/kind', value: back.data?.kind }, { op: 'replace', path: '/spec/template', value: back.data?.template }];
    for (const field of ['overrides', 'substitute'] as const) {
      if (back.data?.[field] !== undefined) ops.push({ op: 'add', path: `/spec/${field}`, value: back.data[field] });
      else if ((obj.spec as Record<string, unknown> | undefined)?.[field] !== undefined) ops.push({ op: 'remove', path: `/spec/${field}` });
    }
    await patchFleet(subject, { type: 'json', ops });
    console.log(`${MARK.action} ${subject.what} rolls back to revision ${back.number} (${back.digest}), from ${update}; ${followHint(subject)}`);
  });
}
