// The web view (`syncprims run --ui-addr`): a layer above the controllers,
// fed from the operator's shared caches. See docs/ui.md.
import { API_VERSION, GROUP, KINDS } from '../api/kinds.js';
import { eventsOf } from '../views/events-collect.js';
import type { FleetReachability } from '../clusters/fleet-reachability.js';
import type { Manager } from '../runtime/manager.js';
import { ViewFeed } from './feed.js';
import { FleetInventory } from './fleet-inventory.js';
import { serveUi, type UiServer } from './server.js';

export { uiListenAddr } from './server.js';

/**
 * Serves the view of what `manager`'s caches hold (and `reachability`, what
 * the controllers' connections know of the remote clusters), on `addr`;
 * closed on the manager's shutdown. Call once the controllers have started
 * their informers.
 */
export async function startUi(manager: Manager, addr: string, reachability?: FleetReachability): Promise<UiServer> {
  const informers = await Promise.all(KINDS.map((kind) => manager.cache.informer(API_VERSION, kind)));
  const fleets = informers[KINDS.indexOf('FleetSync')]!;
  const inventory = new FleetInventory({ cache: manager.cache, discovery: manager.cache.discovery, logger: manager.log, namespace: manager.opts.namespace }, fleets);
  const feed = new ViewFeed(informers, manager.opts.namespace, reachability, inventory);
  const server = await serveUi({
    addr,
    feed,
    logger: manager.log,
    sources: {
      peek: (apiVersion, kind, selector) => manager.cache.peek(apiVersion, kind, selector),
      events: (ref) => eventsOf(manager.client, [{ ...ref, group: GROUP }]),
    },
  });
  manager.onShutdown(async () => {
    feed.close();
    await Promise.all([server.close(), inventory.stop()]);
  });
  return server;
}
