import type { Command } from 'commander';
import type { BootstrapFlags } from './bootstrap-run.js';
import { DEFAULT_NAMESPACE } from './install-manifests.js';
import { clusterOptions, examples } from '../options.js';

/** `syncprims bootstrap`: install, then a Sync that keeps the operator's own manifests applied. */
export function addBootstrapCommand(program: Command): void {
  const cmd = program
    .command('bootstrap')
    .description("install the operator, then a Sync (syncprims in its namespace) that keeps the operator's own manifests applied; safe to run again")
    .option('--image <ref>', "the operator's image (default: ghcr.io/syncprims/syncprims:v<version>)")
    .option('--cluster-id <id>', "the operator's --cluster-id (default: the uid of the cluster's kube-system namespace)")
    .option('--default-service-account <name>', "the operator's --default-service-account")
    .option('--multi-tenant', "locked down, as install --multi-tenant; the bootstrap Sync applies as the account syncprims-bootstrap, made for it")
    .option('--replicas <n>', 'as install --replicas: N replicas sharing the work (syncprims run --shards) instead of 2 electing a leader')
    .option('--url <url>', 'the Sync reads the manifests from this URL (source.http) instead of a ConfigMap bootstrap writes')
    .option('--digest <sha256:hex>', 'with --url: the digest the fetched bytes must have')
    .option('--artifact <kind/name>', 'the Sync reads the manifests from this Flux source (GitRepository, OCIRepository, Bucket, ExternalArtifact) in the namespace')
    .option('--artifact-api-version <v>', 'with --artifact: its apiVersion', 'source.toolkit.fluxcd.io/v1');
  clusterOptions(cmd, {
    kubeconfig: 'the cluster to bootstrap (default: $KUBECONFIG, ~/.kube/config)',
    namespace: `the operator's namespace (default: ${DEFAULT_NAMESPACE})`,
  });
  cmd.addHelpText('after', `
The CRDs and the namespace are never pruned, and deleting the Sync leaves the operator running
(deletionPolicy: Orphan). Running bootstrap again updates the manifests and changes nothing else.`);
  examples(cmd, [
    'syncprims bootstrap --kubeconfig ~/.kube/mgmt --cluster-id mgmt',
    'syncprims bootstrap --url https://example.com/syncprims/v0.1.0/install.yaml',
    'syncprims bootstrap --artifact GitRepository/platform   # the manifests in a Flux source',
    'syncprims bootstrap --replicas 3                         # three replicas, each holding a share of the clusters',
  ]);
  cmd.action(async (flags: BootstrapFlags) => (await import('./bootstrap-run.js')).bootstrap(flags));
}
