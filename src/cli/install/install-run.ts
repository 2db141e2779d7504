// `syncprims install`: what it does (install.ts declares it).
import type { ClusterFlags } from '../cluster.js';
import { UsageError } from '../errors.js';
import { wholeNumberFlag } from '../flag-values.js';
import { installManifests, type InstallOptions } from './install-manifests.js';
import { listOf, toJson, yamlStream } from '../output.js';

export interface InstallFlags extends ClusterFlags {
  image?: string;
  clusterId?: string;
  defaultServiceAccount?: string;
  multiTenant?: boolean;
  /** `--replicas N` as given: a whole number, at least 1. */
  replicas?: string;
  apply?: boolean;
  output: 'yaml' | 'json';
}

export function installOptions(flags: InstallFlags): InstallOptions {
  const { image, namespace, clusterId, defaultServiceAccount, multiTenant } = flags;
  return { image, namespace, clusterId, defaultServiceAccount, multiTenant: multiTenant ?? false, ...replicasOf(flags.replicas) };
}

/** `{replicas}` when --replicas is given (checked), nothing otherwise. */
function replicasOf(text: string | undefined): { replicas?: number } {
  if (text === undefined) return {};
  try {
    return { replicas: wholeNumberFlag('--replicas', text, 'replicas') };
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
}

export async function install(flags: InstallFlags): Promise<void> {
  const objects = installManifests(installOptions(flags));
  if (!flags.apply) {
    process.stdout.write(flags.output === 'json' ? toJson(listOf(objects)) : yamlStream(objects));
    return;
  }
  const [{ withCluster }, { applyManifests }, { removeApplyRole }] = await Promise.all([import('../cluster.js'), import('./install-apply.js'), import('./install-mode.js')]);
  const report = (line: string) => console.log(line);
  // -n names the operator's namespace here, not the context's: the cluster is chosen by --kubeconfig and --context only.
  await withCluster({ kubeconfig: flags.kubeconfig, context: flags.context }, async ({ client }) => {
    await applyManifests(client, objects, report);
    if (flags.multiTenant) await removeApplyRole(client, report);
  });
}
