import { DNS1123_SUBDOMAIN } from './names.js';

/** The API group, version and kinds of syncprims (API.md). */
export const GROUP = 'syncprims.dev';
export const VERSION = 'v1alpha1';
export const API_VERSION = `${GROUP}/${VERSION}`;

/** `kubectl get syncprims` lists the four kinds. */
export const CATEGORY = 'syncprims';

/** The kinds that apply a set of manifests (to their cluster, a remote one, or through a remote Sync). */
export const SYNC_KINDS = ['Sync', 'RemoteSync', 'ProxySync'] as const;
export type SyncKind = (typeof SYNC_KINDS)[number];

/** Every kind of ours: the three, and FleetSync over them. Any kind may depend on any kind. */
export const KINDS = [...SYNC_KINDS, 'FleetSync'] as const;
export type Kind = (typeof KINDS)[number];

export interface KindNames {
  kind: Kind;
  listKind: string;
  /** The resource name in API paths, e.g. `syncs`. */
  plural: string;
  /** Also the controller name in metrics (`sync`, `remotesync`, `proxysync`, `fleetsync`). */
  singular: string;
  shortName: string;
}

export const KIND_NAMES: Readonly<Record<Kind, KindNames>> = {
  Sync: { kind: 'Sync', listKind: 'SyncList', plural: 'syncs', singular: 'sync', shortName: 'sy' },
  RemoteSync: {
    kind: 'RemoteSync',
    listKind: 'RemoteSyncList',
    plural: 'remotesyncs',
    singular: 'remotesync',
    shortName: 'rsy',
  },
  ProxySync: {
    kind: 'ProxySync',
    listKind: 'ProxySyncList',
    plural: 'proxysyncs',
    singular: 'proxysync',
    shortName: 'psy',
  },
  FleetSync: {
    kind: 'FleetSync',
    listKind: 'FleetSyncList',
    plural: 'fleetsyncs',
    singular: 'fleetsync',
    shortName: 'fsy',
  },
};

export function isSyncKind(value: unknown): value is SyncKind {
  return typeof value === 'string' && (SYNC_KINDS as readonly string[]).includes(value);
}

export function isKind(value: unknown): value is Kind {
  return typeof value === 'string' && (KINDS as readonly string[]).includes(value);
}

/** Names of syncs are at most this long, so that they fit in label values. */
export const MAX_NAME_LENGTH = 63;

/** A service account's name (a DNS-1123 subdomain): `ns:name` and the like are refused at admission. */
export const SERVICE_ACCOUNT_NAME = new RegExp(DNS1123_SUBDOMAIN);
export const NAME_LENGTH_MESSAGE =
  `metadata.name must be at most ${MAX_NAME_LENGTH} characters (it is used in label values)`;

/** Where a kind of ours lives in the API (a ResourceInfo of src/kube), for its paths. */
export function syncResource<K extends Kind>(kind: K): { group: string; version: string; kind: K; resource: string; namespaced: true } {
  return { group: GROUP, version: VERSION, kind, resource: KIND_NAMES[kind].plural, namespaced: true };
}
