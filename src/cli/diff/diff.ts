import { Option, type Command } from 'commander';
import type { DiffFlags } from './diff-request.js';
import { kindHelp } from '../kind-name.js';
import { SYNC_KINDS } from '../../api/kinds.js';
import { clusterOptions, examples } from '../options.js';
import { addSourceLimitOptions } from '../source-flags.js';

/** `syncprims diff kind/name` or `-f file`: what applying would change, by a server-side dry run. */
export function addDiffCommand(program: Command): void {
  const cmd = program
    .command('diff')
    .description('show what the operator would change in the target cluster (the remote one too), by a server-side dry run: a unified diff per object')
    .argument('[kind/name]', `the sync to diff, as it is in the cluster; kinds: ${kindHelp(SYNC_KINDS)}`)
    .option('-f, --filename <file>', 'diff the Syncs, RemoteSyncs or ProxySyncs of a YAML or JSON file instead (not yet applied, or changed locally)')
    .option('--cluster-id <id>', "the managing cluster's id, as given to the operator's --cluster-id (default: the uid of its kube-system namespace)")
    .option('--default-service-account <name>', "as given to the operator's --default-service-account: syncs that name no serviceAccountName apply as this service account");
  clusterOptions(cmd, { namespace: 'the namespace of the sync (default: the context\'s, else "default"); a file\'s syncs may name their own' });
  cmd.addOption(new Option('-o, --output <format>', 'diff: a unified diff per object; yaml or json: the changed objects, before and after').choices(['diff', 'yaml', 'json']).default('diff'));
  addSourceLimitOptions(cmd, true);
  cmd.addHelpText('after', `
Each object is applied as the operator applies it (server-side apply, field manager syncprims) with
dryRun=All; objects of the sync's inventory that left the set are shown as removed ("would be
pruned"). managedFields, resourceVersion, generation, uid, creationTimestamp, status and the
syncprims.dev owner and origin labels are left out; Secret values are masked. For a ProxySync the
diff is of the Sync (and the copies of its ConfigMaps and Secrets) it keeps in its cluster.
Following a RemoteSync or ProxySync into its cluster needs get on its kubeconfig Secret; there, as
for the operator, only objects whose origin label is the cluster id are its own (another managing
cluster's are an OwnershipConflict).
Exit 0: no difference; 1: a difference (as kubectl diff), or an object that would fail to apply.`);
  examples(cmd, [
    'syncprims diff sync/app -n apps',
    'syncprims diff -f app.yaml                 # before kubectl apply -f app.yaml',
    'syncprims diff rsy/edge-app -o json | jq ".[].object"',
  ]);
  cmd.action(async (target: string | undefined, flags: DiffFlags) => {
    const request = await (await import('./diff-request.js')).diffRequest(target, flags);
    await (await import('./diff-run.js')).diff(request, flags);
  });
}
