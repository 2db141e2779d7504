// `syncprims graph`: what it does (graph.ts declares it; this is loaded when it runs).
import { writeFile } from 'node:fs/promises';
import type { ClusterFlags } from '../cluster.js';
import { CliError } from '../errors.js';
import { graphModel } from '../../views/graph-model.js';
import { readSyncGraph } from '../../views/graph-read.js';
import { renderGraph, type GraphFormat } from './graph-render.js';

export interface GraphFlags extends ClusterFlags {
  allNamespaces?: boolean;
  format: GraphFormat;
  outputFile?: string;
}

export async function graph(flags: GraphFlags): Promise<void> {
  const { withCluster } = await import('../cluster.js');
  const text = await withCluster(flags, async (cluster) => {
    const namespace = flags.allNamespaces ? undefined : cluster.namespace;
    const read = await readSyncGraph(cluster.client, namespace);
    const model = graphModel({ objects: read.set.objects, edges: read.set.edges, cycles: read.set.cycles, namespace, lookup: read.lookup });
    if (model.nodes.length === 0) process.stderr.write(`No syncs found${namespace === undefined ? '' : ` in namespace ${namespace}`}.\n`);
    return renderGraph(model, flags.format);
  });
  if (flags.outputFile === undefined) {
    process.stdout.write(text);
    return;
  }
  try {
    await writeFile(flags.outputFile, text);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? 'no such directory' : code === 'EACCES' ? 'permission denied' : code === 'EISDIR' ? 'it is a directory' : String(err);
    throw new CliError(`cannot write --output-file ${flags.outputFile}: ${why}`, undefined, { cause: err });
  }
}
