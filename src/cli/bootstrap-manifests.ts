// What `syncprims bootstrap` adds to the install: the Sync that keeps the
// operator's own manifests applied, and (by default) the ConfigMap they are in.
import { API_VERSION } from '../api/kinds.js';
import type { KubeObject } from '../kube/resources.js';
import { DEFAULT_NAMESPACE, installManifests, type InstallOptions } from './install-manifests.js';
import { yamlStream } from './output.js';

export const BOOTSTRAP_NAME = 'syncprims';
export const MANIFESTS_KEY = 'manifests.yaml';

/** Where the bootstrap Sync reads the operator's manifests: a ConfigMap bootstrap writes, a URL, or a Flux artifact. */
export type BootstrapSource =
  | { configMap: true }
  | { http: { url: string; digest?: string } }
  | { artifact: { apiVersion: string; kind: string; name: string } };

/** The ConfigMap (when the source is one) and the Sync, in the operator's namespace. */
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
      // Deleting the bootstrap Sync leaves the operator running: pruning itself, it would lose the
      // rights it needs to finish. Its CRDs and namespace are never pruned in any case.
      deletionPolicy: 'Orphan',
    },
  };
  return 'configMap' in source ? [configMap, sync] : [sync];
}
