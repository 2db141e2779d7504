import type { Command } from 'commander';
import type { EventsFlags } from './events-run.js';
import { KIND_HELP, parseSyncRef } from '../kind-name.js';
import { clusterOptions, examples, outputOption } from '../options.js';

/** `syncprims events kind/name`: what happened to a sync and to what it applied, in time order. */
export function addEventsCommand(program: Command): void {
  const cmd = program
    .command('events')
    .description('show the Events of a sync and of the objects it applied (in its target cluster, remote too), oldest first')
    .argument('<kind/name>', `the sync; kinds: ${KIND_HELP}`)
    .option('--sync-only', "only the sync's own Events, not those of the objects it applied");
  clusterOptions(cmd);
  outputOption(cmd);
  cmd.addHelpText('after', `
The objects are those of the sync's inventory (status.inventory). For a RemoteSync their Events are
read in its cluster; for a ProxySync, the Events of the Sync it keeps in its cluster and of what that
Sync applied. Objects in a remote cluster show as [cluster] Kind/name. A remote cluster that cannot
be reached is said in one line on stderr, and the other Events are still shown. Following a sync
into its cluster needs get on its kubeconfig Secret.`);
  examples(cmd, [
    'syncprims events sync/app -n apps',
    'syncprims events rsy/edge-app --sync-only',
    'syncprims events psy/fleet -o json | jq ".items[] | select(.type == \\"Warning\\")"',
  ]);
  cmd.action(async (target: string, flags: EventsFlags) => {
    const ref = parseSyncRef(target);
    await (await import('./events-run.js')).events(ref, flags);
  });
}
