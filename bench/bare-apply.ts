// The bare client's applies: one server-side apply PATCH per object,
// `concurrency` in flight (bench/sync.ts). Run as a script, it is that client
// in a process of its own, so that it can be measured as new as the
// operator's process is: started, connected, then told to go.
//
//   node bare-apply.js <kubeconfig> <objects.json> <concurrency> <user agent>
//
// It prints `ready` once connected, applies when a line comes on stdin, and
// prints the result as one line of JSON: {ms, clientCpuMs, requests}.
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { pathToFileURL } from 'node:url';
import { mapLimit } from '../src/apply/map-limit.js';
import { KubeClient } from '../src/kube/client.js';
import { loadKubeConfigFile } from '../src/kube/config.js';
import type { KubeObject } from '../src/kube/resources.js';

const BARE_FIELD_MANAGER = 'bench-bare';

/** Applies every object (server-side apply, forced), `concurrency` in flight. */
export async function applyAll(client: KubeClient, objects: KubeObject[], concurrency: number): Promise<void> {
  await mapLimit(objects, concurrency, (obj) =>
    client.request({
      method: 'PATCH',
      path: `/api/v1/namespaces/${obj.metadata.namespace}/configmaps/${obj.metadata.name}`,
      query: { fieldManager: BARE_FIELD_MANAGER, force: true },
      contentType: 'application/apply-patch+yaml',
      body: obj,
    }),
  );
}

/** What the process prints once it has applied. */
export interface BareResult {
  ms: number;
  clientCpuMs: number;
  requests: Record<string, number>;
}

async function main(): Promise<void> {
  const [kubeconfig = '', objectsFile = '', concurrency = '16', userAgent = 'syncprims-bench/bare-client'] = process.argv.slice(2);
  const objects = JSON.parse(readFileSync(objectsFile, 'utf8')) as KubeObject[];
  const client = await KubeClient.create('bare', loadKubeConfigFile(kubeconfig), userAgent);
  // Connected before the clock, as the operator is once primed.
  await client.request({ path: '/version' });
  const requests: Record<string, number> = {};
  client.observe((r) => void (requests[r.method] = (requests[r.method] ?? 0) + 1));
  const lines = createInterface({ input: process.stdin });
  const go = new Promise<void>((resolve) => lines.once('line', () => resolve()));
  console.log('ready');
  await go;
  const cpu = process.cpuUsage();
  const started = performance.now();
  await applyAll(client, objects, Number(concurrency));
  const ms = performance.now() - started;
  const used = process.cpuUsage(cpu);
  const result: BareResult = { ms, clientCpuMs: (used.user + used.system) / 1000, requests };
  console.log(JSON.stringify(result));
  lines.close();
  client.close();
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  main().catch((err: unknown) => {
    console.error(err);
    process.exit(1);
  });
}
