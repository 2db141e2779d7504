// Approving a FleetSync's wave is a right of its own: a ServiceAccount that
// may get the FleetSync and create RolloutApprovals, and may not update the
// FleetSync, approves the held wave with `syncprims rollout approve`; the
// wave proceeds, and status and an Event name the account. An approval whose
// approver is not its creator is refused by the API server (the
// ValidatingAdmissionPolicy that ships with the CRD); one of another revision
// or wave, or the old annotation, approves nothing; an approval never changes.
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { APPROVER_MESSAGE, IMMUTABLE_MESSAGE } from '../../src/api/approval.js';
import { API_VERSION } from '../../src/api/kinds.js';
import type { KubeClient } from '../../src/kube/client.js';
import { ApiError } from '../../src/kube/errors.js';
import { assertCliBuilt, runCli, tempDir } from '../support/cli.js';
import { clusterClient } from '../support/controlplane.js';
import { eventually } from '../support/eventually.js';
import { useTestNamespace } from '../support/namespace.js';
import { useOperatedNamespace } from '../support/operated-namespace.js';
import type { OperatorProcess } from '../support/operator.js';
import { registerEastAndWest, serviceAccountKubeconfig } from '../support/remote.js';
import { eventOf, find, getSync, syncPath, type SyncObject } from '../support/syncs.js';

const HOME = 'mgmt';
const FLEETSYNCS = 'fleetsyncs';
const APPROVER = 'approver';
let mgmt: KubeClient;
let op: OperatorProcess;
let edge1: KubeClient;
let edge2: KubeClient;
const ns = useOperatedNamespace(HOME, 'approval', (o) => ({ client: mgmt, op } = o), ['--cluster-id', 'mgmt-approval-test', '--log-level', 'debug']);
/** The edges' namespace: a test namespace in edge-1, made alike in edge-2 (deleted at the end). */
const edgeNs = useTestNamespace('edge-1', 'approvaledge');

interface WaveStatus {
  name: string;
  approved?: boolean;
  approvedBy?: string;
  approvedAt?: string;
}
type Fleet = SyncObject & { status?: { phase?: string; message?: string; updateRevision?: string; observedGeneration?: number; waves?: WaveStatus[] } };
const getFleet = (): Promise<Fleet> => getSync(mgmt, ns(), 'app', FLEETSYNCS) as Promise<Fleet>;
const valueIn = async (edge: KubeClient): Promise<string | undefined> =>
  (await find<{ data?: { value?: string } }>(edge, `/api/v1/namespaces/${edgeNs()}/configmaps/app`))?.data?.value;
const approvalsPath = (name = ''): string => `/apis/syncprims.dev/v1alpha1/namespaces/${ns()}/rolloutapprovals${name ? `/${name}` : ''}`;
const username = (): string => `system:serviceaccount:${ns()}:${APPROVER}`;
let approverKubeconfig = '';
const asApprover = (...args: string[]) => runCli(['rollout', ...args, 'fleetsync/app', '--kubeconfig', approverKubeconfig, '-n', ns()], { timeoutMs: 60_000 });

async function waitPhase(phase: string, wave?: string): Promise<Fleet> {
  return eventually(`FleetSync app ${phase}${wave ? ` at wave ${wave}` : ''}`, async () => {
    const f = await getFleet();
    const at = wave === undefined || f.status?.message?.startsWith(`wave ${wave} `);
    return f.status?.phase === phase && f.status.observedGeneration === f.metadata.generation && at ? f : undefined;
  }, 60_000);
}

/** An approval created as the admin (`admin`, the local control plane's client certificate). */
function createApproval(name: string, spec: Record<string, unknown>): Promise<unknown> {
  return mgmt.request({ method: 'POST', path: approvalsPath(), body: { apiVersion: API_VERSION, kind: 'RolloutApproval', metadata: { name }, spec } });
}

async function refusal(write: Promise<unknown>): Promise<ApiError> {
  const err = await write.then(() => undefined, (e: unknown) => e);
  if (!(err instanceof ApiError)) throw new Error(`the API server accepted it (or failed otherwise: ${String(err)})`);
  return err;
}

beforeAll(async () => {
  assertCliBuilt();
  edge1 = await clusterClient('edge-1');
  edge2 = await clusterClient('edge-2');
  await registerEastAndWest(mgmt, ns(), edgeNs());
  // The approver: reads FleetSyncs, creates (and reads) RolloutApprovals; nothing else.
  const rules = [
    { apiGroups: ['syncprims.dev'], resources: ['fleetsyncs'], verbs: ['get'] },
    { apiGroups: ['syncprims.dev'], resources: ['rolloutapprovals'], verbs: ['get', 'create'] },
  ];
  const file = path.join(tempDir('approver-'), 'kubeconfig');
  writeFileSync(file, await serviceAccountKubeconfig(mgmt, HOME, ns(), APPROVER, rules));
  approverKubeconfig = file;
  await roll('v1');
}, 60_000);

/** Applies the FleetSync with the template of `value`, waves canary (east) then rest; rest needs an approval, and canary too with `canaryApproval`. */
function roll(value: string, canaryApproval = false): Promise<unknown> {
  const template = { spec: { source: { inline: [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'app' }, data: { value } }] }, defaultNamespace: edgeNs() } };
  const waves = [{ name: 'canary', selector: { matchLabels: { region: 'east' } }, ...(canaryApproval ? { approval: true } : {}) }, { name: 'rest', approval: true }];
  return mgmt.request({
    method: 'PATCH',
    path: syncPath(ns(), 'app', FLEETSYNCS),
    query: { fieldManager: 'test', force: true },
    contentType: 'application/apply-patch+yaml',
    body: { apiVersion: API_VERSION, kind: 'FleetSync', metadata: { name: 'app', namespace: ns() }, spec: { kind: 'RemoteSync', clusters: { names: ['east', 'west'] }, rollout: { waves }, template } },
  });
}

afterAll(async () => {
  await edge2?.request({ method: 'DELETE', path: `/api/v1/namespaces/${edgeNs()}` }).catch(() => undefined);
});

describe('approving a wave', () => {
  test('an approval whose approver is not its creator is refused; one of another revision or wave, or the old annotation, approves nothing', async () => {
    const waiting = await waitPhase('AwaitingApproval');
    const update = waiting.status!.updateRevision!;
    expect(await valueIn(edge1)).toBe('v1');
    expect(await valueIn(edge2)).toBeUndefined();

    const forged = await refusal(createApproval('forged', { fleetSync: 'app', revision: update, wave: 'rest', approver: username() }));
    expect([forged.status, forged.message]).toEqual([403, expect.stringContaining(`${APPROVER_MESSAGE} (admin)`)]);
    expect(await find(mgmt, approvalsPath('forged'))).toBeUndefined();

    const since = Date.now();
    const other = update === '0000000000000000' ? '1111111111111111' : '0000000000000000';
    await createApproval('other-revision', { fleetSync: 'app', revision: other, wave: 'rest', approver: 'admin' });
    await createApproval('other-wave', { fleetSync: 'app', revision: update, wave: 'canary', approver: 'admin' });
    await mgmt.request({
      method: 'PATCH',
      path: syncPath(ns(), 'app', FLEETSYNCS),
      contentType: 'application/merge-patch+json',
      body: { metadata: { annotations: { 'syncprims.dev/rollout-approved': `${update}/rest` } } },
    });
    // Each woke the FleetSync; once they are all handled it still waits, and edge-2 has nothing.
    await op.waitForCause('FleetSync', ns(), 'app', 'RolloutApproval changed', since);
    await op.settledReconciles('FleetSync', ns(), 'app');
    const still = await getFleet();
    expect(still.status?.phase).toBe('AwaitingApproval');
    expect(still.status?.waves?.find((w) => w.name === 'rest')).not.toHaveProperty('approved');
    expect(await valueIn(edge2)).toBeUndefined();
  });

  test('an account that may not update the FleetSync approves with rollout approve; the wave proceeds, status and an Event name it', async () => {
    const paused = await asApprover('pause');
    expect([paused.code, paused.stderr]).toEqual([1, expect.stringContaining('forbidden')]);

    const update = (await getFleet()).status!.updateRevision!;
    const approved = await asApprover('approve');
    expect({ code: approved.code, stderr: approved.stderr }).toEqual({ code: 0, stderr: '' });
    expect(approved.stdout).toContain(`wave rest of FleetSync ${ns()}/app approved for revision ${update} by ${username()} (RolloutApproval ${ns()}/app-rest-${update})`);

    const done = await waitPhase('Complete');
    const rest = done.status?.waves?.find((w) => w.name === 'rest');
    const made = (await mgmt.request<{ metadata: { creationTimestamp: string } }>({ path: approvalsPath(`app-rest-${update}`) })).metadata.creationTimestamp;
    expect(rest).toMatchObject({ approved: true, approvedBy: username(), approvedAt: made });
    await eventually('v1 in edge-2', async () => ((await valueIn(edge2)) === 'v1' ? true : undefined), 30_000);
    const event = await eventOf(mgmt, ns(), 'app', 'WaveApproved', 'Normal');
    expect(event.message).toBe(`wave rest approved for revision ${update} by ${username()} at ${made}`);
  });

  test('an approval never changes: its approver cannot be rewritten, not even by its creator', async () => {
    const update = (await getFleet()).status!.updateRevision!;
    const rewrite = await refusal(
      mgmt.request({ method: 'PATCH', path: approvalsPath(`app-rest-${update}`), contentType: 'application/merge-patch+json', body: { spec: { approver: 'admin' } } }),
    );
    expect([rewrite.status, rewrite.message]).toEqual([422, expect.stringContaining(IMMUTABLE_MESSAGE)]);
  });

  test('approving a wave approved already says by whom, and makes no second approval', async () => {
    await roll('v2', true);
    await waitPhase('AwaitingApproval', 'canary');
    const update = (await getFleet()).status!.updateRevision!;
    expect((await asApprover('approve')).stdout).toContain(`wave canary of FleetSync ${ns()}/app approved for revision ${update} by ${username()}`);
    await waitPhase('AwaitingApproval', 'rest');
    const again = await asApprover('approve', '--wave', 'canary');
    expect({ code: again.code, stderr: again.stderr }).toEqual({ code: 0, stderr: '' });
    expect(again.stdout).toMatch(new RegExp(`wave canary of FleetSync ${ns()}/app is already approved for revision ${update} by ${username()} at \\S+Z \\(RolloutApproval ${ns()}/app-canary-${update}\\)`));
    const mine = (await mgmt.request<{ items: { spec: { wave: string; revision: string } }[] }>({ path: approvalsPath() })).items.filter((a) => a.spec.revision === update);
    expect(mine.map((a) => a.spec.wave)).toEqual(['canary']);
  });
});
