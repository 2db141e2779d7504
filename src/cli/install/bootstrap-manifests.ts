// What `syncprims bootstrap` adds to the install: the Sync that keeps the
// operator's own manifests applied, (by default) the ConfigMap they are in,
// and in the multi-tenant mode the account the Sync applies as.
import { API_VERSION } from '../../api/kinds.js';
import type { KubeObject } from '../../kube/resources.js';
import { BOOTSTRAP_ACCOUNT, bootstrapAccount, type NamedObject } from './bootstrap-account.js';
import { DEFAULT_NAMESPACE, installManifests, type InstallOptions } from './install-manifests.js';
import { yamlStream } from '../output.js';

export const BOOTSTRAP_NAME = 'syncprims';
export const MANIFESTS_KEY = 'manifests.yaml';

/** Where the bootstrap Sync reads the operator's manifests: a ConfigMap bootstrap writes, a URL, or a Flux artifact. */
export type BootstrapSource =
  | { configMap: true }
  | { http: { url: string; digest?: string } }
  | { artifact: { apiVersion: string; kind: string; name: string } };

/**
 * The ConfigMap (when the source is one) and the Sync, in the operator's
 * namespace; in the multi-tenant mode, first the account the Sync names
 * (syncs that name none apply as their namespace's `default` account there,
 * which may do nothing in the operator's namespace).
 */
export function bootstrapManifests(opts: InstallOptions, source: BootstrapSource = { configMap: true }): KubeObject[] {
  const namespace = opts.namespace ?? DEFAULT_NAMESPACE;
  const labels = { 'app.kubernetes.io/name': 'syncprims', 'app.kubernetes.io/component': 'bootstrap' };
  const configMap: KubeObject = {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: `${BOOTSTRAP_NAME}-manifests`, namespace, labels },
    data: { [MANIFESTS_KEY]: yamlStream(installManifests(opts)) },
  };
  const sync: KubeObject = {
    apiVersion: API_VERSION,
    kind: 'Sync',
    metadata: { name: BOOTSTRAP_NAME, namespace, labels },
    spec: {
      source: 'configMap' in source ? { configMap: { name: configMap.metadata.name, key: MANIFESTS_KEY } } : source,
      ...(opts.multiTenant ? { serviceAccountName: BOOTSTRAP_ACCOUNT } : {}),
      // Deleting the bootstrap Sync leaves the operator running: pruning itself, it would lose the
      // rights it needs to finish. Its CRDs and namespace are never pruned in any case.
      deletionPolicy: 'Orphan',
    },
  };
  const objects = 'configMap' in source ? [configMap, sync] : [sync];
  return opts.multiTenant ? [...bootstrapAccount(opts, namespace, sourceReads(source, configMap)), ...objects] : objects;
}

/** What the Sync reads for its source, as its account: the ConfigMap, the Flux source, or nothing (a URL). */
function sourceReads(source: BootstrapSource, configMap: KubeObject): NamedObject[] {
  if ('configMap' in source) return [{ apiVersion: 'v1', kind: 'ConfigMap', name: configMap.metadata.name ?? '', namespace: configMap.metadata.namespace }];
  if ('artifact' in source) return [{ ...source.artifact, namespace: configMap.metadata.namespace }];
  return [];
}
