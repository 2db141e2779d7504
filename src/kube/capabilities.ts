import type { Requester } from './client.js';
import { NotKubernetesError } from './errors.js';
import { groupVersionPath, splitApiVersion } from './resources.js';

/**
 * What a chart's `.Capabilities` says of the cluster it is rendered for
 * (docs/adr/0013-helm-charts.md): the server's version (`/version`
 * gitVersion) and the API versions it serves, as Helm builds them from
 * discovery: every group/version, and every group/version/Kind of its
 * resources (subresources' kinds included). Read with two requests where the
 * server serves aggregated discovery (Kubernetes 1.30 and later), else one
 * per group-version; kept a minute per client (a chart rendered for many
 * syncs of one cluster asks once), a failure never kept.
 */

export interface ClusterCapabilities {
  /** `v1.36.3`. */
  kubeVersion: string;
  /** `v1`, `v1/ConfigMap`, `apps/v1`, `apps/v1/Deployment`, ..., sorted. */
  apiVersions: string[];
}

/** How long what a cluster said is used before it is asked again. */
export const CAPABILITIES_TTL_MS = 60_000;

const AGGREGATED = 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json';

interface Kept {
  at: number;
  answer: Promise<ClusterCapabilities>;
}

const KEPT = new WeakMap<Requester, Kept>();

/** The cluster's capabilities as `client` reads them, kept CAPABILITIES_TTL_MS per client. */
export function clusterCapabilities(client: Requester, signal?: AbortSignal): Promise<ClusterCapabilities> {
  const kept = KEPT.get(client);
  if (kept && Date.now() - kept.at < CAPABILITIES_TTL_MS) return kept.answer;
  const answer = readCapabilities(client, signal);
  const entry: Kept = { at: Date.now(), answer };
  KEPT.set(client, entry);
  answer.catch(() => {
    if (KEPT.get(client) === entry) KEPT.delete(client);
  });
  return answer;
}

async function readCapabilities(client: Requester, signal?: AbortSignal): Promise<ClusterCapabilities> {
  const [version, apiVersions] = await Promise.all([
    client.request<{ gitVersion?: unknown }>({ path: '/version', signal }),
    servedApiVersions(client, signal),
  ]);
  if (typeof version?.gitVersion !== 'string') throw new NotKubernetesError('GET /version', client.name, 'without a gitVersion');
  return { kubeVersion: version.gitVersion, apiVersions };
}

/** One group-version's resources, as aggregated discovery gives them. */
interface DiscoveryVersion {
  version?: string;
  resources?: { responseKind?: { kind?: string }; subresources?: { responseKind?: { kind?: string } }[] }[];
}

interface DiscoveryGroup {
  metadata?: { name?: string };
  versions?: DiscoveryVersion[];
}

/** The group-versions and group/version/Kinds the server serves, sorted. */
async function servedApiVersions(client: Requester, signal?: AbortSignal): Promise<string[]> {
  const [core, groups] = await Promise.all(
    ['/api', '/apis'].map((path) => client.request<{ kind?: string; items?: DiscoveryGroup[] }>({ path, accept: AGGREGATED, signal })),
  );
  if (core?.kind === 'APIGroupDiscoveryList' && groups?.kind === 'APIGroupDiscoveryList') {
    return apiVersionsOfGroups([...(core.items ?? []), ...(groups.items ?? [])]);
  }
  return legacyApiVersions(client, core as LegacyVersions, groups as LegacyGroups, signal);
}

/** Helm's version set from aggregated discovery's groups (the core group is named ''). */
export function apiVersionsOfGroups(groups: readonly DiscoveryGroup[]): string[] {
  const set = new Set<string>();
  for (const group of groups) {
    const name = group.metadata?.name ?? '';
    for (const v of group.versions ?? []) {
      if (!v.version) continue;
      const gv = name ? `${name}/${v.version}` : v.version;
      set.add(gv);
      for (const r of v.resources ?? []) {
        for (const kind of [r.responseKind?.kind, ...(r.subresources ?? []).map((s) => s.responseKind?.kind)]) {
          if (kind) set.add(`${gv}/${kind}`);
        }
      }
    }
  }
  return [...set].sort();
}

interface LegacyVersions {
  versions?: string[];
}

interface LegacyGroups {
  groups?: { versions?: { groupVersion?: string }[] }[];
}

/** Without aggregated discovery: `/api` and `/apis` list the group-versions, and each is read for its kinds. */
async function legacyApiVersions(client: Requester, core: LegacyVersions, groups: LegacyGroups, signal?: AbortSignal): Promise<string[]> {
  const gvs = [...(core?.versions ?? []), ...(groups?.groups ?? []).flatMap((g) => (g.versions ?? []).map((v) => v.groupVersion ?? ''))].filter(Boolean);
  const lists = await Promise.all(
    gvs.map(async (gv) => {
      const { group, version } = splitApiVersion(gv);
      const list = await client.request<{ resources?: { kind?: string }[] }>({ path: groupVersionPath(group, version), signal });
      return (list?.resources ?? []).map((r) => r.kind).filter((k): k is string => Boolean(k)).map((k) => `${gv}/${k}`);
    }),
  );
  return [...new Set([...gvs, ...lists.flat()])].sort();
}
