// What the FleetSync benchmarks (bench/fleet.ts, bench/rollout.ts) set up
// alike: the simulated identities over their API servers, and the
// MutatingAdmissionPolicy that gives each child its namespace at admission.
import { readFileSync } from 'node:fs';
import { GROUP, KIND_NAMES } from '../src/api/kinds.js';
import { mapLimit } from '../src/apply/map-limit.js';
import type { KubeClient } from '../src/kube/client.js';
import { confinedIdentity, tokenKubeconfig } from './identities.js';
import { sleep } from './support.js';

/** One simulated cluster: a namespace `fleet-<i>` of one of the API servers, and a kubeconfig confined to it. */
export interface Identity {
  i: number;
  server: string;
  namespace: string;
  kubeconfig: string;
}

const CREATE_CONCURRENCY = 32;
const CLUSTER_LABEL = 'syncprims.dev/cluster';

/** `n` identities, `fleet-<i>` on servers[i % servers.length], each a ServiceAccount confined to its namespace and a day's token. */
export async function createIdentities(clients: Map<string, KubeClient>, o: { n: number; servers: string[]; partOf: string; kubeconfigFile: (server: string) => string }): Promise<Identity[]> {
  return mapLimit(
    Array.from({ length: o.n }, (_, i) => i),
    CREATE_CONCURRENCY,
    async (i) => {
      const server = o.servers[i % o.servers.length]!;
      const namespace = `fleet-${i}`;
      const token = await confinedIdentity(clients.get(server)!, namespace, { sa: 'syncer', partOf: o.partOf, tokenSeconds: 86_400 });
      return { i, server, namespace, kubeconfig: tokenKubeconfig(readFileSync(o.kubeconfigFile(server), 'utf8'), server, token) };
    },
  );
}

/**
 * A MutatingAdmissionPolicy `<name>` and its binding (to `namespace`): a
 * RemoteSync labelled `syncprims.dev/cluster: c-<i>` gets `spec.defaultNamespace:
 * fleet-<i>` when created or updated, so a FleetSync's child is born placed.
 */
export async function admitPlaced(mgmt: KubeClient, namespace: string, name: string): Promise<void> {
  const api = '/apis/admissionregistration.k8s.io/v1';
  await mgmt.request({
    method: 'POST',
    path: `${api}/mutatingadmissionpolicies`,
    body: {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'MutatingAdmissionPolicy',
      metadata: { name },
      spec: {
        failurePolicy: 'Fail',
        reinvocationPolicy: 'Never',
        matchConstraints: {
          resourceRules: [{ apiGroups: [GROUP], apiVersions: ['*'], operations: ['CREATE', 'UPDATE'], resources: [KIND_NAMES.RemoteSync.plural] }],
          objectSelector: { matchExpressions: [{ key: CLUSTER_LABEL, operator: 'Exists' }] },
        },
        mutations: [
          {
            patchType: 'ApplyConfiguration',
            applyConfiguration: { expression: `Object{spec: Object.spec{defaultNamespace: "fleet-" + object.metadata.labels["${CLUSTER_LABEL}"].substring(2)}}` },
          },
        ],
      },
    },
  });
  await mgmt.request({
    method: 'POST',
    path: `${api}/mutatingadmissionpolicybindings`,
    body: {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'MutatingAdmissionPolicyBinding',
      metadata: { name },
      spec: { policyName: name, matchResources: { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': namespace } } } },
    },
  });
  await sleep(3_000); // the API server's policy informer picks them up
}
