// What each kind of write a Sync costs the API server, in its CPU: the
// server-side apply of one of the Sync's ConfigMaps, against the writes of the
// Sync object itself (its creation, the operator's finalizer and status
// patches) and the Event the operator records. The same Sync writes are also
// made on a stand-in custom resource whose schema keeps everything
// (`x-kubernetes-preserve-unknown-fields`): the difference is what the Sync
// CRD's schema (its validation and CEL rules) costs.
//
// This says where the time of many small Syncs goes (bench/many-syncs.ts):
// they are bounded by the API server's CPU, and a Sync of 10 ConfigMaps
// sends 4 writes of the Sync object and an Event beside its 10 applies.
//
// Method: cluster bench-writes; N (1,000) requests of each kind, 16 in
// flight, as the operator sends them (JSON patches answered with metadata
// only); the API server's CPU (/proc/<pid>/stat) over each batch, divided
// by N. RUNS (3) rounds, the order of the kinds reversed every other round.
import { readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { FIELD_MANAGER, FINALIZER } from '../src/api/marks.js';
import { API_VERSION } from '../src/api/kinds.js';
import { mapLimit } from '../src/apply/map-limit.js';
import { KubeClient } from '../src/kube/client.js';
import { loadKubeConfigFile } from '../src/kube/config.js';
import { METADATA_ONLY_ACCEPT, type KubeObject } from '../src/kube/resources.js';
import { controlplane, createNamespace, crdEstablished, deleteNamespace, installCrds, int, LOCAL, median, processCpuMs, ROOT, sampleLoad, serverVersion, until } from './support.js';

const CLUSTER = 'bench-writes';
const KUBECONFIG = path.join(LOCAL, `${CLUSTER}.kubeconfig`);
const N = Number(process.env.N ?? 1000);
const RUNS = Number(process.env.RUNS ?? 3);
const IN_FLIGHT = 16;
const OBJECTS_PER_SYNC = 10;
const REPORT = path.join(ROOT, 'docs', 'benchmarks', 'writes.md');

const THING_GROUP = 'bench.syncprims.dev';
const thingCrd = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: `things.${THING_GROUP}` },
  spec: {
    group: THING_GROUP,
    scope: 'Namespaced',
    names: { plural: 'things', singular: 'thing', kind: 'Thing', listKind: 'ThingList' },
    versions: [
      {
        name: 'v1',
        served: true,
        storage: true,
        subresources: { status: {} },
        schema: { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true }, status: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } } },
      },
    ],
  },
};

/** One kind of write: its label, and the request for item i of a batch in `ns` (what earlier kinds of the round made exists). */
interface Kind {
  label: string;
  send: (client: KubeClient, ns: string, i: number, made: Map<string, string>) => Promise<unknown>;
}

const now = new Date().toISOString();
const syncSpec = (i: number) => ({ source: { artifact: { apiVersion: 'source.toolkit.fluxcd.io/v1', kind: 'ExternalArtifact', name: `art-${i % 10}` } }, defaultNamespace: `t-${i}` });
/** The status after a first apply of a set of 10 ConfigMaps. */
const firstResult = (i: number) => ({
  observedGeneration: 1,
  lastAttemptedRevision: 'art-0@v1',
  lastAppliedRevision: 'art-0@v1',
  conditions: [
    { type: 'Ready', status: 'True', reason: 'Succeeded', message: `Applied revision art-0@v1: ${OBJECTS_PER_SYNC} objects`, lastTransitionTime: now, observedGeneration: 1 },
    { type: 'Reconciling', status: 'False', reason: 'Succeeded', message: 'Reconciliation finished', lastTransitionTime: now, observedGeneration: 1 },
  ],
  inventory: { entries: Array.from({ length: OBJECTS_PER_SYNC }, (_, k) => ({ id: `t-${i}_cm-${k}__ConfigMap`, v: 'v1' })) },
  summary: { total: OBJECTS_PER_SYNC, current: OBJECTS_PER_SYNC, inProgress: 0, failed: 0, terminating: 0, notFound: 0, unknown: 0, leastStatus: 'Current' },
});

/** create, finalizer and status writes of one custom resource kind, as the operator sends them. */
function resourceKinds(name: string, apiVersion: string, kind: string, plural: string): Kind[] {
  const path = (ns: string, i?: number) => `/apis/${apiVersion}/namespaces/${ns}/${plural}${i === undefined ? '' : `/x-${i}`}`;
  return [
    {
      label: `${name}: create (POST)`,
      send: async (client, ns, i, made) => {
        const created = await client.request<KubeObject>({ method: 'POST', path: path(ns), body: { apiVersion, kind, metadata: { name: `x-${i}`, namespace: ns }, spec: syncSpec(i) } });
        made.set(`${plural}/${i}`, created.metadata.resourceVersion ?? '');
      },
    },
    {
      label: `${name}: finalizer (JSON patch)`,
      send: (client, ns, i, made) =>
        client.request({
          method: 'PATCH',
          path: path(ns, i),
          contentType: 'application/json-patch+json',
          accept: METADATA_ONLY_ACCEPT,
          body: [
            { op: 'replace', path: '/metadata/resourceVersion', value: made.get(`${plural}/${i}`) },
            { op: 'add', path: '/metadata/finalizers', value: [FINALIZER] },
          ],
        }),
    },
    {
      label: `${name}: status (JSON patch)`,
      send: (client, ns, i) =>
        client.request({ method: 'PATCH', path: `${path(ns, i)}/status`, contentType: 'application/json-patch+json', accept: METADATA_ONLY_ACCEPT, body: [{ op: 'add', path: '/status', value: firstResult(i) }] }),
    },
  ];
}

const KINDS: Kind[] = [
  {
    label: 'ConfigMap: server-side apply (create)',
    send: (client, ns, i) =>
      client.request({
        method: 'PATCH',
        path: `/api/v1/namespaces/${ns}/configmaps/cm-${i}`,
        query: { fieldManager: FIELD_MANAGER, force: true },
        contentType: 'application/apply-patch+yaml',
        accept: METADATA_ONLY_ACCEPT,
        body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `cm-${i}`, namespace: ns, labels: { 'syncprims.dev/owner-kind': 'Sync', 'syncprims.dev/owner-namespace': ns, 'syncprims.dev/owner-name': 's' } }, data: { value: 'v1', more: 'x'.repeat(64) } },
      }),
  },
  ...resourceKinds('Sync', API_VERSION, 'Sync', 'syncs'),
  {
    label: 'Event: create',
    send: (client, ns, i) =>
      client.request({
        method: 'POST',
        path: `/api/v1/namespaces/${ns}/events`,
        body: {
          apiVersion: 'v1',
          kind: 'Event',
          metadata: { name: `x-${i}.${Date.now().toString(16)}`, namespace: ns },
          involvedObject: { apiVersion: API_VERSION, kind: 'Sync', name: `x-${i}`, namespace: ns },
          reason: 'Applied',
          message: `created ${OBJECTS_PER_SYNC} objects`,
          type: 'Normal',
          firstTimestamp: now,
          lastTimestamp: now,
          count: 1,
          source: { component: 'syncprims' },
        },
      }),
  },
  ...resourceKinds('stand-in', `${THING_GROUP}/v1`, 'Thing', 'things'),
];

interface Batch {
  label: string;
  apiCpuMsPerWrite: number;
  wallMs: number;
}

async function batch(client: KubeClient, apiserverPid: number, ns: string, kind: Kind, made: Map<string, string>): Promise<Batch> {
  const cpu = processCpuMs(apiserverPid);
  const t0 = performance.now();
  await mapLimit(Array.from({ length: N }, (_, i) => i), IN_FLIGHT, (i) => kind.send(client, ns, i, made));
  return { label: kind.label, apiCpuMsPerWrite: (processCpuMs(apiserverPid) - cpu) / N, wallMs: performance.now() - t0 };
}

async function main(): Promise<void> {
  const load = sampleLoad();
  const began = performance.now();
  await controlplane(['up', CLUSTER]);
  const client = await KubeClient.create(CLUSTER, loadKubeConfigFile(KUBECONFIG), 'syncprims-bench/writes');
  const rounds: Batch[][] = [];
  try {
    const apiserverPid = Number(readFileSync(path.join(LOCAL, `${CLUSTER}.pid`), 'utf8').trim());
    await installCrds(client);
    await client.request({ method: 'PATCH', path: `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${thingCrd.metadata.name}`, query: { fieldManager: FIELD_MANAGER, force: true }, contentType: 'application/apply-patch+yaml', body: thingCrd });
    await until('the stand-in CRD to be Established', () => crdEstablished(client, thingCrd.metadata.name));
    await until('Things to be served', async () => Boolean(await client.request({ path: `/apis/${THING_GROUP}/v1/things`, query: { limit: 1 } })));
    for (let round = 0; round < RUNS; round++) {
      const ns = await createNamespace(client, 'bench-writes');
      const made = new Map<string, string>();
      // Each resource's writes in their order (create, finalizer, status); the kinds in turn, reversed every other round.
      const groups = [[KINDS[0]!], KINDS.slice(1, 4), [KINDS[4]!], KINDS.slice(5, 8)];
      const order = round % 2 ? [...groups].reverse() : groups;
      const results: Batch[] = [];
      for (const group of order) for (const kind of group) results.push(await batch(client, apiserverPid, ns, kind, made));
      rounds.push(results);
      console.log(`round ${round + 1}: ${results.map((r) => `${r.label} ${r.apiCpuMsPerWrite.toFixed(2)} ms`).join('; ')}`);
      // Finalizers off, so that the namespace can go.
      await mapLimit(Array.from({ length: N }, (_, i) => i), IN_FLIGHT, async (i) => {
        for (const plural of ['syncs', 'things']) {
          const apiVersion = plural === 'syncs' ? API_VERSION : `${THING_GROUP}/v1`;
          await client.request({ method: 'PATCH', path: `/apis/${apiVersion}/namespaces/${ns}/${plural}/x-${i}`, contentType: 'application/merge-patch+json', body: { metadata: { finalizers: null } } });
        }
      });
      await deleteNamespace(client, ns);
    }
    writeReport(rounds, await serverVersion(client), load.stop(), performance.now() - began);
  } finally {
    load.stop();
    client.close();
    await controlplane(['stop', CLUSTER]).catch((err: unknown) => console.error(String(err)));
  }
}

function writeReport(rounds: Batch[][], kubernetes: string, load: number[], totalMs: number): void {
  const labels = KINDS.map((k) => k.label);
  const cpuOf = (label: string) => median(rounds.map((r) => r.find((b) => b.label === label)?.apiCpuMsPerWrite ?? NaN));
  const wallOf = (label: string) => median(rounds.map((r) => r.find((b) => b.label === label)?.wallMs ?? NaN));
  const cm = cpuOf(labels[0]!);
  const syncWrites = ['Sync: create (POST)', 'Sync: finalizer (JSON patch)', 'Sync: status (JSON patch)', 'Event: create'].reduce((sum, l) => sum + cpuOf(l), 0);
  const standIn = ['stand-in: create (POST)', 'stand-in: finalizer (JSON patch)', 'stand-in: status (JSON patch)'].reduce((sum, l) => sum + cpuOf(l), 0) + cpuOf('Event: create');
  const objects = OBJECTS_PER_SYNC * cm;
  const sorted = [...load].sort((a, b) => a - b);
  const lines = [
    '## What each write of a Sync costs the API server (`bench/writes.ts`)',
    '',
    `Measured ${new Date().toISOString().slice(0, 10)} on Kubernetes ${kubernetes} (the local control plane), ${(totalMs / 60_000).toFixed(1)} min in all, on ${os.cpus().length} cores; load average (1 min, every 10 s) ${sorted[0]?.toFixed(1)} to ${sorted.at(-1)?.toFixed(1)}.`,
    '',
    `Method: cluster \`${CLUSTER}\`; ${int(N)} requests of each kind, ${IN_FLIGHT} in flight, as the operator sends them (the ConfigMaps by server-side apply, the Sync's finalizer and status by JSON patch answered with metadata only; the status one as after a first apply of ${OBJECTS_PER_SYNC} ConfigMaps, inventory included). ` +
      `The API server's CPU (\`/proc/<pid>/stat\`, user + system) over each batch, divided by the requests; ${RUNS} rounds in a fresh namespace each, the order of the kinds reversed every other round; the medians of the rounds. ` +
      'The stand-in is a custom resource whose spec and status schemas keep every field (`x-kubernetes-preserve-unknown-fields`, no validation, no CEL), sent the same writes as the Sync.',
    '',
    '| write | API server CPU per write | wall per batch | rounds (CPU per write) |',
    '|---|---|---|---|',
    ...labels.map((l) => `| ${l} | ${cpuOf(l).toFixed(2)} ms | ${int(wallOf(l))} ms | ${rounds.map((r) => r.find((b) => b.label === l)?.apiCpuMsPerWrite.toFixed(2)).join(', ')} |`),
    '',
    `- A new Sync of ${OBJECTS_PER_SYNC} ConfigMaps: its ${OBJECTS_PER_SYNC} applies cost the API server ${objects.toFixed(1)} ms of CPU, and the writes of the Sync object and its Event ${syncWrites.toFixed(1)} ms more, ` +
      `${((objects + syncWrites) / objects).toFixed(2)}x the applies alone. One Sync of ${int(1000 * OBJECTS_PER_SYNC)} ConfigMaps sends those 4 writes once, so per object the API server works about that much more for many Syncs of ${OBJECTS_PER_SYNC} than for one large Sync (bench/many-syncs.ts, where the API server's CPU is the larger share of the 2 cores).`,
    `- The same writes on the stand-in: ${standIn.toFixed(1)} ms. The Sync CRD's schema (validation, CEL rules) costs ${(syncWrites - standIn).toFixed(1)} ms of that per Sync; the rest is what any custom resource write costs (a write of a custom resource costs more than a ConfigMap's: unstructured decoding, pruning, managedFields against its schema).`,
    '',
  ];
  writeFileSync(REPORT, lines.join('\n'));
  console.log(lines.join('\n'));
  console.log(`wrote ${path.relative(ROOT, REPORT)}`);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
