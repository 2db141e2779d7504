// `syncprims rollout status` and `history`: what they do (rollout.ts declares
// them); pause, resume and undo are in rollout-write.ts, approve in rollout-approve.ts.
import { DURATION_MESSAGE, parseDuration } from '../../api/duration.js';
import type { KubeClient } from '../../kube/client.js';
import type { ClusterFlags } from '../cluster.js';
import { followSync } from '../drive/drive-follow.js';
import { MARK, ProgressLine } from '../drive/progress.js';
import { CliError, UsageError } from '../errors.js';
import { parseSyncRef } from '../kind-name.js';
import { getSync } from '../../views/sync-api.js';
import { historyLines, listRevisions } from './rollout-revisions.js';
import { renderStatus, rolloutVerdict, type FleetObject, type RolloutVerdict } from './rollout-state.js';

export interface StatusFlags extends ClusterFlags {
  watch: boolean;
  timeout: string;
}

/** The FleetSync a rollout command acts on, once the cluster is known. */
export interface Subject {
  client: KubeClient;
  namespace: string;
  name: string;
  /** `FleetSync ns/name`, for lines. */
  what: string;
  /** `fleetsync/name -n ns`, for hints. */
  ref: string;
}

/** `fleetsync/NAME` (or `fsy/NAME`): the FleetSync's name. */
export function fleetName(target: string): string {
  return parseSyncRef(target, ['FleetSync']).name;
}

/** Runs `act` on the FleetSync named by `target`, in the cluster and namespace of `flags`. */
export async function withFleet(target: string, flags: ClusterFlags, act: (subject: Subject, obj: FleetObject) => Promise<void>): Promise<void> {
  const name = fleetName(target);
  const { withCluster } = await import('../cluster.js');
  await withCluster(flags, async ({ client, namespace }) => {
    const subject = { client, namespace, name, what: `FleetSync ${namespace}/${name}`, ref: `fleetsync/${name} -n ${namespace}` };
    await act(subject, (await getSync(client, 'FleetSync', namespace, name)) as FleetObject);
  });
}

export function timeoutOf(timeout: string): number {
  let ms: number;
  try {
    ms = parseDuration(timeout);
  } catch {
    throw new UsageError(`--timeout ${JSON.stringify(timeout)}: ${DURATION_MESSAGE}`);
  }
  if (ms <= 0) throw new UsageError(`--timeout ${timeout}: must be more than 0`);
  return ms;
}

/** Prints the status; with --watch follows it until it completes (exit 0), halts or waits on a person (exit 1). */
export async function rolloutStatus(target: string, flags: StatusFlags): Promise<void> {
  const timeoutMs = timeoutOf(flags.timeout);
  await withFleet(target, flags, async (subject, obj) => {
    const progress = ProgressLine.forStream(process.stdout);
    for (const line of renderStatus(obj, subject.what, progress.style)) progress.print(line);
    const first = rolloutVerdict(obj, subject.ref);
    if (!flags.watch) {
      if (first.state === 'halted') throw new CliError(`${subject.what} is Halted: ${first.message}`);
      return;
    }
    if (first.state !== 'working') return settle(subject, first, progress);
    progress.print('');
    const last = await follow(subject, obj, timeoutMs, flags.timeout, progress);
    for (const line of ['', ...renderStatus(last.obj, subject.what, progress.style)]) progress.print(line);
    settle(subject, last.verdict, progress);
  });
}

async function follow(subject: Subject, from: FleetObject, timeoutMs: number, timeout: string, progress: ProgressLine): Promise<{ obj: FleetObject; verdict: RolloutVerdict }> {
  const interrupt = new AbortController();
  const onSignal = (): void => interrupt.abort();
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    const result = await followSync(
      { client: subject.client, kind: 'FleetSync', namespace: subject.namespace, name: subject.name },
      from,
      {
        // followSync's own verdicts are a sync's: any settled one stops it, and ours is read again from the object.
        judge: (o) => {
          const v = rolloutVerdict(o as FleetObject, subject.ref);
          return v.state === 'working' ? v : { state: 'ready', message: '' };
        },
        onWaiting: (doing) => progress.update(doing),
        timeoutMs,
        signal: interrupt.signal,
      },
    );
    if ('stopped' in result) {
      const how = result.stopped === 'timeout' ? `timed out after ${timeout}` : 'interrupted';
      progress.end();
      throw new CliError(`${how} waiting for the rollout of ${subject.what} (last seen: ${result.doing}); follow it again: syncprims rollout status ${subject.ref}`);
    }
    const obj = result.obj as FleetObject;
    return { obj, verdict: rolloutVerdict(obj, subject.ref) };
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    progress.end();
  }
}

function settle(subject: Subject, verdict: RolloutVerdict, progress: ProgressLine): void {
  const { style } = progress;
  switch (verdict.state) {
    case 'complete':
      return progress.print(`${style.green(MARK.done)} the rollout of ${subject.what} is ${style.green('Complete')}: ${verdict.message}`);
    case 'halted':
      throw new CliError(`the rollout of ${subject.what} is Halted: ${verdict.message} (fix forward with a new template, or go back: syncprims rollout undo ${subject.ref})`);
    case 'held':
      throw new CliError(`the rollout of ${subject.what} is ${verdict.phase}: ${verdict.message} (go on: ${verdict.hint})`);
    case 'working':
      throw new CliError(`the rollout of ${subject.what} is still at work: ${verdict.doing}`);
  }
}

/** `rollout history`: the revisions, newest first. */
export async function rolloutHistory(target: string, flags: ClusterFlags): Promise<void> {
  await withFleet(target, flags, async (subject, obj) => {
    const revisions = await listRevisions(subject.client, subject.namespace, { name: subject.name, uid: obj.metadata.uid ?? '', recorded: obj.status?.revisions });
    if (revisions.length === 0) {
      console.log(`${subject.what} has no revisions yet (the operator keeps them as ControllerRevisions once it has seen the FleetSync)`);
      return;
    }
    for (const line of historyLines(revisions, obj.status ?? {})) console.log(line);
  });
}
