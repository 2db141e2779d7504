import { Option, type Command } from 'commander';
import type { GetFlags } from './get-run.js';
import { KIND_HELP } from '../kind-name.js';
import { allNamespacesOption, clusterOptions, examples, operatorNamespaceOption, OUTPUT_FORMATS } from '../options.js';

/** `syncprims get [kind[/name]]`: the syncs, their state at a glance. */
export function addGetCommand(program: Command): void {
  const cmd = program
    .command('get')
    .description('list Syncs, RemoteSyncs, ProxySyncs and FleetSyncs: ready, reason (a FleetSync: its phase), revision, cluster (a FleetSync: its clusters ready/selected), pending dependencies, age')
    .argument('[kind[/name]]', `what to show: every kind (default), one kind, or one object; kinds: ${KIND_HELP}; or clusters (the namespace's cluster inventory)`);
  clusterOptions(cmd);
  allNamespacesOption(cmd);
  // wide: the table with more columns (the syncs': the revision being applied or rolled out, and the Ready message).
  cmd.addOption(new Option('-o, --output <format>', 'output format').choices([...OUTPUT_FORMATS, 'wide']).default('table'));
  cmd
    .option('--status-selector <selector>', 'only syncs whose Ready is: ready=true, ready=false, ready=unknown, ready!=true')
    .option('-w, --watch', 'after the list, print a line for each change until interrupted');
  operatorNamespaceOption(cmd, 'get clusters\' SHARD');
  examples(cmd, [
    'syncprims get -A',
    'syncprims get -A --status-selector ready=false      # everything failing',
    'syncprims get rsy -n fleet                           # the RemoteSyncs of a namespace',
    'syncprims get fsy -n fleet -o wide                   # the FleetSyncs: phase, clusters ready/selected, revisions',
    'syncprims get sync/app -o yaml',
    'syncprims get --watch',
    'syncprims get clusters -n fleet -o wide              # the cluster inventory, reachability, the replica holding each, what selects each',
  ]);
  cmd.action(async (target: string | undefined, flags: GetFlags & { operatorNamespace?: string }) => {
    if (target === 'clusters' || target === 'cluster') {
      const { getClusters } = await import('../cluster/cluster.js');
      return getClusters(flags);
    }
    if ((flags.output as string) === 'wide') Object.assign(flags, { output: 'table', wide: true });
    const { get, getRequest } = await import('./get-run.js');
    await get(getRequest(target, flags), flags);
  });
}

