// `syncprims tree`: what it does (tree.ts declares it). The cluster's modules
// are loaded once the arguments are found good: bad usage fails at once.
import type { SyncKind } from '../../api/kinds.js';
import type { ClusterFlags } from '../cluster.js';
import { parseSyncRef } from '../kind-name.js';
import type { OutputFormat } from '../options.js';
import { toJson, toYaml } from '../output.js';
import { styleFor } from '../terminal.js';

export interface TreeFlags extends ClusterFlags {
  output: OutputFormat;
}

export interface TreeRequest {
  kind: SyncKind;
  name: string;
}

export function treeRequest(target: string): TreeRequest {
  return parseSyncRef(target);
}

export async function tree({ kind, name }: TreeRequest, flags: TreeFlags): Promise<void> {
  const [{ withCluster }, { buildTree }, { getSync }, { renderTree }] = await Promise.all([
    import('../cluster.js'),
    import('./tree-build.js'),
    import('../../views/sync-api.js'),
    import('./tree-render.js'),
  ]);
  await withCluster(flags, async (cluster) => {
    const root = await getSync(cluster.client, kind, cluster.namespace, name);
    const result = await buildTree(cluster.client, root);
    if (flags.output === 'json') process.stdout.write(toJson(result));
    else if (flags.output === 'yaml') process.stdout.write(toYaml(result));
    else process.stdout.write(`${renderTree(result, styleFor(process.stdout)).join('\n')}\n`);
  });
}
