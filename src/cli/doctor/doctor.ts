import type { Command } from 'commander';
import type { DoctorFlags } from './doctor-run.js';
import { allNamespacesOption, clusterOptions, examples, operatorNamespaceOption, outputOption } from '../options.js';

/** `syncprims doctor`: what is stuck, and what to do about it. */
export function addDoctorCommand(program: Command): void {
  const cmd = program
    .command('doctor')
    .description('find what is stuck and say what to do: finalizers, unreachable clusters, FleetSyncs not Ready, missing CRDs, cycles, missing dependencies, an operator not running');
  clusterOptions(cmd);
  allNamespacesOption(cmd);
  outputOption(cmd);
  cmd.option('--stuck-after <duration>', 'a sync being deleted whose finalizer has waited this long is stuck', '5m');
  operatorNamespaceOption(cmd, 'the checks of run --shards');
  cmd.addHelpText(
    'after',
    `
It reports, one per line, with what to do:
  OperatorNotRunning    no live operator Lease (label syncprims.dev/operator-lease=true) watches a namespace
                        that has syncs; for a ProxySync, none in its cluster watches its Sync's namespace
  ReplicaNotRenewing    (run --shards) a replica that holds clusters or namespaces but has not renewed its
                        membership Lease (renewTime + leaseDurationSeconds passed, 5s allowed for clock skew)
  ShardUnheld           (run --shards) a cluster that RemoteSyncs or ProxySyncs name, or a namespace with Syncs
                        or FleetSyncs, whose key Lease no live replica holds, for 2 lease durations (a handover
                        takes seconds)
  StuckFinalizer        deleted longer than --stuck-after ago and still held by its finalizer, and why
  ClusterUnreachable    a cluster that syncs cannot reach (Ready reason ClusterUnreachable), and since when
  FleetSyncNotReady     a FleetSync that is not Ready, naming its failing clusters (and why) from its status
  OverrideFailed        a cluster a FleetSync selects whose override does not apply (the override's index and
                        path), computed from the spec and inventory as they are now: one per FleetSync and cluster
  SubstitutionFailed    a cluster a FleetSync selects that misses a value its template uses (named), likewise
  CRDNotInstalled       a sync whose kinds are not served where it applies them (in a remote cluster too)
  DependencyCycle       the path of each dependency cycle
  MissingDependency     a dependsOn entry naming a sync that does not exist
  DependencyForbidden   a dependency in another namespace, refused by the operator
  CannotCheck           (a warning) something it could not look at, and why
Under run --shards (membership Leases in --operator-namespace), a last line says how many replicas are
live and what each holds (in -o json|yaml: shards).
It needs list on syncs, remotesyncs, proxysyncs and fleetsyncs, list on leases.coordination.k8s.io in all
namespaces, list on the kubeconfig Secrets of namespaces with FleetSyncs that have overrides or
substitute (their metadata: without it, the clusters of those reasons in the FleetSync's status are
taken), and get on the kubeconfig Secrets of ProxySyncs (it follows them into their clusters
with the operator's kubeconfig checks: an exec or file-path kubeconfig is never run or read).
With nothing found it prints "No problems found (N syncs in namespace X)." and exits 0; it exits 1
when it finds a problem (warnings alone do not fail it).`,
  );
  examples(cmd, ['syncprims doctor -n apps', 'syncprims doctor -A', 'syncprims doctor -A --stuck-after 1h -o json | jq ".findings[].problem"']);
  cmd.action(async (flags: DoctorFlags) => {
    const { doctor, doctorRequest } = await import('./doctor-run.js');
    await doctor(doctorRequest(flags), flags);
  });
}
