// `syncprims trace`: what it does (trace.ts declares it). The cluster's
// modules are loaded once the arguments are found good: bad usage fails at once.
import type { ClusterFlags } from '../cluster.js';
import { CliError, UsageError } from '../errors.js';
import type { OutputFormat } from '../options.js';
import { toJson, toYaml } from '../output.js';
import { styleFor } from '../terminal.js';
import type { Trace } from './trace-chain.js';
import type { ManagingFlags } from './trace-origin.js';
import { parseResourceArg, type ResourceArg } from './trace-resource.js';

export interface TraceFlags extends ClusterFlags, ManagingFlags {
  output: OutputFormat;
}

export function traceRequest(target: string, flags: TraceFlags): ResourceArg {
  if (flags.mgmtContext !== undefined && flags.mgmtContext === '') throw new UsageError('--mgmt-context: give a context name');
  return parseResourceArg(target);
}

export async function trace(arg: ResourceArg, flags: TraceFlags): Promise<void> {
  const [{ withCluster }, { traceObject }, { renderTrace }] = await Promise.all([import('../cluster.js'), import('./trace-follow.js'), import('./trace-render.js')]);
  const result: Trace = await withCluster(flags, (cluster) => traceObject(cluster, arg, flags));
  if (flags.output === 'json') process.stdout.write(toJson(result));
  else if (flags.output === 'yaml') process.stdout.write(toYaml(result));
  else process.stdout.write(`${renderTrace(result, styleFor(process.stdout)).join('\n')}\n`);
  if (result.unresolved) throw new CliError(result.unresolved);
}
