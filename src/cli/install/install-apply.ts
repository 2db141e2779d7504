// Applying the operator's manifests (install --apply, bootstrap): server-side,
// CRDs first and waited for until they are Established, then the rest.
import { Discovery } from '../../kube/discovery.js';
import { serverSideApply } from '../../kube/apply.js';
import type { KubeClient } from '../../kube/client.js';
import { CORE, objectPath, type KubeObject } from '../../kube/resources.js';
import { CliError, describeApiError } from '../errors.js';

/** The field manager of what install and bootstrap apply (the operator's own is `syncprims`). */
export const INSTALL_FIELD_MANAGER = 'syncprims-install';
const ESTABLISHED_TIMEOUT_MS = 60_000;

/** Applies `objects` in order, CRDs first; `report` is told of each. */
export async function applyManifests(client: KubeClient, objects: readonly KubeObject[], report: (line: string) => void): Promise<void> {
  const discovery = new Discovery(client);
  const crds = objects.filter(isCrd);
  for (const obj of crds) await applyOne(client, discovery, obj, report);
  await Promise.all(crds.map((crd) => established(client, crd.metadata.name ?? '')));
  if (crds.length > 0) discovery.invalidate();
  for (const obj of objects.filter((o) => !isCrd(o))) await applyOne(client, discovery, obj, report);
}

function isCrd(obj: KubeObject): boolean {
  return obj.kind === 'CustomResourceDefinition' && obj.apiVersion.startsWith('apiextensions.k8s.io/');
}

async function applyOne(client: KubeClient, discovery: Discovery, obj: KubeObject, report: (line: string) => void): Promise<void> {
  const what = `${obj.kind} ${obj.metadata.namespace ? `${obj.metadata.namespace}/` : ''}${obj.metadata.name}`;
  try {
    await serverSideApply(client, discovery, obj, { fieldManager: INSTALL_FIELD_MANAGER, force: true });
  } catch (err) {
    throw describeApiError(err, `applying ${what}`) ?? err;
  }
  report(`${what} applied`);
}

/** Waits for a CRD's Established condition (its kind is served from then on). */
async function established(client: KubeClient, name: string): Promise<void> {
  const deadline = Date.now() + ESTABLISHED_TIMEOUT_MS;
  for (;;) {
    const crd = await client.request<{ status?: { conditions?: { type: string; status: string }[] } }>({
      path: objectPath(CORE.crds, name),
    });
    if (crd.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True')) return;
    if (Date.now() > deadline) throw new CliError(`CustomResourceDefinition ${name} is not Established after ${ESTABLISHED_TIMEOUT_MS / 1000} s: see kubectl describe crd ${name}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}
