// The operator's liveness Lease, which `syncprims doctor` reads: held and
// labelled without leader election and released by a clean stop (a crash
// leaving it to lapse is in cli-doctor.test.ts); with leader election the
// leader Lease carries the same labels; a Lease namespace that does not exist
// is a log line, not a failure.
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import type { Finding } from '../../src/cli/doctor/doctor-findings.js';
import type { KubeClient } from '../../src/kube/client.js';
import type { Lease } from '../../src/runtime/lease-lock.js';
import { assertCliBuilt, runCli } from '../support/cli.js';
import { clusterClient, closeClients, kubeconfigPath } from '../support/controlplane.js';
import { installCrds } from '../support/crds.js';
import { eventually } from '../support/eventually.js';
import { useTestNamespace } from '../support/namespace.js';
import { OperatorProcess } from '../support/operator.js';
import { applySync, find, waitForReady } from '../support/syncs.js';

const CLUSTER = 'mgmt';
const ns = useTestNamespace(CLUSTER, 'liveness');
/** Namespaces that do not exist: operators that watch them have nothing to do. */
const nowhere = (what: string): string => `liveness-${what}-${randomBytes(3).toString('hex')}`;
const leasePath = (namespace: string, name: string): string => `/apis/coordination.k8s.io/v1/namespaces/${namespace}/leases/${name}`;
let client: KubeClient;
let plain: OperatorProcess;
let elected: OperatorProcess;
let homeless: OperatorProcess;
const electedWatches = nowhere('elected');
const homelessWatches = nowhere('homeless');

beforeAll(async () => {
  assertCliBuilt();
  client = await clusterClient(CLUSTER);
  await installCrds(CLUSTER);
  [plain, elected, homeless] = await Promise.all([
    OperatorProcess.start(CLUSTER, ['--namespace', ns(), '--liveness-lease-duration', '4s']),
    OperatorProcess.start(CLUSTER, ['--namespace', electedWatches, '--leader-elect', '--leader-election-namespace', ns()]),
    OperatorProcess.start(CLUSTER, ['--namespace', homelessWatches]),
  ]);
});

afterAll(async () => {
  await Promise.all([plain, elected, homeless].map((op) => op?.stop('SIGTERM')));
  await closeClients();
});

describe('the liveness Lease', () => {
  test('without leader election: syncprims-operator in the namespace watched, labelled and renewed; a clean stop releases it, and doctor says so at once', async () => {
    await applySync(client, ns(), 'app', { source: { inline: [] } });
    await waitForReady(client, ns(), 'app', 'True', 'Succeeded');
    const first = await eventually('the Lease', () => find<Lease>(client, leasePath(ns(), 'syncprims-operator')));
    expect(first.metadata.labels).toEqual({ 'syncprims.dev/operator-lease': 'true', 'syncprims.dev/watch-namespace': ns() });
    expect(first.spec).toMatchObject({ holderIdentity: expect.stringMatching(/.+/), leaseDurationSeconds: 4 });
    const renewed = await eventually('a renewal', async () => {
      const l = await find<Lease>(client, leasePath(ns(), 'syncprims-operator'));
      return l && l.spec?.renewTime !== first.spec?.renewTime ? l : undefined;
    });
    expect(renewed.spec?.holderIdentity).toBe(first.spec?.holderIdentity);
    expect(plain.logs.some((l) => l.msg === 'holding the liveness Lease' && l.lease === `${ns()}/syncprims-operator`)).toBe(true);

    expect(await plain.stop('SIGTERM')).toBe(0);
    const released = await client.request<Lease>({ path: leasePath(ns(), 'syncprims-operator') });
    expect(released.spec).toMatchObject({ holderIdentity: '', leaseDurationSeconds: 1 });
    const { code, stdout } = await runCli(['doctor', '--kubeconfig', kubeconfigPath(CLUSTER), '-n', ns(), '-o', 'json']);
    expect(code).toBe(1);
    const [finding] = (JSON.parse(stdout) as { findings: Finding[] }).findings;
    expect(finding).toMatchObject({ problem: 'OperatorNotRunning', object: '-' });
    expect(finding?.message).toMatch(new RegExp(`the last, Lease ${ns()}/syncprims-operator, was released at .+: a clean stop`));
  });

  test('with --leader-elect: the leader Lease carries the labels, and there is no other', async () => {
    await elected.waitForLog('leadership', (l) => l.msg.startsWith('became leader'));
    const lease = await client.request<Lease>({ path: leasePath(ns(), 'syncprims-leader') });
    expect(lease.metadata.labels).toEqual({ 'syncprims.dev/operator-lease': 'true', 'syncprims.dev/watch-namespace': electedWatches });
    expect(lease.spec).toMatchObject({ holderIdentity: expect.stringMatching(/.+/), leaseDurationSeconds: 15 });
    expect(await find(client, leasePath(electedWatches, 'syncprims-operator'))).toBeUndefined();
  });

  test('its namespace missing: one clear log line, and the operator runs on', async () => {
    const told = await homeless.waitForLog('the missing namespace told', (l) => l.level === 'warn' && String(l.msg).startsWith(`namespace ${homelessWatches} does not exist`));
    expect(told.msg).toContain(`the liveness Lease ${homelessWatches}/syncprims-operator cannot be created`);
    expect(told.msg).toContain('`syncprims doctor` will say that no operator runs');
    expect(await homeless.readyz()).toBe(200);
    expect(homeless.child.exitCode).toBeNull();
    expect(homeless.logs.filter((l) => String(l.msg).includes('does not exist'))).toHaveLength(1);
  });
});
