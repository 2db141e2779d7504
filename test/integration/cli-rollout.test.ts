// `syncprims rollout` as a user runs it (a real process, stdout a pipe)
// against a FleetSync of RemoteSyncs rolled out by an operator on mgmt, over
// the inventory clusters east (edge-1) and west (edge-2) in two waves, canary
// (east) then rest: status follows to Complete, a broken revision's status
// exits 1 Halted, undo writes the good template back whole and it completes,
// pause and resume, approve, history.
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { API_VERSION } from '../../src/api/kinds.js';
import type { KubeClient } from '../../src/kube/client.js';
import { assertCliBuilt, runCli, tableCells } from '../support/cli.js';
import { clusterClient, kubeconfigPath } from '../support/controlplane.js';
import { eventually } from '../support/eventually.js';
import { useTestNamespace } from '../support/namespace.js';
import { useOperatedNamespace } from '../support/operated-namespace.js';
import { registerEastAndWest } from '../support/remote.js';
import { find, getSync, syncPath, type SyncObject } from '../support/syncs.js';

const HOME = 'mgmt';
const FLEETSYNCS = 'fleetsyncs';
let mgmt: KubeClient;
let edge1: KubeClient;
let edge2: KubeClient;
const ns = useOperatedNamespace(HOME, 'cli-rollout', (o) => ({ client: mgmt } = o), ['--cluster-id', 'mgmt-cli-rollout-test']);
/** The edges' namespace: a test namespace in edge-1, made alike in edge-2 (deleted at the end). */
const edgeNs = useTestNamespace('edge-1', 'rolledge');

const cli = (...args: string[]) => runCli(['rollout', ...args, 'fleetsync/app', '--kubeconfig', kubeconfigPath(HOME), '-n', ns()], { timeoutMs: 150_000 });
const status = (...args: string[]) => cli('status', '--timeout', '120s', ...args);

type Fleet = SyncObject & { status?: { phase?: string; currentRevision?: string; updateRevision?: string; observedGeneration?: number } };
const getFleet = (): Promise<Fleet> => getSync(mgmt, ns(), 'app', FLEETSYNCS) as Promise<Fleet>;
const valueIn = async (edge: KubeClient): Promise<string | undefined> =>
  (await find<{ data?: { value?: string } }>(edge, `/api/v1/namespaces/${edgeNs()}/configmaps/app`))?.data?.value;
const values = async (): Promise<(string | undefined)[]> => [await valueIn(edge1), await valueIn(edge2)];

/**
 * The template of revision `value`: one ConfigMap; `broken` adds labels, and a second ConfigMap in a
 * namespace that exists nowhere (which fails), beside the first with its new value (which applies).
 */
function template(value: string, broken = false): Record<string, unknown> {
  const app = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'app' }, data: { value } };
  const nowhere = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'app', namespace: 'rollout-nowhere' }, data: { value } };
  const spec = { source: { inline: broken ? [app, nowhere] : [app] }, defaultNamespace: edgeNs() };
  return broken ? { metadata: { labels: { broken: 'yes' } }, spec } : { spec };
}

/** Applies the FleetSync (as the test's field manager) with the template of `value` and waves canary then rest. */
function roll(value: string, opts: { broken?: boolean; approval?: boolean } = {}): Promise<unknown> {
  const waves = [{ name: 'canary', selector: { matchLabels: { region: 'east' } } }, { name: 'rest', ...(opts.approval ? { approval: true } : {}) }];
  return mgmt.request({
    method: 'PATCH',
    path: syncPath(ns(), 'app', FLEETSYNCS),
    query: { fieldManager: 'test', force: true },
    contentType: 'application/apply-patch+yaml',
    body: { apiVersion: API_VERSION, kind: 'FleetSync', metadata: { name: 'app', namespace: ns() }, spec: { kind: 'RemoteSync', clusters: { names: ['east', 'west'] }, rollout: { waves }, template: template(value, opts.broken) } },
  });
}

beforeAll(async () => {
  assertCliBuilt();
  edge1 = await clusterClient('edge-1');
  edge2 = await clusterClient('edge-2');
  await registerEastAndWest(mgmt, ns(), edgeNs());
}, 60_000);

afterAll(async () => {
  await edge2?.request({ method: 'DELETE', path: `/api/v1/namespaces/${edgeNs()}` }).catch(() => undefined);
});

describe('syncprims rollout', () => {
  test('status follows to Complete (exit 0); a broken revision halts at the canary (exit 1); history; undo writes the good template back whole and it completes', async () => {
    await roll('v1');
    const done = await status();
    expect({ code: done.code, stderr: done.stderr }).toEqual({ code: 0, stderr: '' });
    expect(done.stdout).toMatch(new RegExp(`✔ the rollout of FleetSync ${ns()}/app is Complete`));
    expect(done.stdout).not.toContain('\x1b');
    expect(await values()).toEqual(['v1', 'v1']);
    const good = (await getFleet()).status?.currentRevision;
    const goodTemplate = (await getFleet()).spec.template;

    await roll('v2', { broken: true });
    const halted = await status();
    expect(halted.code).toBe(1);
    expect(halted.stderr).toContain(`the rollout of FleetSync ${ns()}/app is Halted: wave canary: 1 failing (at most 0): east`);
    expect(halted.stderr).toContain(`syncprims rollout undo fleetsync/app -n ${ns()}`);
    // The waves as printed: canary failed, rest never updated.
    const rows = tableCells(halted.stdout).filter((r) => r[0] === 'canary' || r[0] === 'rest');
    expect(rows.slice(-2).map((r) => r.slice(0, 6))).toEqual([
      ['canary', '1', '1', '0', '1', '0'],
      ['rest', '1', '0', '0', '0', '0'],
    ]);
    // The canary took the broken revision's change, the rest did not (had it reached the rest, edge-2 would say v2 too).
    expect(await values()).toEqual(['v2', 'v1']);
    const broken = (await getFleet()).status?.updateRevision;

    const history = await cli('history');
    expect(history.code).toBe(0);
    expect(tableCells(history.stdout).map((r) => r.slice(0, 3))).toEqual([
      ['REVISION', 'DIGEST', 'STATUS'],
      ['2', broken, 'update'],
      ['1', good, 'current'],
    ]);

    const undo = await cli('undo');
    expect({ code: undo.code, stderr: undo.stderr }).toEqual({ code: 0, stderr: '' });
    expect(undo.stdout).toContain(`rolls back to revision 1 (${good}), from ${broken}`);
    // Whole: the labels the broken template added are gone, so the template is revision 1's again.
    expect((await getFleet()).spec.template).toEqual(goodTemplate);
    const back = await status();
    expect({ code: back.code, stderr: back.stderr }).toEqual({ code: 0, stderr: '' });
    // The undo restored the canary's object (v2 back to v1); the rest's was never changed.
    expect(await values()).toEqual(['v1', 'v1']);
    expect((await getFleet()).status).toMatchObject({ currentRevision: good, updateRevision: good });
    const after = await cli('history');
    expect(tableCells(after.stdout).map((r) => r.slice(0, 3))).toEqual([
      ['REVISION', 'DIGEST', 'STATUS'],
      ['3', good, 'current, update'],
      ['2', broken, '-'],
    ]);
    // Nothing older than the template's own number 3 but 2: --to-revision names what is kept.
    const missing = await cli('undo', '--to-revision', '1');
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('there is no revision 1 (kept: 3, 2');
  });

  test('pause holds the rollout (status exits 1 Paused), resume lets it complete', async () => {
    const paused = await cli('pause');
    expect({ code: paused.code, stderr: paused.stderr }).toEqual({ code: 0, stderr: '' });
    expect((await getFleet()).spec).toMatchObject({ rollout: { paused: true } });
    await roll('v3');
    const held = await status();
    expect(held.code).toBe(1);
    expect(held.stderr).toContain(`is Paused: paused at wave canary (spec.rollout.paused) (go on: syncprims rollout resume fleetsync/app -n ${ns()})`);
    expect(await values()).toEqual(['v1', 'v1']);
    const once = await status('--watch=false');
    expect(once.code).toBe(0);
    expect(once.stdout).toContain(`FleetSync ${ns()}/app: Paused`);

    const resumed = await cli('resume');
    expect({ code: resumed.code, stderr: resumed.stderr }).toEqual({ code: 0, stderr: '' });
    expect((await getFleet()).spec.rollout).not.toHaveProperty('paused');
    const done = await status();
    expect({ code: done.code, stderr: done.stderr }).toEqual({ code: 0, stderr: '' });
    expect(await values()).toEqual(['v3', 'v3']);
  });

  test('approve: refused when nothing awaits approval; else approves the wave the rollout waits at, and it completes', async () => {
    const refused = await cli('approve');
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`nothing of FleetSync ${ns()}/app awaits approval: it is Complete`);

    await roll('v4', { approval: true });
    const waiting = await status();
    expect(waiting.code).toBe(1);
    expect(waiting.stderr).toContain(`is AwaitingApproval: wave rest waits for approval`);
    expect(waiting.stderr).toContain(`(go on: syncprims rollout approve fleetsync/app -n ${ns()})`);
    expect(await values()).toEqual(['v4', 'v3']);

    const approved = await cli('approve');
    expect({ code: approved.code, stderr: approved.stderr }).toEqual({ code: 0, stderr: '' });
    const update = (await getFleet()).status?.updateRevision;
    expect(approved.stdout).toContain(`wave rest of FleetSync ${ns()}/app approved for revision ${update} by admin (RolloutApproval ${ns()}/app-rest-${update})`);
    const done = await status();
    expect({ code: done.code, stderr: done.stderr }).toEqual({ code: 0, stderr: '' });
    await eventually('v4 in both', async () => ((await values()).join() === 'v4,v4' ? true : undefined), 30_000);
  });
});
