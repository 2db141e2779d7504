// `syncprims build`: what it does (build.ts declares it; this is loaded when it runs).
import { existsSync } from 'node:fs';
import { readdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import type { KubeClient } from '../../kube/client.js';
import { crdScopes, kindKey } from '../../apply/render.js';
import type { KubeObject } from '../../kube/resources.js';
import { parseManifests, selectSource, SourceError, sourceLimits } from '../../source/index.js';
import { isKustomizationFile } from '../../source/kustomize-files.js';
import { fleetBuildRequest, isFleetRef } from './build-fleet-request.js';
import { buildLocalKustomizations } from './build-kustomize.js';
import { chartSpec, isChartFolder, readChart } from './build-chart.js';
import { buildInputsOf, HOME, renderInput, unknownKindWarning, type BuildCluster, type BuildInput, type Built } from './build-render.js';
import type { Cluster, ClusterFlags } from '../cluster.js';
import { CliError, UsageError } from '../errors.js';
import { parseSyncRef } from '../kind-name.js';
import { SYNC_KINDS } from '../../api/kinds.js';
import { useSourceLimitFlags, type SourceLimitFlags } from '../source-flags.js';
import { listOf, toJson, toYaml } from '../output.js';

export interface BuildFlags extends ClusterFlags, SourceLimitFlags {
  path?: string;
  url?: string;
  owner?: string;
  defaultNamespace?: string;
  clusterId?: string;
  /** A chart's `.Capabilities.KubeVersion` (`v1.36.3`). */
  kubeVersion?: string;
  /** Added to a chart's `.Capabilities.APIVersions`, comma-separated (`monitoring.coreos.com/v1,apps/v1/Deployment`). */
  apiVersions?: string;
  /** With --path of a chart folder: values files, merged in order (as helm template -f). */
  values?: string[];
  /** With --path of a chart folder: `.Release.Name` (default: the sync's name, as the operator's). */
  releaseName?: string;
  /** With fleetsync/NAME: the cluster whose child to print (build-fleet.ts). */
  cluster?: string;
  output: 'yaml' | 'json';
}

export async function build(file: string | undefined, flags: BuildFlags): Promise<void> {
  if (await builtFleetChild(file, flags)) return;
  checkFlags(file, flags);
  useSourceLimitFlags(flags);
  const capabilities = { kubeVersion: flags.kubeVersion, apiVersions: flags.apiVersions?.split(',').map((v) => v.trim()).filter((v) => v !== '') };
  const inputs = (await inputsOf(file, flags)).map((input) => ({ ...input, capabilities }));
  const cluster = flags.kubeconfig || flags.context ? new LazyCluster(flags) : undefined;
  const built: Built[] = [];
  try {
    built.push(...(await buildAll(inputs, cluster)));
  } catch (err) {
    const opened = await cluster?.opened();
    throw (opened && (await clusterModule()).unreachable(err, opened)) || err;
  } finally {
    await cluster?.close();
  }
  report(built, flags);
}

/** The flags that go together, or bad usage. */
function checkFlags(file: string | undefined, flags: BuildFlags): void {
  const given = [file, flags.path, flags.url].filter((x) => x !== undefined).length;
  if (given !== 1) throw new UsageError('give build exactly one of a file, --path or --url (see syncprims build --help)');
  if (file !== undefined && (flags.owner || flags.defaultNamespace)) {
    throw new UsageError('--owner and --default-namespace go with --path or --url; a sync file says them itself');
  }
  if ((flags.values?.length || flags.releaseName !== undefined) && (flags.path === undefined || !isChartFolder(flags.path))) {
    throw new UsageError("--values and --release-name go with --path of a chart folder (one holding Chart.yaml); a sync's spec.helm says them itself");
  }
}

/** `build fleetsync/NAME --cluster C` (a file of that name is built as a file, without --cluster): true when it was. */
async function builtFleetChild(file: string | undefined, flags: BuildFlags): Promise<boolean> {
  if (file === undefined || (flags.cluster === undefined && (!isFleetRef(file) || existsSync(file)))) {
    if (flags.cluster !== undefined) throw new UsageError('--cluster goes with fleetsync/NAME (the FleetSync whose child to print)');
    return false;
  }
  const name = fleetBuildRequest(file, flags);
  const { buildFleetChild } = await import('./build-fleet.js');
  await buildFleetChild(name, { ...flags, cluster: flags.cluster as string });
  return true;
}

/**
 * Each input rendered, the scope of its kinds first from the built-in table and the CRDs of the file's syncs to the
 * same cluster (a CRD and its objects in two syncs, with no dependsOn: the operator waits for the CRD); then, for
 * what is left, from the cluster.
 */
async function buildAll(inputs: BuildInput[], cluster: BuildCluster | undefined): Promise<Built[]> {
  const built: Built[] = [];
  for (const input of inputs) built.push(await renderInput(input, cluster, { discover: false }));
  for (const [i, b] of built.entries()) {
    const defined = crdScopes(built.filter((o) => o.input.target === b.input.target).flatMap((o) => o.objects));
    const more = cluster !== undefined || b.unknownKinds.some((k) => defined.has(kindKey(k)));
    // Rendered again from what was read (no second fetch).
    if (b.unknownKinds.length > 0 && more) built[i] = await renderInput(b.input, cluster, { defined, discover: true }, b);
  }
  return built;
}

/** What to build: the syncs of the file, or one made of --path or --url. */
async function inputsOf(file: string | undefined, flags: BuildFlags): Promise<BuildInput[]> {
  if (file !== undefined) {
    const objects = parse(await readText(file), file);
    if (objects.length === 0) throw new CliError(`${file}: no objects: want a Sync, RemoteSync or ProxySync`);
    const namespace = await defaultNamespaceOf(flags);
    const clusterId = flags.clusterId;
    return objects.map((obj) => buildInputsOf(obj, file, { namespace, clusterId }));
  }
  const where = (flags.path ?? flags.url) as string;
  const owner = flags.owner ? parseSyncRef(flags.owner, SYNC_KINDS) : { kind: 'Sync' as const, name: baseName(where) };
  const namespace = await defaultNamespaceOf(flags);
  const input: BuildInput = {
    label: `${owner.kind} ${namespace}/${owner.name}`,
    owner: { kind: owner.kind, namespace, name: owner.name },
    namespace,
    source: { inline: [] },
    defaultNamespace: flags.defaultNamespace,
    origin: owner.kind === 'RemoteSync' ? flags.clusterId : undefined,
    target: owner.kind === 'Sync' ? HOME : `the ${owner.kind}'s cluster`,
  };
  if (flags.url !== undefined) return [{ ...input, source: { http: { url: flags.url } } }];
  const dir = flags.path as string;
  // A chart folder renders as `helm template DIR` does, by the operator's render (the chart given as files, not a source).
  if (isChartFolder(dir)) return [{ ...input, helm: chartSpec(flags.releaseName, owner.name), chart: await readChart(dir, flags.values ?? []) }];
  return [{ ...input, source: { inline: await readPath(dir) } }];
}

/** `-n`, else the kubeconfig context's namespace when a cluster is named, else `default`. */
async function defaultNamespaceOf(flags: BuildFlags): Promise<string> {
  if (flags.namespace) return flags.namespace;
  if (!flags.kubeconfig && !flags.context) return 'default';
  const kc = (await clusterModule()).loadKubeConfig(flags);
  return kc.getContextObject(kc.getCurrentContext())?.namespace || 'default';
}

/** The objects of one file, as the operator parses a source: YAML 1.1, Lists flattened; errors name file, document and line. */
function parse(text: string, file: string): KubeObject[] {
  try {
    return parseManifests(text, file, { maxObjects: sourceLimits().maxObjects });
  } catch (err) {
    if (err instanceof SourceError) throw new CliError(err.message, undefined, { cause: err });
    throw err;
  }
}

async function readText(file: string): Promise<string> {
  try {
    return await readFile(file, 'utf8');
  } catch (err) {
    throw new CliError(`cannot read ${file}: ${fileError(err)}`, undefined, { cause: err });
  }
}

function fileError(err: unknown): string {
  const code = (err as NodeJS.ErrnoException).code;
  if (code === 'ENOENT') return 'no such file or directory';
  if (code === 'EACCES') return 'permission denied';
  if (code === 'EISDIR') return 'a directory (use --path for a folder of manifests)';
  return err instanceof Error ? err.message : String(err);
}

/** A file, or every manifest file under a folder (sorted by path, as in an archive; hidden entries skipped), kustomizations built. */
async function readPath(given: string): Promise<KubeObject[]> {
  const info = await stat(given).catch((err: unknown) => {
    throw new CliError(`--path ${given}: ${fileError(err)}`, undefined, { cause: err });
  });
  if (!info.isDirectory()) return parse(await readText(given), given);
  const files = new Map<string, Buffer>();
  await walk(given, '', files);
  const { manifests, kustomizations } = selectSource(files, undefined, given);
  if (manifests.length === 0 && kustomizations.length === 0) throw new CliError(`--path ${given}: no .yaml, .yml or .json file in the folder`);
  const objects: KubeObject[] = [];
  for (const f of manifests) objects.push(...parse(f.data.toString('utf8'), path.join(given, f.path)));
  if (kustomizations.length > 0) objects.push(...(await buildLocalKustomizations(given, kustomizations)));
  return objects;
}

async function walk(root: string, rel: string, files: Map<string, Buffer>): Promise<void> {
  if (files.size > sourceLimits().maxFiles) throw new CliError(`--path ${root}: more than ${sourceLimits().maxFiles} files (the source limit, --source-max-files)`);
  for (const entry of await readdir(path.join(root, rel), { withFileTypes: true })) {
    if (entry.name.startsWith('.')) continue;
    const p = rel ? `${rel}/${entry.name}` : entry.name;
    if (entry.isDirectory()) await walk(root, p, files);
    else if (entry.isFile() && /\.(ya?ml|json)$/i.test(entry.name)) files.set(p, await readFile(path.join(root, p)));
    else if (entry.isFile() && isKustomizationFile(entry.name)) files.set(p, Buffer.alloc(0));
  }
}

/** `app` of `./deploy/app.yaml`, `https://host/x/app.tar.gz` or `./app/`: a name for a sync. */
function baseName(where: string): string {
  let p = where;
  try {
    p = new URL(where).pathname;
  } catch {
    // a path
  }
  const base = path.basename(p.replace(/\/+$/, '')).replace(/\.(tar\.gz|tgz|ya?ml|json)$/i, '');
  const name = base.toLowerCase().replace(/[^a-z0-9-]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 63);
  return name || 'build';
}

/** Prints what rendered, and what did not on stderr (then exit 1). */
function report(built: Built[], flags: BuildFlags): void {
  const ok = built.filter((b) => b.errors.length === 0);
  if (flags.output === 'json') process.stdout.write(toJson(listOf(ok.flatMap((b) => b.objects))));
  else process.stdout.write(ok.map(yamlOf).join('---\n'));
  for (const b of ok) if (!b.discovered) for (const k of b.unknownKinds) process.stderr.write(`syncprims build: warning: ${b.input.label}: ${unknownKindWarning(k)}\n`);
  const missingOrigin = ok.filter((b) => b.input.owner.kind === 'RemoteSync' && b.input.origin === undefined);
  for (const b of missingOrigin) {
    process.stderr.write(`syncprims build: note: ${b.input.label}: without --cluster-id the syncprims.dev/origin label the operator adds is left out (and so the revision differs from the operator's)\n`);
  }
  const failed = built.filter((b) => b.errors.length > 0);
  for (const b of failed) for (const e of b.errors) process.stderr.write(`syncprims build: ${b.input.label}: ${e}\n`);
  if (failed.length > 0) {
    throw new CliError(`${failed.length} of ${built.length} ${built.length === 1 ? 'sync' : 'syncs'} did not render (${failed.map((b) => b.input.label).join(', ')})`);
  }
}

/** One sync's objects, the first after a comment naming the sync and its revision. */
function yamlOf(b: Built): string {
  const count = `${b.objects.length} ${b.objects.length === 1 ? 'object' : 'objects'}`;
  const comment = `# ${b.input.label}: ${count}, revision ${b.revision}\n`;
  if (b.objects.length === 0) return comment;
  return b.objects.map((o, i) => `${i === 0 ? comment : ''}${toYaml(o)}`).join('---\n');
}

/** Clients and kubeconfigs, loaded only when a cluster is named: a build without one starts faster. */
function clusterModule(): Promise<typeof import('../cluster.js')> {
  return import('../cluster.js');
}

/** The cluster, connected to only when a source or a kind needs it. */
class LazyCluster implements BuildCluster {
  private cluster: Promise<Cluster> | undefined;

  constructor(private readonly flags: ClusterFlags) {}

  async client(): Promise<KubeClient> {
    this.cluster ??= clusterModule().then((m) => m.connect(this.flags));
    return (await this.cluster).client;
  }

  /** The cluster, if it was connected to. */
  async opened(): Promise<Cluster | undefined> {
    return this.cluster?.catch(() => undefined);
  }

  async close(): Promise<void> {
    (await this.opened())?.client.close();
  }
}
