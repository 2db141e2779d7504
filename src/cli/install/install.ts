import type { Command } from 'commander';
import type { InstallFlags } from './install-run.js';
import { DEFAULT_NAMESPACE } from './install-manifests.js';
import { clusterOptions, examples, outputOption } from '../options.js';

/** `syncprims install`: the operator's manifests, printed or applied. */
export function addInstallCommand(program: Command): void {
  const cmd = program
    .command('install')
    .description("print (default) or apply the operator's manifests: CRDs, namespace, ServiceAccount, RBAC, Deployment, metrics Service")
    .option('--image <ref>', "the operator's image (default: ghcr.io/syncprims/syncprims:v<version>)")
    .option('--cluster-id <id>', "the operator's --cluster-id (default: the uid of the cluster's kube-system namespace)")
    .option('--default-service-account <name>', "the operator's --default-service-account: syncs that name none apply as this account of their namespace")
    .option('--multi-tenant', "locked down: syncs that name no account apply as their namespace's default account (or --default-service-account's), and the operator's own account writes none of what they apply")
    .option('--replicas <n>', 'run N replicas sharing the work (syncprims run --shards: each holds some of the remote clusters and namespaces) instead of 2 electing a leader')
    .option('--apply', 'apply them (server-side) to the cluster instead of printing them');
  clusterOptions(cmd, {
    kubeconfig: 'with --apply: the cluster to install into (default: $KUBECONFIG, ~/.kube/config)',
    namespace: `the operator's namespace (default: ${DEFAULT_NAMESPACE})`,
  });
  outputOption(cmd, ['yaml', 'json'], 'yaml');
  cmd.addHelpText('after', `
The same manifests are in config/ as a kustomize base (kubectl apply --server-side -k config/).
The Deployment runs 2 replicas with leader election (one works, the other stands by); with --replicas N,
N replicas with --shards, which share the remote clusters and namespaces (docs/shards.md; --replicas 1
is one sharded replica). docs/rbac.md says what the roles grant and why.`);
  examples(cmd, [
    'syncprims install | kubectl apply --server-side -f -',
    'syncprims install --apply --kubeconfig ~/.kube/mgmt --cluster-id mgmt',
    'syncprims install --image registry.example.com/syncprims:v0.1.0 -n platform > syncprims.yaml',
    'syncprims install --replicas 3 --apply          # three replicas, each holding a share of the clusters',
  ]);
  cmd.action(async (flags: InstallFlags) => (await import('./install-run.js')).install(flags));
}
