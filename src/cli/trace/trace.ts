import type { Command } from 'commander';
import type { TraceFlags } from './trace-run.js';
import { clusterOptions, examples, outputOption } from '../options.js';

/** `syncprims trace resource/name`: which sync applied an object, from which source and revision, and that sync's state. */
export function addTraceCommand(program: Command): void {
  const cmd = program
    .command('trace')
    .description(
      'show which sync applied an object (of any kind, in this cluster or a remote one), from which source and revision, and that sync\'s state; up to the managing cluster',
    )
    .argument('<resource/name>', 'the object, as kubectl names it: configmap/app, deploy/web, deployments.apps/web, sync/app');
  clusterOptions(cmd, { kubeconfig: 'kubeconfig of the cluster the object is in (default: $KUBECONFIG, ~/.kube/config, in-cluster)' });
  outputOption(cmd);
  cmd
    .option('--mgmt-kubeconfig <file>', 'kubeconfig of the managing cluster, to follow an object of a remote cluster to its RemoteSync or ProxySync')
    .option('--mgmt-context <name>', 'context in --mgmt-kubeconfig (default: its current context)')
    .option('--mgmt-cluster-id <id>', "the managing operator's --cluster-id, when it was given one (default: the uid of the managing cluster's kube-system namespace)");
  examples(cmd, [
    'syncprims trace configmap/app-config -n apps',
    'syncprims trace deploy/web -n apps --kubeconfig ~/.kube/edge-1 --mgmt-kubeconfig ~/.kube/mgmt',
    'syncprims trace namespace/apps -o json',
  ]);
  cmd.action(async (target: string, flags: TraceFlags) => {
    const { trace, traceRequest } = await import('./trace-run.js');
    await trace(traceRequest(target, flags), flags);
  });
}
