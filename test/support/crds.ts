// Installs the syncprims CRDs (generated from src/api) on a local cluster.
import { API_VERSION, GROUP, KIND_NAMES, KINDS, VERSION, type Kind } from '../../src/api/kinds.js';
import { APPROVAL_NAMES, APPROVER_MESSAGE, approverPolicy } from '../../src/api/approval.js';
import { customResourceDefinitions } from '../../src/api/crds.js';
import { FIELD_MANAGER } from '../../src/api/marks.js';
import { serverSideApply } from '../../src/kube/apply.js';
import { ApiError } from '../../src/kube/errors.js';
import type { KubeClient } from '../../src/kube/client.js';
import type { ResourceInfo } from '../../src/kube/resources.js';
import { clusterApi } from './controlplane.js';
import { eventually } from './eventually.js';

interface CrdStatus {
  status?: { conditions?: { type: string; status: string }[] };
}

const installed = new Map<string, Promise<void>>();

/**
 * Applies the CRDs (and RolloutApproval's admission policy) to `cluster` (server-side apply, field manager
 * `syncprims`, forced) and waits until they are Established, served, and
 * validated with the schema just applied. Idempotent; once per cluster per
 * test file unless `again` is set.
 */
export function installCrds(cluster: string, again = false): Promise<void> {
  let done = again ? undefined : installed.get(cluster);
  if (!done) {
    done = install(cluster).catch((err: unknown) => {
      installed.delete(cluster);
      throw err;
    });
    installed.set(cluster, done);
  }
  return done;
}

/** What discovery would say about a syncprims kind, for building paths. */
export function syncResource(kind: Kind): ResourceInfo {
  return { group: GROUP, version: VERSION, kind, resource: KIND_NAMES[kind].plural, namespaced: true };
}

async function install(cluster: string): Promise<void> {
  const { client, discovery } = await clusterApi(cluster);
  for (const crd of customResourceDefinitions()) {
    await serverSideApply(client, discovery, crd, { fieldManager: FIELD_MANAGER, force: true });
  }
  for (const crd of customResourceDefinitions()) {
    const path = `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${crd.metadata.name}`;
    await eventually(`CRD ${crd.metadata.name} to be Established`, async () => {
      const got = await client.request<CrdStatus>({ path });
      const established = got.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True');
      return established ? true : undefined;
    });
  }
  for (const kind of KINDS) {
    await eventually(`${kind} to be served with the new schema`, () => checkServed(client, kind));
  }
  // RolloutApproval's approver is its creator only where this policy is (crds/ ships it with the CRD).
  for (const obj of approverPolicy()) await serverSideApply(client, discovery, obj, { fieldManager: FIELD_MANAGER, force: true });
  await eventually('the RolloutApproval approver policy to be enforced', () => checkApproverPolicy(client));
}

/** A dry-run create of a RolloutApproval naming someone else as approver must be refused by the policy (it takes a moment to load). */
async function checkApproverPolicy(client: KubeClient): Promise<true> {
  const spec = { fleetSync: 'probe', revision: '0123456789abcdef', wave: 'probe', approver: 'install-probe-not-the-caller' };
  try {
    await client.request({
      method: 'POST',
      path: `/apis/${GROUP}/${VERSION}/namespaces/default/${APPROVAL_NAMES.plural}`,
      query: { dryRun: 'All' },
      body: { apiVersion: API_VERSION, kind: APPROVAL_NAMES.kind, metadata: { name: 'install-probe' }, spec },
    });
  } catch (err) {
    if (err instanceof ApiError && err.status === 403 && err.message.includes(APPROVER_MESSAGE)) return true;
    throw err;
  }
  throw new Error('the API server accepted a RolloutApproval whose approver is not its creator');
}

/**
 * A dry-run create of an object with an empty source must be refused with the
 * CEL rule's message: then the API server serves the kind and uses the schema
 * with its CEL rules (a CRD that was just updated may take a moment).
 */
const PROBES: Record<Kind, Record<string, unknown>> = {
  Sync: { source: {} },
  RemoteSync: { clusterRef: { name: 'probe' }, source: {} },
  ProxySync: { clusterRef: { name: 'probe' }, template: { spec: { source: {} } } },
  FleetSync: { clusters: { names: ['probe'] }, template: { spec: { source: {} } } },
};

async function checkServed(client: KubeClient, kind: Kind): Promise<true> {
  const spec = PROBES[kind];
  try {
    await client.request({
      method: 'POST',
      path: `/apis/${GROUP}/${VERSION}/namespaces/default/${KIND_NAMES[kind].plural}`,
      query: { dryRun: 'All' },
      body: { apiVersion: API_VERSION, kind, metadata: { name: 'install-probe' }, spec },
    });
  } catch (err) {
    if (err instanceof ApiError && err.status === 422 && err.message.includes('source must set exactly one of')) {
      return true;
    }
    throw err;
  }
  throw new Error(`the API server accepted a ${kind} without a source`);
}

/** A namespaced CRD that accepts anything (no schema), serving `v1`: for tests of kinds that come and go. */
export function schemalessCrd(group: string, kind: string, plural: string) {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.${group}` },
    spec: {
      group,
      scope: 'Namespaced',
      names: { plural, singular: kind.toLowerCase(), kind },
      versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } }],
    },
  };
}
