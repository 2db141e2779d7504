// `syncprims diff`: what it does (diff.ts declares it; this is loaded when it runs).
import { getIfExists } from '../../kube/client.js';
import type { KubeObject } from '../../kube/resources.js';
import type { Cluster } from '../cluster.js';
import { dryRun } from './diff-dry-run.js';
import { labelOf, parsed, planOf } from './diff-plan.js';
import { cleanSides, differs, unifiedDiff, type ObjectChange } from './diff-render.js';
import { CliError, ExitCode } from '../errors.js';
import { lazyClusterId } from '../managing-cluster-id.js';
import type { DiffFlags, DiffRequest } from './diff-request.js';
import { toJson, toYaml } from '../output.js';
import { getSync, syncObjectPath, withKind } from '../../views/sync-api.js';
import { styleFor } from '../terminal.js';

/** One sync's outcome. */
interface Outcome {
  label: string;
  changes: ObjectChange[];
  problems: string[];
  /** Said on stderr: a suspended sync. */
  notes: string[];
}

export async function diff(request: DiffRequest, flags: DiffFlags): Promise<void> {
  const { withCluster } = await import('../cluster.js');
  const outcomes: Outcome[] = [];
  await withCluster(flags, async (cluster) => {
    const syncs = 'ref' in request ? [await getSync(cluster.client, request.ref.kind, cluster.namespace, request.ref.name)] : await fromFile(request.objects, cluster);
    const clusterId = lazyClusterId(cluster.client, flags.clusterId);
    for (const sync of syncs) outcomes.push(await diffOne(sync, cluster, clusterId, flags.defaultServiceAccount));
  });
  report(outcomes, flags);
}

/** The file's syncs, in their namespace (else -n's), with the status of the live one if any (its inventory says what to prune). */
async function fromFile(objects: KubeObject[], cluster: Cluster): Promise<KubeObject[]> {
  return Promise.all(
    objects.map(async (obj) => {
      const namespace = obj.metadata.namespace || cluster.namespace;
      const kind = obj.kind as 'Sync';
      const live = await getIfExists<KubeObject>(cluster.client, syncObjectPath(kind, namespace, obj.metadata.name ?? ''));
      return withKind({ ...obj, metadata: { ...obj.metadata, namespace }, status: live?.status }, kind);
    }),
  );
}

/** Plans and dry-runs one sync in its target cluster; a remote cluster that does not answer is exit 3, said in one line. */
async function diffOne(sync: KubeObject, cluster: Cluster, clusterId: () => Promise<string>, defaultServiceAccount: string | undefined): Promise<Outcome> {
  const label = labelOf(sync);
  if (sync.kind === 'Sync') {
    const plan = await planOf(sync, { home: cluster.client, target: cluster.client, defaultServiceAccount });
    return { label, notes: plan.notes, ...(await dryRun(plan.target, plan.set)) };
  }
  const origin = await clusterId();
  const { openRemote, remoteFailure } = await import('../remote.js');
  // With the spec's defaults (a file's sync has none filled by the API server: the kubeconfig key `value`).
  const remote = await openRemote(cluster, { ...sync, spec: parsed(sync).spec as Record<string, unknown> });
  if (!remote.ok) throw new CliError(`${label}: ${remote.message}`);
  const failed: string[] = [];
  const stop = remote.client.observe((r) => {
    if (r.error && !r.aborted) failed.push(r.error);
  });
  try {
    const plan = await planOf(sync, { home: cluster.client, target: remote.client, origin, defaultServiceAccount });
    return { label, notes: plan.notes, ...(await dryRun(plan.target, plan.set)) };
  } catch (err) {
    const line = failed.length > 0 ? remoteFailure(err, remote.client) : undefined;
    if (line) throw new CliError(`${label}: cannot diff in its cluster (${remote.kubeconfigFrom}): ${line}; check that the cluster runs and the kubeconfig in that Secret`, ExitCode.Unreachable, { cause: err });
    throw err;
  } finally {
    stop();
    remote.client.close();
  }
}

/** Prints the diffs (or the changed objects as YAML or JSON); exit 1 on a difference or a problem. */
function report(outcomes: Outcome[], flags: DiffFlags): void {
  const style = styleFor(process.stdout);
  const changed = outcomes.flatMap((o) => o.changes.filter(differs).map((c) => ({ sync: o.label, change: c })));
  for (const o of outcomes) for (const note of o.notes) process.stderr.write(`syncprims diff: note: ${note}\n`);
  if (flags.output === 'diff') {
    process.stdout.write(changed.map(({ change }) => unifiedDiff(change, style)).join(''));
  } else {
    const items = changed.map(({ sync, change }) => {
      const [live, merged] = cleanSides(change);
      return { sync, action: change.action, object: change.object, ...(change.notes?.length ? { notes: change.notes } : {}), live, merged };
    });
    process.stdout.write(flags.output === 'json' ? toJson(items) : toYaml(items));
  }
  const problems = outcomes.flatMap((o) => o.problems.map((p) => `${o.label}: ${p}`));
  if (problems.length === 1) throw new CliError(`${problems[0]}`);
  if (problems.length > 1) {
    for (const p of problems) process.stderr.write(`syncprims diff: ${p}\n`);
    throw new CliError(`${problems.length} objects would not apply (see above)`);
  }
  if (changed.length > 0) process.exitCode = ExitCode.Failure;
}
