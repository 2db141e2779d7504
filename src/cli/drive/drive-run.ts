// `syncprims reconcile`, `suspend` and `resume`: what they do (drive.ts declares them). The
// cluster's modules (client, kubeconfigs) are loaded once the arguments are found good.
import { DURATION_MESSAGE, parseDuration } from '../../api/duration.js';
import { KIND_NAMES } from '../../api/kinds.js';
import { RECONCILE_REQUESTED_AT_ANNOTATION } from '../../api/marks.js';
import type { KubeClient } from '../../kube/client.js';
import { ApiError } from '../../kube/errors.js';
import type { KubeObject } from '../../kube/resources.js';
import type { ClusterFlags } from '../cluster.js';
import { followSync, type FollowResult } from './drive-follow.js';
import { isSuspended, NOT_TAKEN, remoteOf, verdictOf, type Goal } from './drive-state.js';
import { CliError, describeApiError, serverMessage, UsageError } from '../errors.js';
import { shortRevision } from '../format.js';
import { parseSyncRef, type KindName } from '../kind-name.js';
import { MARK, ProgressLine } from './progress.js';
import { getSync, syncObjectPath, withKind } from '../../views/sync-api.js';

export type DriveAction = 'reconcile' | 'suspend' | 'resume';

export interface DriveFlags extends ClusterFlags {
  wait: boolean;
  timeout: string;
}

/** What to do, checked before anything is loaded or asked (bad usage fails fast). */
export interface DriveRequest {
  action: DriveAction;
  ref: Required<KindName>;
  wait: boolean;
  timeoutMs: number;
  /** As given, for messages. */
  timeout: string;
}

export function driveRequest(action: DriveAction, target: string, flags: DriveFlags): DriveRequest {
  const ref = parseSyncRef(target);
  let timeoutMs: number;
  try {
    timeoutMs = parseDuration(flags.timeout);
  } catch {
    throw new UsageError(`--timeout ${JSON.stringify(flags.timeout)}: ${DURATION_MESSAGE}`);
  }
  if (timeoutMs <= 0) throw new UsageError(`--timeout ${flags.timeout}: must be more than 0`);
  return { action, ref, wait: flags.wait, timeoutMs, timeout: flags.timeout };
}

/** Who the command acts on, for its lines: `Sync fleet/app`. */
interface Subject {
  client: KubeClient;
  ref: Required<KindName>;
  namespace: string;
  what: string;
}

/** The field manager of the CLI's patches (the operator's is `syncprims`). */
const FIELD_MANAGER = 'syncprims-cli';

export async function drive(req: DriveRequest, flags: DriveFlags): Promise<void> {
  const { withCluster } = await import('../cluster.js');
  await withCluster(flags, async (cluster) => {
    const subject: Subject = { client: cluster.client, ref: req.ref, namespace: cluster.namespace, what: `${req.ref.kind} ${cluster.namespace}/${req.ref.name}` };
    const obj = await getSync(subject.client, req.ref.kind, subject.namespace, req.ref.name);
    if (obj.metadata.deletionTimestamp) throw new CliError(`${subject.what} is being deleted: there is nothing to ${req.action}`);
    const progress = ProgressLine.forStream(process.stdout);
    const steps = { reconcile, suspend, resume }[req.action];
    await steps(subject, obj, req, progress);
  });
}

/** Sets the annotation to a new value; follows until that request is handled and the sync settled. */
async function reconcile(subject: Subject, obj: KubeObject, req: DriveRequest, progress: ProgressLine): Promise<void> {
  const { ref, namespace, what } = subject;
  if (isSuspended(obj)) {
    throw new CliError(`${what} is suspended: resume it to reconcile it (syncprims resume ${KIND_NAMES[ref.kind].singular}/${ref.name} -n ${namespace})`);
  }
  const mark = new Date().toISOString();
  const patched = await patchSync(subject, { metadata: { annotations: { [RECONCILE_REQUESTED_AT_ANNOTATION]: mark } } });
  progress.print(`${MARK.action} reconcile of ${what} requested (${RECONCILE_REQUESTED_AT_ANNOTATION}: ${mark})`);
  if (req.wait) await settle(subject, patched, { kind: 'reconciled', mark }, req, progress);
}

/** Sets `spec.suspend`; follows until the operator shows it suspended. */
async function suspend(subject: Subject, obj: KubeObject, req: DriveRequest, progress: ProgressLine): Promise<void> {
  const { what } = subject;
  if (isSuspended(obj)) return progress.print(`${MARK.done} ${what} is already suspended`);
  const patched = await patchSync(subject, { spec: { suspend: true } });
  progress.print(`${MARK.action} suspending ${what} (spec.suspend: true)`);
  if (req.wait) await settle(subject, patched, { kind: 'suspended' }, req, progress);
}

/** Clears `spec.suspend` and asks for a reconcile with it (so that its end can be told); follows as reconcile does. */
async function resume(subject: Subject, obj: KubeObject, req: DriveRequest, progress: ProgressLine): Promise<void> {
  const { what } = subject;
  if (!isSuspended(obj)) return progress.print(`${MARK.done} ${what} is not suspended`);
  const mark = new Date().toISOString();
  const patched = await patchSync(subject, { metadata: { annotations: { [RECONCILE_REQUESTED_AT_ANNOTATION]: mark } }, spec: { suspend: false } });
  progress.print(`${MARK.action} resuming ${what} (spec.suspend: false)`);
  if (req.wait) await settle(subject, patched, { kind: 'reconciled', mark }, req, progress);
}

/** Follows the sync until it reaches the goal; a sync that ends not Ready, or not in time, is an error (exit 1). */
async function settle(subject: Subject, from: KubeObject, goal: Goal, req: DriveRequest, progress: ProgressLine): Promise<void> {
  const interrupt = new AbortController();
  const onSignal = (): void => interrupt.abort();
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  let result: FollowResult;
  try {
    result = await followSync(
      { client: subject.client, kind: subject.ref.kind, namespace: subject.namespace, name: subject.ref.name },
      from,
      { judge: (o) => verdictOf(o, goal), onWaiting: (doing) => progress.update(doing), timeoutMs: req.timeoutMs, signal: interrupt.signal },
    );
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    progress.end();
  }
  const { what } = subject;
  const { style } = progress;
  if ('stopped' in result) {
    const hint = result.doing === NOT_TAKEN ? ' (is the syncprims operator running?)' : '';
    const how = result.stopped === 'timeout' ? `timed out after ${req.timeout}` : 'interrupted';
    throw new CliError(`${how} waiting for ${what} (last seen: ${result.doing}${hint}); the request stands (follow it: syncprims get ${KIND_NAMES[subject.ref.kind].singular}/${subject.ref.name} -n ${subject.namespace} --watch)`);
  }
  const { settled, obj } = result;
  if (settled.state === 'failed') throw new CliError(`${what} is not Ready: ${settled.reason}: ${settled.message}`);
  if (settled.state === 'ready') return progress.print(`${style.green(MARK.done)} ${what} is ${style.green('Ready')}: ${shortRevision(settled.message)}`);
  const remote = subject.ref.kind === 'ProxySync' ? remoteOf(obj) : undefined;
  const left = remote ? `; its remote Sync ${remote} is no longer maintained (it runs on its own)` : '';
  progress.print(`${style.green(MARK.done)} ${what} is suspended (Ready stays ${settled.ready})${left}`);
}

/** A merge patch of the sync, as the CLI's field manager; errors said for a person. */
async function patchSync(subject: Subject, patch: Record<string, unknown>): Promise<KubeObject> {
  const { client, ref, namespace, what } = subject;
  try {
    const obj = await client.request<KubeObject>({
      method: 'PATCH',
      path: syncObjectPath(ref.kind, namespace, ref.name),
      query: { fieldManager: FIELD_MANAGER },
      contentType: 'application/merge-patch+json',
      body: patch,
    });
    return withKind(obj, ref.kind);
  } catch (err) {
    if (err instanceof ApiError && err.status === 403) {
      throw new CliError(`patching ${what}: forbidden (${serverMessage(err)}): ask for patch on syncprims.dev ${KIND_NAMES[ref.kind].plural}`, undefined, { cause: err });
    }
    if (err instanceof ApiError && err.notFound) throw new CliError(`${what} not found (it was deleted just now)`, undefined, { cause: err });
    throw describeApiError(err, `patching ${what}`) ?? err;
  }
}
