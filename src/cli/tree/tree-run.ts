// `syncprims tree`: what it does (tree.ts declares it). The cluster's modules
// are loaded once the arguments are found good: bad usage fails at once.
import type { Kind } from '../../api/kinds.js';
import type { ClusterFlags } from '../cluster.js';
import { parseSyncRef } from '../kind-name.js';
import type { OutputFormat } from '../options.js';
import { toJson, toYaml } from '../output.js';
import { styleFor } from '../terminal.js';

export interface TreeFlags extends ClusterFlags {
  output: OutputFormat;
  clusterId?: string;
}

/** One sync (kind and name), or (neither) every sync of the namespace. */
export type TreeRequest = { kind: Kind; name: string } | { kind?: undefined; name?: undefined };

export function treeRequest(target: string | undefined): TreeRequest {
  return target === undefined ? {} : parseSyncRef(target);
}

export async function tree({ kind, name }: TreeRequest, flags: TreeFlags): Promise<void> {
  const [{ withCluster }, { lazyClusterId }, { buildForest, buildTree }, { getSync }, { renderForest, renderTree }] = await Promise.all([
    import('../cluster.js'),
    import('../managing-cluster-id.js'),
    import('./tree-build.js'),
    import('../../views/sync-api.js'),
    import('./tree-render.js'),
  ]);
  await withCluster(flags, async (cluster) => {
    const style = styleFor(process.stdout);
    let result: unknown;
    let lines: () => string[];
    const origin = lazyClusterId(cluster.client, flags.clusterId);
    if (kind !== undefined && name !== undefined) {
      const one = await buildTree(cluster.client, await getSync(cluster.client, kind, cluster.namespace, name), origin);
      [result, lines] = [one, () => renderTree(one, style)];
    } else {
      const forest = await buildForest(cluster.client, cluster.namespace, origin);
      [result, lines] = [forest, () => renderForest(forest, style)];
    }
    if (flags.output === 'json') process.stdout.write(toJson(result));
    else if (flags.output === 'yaml') process.stdout.write(toYaml(result));
    else process.stdout.write(`${lines().join('\n')}\n`);
  });
}
