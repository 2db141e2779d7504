// What a FleetSync says once: each inventory problem, and each cluster whose template cannot be made, a
// Warning Event, told once per problem, whatever the status' capped list of failures holds.
import { describe, expect, test } from '@jest/globals';
import type { InventoryCluster } from '../../src/clusters/inventory.js';
import { tellTroubled } from '../../src/controllers/fleet-warnings.js';
import type { ClusterState } from '../../src/fleet/fleet-status.js';
import { createLogger } from '../../src/runtime/logger.js';

const fleet = { apiVersion: 'syncprims.dev/v1alpha1', kind: 'FleetSync', metadata: { name: 'app', namespace: 'fleet' } };
const log = createLogger({ level: 'silent' });

function recorder(): { events: { obj: unknown; reason: string; message: string }[]; deps: Parameters<typeof tellTroubled>[0] } {
  const events: { obj: unknown; reason: string; message: string }[] = [];
  const deps = { events: { record: async (obj: unknown, _type: string, reason: string, message: string) => void events.push({ obj, reason, message }) } } as unknown as Parameters<typeof tellTroubled>[0];
  return { events, deps };
}

const cluster = (name: string): InventoryCluster => ({ name, problem: 'the name is claimed twice' }) as unknown as InventoryCluster;
const failing = (message: string): ClusterState => ({ state: 'failed', updated: false, reason: 'InventoryProblem', message });

describe('tellTroubled', () => {
  test('30 troubled clusters (more than the 20 failures status lists): each told once, not again on the next reconciles', async () => {
    const { events, deps } = recorder();
    const troubled = Array.from({ length: 30 }, (_, i) => cluster(`c${String(i).padStart(2, '0')}`));
    const states = new Map(troubled.map((c) => [c.name, failing(`Secret fleet/${c.name}: claimed twice`)]));
    const told = new Set<string>();
    for (let round = 0; round < 3; round++) await tellTroubled(deps, fleet, told, troubled, states, log);
    expect(events).toHaveLength(30);
    expect(new Set(events.map((e) => e.message)).size).toBe(30);
  });

  test('a problem gone is forgotten: when it comes back it is told again; a changed problem is told', async () => {
    const { events, deps } = recorder();
    const told = new Set<string>();
    const c = cluster('east');
    await tellTroubled(deps, fleet, told, [c], new Map([['east', failing('claimed twice')]]), log);
    await tellTroubled(deps, fleet, told, [], new Map(), log);
    await tellTroubled(deps, fleet, told, [c], new Map([['east', failing('claimed twice')]]), log);
    await tellTroubled(deps, fleet, told, [c], new Map([['east', failing('no credentials')]]), log);
    expect(events.map((e) => e.message)).toEqual(['cluster east: claimed twice', 'cluster east: claimed twice', 'cluster east: no credentials']);
  });

  test('a cluster whose template cannot be made is told with its reason, once; other failures (an apply that failed) are not told here', async () => {
    const { events, deps } = recorder();
    const told = new Set<string>();
    const states = new Map<string, ClusterState>([
      ['east', { state: 'failed', updated: false, reason: 'SubstitutionFailed', message: 'no value for region' }],
      ['west', { state: 'failed', updated: false, reason: 'OverrideFailed', message: 'overrides[0].patches[0] (remove /x)' }],
      ['north', { state: 'failed', updated: true, reason: 'ApplyFailed', message: 'cannot write' }],
      ['south', { state: 'ready' }],
    ]);
    for (let round = 0; round < 2; round++) await tellTroubled(deps, fleet, told, [], states, log);
    expect(events.map((e) => [e.reason, e.message])).toEqual([
      ['SubstitutionFailed', 'cluster east: no value for region'],
      ['OverrideFailed', 'cluster west: overrides[0].patches[0] (remove /x)'],
    ]);
  });
});

