// Lane: own clusters (test/support/lanes-runner.js: it runs beside the shared-cluster files).
// The shards' fence (runtime/shards.ts) on a real API server, in this process: a replica that
// holds a key and is then paused past its renew deadline (its event loop blocked, as by SIGSTOP or a
// frozen VM) may write for that key no more the moment it runs again, before any of its timers has
// run: the fence reads its own clock at each write, not a flag its timers clear. Once it renews
// again, the key counts as lost until it has taken the key's Lease again (its epoch).
import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { performance } from 'node:perf_hooks';
import { clusterShardKey, shardKeyString, shardLeaseName } from '../../src/api/shard-marks.js';
import type { KubeClient } from '../../src/kube/client.js';
import { Discovery } from '../../src/kube/discovery.js';
import { ClusterCache } from '../../src/runtime/cache.js';
import { silentLogger } from '../../src/runtime/logger.js';
import { Shards } from '../../src/runtime/shards.js';
import { closeClients, clusterClient, OWN_LANE_CLUSTER } from '../support/controlplane.js';
import { eventually } from '../support/eventually.js';
import { useTestNamespace } from '../support/namespace.js';

const ns = useTestNamespace(OWN_LANE_CLUSTER, 'shards-fence');
const TIMING = { leaseDurationMs: 3_000, renewDeadlineMs: 2_000, retryPeriodMs: 300 };
let client: KubeClient;
let cache: ClusterCache;
let shards: Shards;

beforeAll(async () => {
  client = await clusterClient(OWN_LANE_CLUSTER);
  cache = new ClusterCache(client, new Discovery(client), { namespace: ns() });
});

afterAll(async () => {
  await shards?.stop();
  await cache?.stop();
  await closeClients();
});

test('a replica paused past its renew deadline may not write for its key the moment it runs again; renewed, it works the key only once it has taken the Lease again', async () => {
  const key = clusterShardKey(ns(), 'edge-kubeconfig');
  const id = shardKeyString(key);
  shards = new Shards({ client, cache, namespace: ns(), member: 'fence-a', logger: silentLogger, ...TIMING });
  shards.useKeys(() => new Map([[id, { key }]]));
  await shards.start();
  await eventually('the key held', async () => (shards.works(id) ? true : undefined), 30_000);
  expect(await shards.within(id, async () => shards.mayWriteRemote())).toBe(true);
  const leaseVersion = async (): Promise<string | undefined> =>
    (await client.request<{ metadata: { resourceVersion?: string } }>({ path: `/apis/coordination.k8s.io/v1/namespaces/${ns()}/leases/${shardLeaseName(key)}` })).metadata.resourceVersion;
  const before = await leaseVersion();

  const until = performance.now() + TIMING.renewDeadlineMs + 300;
  while (performance.now() < until) {
    // paused: no timer, no answer runs
  }
  // Asked before anything else of the process runs (within() calls its function at once).
  let allowed: boolean | undefined;
  const asked = shards.within(id, async () => {
    allowed = shards.mayWriteRemote();
  });
  expect([allowed, shards.mayWrite(), shards.works(id)]).toEqual([false, false, false]);
  await asked;

  // Its membership renewed again (nobody took it), a new epoch: the key is worked again only after its Lease was taken anew.
  await eventually('the key held again', async () => (shards.works(id) ? true : undefined), 30_000);
  expect(await shards.within(id, async () => shards.mayWriteRemote())).toBe(true);
  expect(await leaseVersion()).not.toBe(before);
}, 60_000);
