// `syncprims join`: what it does (join.ts declares it).
import { readFileSync } from 'node:fs';
import { loadKubeConfigFile } from '../../kube/config.js';
import type { ClusterFlags } from '../cluster.js';
import { CliError } from '../errors.js';
import { DEFAULT_NAMESPACE } from '../install/install-manifests.js';
import { joinManifests, UPSTREAM_SECRET } from './join-manifests.js';

export interface JoinFlags extends ClusterFlags {
  joinFile: string;
  image?: string;
  clusterId?: string;
}

/** The join bundle's text, checked: a kubeconfig with a token whose context names the assignments namespace. */
export function readBundle(file: string): { text: string; server: string; namespace: string } {
  let kc;
  try {
    kc = loadKubeConfigFile(file);
  } catch (err) {
    throw new CliError(`--join-file ${file}: ${err instanceof Error ? err.message : String(err)}`);
  }
  const namespace = kc.getContextObject(kc.getCurrentContext())?.namespace;
  if (!namespace || !kc.getCurrentUser()?.token) throw new CliError(`--join-file ${file} is not a join bundle (a kubeconfig with a token whose context names the assignments namespace): use the file syncprims cluster add --pull wrote`);
  return { text: readFileSync(file, 'utf8'), server: kc.getCurrentCluster()?.server ?? '', namespace };
}

export async function join(flags: JoinFlags): Promise<void> {
  const bundle = readBundle(flags.joinFile);
  const namespace = flags.namespace ?? DEFAULT_NAMESPACE;
  const objects = joinManifests({ image: flags.image, namespace, clusterId: flags.clusterId }, bundle.text);
  const [{ withCluster }, { applyManifests }] = await Promise.all([import('../cluster.js'), import('../install/install-apply.js')]);
  await withCluster({ kubeconfig: flags.kubeconfig, context: flags.context }, async ({ client }) => {
    await applyManifests(client, objects, (line) => console.log(line));
  });
  console.log(`joined: the operator in namespace ${namespace} takes its assignments from ${bundle.server} (namespace ${bundle.namespace}), with the bundle in Secret ${namespace}/${UPSTREAM_SECRET}`);
}
