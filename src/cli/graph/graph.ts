import { Option, type Command } from 'commander';
import type { GraphFlags } from './graph-run.js';
import { GRAPH_FORMATS } from './graph-render.js';
import { clusterOptions, examples } from '../options.js';

/** `syncprims graph`: the dependency graph of a namespace's syncs, as Mermaid or DOT. */
export function addGraphCommand(program: Command): void {
  const cmd = program
    .command('graph')
    .description('draw the dependency graph of the syncs (Mermaid or DOT): an arrow from a sync to what it depends on, nodes coloured by state, cycles in red');
  clusterOptions(cmd);
  cmd
    .option('-A, --all-namespaces', 'every namespace (nodes are then Kind/namespace/name)')
    .addOption(new Option('--format <format>', 'mermaid (a flowchart, drawn by GitHub and most Markdown viewers) or dot (Graphviz)').choices(GRAPH_FORMATS).default('mermaid'))
    .option('--output-file <file>', 'write the graph to this file instead of stdout');
  cmd.addHelpText(
    'after',
    `
Nodes are Kind/name: green Ready, red not Ready, yellow progressing; a dependency that does not
exist is a dashed node. An arrow labelled InProgress is a dependency with requiredStatus
InProgress. The arrows of a dependency cycle are red, and each cycle is listed in a comment.`,
  );
  examples(cmd, [
    'syncprims graph -n apps',
    'syncprims graph -A --format dot | dot -Tsvg > syncs.svg',
    'syncprims graph -n apps --output-file graph.mmd',
  ]);
  cmd.action(async (flags: GraphFlags) => (await import('./graph-run.js')).graph(flags));
}
