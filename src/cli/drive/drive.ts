import { InvalidArgumentError, Option, type Command } from 'commander';
import type { DriveAction, DriveFlags } from './drive-run.js';
import { KIND_HELP } from '../kind-name.js';
import { clusterOptions, examples } from '../options.js';

/** `syncprims reconcile|suspend|resume kind/name`: drive a sync, and follow it until it settles. */

interface DriveCommand {
  action: DriveAction;
  description: string;
  examples: string[];
}

const COMMANDS: DriveCommand[] = [
  {
    action: 'reconcile',
    description:
      'ask the operator to reconcile a sync now (annotation syncprims.dev/reconcile-requested-at) and follow it until it settles: ' +
      'exit 0 when it ends Ready, 1 when not (or not within --timeout)',
    examples: [
      'syncprims reconcile sync/app -n fleet',
      'syncprims reconcile psy/edge-app --timeout 2m      # a ProxySync: until its remote Sync has handled it too',
      'syncprims reconcile rsy/edge --wait=false          # ask, and return at once',
    ],
  },
  {
    action: 'suspend',
    description:
      'stop reconciling a sync (spec.suspend: true; for a ProxySync, its own: it stops maintaining the remote Sync, which runs on its own) ' +
      'and follow it until the operator shows it suspended',
    examples: ['syncprims suspend sync/app -n fleet', 'syncprims suspend psy/edge-app --wait=false'],
  },
  {
    action: 'resume',
    description:
      'reconcile a suspended sync again (spec.suspend: false, with a reconcile request) and follow it until it settles: ' +
      'exit 0 when it ends Ready, 1 when not',
    examples: ['syncprims resume sync/app -n fleet', 'syncprims resume psy/edge-app --timeout 10m'],
  },
];

export function addDriveCommands(program: Command): void {
  for (const def of COMMANDS) addDriveCommand(program, def);
}

function addDriveCommand(program: Command, def: DriveCommand): void {
  const cmd = program.command(def.action).description(def.description).argument('<kind/name>', `the sync; kinds: ${KIND_HELP}`);
  clusterOptions(cmd);
  cmd
    .addOption(
      new Option('--wait [bool]', 'follow the sync until it settles, showing what it is doing; --wait=false returns once the change is made')
        .preset('true')
        .argParser(parseBool)
        .default(true),
    )
    .option('--timeout <duration>', 'how long to follow it at most (e.g. 30s, 5m, 1h)', '5m');
  examples(cmd, def.examples);
  cmd.action(async (target: string, flags: DriveFlags) => {
    const { drive, driveRequest } = await import('./drive-run.js');
    await drive(driveRequest(def.action, target, flags), flags);
  });
}

export function parseBool(value: string): boolean {
  const v = value.toLowerCase();
  if (v === 'true' || v === '1' || v === 'yes') return true;
  if (v === 'false' || v === '0' || v === 'no') return false;
  throw new InvalidArgumentError('want true or false, e.g. --wait=false');
}
