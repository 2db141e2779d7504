// `syncprims doctor`: what it does (doctor.ts declares it). The cluster's
// modules are loaded once the flags are found good: bad usage fails at once.
import { parseDuration } from '../../api/duration.js';
import type { ClusterFlags } from '../cluster.js';
import { CliError, ExitCode, UsageError } from '../errors.js';
import { cycleFindings, forbiddenDependencies, missingCrds, missingDependencies, sortFindings, stuckFinalizers, unreachableClusters, type Finding } from './doctor-findings.js';
import { fleetFindings, unmadeFindings } from './doctor-fleet.js';
import { operatorFindings, readOperatorLeases, watched } from './doctor-operator.js';
import { doctorReport } from './doctor-print.js';
import { shardFindings, shardSummary } from './doctor-shards.js';
import { readSyncGraph } from '../../views/graph-read.js';
import { DEFAULT_OPERATOR_NAMESPACE, readShards } from '../../views/shard-read.js';
import type { OutputFormat } from '../options.js';
import { styleFor } from '../terminal.js';

export interface DoctorFlags extends ClusterFlags {
  allNamespaces?: boolean;
  output: OutputFormat;
  stuckAfter: string;
  /** Where the operator's Leases are (its --leader-election-namespace; default syncprims-system). */
  operatorNamespace?: string;
}

/** The flags, checked before anything is loaded or asked. */
export function doctorRequest(flags: DoctorFlags): { stuckAfterMs: number } {
  try {
    return { stuckAfterMs: parseDuration(flags.stuckAfter) };
  } catch (err) {
    throw new UsageError(`--stuck-after ${flags.stuckAfter}: ${(err as Error).message}`);
  }
}

export async function doctor(req: { stuckAfterMs: number }, flags: DoctorFlags): Promise<void> {
  const { withCluster } = await import('../cluster.js');
  const { remoteOperatorFindings } = await import('./doctor-remote.js');
  const { readUnmade } = await import('../unmade-read.js');
  const { findings, checked, shards } = await withCluster(flags, async (cluster) => {
    const namespace = flags.allNamespaces ? undefined : cluster.namespace;
    const [graph, leases, sharding] = await Promise.all([
      readSyncGraph(cluster.client, namespace),
      readOperatorLeases(cluster.client, Date.now()),
      readShards(cluster.client, flags.operatorNamespace ?? DEFAULT_OPERATOR_NAMESPACE, Date.now()),
    ]);
    const now = Date.now();
    const objects = graph.set.objects;
    const namespaces = [...new Set(objects.map((o) => o.metadata.namespace ?? ''))].sort();
    const found: Finding[] = [
      ...operatorFindings(leases, namespaces, now),
      ...shardFindings(sharding, objects, now, !leases.ok),
      ...stuckFinalizers(objects, { now, stuckAfterMs: req.stuckAfterMs, operatorRuns: (ns) => (leases.ok ? watched(leases.leases, ns) : undefined) }),
      ...unreachableClusters(objects, now),
      ...fleetFindings(objects),
      ...unmadeFindings(await readUnmade(cluster.client, objects)),
      ...missingCrds(objects),
      ...cycleFindings(graph.set.cycles),
      ...missingDependencies(graph.set.edges, graph.lookup),
      ...forbiddenDependencies(objects),
      ...(await remoteOperatorFindings(cluster, objects, now)),
    ];
    const where = namespace === undefined ? `${namespaces.length} namespaces` : `namespace ${namespace}`;
    return { findings: sortFindings(found), checked: `${objects.length} syncs in ${where}`, shards: sharding.ok ? shardSummary(sharding.state) : undefined };
  });
  const allNamespaces = flags.allNamespaces ?? false;
  process.stdout.write(doctorReport(findings, { format: flags.output, allNamespaces, style: styleFor(process.stdout), checked, shards }));
  const problems = findings.filter((f) => f.severity === 'error').length;
  if (problems > 0) throw new CliError(`${problems} problem${problems === 1 ? '' : 's'} found`, ExitCode.Failure);
}
