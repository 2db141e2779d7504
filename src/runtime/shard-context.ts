// Which shard key the work under way belongs to: set around each reconcile (Controller with
// `sharding`), read by the write fences of the clients (runtime/shards.ts), so that every
// request a reconcile makes, to whatever cluster, is checked against that key's Lease.
import { AsyncLocalStorage } from 'node:async_hooks';

const current = new AsyncLocalStorage<string>();

/** Runs `fn` as work of `key` (a shardKeyString). */
export function withinShardKey<R>(key: string, fn: () => Promise<R>): Promise<R> {
  return current.run(key, fn);
}

/** The shard key of the work under way, if any. */
export function currentShardKey(): string | undefined {
  return current.getStore();
}
