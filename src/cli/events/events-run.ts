// `syncprims events`: what it does (events.ts declares it; this is loaded when it runs).
import { API_VERSION, syncResource, type SyncKind } from '../../api/kinds.js';
import type { InventoryEntry } from '../../api/status.js';
import { parseSyncObject } from '../../api/validate.js';
import { objectRef, type ObjectRef } from '../../apply/inventory.js';
import { remoteLocation } from '../../proxy/remote-sync.js';
import { getIfExists, type KubeClient } from '../../kube/client.js';
import { objectPath, type KubeObject } from '../../kube/resources.js';
import type { Cluster, ClusterFlags } from '../cluster.js';
import { eventsOf, refsOf } from '../../views/events-collect.js';
import { inTimeOrder, type FoundEvent } from '../../views/events-order.js';
import { EVENT_HEADER, eventRow } from './events-table.js';
import type { KindName } from '../kind-name.js';
import type { OutputFormat } from '../options.js';
import { listOf, toJson, toYaml } from '../output.js';
import { getSync } from '../../views/sync-api.js';
import { syncRow } from '../../views/sync-rows.js';
import { formatTable } from '../table.js';
import { styleFor } from '../terminal.js';

export interface EventsFlags extends ClusterFlags {
  output: OutputFormat;
  syncOnly?: boolean;
}

export async function events(ref: Required<KindName>, flags: EventsFlags): Promise<void> {
  const { withCluster } = await import('../cluster.js');
  await withCluster(flags, async (cluster) => {
    const sync = await getSync(cluster.client, ref.kind, cluster.namespace, ref.name);
    const found: FoundEvent[] = (await eventsOf(cluster.client, [objectRef(sync)])).map((event) => ({ event }));
    const label = `${sync.kind} ${cluster.namespace}/${ref.name}`;
    if (!flags.syncOnly) found.push(...(await appliedEvents(sync, cluster, label)));
    print(inTimeOrder(found), flags, label, cluster.namespace);
  });
}

function inventoryOf(obj: KubeObject | undefined): InventoryEntry[] {
  return (obj?.status as { inventory?: { entries?: InventoryEntry[] } } | undefined)?.inventory?.entries ?? [];
}

/** The Events of what the sync applied: in its cluster, or in the remote one (a cluster that does not answer is said on stderr). */
async function appliedEvents(sync: KubeObject, cluster: Cluster, label: string): Promise<FoundEvent[]> {
  if (sync.kind === 'Sync') return (await eventsOf(cluster.client, refsOf(inventoryOf(sync)))).map((event) => ({ event }));
  // A FleetSync applies nothing itself: its children say what happens per cluster (syncprims events on each).
  if (sync.kind === 'FleetSync') return [];
  const name = syncRow(sync).cluster ?? 'remote';
  const { openRemote, remoteFailure } = await import('../remote.js');
  const remote = await openRemote(cluster, sync);
  if (!remote.ok) {
    process.stderr.write(`syncprims events: ${label}: the Events in its cluster are not shown: ${remote.message}\n`);
    return [];
  }
  try {
    const refs = sync.kind === 'ProxySync' ? await proxiedRefs(sync, remote.client) : refsOf(inventoryOf(sync));
    return (await eventsOf(remote.client, refs)).map((event) => ({ event, cluster: name }));
  } catch (err) {
    const line = remoteFailure(err, remote.client);
    if (!line) throw err;
    process.stderr.write(`syncprims events: ${label}: the Events in its cluster (${name}) are not shown: ${line}\n`);
    return [];
  } finally {
    remote.client.close();
  }
}

/** A ProxySync's objects in its cluster: what its inventory lists (the remote Sync, the copies), and what the remote Sync applied. */
async function proxiedRefs(sync: KubeObject, remote: KubeClient): Promise<ObjectRef[]> {
  const refs = refsOf(inventoryOf(sync));
  const parsed = parseSyncObject('ProxySync', sync);
  if (!parsed.ok) return refs;
  const { namespace, name } = remoteLocation(sync, parsed.value.spec);
  const remoteSync = await getIfExists<KubeObject>(remote, objectPath(syncResource('Sync'), name, namespace));
  const all = [...refs, { namespace, name, group: API_VERSION.split('/')[0] ?? '', kind: 'Sync' satisfies SyncKind }, ...refsOf(inventoryOf(remoteSync))];
  return [...new Map(all.map((r) => [`${r.group}|${r.kind}|${r.namespace}|${r.name}`, r])).values()];
}

function print(found: FoundEvent[], flags: EventsFlags, label: string, namespace: string): void {
  if (flags.output !== 'table') {
    const list = listOf(found.map((f) => f.event));
    process.stdout.write(flags.output === 'json' ? toJson(list) : toYaml(list));
    return;
  }
  if (found.length === 0) {
    process.stderr.write(`No events found for ${label}${flags.syncOnly ? '' : ' or the objects it applied'}.\n`);
    return;
  }
  const style = styleFor(process.stdout);
  const now = Date.now();
  const { lines } = formatTable(EVENT_HEADER, found.map((f) => eventRow(f, namespace, style, now)));
  process.stdout.write(`${lines.join('\n')}\n`);
}
