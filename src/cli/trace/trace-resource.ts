// How `syncprims trace` names an object: `resource/name` as kubectl reads it
// (`configmap/x`, `cm/x`, `ConfigMap/x`, `deployments.apps/x`,
// `deployment.v1.apps/x`), resolved against what the cluster serves. The
// kube adapter's Discovery maps an apiVersion and kind to a resource; a
// name typed by a person needs the whole list, read here from aggregated
// discovery (two requests), or group by group from a server without it.
import { mapLimit } from '../../apply/map-limit.js';
import type { Requester } from '../../kube/client.js';
import { groupVersionPath, type ResourceInfo } from '../../kube/resources.js';
import { CliError, UsageError } from '../errors.js';

export interface ResourceArg {
  /** What names the kind: a resource, singular, short name or kind, with an optional `.version.group`. */
  resource: string;
  name: string;
}

/** A resource the server serves, and the names a person may call it by. */
export interface ServedResource extends ResourceInfo {
  singular: string;
  shortNames: string[];
}

/** `resource/name`; anything else is bad usage. */
export function parseResourceArg(text: string): ResourceArg {
  const slash = text.indexOf('/');
  const resource = slash < 0 ? text : text.slice(0, slash);
  const name = slash < 0 ? '' : text.slice(slash + 1);
  if (resource === '' || name === '' || name.includes('/')) {
    throw new UsageError(`${JSON.stringify(text)}: name the object as resource/name, e.g. ${slash < 0 && text ? text : 'configmap'}/my-object or deployments.apps/web`);
  }
  return { resource, name };
}

interface DiscoveryResource {
  resource: string;
  responseKind?: { kind?: string };
  scope?: string;
  singularResource?: string;
  shortNames?: string[];
}

interface GroupDiscovery {
  metadata?: { name?: string };
  versions?: { version: string; resources?: DiscoveryResource[] }[];
}

/** The resources of an aggregated discovery document (`APIGroupDiscoveryList`), in the server's order of preference. */
export function servedResources(doc: { items?: GroupDiscovery[] }): ServedResource[] {
  const out: ServedResource[] = [];
  for (const group of doc.items ?? []) {
    for (const v of group.versions ?? []) {
      for (const r of v.resources ?? []) {
        if (!r.responseKind?.kind || r.resource.includes('/')) continue;
        out.push({
          group: group.metadata?.name ?? '',
          version: v.version,
          kind: r.responseKind.kind,
          resource: r.resource,
          namespaced: r.scope !== 'Cluster',
          singular: r.singularResource || r.responseKind.kind.toLowerCase(),
          shortNames: r.shortNames ?? [],
        });
      }
    }
  }
  return out;
}

/**
 * The resource `text` names, as kubectl finds it: `name[.version].group`
 * narrows the search; a plural, then a singular, then a short name, then a
 * kind (any case) matches, the first group and version the server prefers winning.
 */
export function matchResource(resources: readonly ServedResource[], text: string): ServedResource | undefined {
  const lower = text.toLowerCase();
  const candidates = readings(lower);
  const tests: ((r: ServedResource, name: string) => boolean)[] = [
    (r, n) => r.resource === n,
    (r, n) => r.singular === n,
    (r, n) => r.shortNames.includes(n),
    (r, n) => r.kind.toLowerCase() === n,
  ];
  for (const test of tests) {
    for (const c of candidates) {
      const found = resources.find((r) => test(r, c.name) && (c.group === undefined || r.group === c.group) && (c.version === undefined || r.version === c.version));
      if (found) return found;
    }
  }
  return undefined;
}

/** The ways to read `a.b.c`: all of it a name; `a` in group `b.c`; `a` at version `b` in group `c`. */
function readings(text: string): { name: string; group?: string; version?: string }[] {
  const out: { name: string; group?: string; version?: string }[] = [{ name: text }];
  const dot = text.indexOf('.');
  if (dot < 0) return out;
  const name = text.slice(0, dot);
  const rest = text.slice(dot + 1);
  out.push({ name, group: rest });
  const second = rest.indexOf('.');
  if (second > 0) out.push({ name, version: rest.slice(0, second), group: rest.slice(second + 1) });
  // `configmap.v1`: the core group at a version.
  else out.push({ name, version: rest, group: '' });
  return out;
}

const AGGREGATED = 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json';

/** Everything the server serves: aggregated discovery, else the legacy documents (preferred versions only). */
export async function discoverResources(client: Requester): Promise<ServedResource[]> {
  const [core, groups] = await Promise.all([
    client.request<{ kind?: string; items?: GroupDiscovery[] }>({ path: '/api', accept: AGGREGATED, timeoutMs: 15_000 }),
    client.request<{ kind?: string; items?: GroupDiscovery[]; groups?: LegacyGroup[] }>({ path: '/apis', accept: AGGREGATED, timeoutMs: 15_000 }),
  ]);
  if (core.kind === 'APIGroupDiscoveryList' && groups.kind === 'APIGroupDiscoveryList') return [...servedResources(core), ...servedResources(groups)];
  return legacyResources(client, groups.groups ?? []);
}

interface LegacyGroup {
  name: string;
  preferredVersion?: { version: string };
  versions?: { version: string }[];
}

interface LegacyList {
  resources: { name: string; kind: string; namespaced: boolean; singularName?: string; shortNames?: string[] }[];
}

async function legacyResources(client: Requester, groups: LegacyGroup[]): Promise<ServedResource[]> {
  const versions = [{ group: '', version: 'v1', path: groupVersionPath('', 'v1') }].concat(
    groups.flatMap((g) => {
      const version = g.preferredVersion?.version ?? g.versions?.[0]?.version;
      return version ? [{ group: g.name, version, path: groupVersionPath(g.name, version) }] : [];
    }),
  );
  const lists = await mapLimit(versions, 4, (v) => client.request<LegacyList>({ path: v.path, timeoutMs: 15_000 }).catch(() => undefined));
  return versions.flatMap((v, i) =>
    (lists[i]?.resources ?? [])
      .filter((r) => !r.name.includes('/'))
      .map((r) => ({
        group: v.group,
        version: v.version,
        kind: r.kind,
        resource: r.name,
        namespaced: r.namespaced,
        singular: r.singularName || r.kind.toLowerCase(),
        shortNames: r.shortNames ?? [],
      })),
  );
}

/** The resource `text` names in the cluster, or a CliError (exit 1) saying it serves none by that name. */
export async function resolveResource(client: Requester & { server?: URL }, text: string): Promise<ServedResource> {
  const found = matchResource(await discoverResources(client), text);
  if (!found) {
    const where = client.server ? ` at ${client.server.origin}` : '';
    throw new CliError(`the server${where} has no resource type ${JSON.stringify(text)} (list them: kubectl api-resources)`);
  }
  return found;
}
