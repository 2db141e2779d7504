// What the FleetSync benchmarks (bench/fleet.ts, bench/rollout.ts) set up
// alike: a control plane of their own, the simulated identities over its API
// servers, and (bench/rollout.ts) the MutatingAdmissionPolicy that gives each
// child its namespace at admission; bench/fleet.ts gives it by substitution.
import { readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import path from 'node:path';
import { GROUP, KIND_NAMES, VERSION } from '../src/api/kinds.js';
import { mapLimit } from '../src/apply/map-limit.js';
import { KubeClient } from '../src/kube/client.js';
import type { ResourceInfo } from '../src/kube/resources.js';
import { loadKubeConfigFile } from '../src/kube/config.js';
import { confinedIdentity, tokenKubeconfig } from './identities.js';
import { controlplane, type ControlPlaneDir, installCrds, LOCAL, ROOT, sleep, stopOperators } from './support.js';

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

/** What every report of these benchmarks says of its run. */
export interface RunFacts {
  date: string;
  /** The identities. */
  n: number;
  /** ConfigMaps per identity. */
  objects: number;
  /** How the operator was built (buildOperator). */
  build: string;
  kubernetes: string;
  /** The 1-minute load average at the start. */
  load: number;
}

/** The resource of a FleetSync or of its RemoteSync or ProxySync children. */
export const resource = (kind: 'RemoteSync' | 'ProxySync' | 'FleetSync'): ResourceInfo => ({ group: GROUP, version: VERSION, kind, resource: KIND_NAMES[kind].plural, namespaced: true });

/**
 * Where the benchmark `prefix` keeps its own control plane (`<prefix>-mgmt`
 * and the API servers `<prefix>-1`, `<prefix>-2`), its results, and the
 * operator's build and log (all under .local/).
 */
export function benchPlaces(prefix: string) {
  const mgmt = `${prefix}-mgmt`;
  const plane: ControlPlaneDir = { dir: path.join(LOCAL, `${prefix}-plane`), etcdPort: Number(process.env.ETCD_PORT ?? 0) };
  const kubeconfigFile = (cluster: string): string => path.join(plane.dir, `${cluster}.kubeconfig`);
  const operatorDir = path.join(LOCAL, `${prefix}-operator`);
  return {
    mgmt,
    servers: [`${prefix}-1`, `${prefix}-2`],
    plane,
    kubeconfigFile,
    results: path.join(LOCAL, `${prefix}-results.json`),
    operatorDir,
    operator: { main: path.join(operatorDir, 'dist', 'cli', 'main.js'), kubeconfig: kubeconfigFile(mgmt), log: path.join(LOCAL, `${prefix}-operator.log`) },
  };
}

/** A benchmark's own control plane: its clusters (the first the managing one) and where their kubeconfigs are. */
export interface OwnPlane {
  plane: ControlPlaneDir;
  clusters: string[];
  kubeconfigFile: (cluster: string) => string;
  /** The User-Agent of the benchmark's clients. */
  userAgent: string;
  /** The operator's build (buildOperator), removed after. */
  operatorDir: string;
}

/**
 * Starts the control plane afresh (an earlier run's stopped and removed), runs
 * `body` with a client of each cluster, then stops the operators started and
 * the control plane, and removes its etcd and the operator's build, whatever
 * happened.
 */
export async function onOwnPlane(o: OwnPlane, body: (clients: Map<string, KubeClient>) => Promise<void>): Promise<void> {
  const cp = (args: string[]): Promise<string> => controlplane(args, o.plane);
  const clients = new Map<string, KubeClient>();
  try {
    await cp(['down']).catch(() => undefined);
    rmSync(o.plane.dir, { recursive: true, force: true });
    console.log(`starting a control plane of its own in ${path.relative(ROOT, o.plane.dir)}: ${o.clusters.join(', ')}...`);
    await cp(['up', ...o.clusters.map((c) => `${c}:0`)]);
    for (const c of o.clusters) clients.set(c, await KubeClient.create(c, loadKubeConfigFile(o.kubeconfigFile(c)), o.userAgent));
    await body(clients);
  } finally {
    await stopOperators();
    for (const c of clients.values()) c.close();
    await cp(['down']).catch((err: unknown) => console.error(String(err)));
    rmSync(path.join(o.plane.dir, 'etcd'), { recursive: true, force: true });
    rmSync(o.operatorDir, { recursive: true, force: true });
  }
}

/** What a fleet benchmark starts from (onFleetPlane): its clients, mgmt's, the identities, how long they took, the load then. */
export interface FleetPlane {
  clients: Map<string, KubeClient>;
  mgmt: KubeClient;
  fleet: Identity[];
  identitiesMs: number;
  load: number;
}

/** The fleet benchmarks' start: the plane of `prefix` (benchPlaces) with our CRDs on mgmt and `n` identities over its servers; then `body`. */
export async function onFleetPlane(prefix: string, n: number, body: (f: FleetPlane) => Promise<void>): Promise<void> {
  const { mgmt: MGMT, servers, plane, kubeconfigFile, operatorDir } = benchPlaces(prefix);
  await onOwnPlane({ plane, clusters: [MGMT, ...servers], kubeconfigFile, userAgent: `${prefix}/bench`, operatorDir }, async (clients) => {
    const mgmt = clients.get(MGMT)!;
    await installCrds(mgmt);
    console.log(`creating ${n} identities...`);
    const t0 = performance.now();
    const fleet = await createIdentities(clients, { n, servers, partOf: prefix, kubeconfigFile });
    await body({ clients, mgmt, fleet, identitiesMs: performance.now() - t0, load: os.loadavg()[0] ?? NaN });
  });
}

/**
 * A benchmark's entry: `main()`, or with REPORT_FROM=results.json only the
 * report of those results. Exits explicitly: after a failure, a watch or a
 * request may still be open.
 */
export function runOrReport<R>(main: () => Promise<void>, writeReport: (results: R) => void): void {
  const from = process.env.REPORT_FROM;
  (from ? Promise.resolve().then(() => writeReport(JSON.parse(readFileSync(from, 'utf8')) as R)) : main()).then(
    () => process.exit(0),
    (err: unknown) => {
      console.error(err);
      process.exit(1);
    },
  );
}
