import { InvalidArgumentError, Option, type Command } from 'commander';
import type { ClusterFlags } from '../cluster.js';
import { parseBool } from '../drive/drive.js';
import { clusterOptions, examples } from '../options.js';
import type { StatusFlags } from './rollout-run.js';

/**
 * `syncprims rollout status|history|pause|resume|approve|undo fleetsync/NAME`:
 * drive a FleetSync's progressive rollout (issue 35). The cluster's modules
 * are loaded once the arguments are found good.
 */

const ARGUMENT = ['<fleetsync/name>', 'the FleetSync (fleetsync/NAME or fsy/NAME)'] as const;

export function addRolloutCommand(program: Command): void {
  const rollout = program
    .command('rollout')
    .description("drive a FleetSync's rollout of a template change, wave by wave: status, history, pause, resume, approve, undo");
  examples(rollout, [
    'syncprims rollout status fleetsync/app -n fleet          # follow until Complete (exit 0), Halted, Paused or AwaitingApproval (exit 1)',
    'syncprims rollout approve fleetsync/app -n fleet',
    'syncprims rollout undo fleetsync/app -n fleet --to-revision 3',
  ]);

  const status = clusterOptions(rollout.command('status').description(
    'print the phase, revisions, each wave and why it stands there; follow by watch until the rollout is Complete (exit 0), ' +
      'Halted (exit 1) or waits for a person, Paused or AwaitingApproval (exit 1, saying what to run)',
  ).argument(...ARGUMENT));
  status
    .addOption(new Option('-w, --watch [bool]', 'follow until it settles; --watch=false prints once (exit 1 only when Halted)').preset('true').argParser(parseBool).default(true))
    .option('--timeout <duration>', 'how long to follow at most (e.g. 30s, 5m, 1h)', '10m');
  examples(status, ['syncprims rollout status fleetsync/app -n fleet', 'syncprims rollout status fsy/app --watch=false']);
  status.action(async (target: string, flags: StatusFlags) => (await import('./rollout-run.js')).rolloutStatus(target, flags));

  const history = clusterOptions(rollout.command('history').description('list the template revisions (ControllerRevisions), newest first, marked current and update').argument(...ARGUMENT));
  examples(history, ['syncprims rollout history fleetsync/app -n fleet']);
  history.action(async (target: string, flags: ClusterFlags) => (await import('./rollout-run.js')).rolloutHistory(target, flags));

  const pause = clusterOptions(rollout.command('pause').description('admit no more clusters to the update revision (spec.rollout.paused: true)').argument(...ARGUMENT));
  examples(pause, ['syncprims rollout pause fleetsync/app -n fleet']);
  pause.action(async (target: string, flags: ClusterFlags) => (await import('./rollout-write.js')).rolloutPause(target, flags));

  const resume = clusterOptions(rollout.command('resume').description('admit clusters again (spec.rollout.paused removed)').argument(...ARGUMENT));
  examples(resume, ['syncprims rollout resume fleetsync/app -n fleet']);
  resume.action(async (target: string, flags: ClusterFlags) => (await import('./rollout-write.js')).rolloutResume(target, flags));

  const approve = clusterOptions(rollout.command('approve').description(
    'let a wave with approval: true start, for the update revision: creates a RolloutApproval naming you (SelfSubjectReview) as the approver ' +
      '(needs create on rolloutapprovals, not update on the FleetSync); refused when nothing awaits approval',
  ).argument(...ARGUMENT));
  approve.option('--wave <name>', 'the wave to approve (default: the one the rollout waits at)');
  examples(approve, ['syncprims rollout approve fleetsync/app -n fleet', 'syncprims rollout approve fleetsync/app --wave prod']);
  approve.action(async (target: string, flags: ClusterFlags & { wave?: string }) => (await import('./rollout-approve.js')).rolloutApprove(target, flags));

  const undo = clusterOptions(rollout.command('undo').description(
    'write a past revision back into spec.template (and spec.kind): it rolls out, wave by wave, like any change',
  ).argument(...ARGUMENT));
  undo.option('--to-revision <n>', 'the revision to go back to, as rollout history numbers them (default: the one before the template\'s)', parseRevision);
  examples(undo, ['syncprims rollout undo fleetsync/app -n fleet', 'syncprims rollout undo fleetsync/app --to-revision 2']);
  undo.action(async (target: string, flags: ClusterFlags & { toRevision?: number }) => (await import('./rollout-write.js')).rolloutUndo(target, flags));
}

function parseRevision(value: string): number {
  if (!/^[1-9][0-9]{0,9}$/.test(value)) throw new InvalidArgumentError('want a revision number (1, 2, ...), as syncprims rollout history lists them');
  return Number(value);
}
