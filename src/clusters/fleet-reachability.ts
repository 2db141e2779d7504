import type { ReachabilitySnapshot } from './reachability.js';

/** The remote clusters' reachability as the operator knows it live, for views of the fleet (the web view). */
export interface FleetReachability {
  /** Of the cluster the RemoteSync or ProxySync `user` (`Kind/namespace/name`) last used; undefined: none yet. */
  of(user: string): ReachabilitySnapshot | undefined;
  /** Calls `fn` whenever a cluster stops or starts answering. Returns the way to stop. */
  onChange(fn: () => void): () => void;
}
