// `syncprims get`: what it does (get.ts declares it). The cluster's modules (client, kubeconfigs)
// are loaded once the arguments are found good: bad usage fails at once.
import { KIND_NAMES, type Kind } from '../../api/kinds.js';
import type { KubeObject } from '../../kube/resources.js';
import type { Cluster, ClusterFlags } from '../cluster.js';
import { UsageError } from '../errors.js';
import { followSyncs } from './get-watch.js';
import { parseKindName, type KindName } from '../kind-name.js';
import type { OutputFormat } from '../options.js';
import { listOf, toJson, toYaml } from '../output.js';
import { compareRows, syncRow } from '../../views/sync-rows.js';
import { parseStatusSelector, rowCells, tableHeader, type RowFilter } from './sync-table.js';
import { getSync, listKinds } from '../../views/sync-api.js';
import { formatTable } from '../table.js';
import { styleFor } from '../terminal.js';

export interface GetFlags extends ClusterFlags {
  allNamespaces?: boolean;
  output: OutputFormat;
  statusSelector?: string;
  watch?: boolean;
  /** `-o wide` (the output is then `table`). */
  wide?: boolean;
}

/** What to get, checked before anything is loaded or asked (bad usage fails fast). */
export interface GetRequest {
  ref?: KindName;
  filter: RowFilter;
}

export function getRequest(target: string | undefined, flags: GetFlags): GetRequest {
  const ref = target === undefined ? undefined : parseKindName(target);
  const filter = parseStatusSelector(flags.statusSelector);
  if (ref?.name !== undefined && flags.allNamespaces) {
    throw new UsageError(`${target}: a name cannot be looked up across all namespaces: use -n instead of -A`);
  }
  return { ref, filter };
}

export async function get({ ref, filter }: GetRequest, flags: GetFlags): Promise<void> {
  const { withCluster } = await import('../cluster.js');
  await withCluster(flags, async (cluster) => {
    const namespace = flags.allNamespaces ? undefined : cluster.namespace;
    const { objects, resourceVersions } = await read(cluster, ref, namespace);
    const shown = objects.filter((o) => filter(syncRow(o)));
    const widths = print(shown, flags, ref, namespace);
    if (!flags.watch) return;
    await followSyncs(cluster.client, {
      kinds: [...resourceVersions.keys()],
      namespace: ref?.name !== undefined ? cluster.namespace : namespace,
      name: ref?.name,
      resourceVersions,
      filter,
      output: flags.output,
      allNamespaces: flags.allNamespaces ?? false,
      wide: flags.wide ?? false,
      initial: objects,
      widths,
    });
  });
}

/** The objects asked for, sorted as the table shows them, and the resourceVersion of each kind's list (for --watch). */
async function read(cluster: Cluster, ref: KindName | undefined, namespace: string | undefined) {
  const resourceVersions = new Map<Kind, string>();
  if (ref?.name !== undefined) {
    const obj = await getSync(cluster.client, ref.kind, cluster.namespace, ref.name);
    resourceVersions.set(ref.kind, String(obj.metadata.resourceVersion ?? ''));
    return { objects: [obj], resourceVersions };
  }
  const lists = await listKinds(cluster.client, namespace, ref ? [ref.kind] : undefined);
  for (const l of lists) resourceVersions.set(l.kind, l.resourceVersion);
  const objects = lists.flatMap((l) => l.items).sort((a, b) => compareRows(syncRow(a), syncRow(b)));
  return { objects, resourceVersions };
}

/** Prints the objects; returns the table's column widths (undefined when no table was printed). */
function print(objects: KubeObject[], flags: GetFlags, ref: KindName | undefined, namespace: string | undefined): number[] | undefined {
  if (flags.output === 'table') return printTable(objects, flags, ref, namespace);
  // --watch prints a document per change: the list first as documents too, so that the output is one stream.
  if (flags.watch) {
    for (const o of objects) process.stdout.write(flags.output === 'json' ? toJson(o) : `---\n${toYaml(o)}`);
    return undefined;
  }
  const value = ref?.name !== undefined && objects.length === 1 ? objects[0] : listOf(objects);
  process.stdout.write(flags.output === 'json' ? toJson(value) : toYaml(value));
  return undefined;
}

function printTable(objects: KubeObject[], flags: GetFlags, ref: KindName | undefined, namespace: string | undefined): number[] | undefined {
  if (objects.length === 0) {
    const what = ref ? KIND_NAMES[ref.kind].plural : 'syncs';
    const where = namespace === undefined ? '' : ` in namespace ${namespace}`;
    const selected = flags.statusSelector ? ` with ${flags.statusSelector}` : '';
    // On stderr, as kubectl does: a script reading stdout sees no rows.
    process.stderr.write(`No ${what} found${where}${selected}.\n`);
    return undefined;
  }
  const style = styleFor(process.stdout);
  const shape = { allNamespaces: flags.allNamespaces ?? false, wide: flags.wide ?? false };
  const now = Date.now();
  const rows = objects.map((o) => rowCells(syncRow(o), { ...shape, style, now }));
  const table = formatTable(tableHeader(shape), rows);
  process.stdout.write(`${table.lines.join('\n')}\n`);
  return table.widths;
}
