import { DNS1123_SUBDOMAIN } from './names.js';

/** The API group, version and kinds of syncprims (API.md). */
export const GROUP = 'syncprims.dev';
export const VERSION = 'v1alpha1';
export const API_VERSION = `${GROUP}/${VERSION}`;

/** `kubectl get syncprims` lists all three kinds. */
export const CATEGORY = 'syncprims';

export const SYNC_KINDS = ['Sync', 'RemoteSync', 'ProxySync'] as const;
export type SyncKind = (typeof SYNC_KINDS)[number];

export interface KindNames {
  kind: SyncKind;
  listKind: string;
  /** The resource name in API paths, e.g. `syncs`. */
  plural: string;
  /** Also the controller name in metrics (`sync`, `remotesync`, `proxysync`). */
  singular: string;
  shortName: string;
}

export const KIND_NAMES: Readonly<Record<SyncKind, KindNames>> = {
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
};

export function isSyncKind(value: unknown): value is SyncKind {
  return typeof value === 'string' && (SYNC_KINDS as readonly string[]).includes(value);
}

/** Names of syncs are at most this long, so that they fit in label values. */
export const MAX_NAME_LENGTH = 63;

/** A service account's name (a DNS-1123 subdomain): `ns:name` and the like are refused at admission. */
export const SERVICE_ACCOUNT_NAME = new RegExp(DNS1123_SUBDOMAIN);
export const NAME_LENGTH_MESSAGE =
  `metadata.name must be at most ${MAX_NAME_LENGTH} characters (it is used in label values)`;

/** Where a kind of ours lives in the API (a ResourceInfo of src/kube), for its paths. */
export function syncResource(kind: SyncKind): { group: string; version: string; kind: SyncKind; resource: string; namespaced: true } {
  return { group: GROUP, version: VERSION, kind, resource: KIND_NAMES[kind].plural, namespaced: true };
}
