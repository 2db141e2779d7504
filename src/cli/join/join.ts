import type { Command } from 'commander';
import { clusterOptions, examples } from '../options.js';
import { DEFAULT_NAMESPACE } from '../install/install-manifests.js';
import type { JoinFlags } from './join-run.js';

/** `syncprims join`: installs the operator in a pull cluster, with the join bundle `cluster add --pull` wrote (docs/pull.md). */
export function addJoinCommand(program: Command): void {
  const cmd = program
    .command('join')
    .description('install the operator in a pull cluster (as install --apply does) with the join bundle of its managing cluster: it connects upward, the managing cluster never dials it')
    .requiredOption('--join-file <file>', 'the join bundle (syncprims cluster add NAME --pull wrote it)')
    .option('--image <ref>', "the operator's image (default: ghcr.io/syncprims/syncprims:v<version>)")
    .option('--cluster-id <id>', "the operator's --cluster-id (default: the uid of the cluster's kube-system namespace)");
  clusterOptions(cmd, { kubeconfig: 'the pull cluster to install into (default: $KUBECONFIG, ~/.kube/config)', namespace: `the operator's namespace (default: ${DEFAULT_NAMESPACE})` });
  examples(cmd, [
    'syncprims cluster add edge-7 --pull -n fleet --join-file edge-7.join.yaml   # in the managing cluster',
    'syncprims join --kubeconfig edge-7.kubeconfig --join-file edge-7.join.yaml   # in edge-7',
    'syncprims run --kubeconfig edge-7.kubeconfig --upstream-kubeconfig edge-7.join.yaml   # or as a local process',
  ]);
  cmd.action(async (flags: JoinFlags) => (await import('./join-run.js')).join(flags));
}
