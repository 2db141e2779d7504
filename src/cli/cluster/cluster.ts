import type { Command } from 'commander';
import { clusterOptions, examples, operatorNamespaceOption } from '../options.js';
import type { AddFlags } from './cluster-add.js';
import type { PullFlags } from './cluster-pull.js';
import type { ListFlags, ListOutput } from './cluster-list.js';
import type { ClusterFlags } from '../cluster.js';

/** The output formats of `syncprims get clusters` / `syncprims cluster list`. */
export const CLUSTER_OUTPUTS: readonly ListOutput[] = ['table', 'wide', 'json', 'yaml'];

/** `syncprims cluster add|list`: a namespace's cluster inventory (the clusters FleetSyncs select from). */
export function addClusterCommand(program: Command): void {
  const cluster = program.command('cluster').description("register clusters in a namespace's inventory, and list them (FleetSyncs select from it)");
  const add = cluster
    .command('add')
    .description(
      'register a cluster: its kubeconfig (one context, files read in, checked as the operator checks it) in the Secret <name>-kubeconfig labelled syncprims.dev/cluster=<name>; or, with --pull, a cluster that connects upward (no credential of it kept here) and its join bundle',
    )
    .argument('<name>', "the cluster's name (a DNS label)")
    .option('--kubeconfig <file>', "the cluster's kubeconfig (a push cluster: the managing cluster dials it)")
    .option('--pull', 'a pull cluster: never dialled; its own operator connects upward with the join bundle written (docs/pull.md)')
    .option('--join-file <file>', 'with --pull: where the join bundle goes (default: <name>.join.yaml, mode 0600)')
    .option('--token-ttl <duration>', "with --pull: the join bundle token's life, at least 10m (its operator renews it; default: 24h)")
    .option('--context <name>', 'its context to register (default: its current context)')
    .option('--label <key=value>', 'a label of the cluster, for FleetSync selectors (repeatable)', (v: string, all: string[]) => [...all, v], [] as string[])
    .option(
      '--value <key=value>',
      "a value of the cluster, for a FleetSync's ${key} (repeatable; key= is the empty string): the annotation values.syncprims.dev/<key> of its Secret",
      (v: string, all: string[]) => [...all, v],
      [] as string[],
    )
    .option('-n, --namespace <ns>', 'the namespace of the inventory (default: the managing context\'s, else "default")')
    .option('--mgmt-kubeconfig <file>', 'kubeconfig of the managing cluster (default: $KUBECONFIG, ~/.kube/config, in-cluster)')
    .option('--mgmt-context <name>', 'context of the managing cluster');
  add.addHelpText(
    'after',
    `
Each run sets the cluster's labels and values to those it is given: running it again with other
--label and --value flags replaces them, and a label or value not given again is removed (a
value annotation set otherwise, e.g. by kubectl annotate, too). A value's key is the name part of an
annotation (letters, digits, '-', '_', '.'); a template writes it with every character outside
[A-Za-z0-9_] as _ (--value cloud.zone=b is \${cloud_zone}); \${cluster_name} is always the name.

--pull registers a cluster the managing cluster never dials: the Secret <name>-kubeconfig of type
syncprims.dev/pull-cluster with no data, labelled syncprims.dev/cluster-mode=pull; the namespace
syncprims-pull-<namespace>-<name> for what is addressed to it, and there its identity (the
ServiceAccount, Role and RoleBinding syncprims-pull-agent: it reads its own assignments only). It
then writes the join bundle (a kubeconfig of the managing cluster with a token of that identity;
the token is never printed). Running it again updates the labels and values and issues a new
token; tokens issued before stay valid until they expire (syncprims cluster revoke ends them all).
A push cluster is not turned into a pull one, nor back: delete its Secret first.`,
  );
  examples(add, [
    'syncprims cluster add edge-1 --kubeconfig edge-1.kubeconfig --label env=prod --label region=eu -n fleet',
    'syncprims cluster add edge-1 --kubeconfig edge-1.kubeconfig --label env=prod --value region=eu-west --value mirror=registry.eu.example.com -n fleet',
    'syncprims cluster add edge-2 --kubeconfig ~/.kube/config --context edge-2 -n fleet',
    'syncprims cluster add edge-7 --pull --label env=prod -n fleet --join-file edge-7.join.yaml   # then, on edge-7: syncprims run --upstream-kubeconfig edge-7.join.yaml',
  ]);
  add.action(async (name: string, flags: AddFlags & PullFlags & { kubeconfig?: string; pull?: boolean }) => {
    const { addMode, addPullCluster } = await import('./cluster-pull.js');
    if (addMode(flags) === 'pull') return addPullCluster(name, flags);
    const { addCluster } = await import('./cluster-add.js');
    await addCluster(name, { ...flags, kubeconfig: flags.kubeconfig! });
  });

  addRevokeCommand(cluster);

  const list = cluster.command('list').alias('ls').description('list the clusters of a namespace (as syncprims get clusters)');
  clusterOptions(list);
  list.option('-o, --output <format>', `output format: ${CLUSTER_OUTPUTS.join(', ')}`, 'table');
  operatorNamespaceOption(list);
  examples(list, ['syncprims cluster list -n fleet', 'syncprims get clusters -n fleet -o wide']);
  list.action((flags: ClusterFlags & { output: string; operatorNamespace?: string }) => getClusters(flags));
}

/** `syncprims cluster revoke`: a pull cluster's identity taken away (cluster-pull.ts). */
function addRevokeCommand(cluster: Command): void {
  const revoke = cluster
    .command('revoke')
    .description("take a pull cluster's identity away at once (its ServiceAccount, Role and RoleBinding deleted: every token of it refused); its assignments stay")
    .argument('<name>', "the pull cluster's name")
    .option('-n, --namespace <ns>', 'the namespace of the inventory (default: the managing context\'s, else "default")')
    .option('--mgmt-kubeconfig <file>', 'kubeconfig of the managing cluster (default: $KUBECONFIG, ~/.kube/config, in-cluster)')
    .option('--mgmt-context <name>', 'context of the managing cluster');
  examples(revoke, ['syncprims cluster revoke edge-7 -n fleet', 'syncprims cluster add edge-7 --pull -n fleet   # a new identity and join bundle']);
  revoke.action(async (name: string, flags: Pick<PullFlags, 'namespace' | 'mgmtKubeconfig' | 'mgmtContext'>) => {
    const { revokePullCluster } = await import('./cluster-pull.js');
    await revokePullCluster(name, flags);
  });
}

/** `syncprims get clusters` and `syncprims cluster list`: name, source, reachability, the replica holding it, what selects each, labels, problem. */
export async function getClusters(flags: Omit<ListFlags, 'output'> & { output: string }): Promise<void> {
  const { UsageError } = await import('../errors.js');
  if (!CLUSTER_OUTPUTS.includes(flags.output as ListOutput)) throw new UsageError(`-o ${flags.output}: clusters are shown as ${CLUSTER_OUTPUTS.join(', ')}`);
  const { listClusters } = await import('./cluster-list.js');
  await listClusters({ ...flags, output: flags.output as ListOutput });
}
