// Lane: own clusters (test/support/lanes-runner.js: it runs beside the shared-cluster files).
// The safety of deciding a no-op apply from the cache (src/apply/noop.ts): over
// every object of the corpus sets (kube-prometheus, Argo CD) and of examples/,
// as applied and after hand edits of many kinds, the decision is checked against
// the API server's own dry run. Skipping an apply the dry run says would change
// something is the one thing that must never happen.
//
// In `make test` each object gets two edits (the kinds taken in turn); with
// NOOP_SAFETY_FULL=1 every object gets every kind of edit (`make noop-safety`).
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { ApplyEngine, type Owner } from '../../src/apply/engine.js';
import { objectId } from '../../src/apply/inventory.js';
import { mapLimit } from '../../src/apply/map-limit.js';
import { decideNoop } from '../../src/apply/noop.js';
import { OwnedObjects } from '../../src/apply/owned-objects.js';
import { render } from '../../src/apply/render.js';
import type { KubeClient } from '../../src/kube/client.js';
import type { Discovery } from '../../src/kube/discovery.js';
import { objectPath, type KubeObject } from '../../src/kube/resources.js';
import { ClusterCache } from '../../src/runtime/cache.js';
import { parseManifests } from '../../src/source/index.js';
import { clusterApi, closeClients, ensureClusters, ROOT } from '../support/controlplane.js';
import { installCrds } from '../support/crds.js';
import { eventually } from '../support/eventually.js';

const CLUSTER = 'noop-safety';
/** The real-world sets (../shared/corpus), kept in the repository so that a clean clone has them. */
const CORPUS = path.join(ROOT, 'test', 'fixtures', 'corpus');
const FULL = process.env.NOOP_SAFETY_FULL === '1';

interface Case {
  set: string;
  object: string;
  edit: string;
  skipped: boolean;
  dryRunUnchanged: boolean;
}

let client: KubeClient;
let discovery: Discovery;
let cache: ClusterCache;
let owned: OwnedObjects;
const cases: Case[] = [];

beforeAll(async () => {
  await ensureClusters([CLUSTER]);
  await installCrds(CLUSTER);
  ({ client, discovery } = await clusterApi(CLUSTER));
  cache = new ClusterCache(client, discovery);
  owned = new OwnedObjects(cache);
}, 180_000);

afterAll(async () => {
  await cache?.stop();
  await closeClients();
  const skipped = cases.filter((c) => c.skipped).length;
  const asApplied = cases.filter((c) => c.edit === 'none');
  const kinds = [...new Set(asApplied.filter((c) => !c.skipped).map((c) => c.object.split(' ')[0]))].sort();
  console.log(
    `noop-safety: ${cases.length} cases, ${skipped} decided from the cache (no request), ${cases.length - skipped} sent to the dry run; ` +
      `as applied: ${asApplied.filter((c) => c.skipped).length} of ${asApplied.length} decided from the cache (dry runs for: ${kinds.join(', ')})`,
  );
});

function yamlFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && /\.ya?ml$/.test(e.name))
    .map((e) => path.join(e.parentPath, e.name))
    .sort();
}

function parseAll(files: string[]): KubeObject[] {
  return files.flatMap((f) => parseManifests(readFileSync(f, 'utf8'), f));
}

/** The example files' objects and the objects their inline sources hold (a chart's files, templates, are not manifests). */
function exampleObjects(): KubeObject[] {
  const files = yamlFiles(path.join(ROOT, 'examples'));
  const charts = files.filter((f) => path.basename(f) === 'Chart.yaml').map((f) => `${path.dirname(f)}/`);
  const top = parseAll(files.filter((f) => !charts.some((c) => f.startsWith(c))));
  const inline = top.flatMap((o) => ((o.spec as { source?: { inline?: KubeObject[] } } | undefined)?.source?.inline ?? []));
  return [...top, ...inline];
}

async function renderSet(name: string, objects: KubeObject[], defaultNamespace: string): Promise<{ owner: Owner; objects: KubeObject[] }> {
  const owner = { kind: 'Sync' as const, namespace: 'noop-safety', name };
  const scopeOf = async (apiVersion: string, kind: string) => {
    try {
      return (await discovery.resolve(apiVersion, kind)).namespaced ? ('Namespaced' as const) : ('Cluster' as const);
    } catch {
      return undefined;
    }
  };
  const rendered = await render(objects, { owner, defaultNamespace, scopeOf });
  expect(rendered.errors).toEqual([]);
  return { owner, objects: rendered.objects };
}

/** Namespaces the set needs and does not hold. */
async function ensureNamespaces(objects: KubeObject[]): Promise<void> {
  const names = new Set(objects.map((o) => o.metadata.namespace).filter((n): n is string => !!n));
  for (const name of names) {
    await client.request({ method: 'POST', path: '/api/v1/namespaces', body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name } } }).catch(() => undefined);
  }
}

/** The object as the owned-object cache has it, once it shows `resourceVersion` (or later). */
async function cached(obj: KubeObject, resourceVersion?: string): Promise<KubeObject> {
  return eventually(`${obj.kind} ${obj.metadata.name} in the cache`, async () => {
    const got = owned.lookup(obj);
    if (!got.known || !got.object) return undefined;
    if (resourceVersion && BigInt(got.object.metadata.resourceVersion ?? '0') < BigInt(resourceVersion)) return undefined;
    return got.object;
  }, 30_000, 20);
}

/**
 * The object as the cache has it once it has caught up with the API server:
 * a controller may write it after our apply (the status of a new CRD), and
 * the dry run starts from what the server has, not from what we applied.
 */
async function settled(engine: ApplyEngine, obj: KubeObject, resourceVersion?: string): Promise<KubeObject> {
  const versions = [resourceVersion, await serverVersion(engine, obj)].filter((v): v is string => !!v).map(BigInt);
  const newest = versions.reduce((a, b) => (a > b ? a : b), 0n);
  return cached(obj, newest > 0n ? String(newest) : undefined);
}

/** The object's resourceVersion on the API server now. */
async function serverVersion(engine: ApplyEngine, obj: KubeObject): Promise<string | undefined> {
  const info = await engine.discovery.resolve(obj.apiVersion, obj.kind);
  const now = await client.request<KubeObject>({ path: objectPath(info, obj.metadata.name ?? '', obj.metadata.namespace) });
  return now.metadata.resourceVersion;
}

type Json = Record<string, unknown>;
type Pointer = (string | number)[];

/** JSON pointers of the scalar leaves of an object (metadata identity left out), in document order. */
function leaves(value: unknown, at: Pointer = []): Pointer[] {
  if (Array.isArray(value)) return value.flatMap((v, i) => leaves(v, [...at, i]));
  if (typeof value === 'object' && value !== null) {
    return Object.entries(value as Json).flatMap(([k, v]) => (at.length === 0 && ['apiVersion', 'kind'].includes(k)) || (at.length === 1 && at[0] === 'metadata' && ['name', 'namespace'].includes(k)) ? [] : leaves(v, [...at, k]));
  }
  return [at];
}

function lists(value: unknown, at: Pointer = []): Pointer[] {
  if (Array.isArray(value)) return [at, ...value.flatMap((v, i) => lists(v, [...at, i]))];
  if (typeof value === 'object' && value !== null) return Object.entries(value as Json).flatMap(([k, v]) => lists(v, [...at, k]));
  return [];
}

function get(value: unknown, at: Pointer): unknown {
  return at.reduce<unknown>((v, k) => (v as Json | undefined)?.[k as string], value);
}

const pointer = (at: Pointer): string => at.map((k) => `/${String(k).replace(/~/g, '~0').replace(/\//g, '~1')}`).join('');

/** A leaf we set that is not an owner label (changing that makes the object someone else's). */
function ourLeaf(obj: KubeObject, pick: number): Pointer | undefined {
  const all = leaves(obj).filter((p) => !(p[1] === 'labels' && String(p[2]).startsWith('syncprims.dev/')));
  return all.length ? all[pick % all.length] : undefined;
}

function changed(v: unknown): unknown {
  if (typeof v === 'string') return `${v}-edited`;
  if (typeof v === 'number') return v + 1;
  if (typeof v === 'boolean') return !v;
  return 'edited';
}

type Edit = (rendered: KubeObject, live: KubeObject, i: number) => { jsonPatch?: unknown[]; apply?: { manager: string; body: KubeObject } } | undefined;

const EDITS: Record<string, Edit> = {
  'value changed': (r, _l, i) => {
    const at = ourLeaf(r, i);
    return at && { jsonPatch: [{ op: 'replace', path: pointer(at), value: changed(get(r, at)) }] };
  },
  'field added': (_r, l) =>
    l.metadata.annotations
      ? { jsonPatch: [{ op: 'add', path: '/metadata/annotations/edited-by-hand', value: 'yes' }] }
      : { jsonPatch: [{ op: 'add', path: '/metadata/annotations', value: { 'edited-by-hand': 'yes' } }] },
  'field removed': (r, _l, i) => {
    const at = ourLeaf(r, i + 1);
    return at && { jsonPatch: [{ op: 'remove', path: pointer(at) }] };
  },
  'list item added': (r, l, i) => {
    const all = lists(r).filter((p) => Array.isArray(get(l, p)));
    if (all.length === 0) return undefined;
    const at = all[i % all.length]!;
    const items = get(l, at) as unknown[];
    const item = items.length && typeof items[0] !== 'object' ? changed(items[0]) : 'edited';
    return { jsonPatch: [{ op: 'add', path: `${pointer(at)}/-`, value: typeof items[0] === 'object' && items[0] !== null ? { ...(items[0] as Json) } : item }] };
  },
  'list item removed': (r, l, i) => {
    const all = lists(r).filter((p) => (get(l, p) as unknown[] | undefined)?.length);
    if (all.length === 0) return undefined;
    return { jsonPatch: [{ op: 'remove', path: `${pointer(all[i % all.length]!)}/0` }] };
  },
  'list items reordered': (r, l, i) => {
    const all = lists(r).filter((p) => ((get(l, p) as unknown[] | undefined)?.length ?? 0) > 1);
    if (all.length === 0) return undefined;
    const at = all[i % all.length]!;
    return { jsonPatch: [{ op: 'replace', path: pointer(at), value: [...(get(l, at) as unknown[])].reverse() }] };
  },
  'label changed': (r) => {
    const label = Object.keys(r.metadata.labels ?? {}).find((k) => !k.startsWith('syncprims.dev/'));
    const value = label ? `${r.metadata.labels![label]}-edited`.slice(-63) : 'yes';
    return { jsonPatch: [{ op: 'add', path: pointer(['metadata', 'labels', label ?? 'edited-by-hand']), value }] };
  },
  'ownership taken, same value': (r) => ({ apply: { manager: 'other-applier', body: identity(r, { labels: { 'syncprims.dev/owner-name': r.metadata.labels!['syncprims.dev/owner-name']! } }) } }),
  'ownership taken, new value': (r, _l, i) => {
    const at = ourLeaf(r, i);
    if (!at || at[0] !== 'metadata') return { apply: { manager: 'other-applier', body: identity(r, { annotations: { 'taken-by-other': 'yes' } }) } };
    const body = identity(r, {});
    let node = body as Json;
    for (const k of at.slice(0, -1)) node = (node[k as string] ??= {}) as Json;
    node[at.at(-1) as string] = changed(get(r, at));
    return { apply: { manager: 'other-applier', body } };
  },
};

function identity(r: KubeObject, metadata: Json): KubeObject {
  return { apiVersion: r.apiVersion, kind: r.kind, metadata: { name: r.metadata.name, namespace: r.metadata.namespace, ...metadata } };
}

async function edit(engine: ApplyEngine, obj: KubeObject, change: NonNullable<ReturnType<Edit>>): Promise<string | undefined> {
  const info = await engine.discovery.resolve(obj.apiVersion, obj.kind);
  const at = objectPath(info, obj.metadata.name ?? '', obj.metadata.namespace);
  try {
    const done = change.jsonPatch
      ? await client.request<KubeObject>({ method: 'PATCH', path: at, query: { fieldManager: 'kubectl-patch' }, contentType: 'application/json-patch+json', body: change.jsonPatch })
      : await client.request<KubeObject>({ method: 'PATCH', path: at, query: { fieldManager: change.apply!.manager, force: true }, contentType: 'application/apply-patch+yaml', body: change.apply!.body });
    return done.metadata.resourceVersion;
  } catch {
    return undefined; // an edit the server refuses (invalid, immutable) is no case
  }
}

/** The decision against the dry run for one object as it is now; then, after each edit, again, and restored. */
async function check(set: string, engine: ApplyEngine, owner: Owner, obj: KubeObject, i: number, appliedAt?: string): Promise<void> {
  const record = async (what: string, resourceVersion?: string) => {
    // A verdict counts only when the object held still while it was made: a controller writing it meanwhile
    // (a new CRD's status, several times over its first second) makes the dry run start from another object.
    for (let attempt = 1; ; attempt++) {
      const live = await settled(engine, obj, resourceVersion);
      const skipped = decideNoop(obj, live).noop;
      // An apply the server would refuse after the edit is a change too (skipping it would hide the error).
      const dryRunUnchanged = await engine.dryRunUnchanged(obj, live).catch(() => false);
      const moved = (await serverVersion(engine, obj)) !== live.metadata.resourceVersion;
      if (moved && attempt < 10) {
        await new Promise((resolve) => setTimeout(resolve, 200));
        continue;
      }
      cases.push({ set, object: `${obj.kind} ${obj.metadata.namespace ?? ''}/${obj.metadata.name}`, edit: what, skipped, dryRunUnchanged });
      return;
    }
  };
  await record('none', appliedAt);
  // A CRD is not edited by hand here: a changed schema or version would break the other objects of its set.
  if (obj.kind === 'CustomResourceDefinition') return;
  const kinds = Object.keys(EDITS);
  const chosen = FULL ? kinds : [kinds[(2 * i) % kinds.length]!, kinds[(2 * i + 1) % kinds.length]!];
  for (const kind of chosen) {
    const change = EDITS[kind]!(obj, await cached(obj), i);
    const rv = change && (await edit(engine, obj, change));
    if (!rv) continue;
    await record(kind, rv);
    await restore(engine, owner, obj);
  }
}

/** Applies the object again; one that an edit left unappliable (a duplicate list key) is recreated. */
async function restore(engine: ApplyEngine, owner: Owner, obj: KubeObject): Promise<void> {
  const [restored] = await engine.applyStaged([obj], { owner, force: true });
  if (restored?.action !== 'failed') return;
  const info = await engine.discovery.resolve(obj.apiVersion, obj.kind);
  const at = objectPath(info, obj.metadata.name ?? '', obj.metadata.namespace);
  await client.request({ method: 'DELETE', path: at });
  await eventually(`${at} to go`, async () => ((await client.request({ method: 'GET', path: at }).catch(() => undefined)) ? undefined : true));
  const [again] = await engine.applyStaged([obj], { owner, force: true });
  expect(again?.action).toBe('created');
}

async function checkSet(name: string, source: KubeObject[], defaultNamespace: string): Promise<void> {
  const set = await renderSet(name, source, defaultNamespace);
  await ensureNamespaces(set.objects);
  const engine = new ApplyEngine(client, discovery);
  const applied = await engine.applyStaged(set.objects, { owner: set.owner, force: true, live: owned });
  // What the server refuses (an example meant to show an error) is no case.
  const refused = new Set(applied.filter((r) => r.action === 'failed' || r.action === 'conflict').map((r) => r.id));
  expect(refused.size).toBeLessThan(set.objects.length / 10);
  const objects = set.objects.filter((o) => !refused.has(objectId(o)));
  await owned.prime(objects);
  const versions = new Map(applied.map((r) => [r.id, r.object?.metadata.resourceVersion]));
  await mapLimit(objects.map((o, i) => [o, i] as const), 8, ([o, i]) => check(name, engine, set.owner, o, i, versions.get(objectId(o))));
}

describe('a no-op decided from the cache is never one the dry run disagrees with', () => {
  test('examples/', async () => {
    await checkSet('examples', exampleObjects(), 'examples');
    expect(cases.filter((c) => c.skipped && !c.dryRunUnchanged)).toEqual([]);
  }, 120_000);

  test('corpus: Argo CD', async () => {
    await checkSet('argo-cd', parseAll([path.join(CORPUS, 'argo-cd', 'install.yaml')]), 'argocd');
    expect(cases.filter((c) => c.skipped && !c.dryRunUnchanged)).toEqual([]);
  }, 300_000);

  test('corpus: kube-prometheus', async () => {
    await checkSet('kube-prometheus', parseAll(yamlFiles(path.join(CORPUS, 'kube-prometheus', 'manifests'))), 'monitoring');
    expect(cases.filter((c) => c.skipped && !c.dryRunUnchanged)).toEqual([]);
  }, 300_000);

  test('the decision does skip: every object as applied, and every edit that others can make without touching our fields', () => {
    const unedited = cases.filter((c) => c.edit === 'none');
    // Objects whose every field the server keeps as we wrote it are decided without a request.
    const configMaps = unedited.filter((c) => /^(ConfigMap|ServiceAccount|ClusterRole|Role|RoleBinding|ClusterRoleBinding) /.test(c.object));
    expect(configMaps.length).toBeGreaterThan(10);
    expect(configMaps.filter((c) => !c.skipped)).toEqual([]);
    // Edits of our fields were made and sent to the dry run; fields others added alone are decided here.
    const ours = cases.filter((c) => (c.edit === 'value changed' || c.edit === 'field removed') && !c.dryRunUnchanged);
    expect(ours.length).toBeGreaterThan(5);
    expect(cases.filter((c) => c.edit === 'field added' && c.skipped).length).toBeGreaterThan(0);
  });
});
