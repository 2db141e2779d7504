// `syncprims bootstrap`: what it does (bootstrap.ts declares it).
import { kindOf } from '../kind-name.js';
import { BOOTSTRAP_ACCOUNT } from './bootstrap-account.js';
import { bootstrapManifests, type BootstrapSource } from './bootstrap-manifests.js';
import { UsageError } from '../errors.js';
import { installManifests } from './install-manifests.js';
import { installOptions, type InstallFlags } from './install-run.js';

export interface BootstrapFlags extends Omit<InstallFlags, 'apply' | 'output'> {
  url?: string;
  digest?: string;
  artifact?: string;
  artifactApiVersion: string;
}

/** Where the Sync reads the manifests, from the flags; bad usage fails before anything is asked. */
export function bootstrapSource(flags: BootstrapFlags): BootstrapSource {
  if (flags.url && flags.artifact) throw new UsageError('--url and --artifact: give one source, not both');
  if (flags.digest && !flags.url) throw new UsageError('--digest goes with --url');
  if (flags.url) {
    if (!/^https?:\/\//.test(flags.url)) throw new UsageError(`--url ${flags.url}: want an http(s) URL`);
    return { http: { url: flags.url, ...(flags.digest ? { digest: flags.digest } : {}) } };
  }
  if (flags.artifact) {
    const [kind, name, ...rest] = flags.artifact.split('/');
    if (!kind || !name || rest.length > 0 || kindOf(kind)) throw new UsageError(`--artifact ${flags.artifact}: want kind/name of a Flux source, e.g. GitRepository/platform`);
    return { artifact: { apiVersion: flags.artifactApiVersion, kind, name } };
  }
  return { configMap: true };
}

export async function bootstrap(flags: BootstrapFlags): Promise<void> {
  const source = bootstrapSource(flags);
  const options = installOptions({ ...flags, output: 'yaml' });
  const [{ withCluster }, { applyManifests }, { removeApplyRole }] = await Promise.all([import('../cluster.js'), import('./install-apply.js'), import('./install-mode.js')]);
  // -n names the operator's namespace here: the cluster is chosen by --kubeconfig and --context only.
  await withCluster({ kubeconfig: flags.kubeconfig, context: flags.context }, async ({ client }) => {
    const report = (line: string) => console.log(line);
    await applyManifests(client, [...installManifests(options), ...bootstrapManifests(options, source)], report);
    if (options.multiTenant) await removeApplyRole(client, report);
  });
  const ns = options.namespace ?? 'syncprims-system';
  const as = options.multiTenant ? ` as the account ${ns}/${BOOTSTRAP_ACCOUNT}` : '';
  console.log(`\nThe Sync ${ns}/syncprims now keeps the operator's manifests applied${as}. Follow it:\n  syncprims get sync/syncprims -n ${ns} --watch`);
}
