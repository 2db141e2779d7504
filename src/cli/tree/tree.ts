import type { Command } from 'commander';
import type { TreeFlags } from './tree-run.js';
import { KIND_HELP } from '../kind-name.js';
import { clusterOptions, examples, outputOption } from '../options.js';

/** `syncprims tree [kind/name]`: what a sync depends on, what depends on it, and what it applied, across clusters. */
export function addTreeCommand(program: Command): void {
  const cmd = program
    .command('tree')
    .description(
      'show a sync as a tree: what it depends on and what depends on it (recursively), and the objects it applied with their kstatus, following RemoteSyncs and ProxySyncs into their clusters; a FleetSync with its children, one per cluster; with no argument, every sync of the namespace, each FleetSync\'s children under it',
    )
    .argument('[kind/name]', `the sync (none: every sync of the namespace); kinds: ${KIND_HELP}`);
  clusterOptions(cmd, { kubeconfig: 'kubeconfig of the managing cluster, where the sync lives (default: $KUBECONFIG, ~/.kube/config, in-cluster)' });
  cmd.option('--cluster-id <id>', "the managing cluster's id, as given to the operator's --cluster-id (default: the uid of its kube-system namespace): in a remote cluster only objects of that origin are a sync's");
  outputOption(cmd);
  cmd.addHelpText(
    'after',
    `
Following a RemoteSync or ProxySync into its cluster reads its kubeconfig Secret (get secrets in the
sync's namespace), checked as the operator checks it: a kubeconfig that runs a command (exec,
auth-provider), names local files or skips TLS verification is refused, never used. A cluster that
cannot be reached or read is said on its node; the exit code stays 0.`,
  );
  examples(cmd, [
    'syncprims tree sync/app -n apps',
    'syncprims tree rsy/edge-apps            # into the RemoteSync\'s cluster',
    'syncprims tree psy/edge -o json | jq ".cluster"',
    'syncprims tree fsy/baseline                 # each cluster\'s child and what it has there',
    'syncprims tree -n fleet                     # every sync of the namespace',
  ]);
  cmd.action(async (target: string | undefined, flags: TreeFlags) => {
    const { tree, treeRequest } = await import('./tree-run.js');
    await tree(treeRequest(target), flags);
  });
}
