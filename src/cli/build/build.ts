import type { Command } from 'commander';
import type { BuildFlags } from './build-run.js';
import { clusterOptions, examples, outputOption } from '../options.js';
import { addSourceLimitOptions } from '../source-flags.js';

/** `syncprims build`: what the operator would apply, rendered here. */
export function addBuildCommand(program: Command): void {
  const cmd = program
    .command('build')
    .description('render syncs locally, exactly as the operator would, and print the objects it would apply (no cluster needed for inline, file and http sources)')
    .argument('[file]', 'a YAML or JSON file of Syncs, RemoteSyncs or ProxySyncs (a ProxySync renders as the Sync it keeps in its cluster); or fleetsync/NAME with --cluster')
    .option('--path <file-or-dir>', 'render plain manifests instead: a file, or a folder taken recursively (*.yaml, *.yml, *.json; a folder holding a kustomization is built as `kubectl kustomize` builds it, offline; a folder holding Chart.yaml is rendered as a Helm chart, as `helm template` renders it)')
    .option('--url <url>', 'render the manifests at an http(s) URL instead (a file, or a .tar.gz archive), as source.http does')
    .option('--owner <kind/name>', 'with --path or --url: the sync the objects belong to, for the owner labels (default: sync/<base name of the path or URL>)')
    .option('--default-namespace <ns>', 'with --path or --url: the namespace given to namespaced objects that name none')
    .option('--cluster <name>', "with fleetsync/NAME: print the child (RemoteSync or ProxySync) that cluster of the inventory gets of the FleetSync's template as its spec has it now, its overrides and values in, as the operator writes it")
    .option('--values <file>', 'with --path of a chart: a values file (repeatable: merged in order, later over earlier, as helm template -f)', (v: string, all: string[] | undefined) => [...(all ?? []), v])
    .option('--release-name <name>', "with --path of a chart: .Release.Name (default: the sync's name, as the operator's spec.helm.releaseName: --owner's, else the folder's base name)")
    .option('--kube-version <version>', "a Helm chart's .Capabilities.KubeVersion (default: the cluster's with --kubeconfig, for a Sync; else helm template's)")
    .option('--api-versions <list>', "comma-separated group/version or group/version/Kind a Helm chart's .Capabilities.APIVersions has (as helm template --api-versions)")
    .option('--cluster-id <id>', "the managing cluster's id: the syncprims.dev/origin label on what a RemoteSync applies (left out otherwise)");
  clusterOptions(cmd, {
    kubeconfig: 'a cluster to read ConfigMap, Secret and artifact sources from and to look up kinds in (default: none)',
    namespace: 'the namespace of a sync that names none, and of --owner; a chart\'s .Release.Namespace unless --default-namespace names one (default: the context\'s with --kubeconfig or --context, else "default")',
  });
  outputOption(cmd, ['yaml', 'json'], 'yaml');
  addSourceLimitOptions(cmd, true);
  cmd.addHelpText('after', `
--kubeconfig or --context are needed only for ConfigMap, Secret and Flux artifact sources (read in the
sync's namespace) and to look up kinds that are neither built in nor defined by a CRD in the set, or in
another sync of the file that applies to the same cluster (a Sync's CRD serves the file's Syncs; a
RemoteSync's, the RemoteSyncs and ProxySyncs of its cluster).

build --path DIR of a folder holding Chart.yaml renders the chart as the operator renders spec.helm (the
Helm helper, helm template's code): --values files merged in order, --release-name (default the sync's
name, where helm template says release-name), -n as .Release.Namespace, the CRDs of crds/ included, the
objects given the namespace and owner labels the operator gives them; hooks are not printed. Its
dependencies must be vendored in charts/ (helm dependency build): nothing is fetched.

build fleetsync/NAME --cluster C reads the FleetSync and the namespace's inventory from the managing
cluster (--kubeconfig, -n) and prints C's child as the operator writes it (but the time its wave
admits it); a cluster not in the inventory, not selected, or whose template cannot be made (an
override whose path is not there, a value missing: named) exits 1 with why. Save the child to a
file and build that file to see the objects it applies.`);
  examples(cmd, [
    'syncprims build examples/sync-inline.yaml',
    'syncprims build app.yaml -o json | jq ".items[].metadata.name"',
    'syncprims build --path ./manifests --owner sync/app -n apps --default-namespace apps',
    'syncprims build --path overlays/prod --default-namespace shop   # a kustomize overlay',
    'syncprims build --url https://example.com/app.tar.gz',
    'syncprims build --path ./charts/web --values prod.yaml --values eu.yaml --release-name web -n shop   # a chart folder',
    'syncprims build ingress.yaml --kube-version v1.36.0   # a Sync with spec.helm, rendered offline',
    'syncprims build proxy.yaml --kubeconfig ~/.kube/mgmt   # its source is a ConfigMap',
    'syncprims build fleetsync/shop --cluster edge-1 --kubeconfig ~/.kube/mgmt -n fleet   # what edge-1 gets',
  ]);
  cmd.action(async (file: string | undefined, flags: BuildFlags) => (await import('./build-run.js')).build(file, flags));
}

