// The downstream side of bench/pull.ts: one process serving a share of the
// simulated pull clusters, each with the real agent of a pull cluster's
// operator (PullUpstream, controllers/pull-upstream.ts: its own client and
// token for the managing cluster, its informers of its assignments and their
// copies there, its Lease renewed every 10 s, its controller writing status
// back), as `syncprims run --upstream-kubeconfig` starts it.
//
// What is not one operator per cluster: the agents' home. A pull cluster's
// agent watches the Syncs, ConfigMaps and Secrets it made at home in every
// namespace of its own cluster; here all the agents share one cluster
// (bench-pull-edge), each given one namespace of it as its home (the
// namespace its assignments' Syncs go to). The home informers are shared (one
// per selector, all namespaces, as the agent asks for them) and each agent
// sees only its namespace's objects (a view, below): its Syncs and copies are
// written to bench-pull-edge for real, and one real operator there (started
// by bench/pull.ts) reconciles them.
//
// Run by bench/pull.ts: `node pull-agents.js SPEC.json`, SPEC
// {edgeKubeconfig, userAgent, agents: [{joinFile, home}]}. Prints
// `BENCH-READY <n>` as agents are serving (their informers primed), `BENCH-DONE
// <n>` once all were started, and every
// log line of the agents (pino JSON, level info) on stdout.
import { readFileSync } from 'node:fs';
import { pino } from 'pino';
import { PullUpstream } from '../src/controllers/pull-upstream.js';
import { KubeClient } from '../src/kube/client.js';
import { loadKubeConfigFile } from '../src/kube/config.js';
import { Discovery } from '../src/kube/discovery.js';
import type { KubeObject } from '../src/kube/resources.js';
import { ClusterCache, type InformerSelector } from '../src/runtime/cache.js';
import type { Informer, InformerEvent, InformerHandler } from '../src/runtime/informer.js';
import type { Manager } from '../src/runtime/manager.js';
import { OperatorMetrics } from '../src/runtime/metrics.js';
import { objectKey, ObjectStore } from '../src/runtime/store.js';

export interface AgentSpec {
  joinFile: string;
  /** The agent's home: its namespace of the downstream cluster. */
  home: string;
}

export interface AgentHostSpec {
  edgeKubeconfig: string;
  userAgent: string;
  agents: AgentSpec[];
}

/** How many agents start at once before the next ones (each lists its three collections upstream first). */
const START_BATCH = Number(process.env.AGENT_START_BATCH ?? 50);
const SERVING = '"msg":"serving the assignments of the managing cluster"';

/** One agent's part of a shared informer: the objects of its namespace, and their events. */
class NamespaceView {
  readonly store = new ObjectStore<KubeObject>();
  readonly handlers = new Set<InformerHandler<KubeObject>>();

  onEvent(handler: InformerHandler<KubeObject>): () => void {
    this.handlers.add(handler);
    return () => this.handlers.delete(handler);
  }

  see(e: InformerEvent<KubeObject>): void {
    if (e.type === 'deleted') this.store.delete(objectKey(e.object));
    else this.store.upsert(e.object);
    for (const handler of this.handlers) handler(e);
  }
}

/** The shared home informers, each routed by namespace to the agents' views. */
class HomeViews {
  private readonly routes = new Map<Informer<KubeObject>, Map<string, NamespaceView>>();

  constructor(readonly cache: ClusterCache) {}

  async view(apiVersion: string, kind: string, selector: InformerSelector, namespace: string): Promise<NamespaceView> {
    const shared = await this.cache.informer(apiVersion, kind, { ...selector, allNamespaces: true });
    let byNamespace = this.routes.get(shared);
    if (!byNamespace) {
      const routes = new Map<string, NamespaceView>();
      shared.onEvent((e) => routes.get(e.object.metadata.namespace ?? '')?.see(e));
      this.routes.set(shared, (byNamespace = routes));
    }
    let view = byNamespace.get(namespace);
    if (!view) {
      byNamespace.set(namespace, (view = new NamespaceView()));
      for (const o of shared.store.list()) if (o.metadata.namespace === namespace) view.store.upsert(o);
    }
    return view;
  }
}

/** What PullUpstream and the agent's controller read of a Manager, with the agent's home as its cache. */
function agentManager(views: HomeViews, home: string, metrics: OperatorMetrics): Manager {
  const cache = {
    client: views.cache.client,
    discovery: views.cache.discovery,
    informer: (apiVersion: string, kind: string, selector: InformerSelector = {}) => views.view(apiVersion, kind, selector, home),
  };
  return { leading: Promise.resolve(), cache, metrics } as unknown as Manager;
}

async function main(): Promise<void> {
  const spec = JSON.parse(readFileSync(process.argv[2] ?? '', 'utf8')) as AgentHostSpec;
  let serving = 0;
  const log = pino(
    { level: 'info' },
    {
      write(line: string): void {
        if (line.includes(SERVING)) serving++;
        process.stdout.write(line);
      },
    },
  );
  const edge = await KubeClient.create('home', loadKubeConfigFile(spec.edgeKubeconfig), spec.userAgent);
  const views = new HomeViews(new ClusterCache(edge, new Discovery(edge), { logger: log }));
  const metrics = new OperatorMetrics();
  const upstreams: PullUpstream[] = [];
  process.on('SIGTERM', () => void Promise.all(upstreams.map((u) => u.stop().catch(() => undefined))).finally(() => process.exit(0)));
  for (let from = 0; from < spec.agents.length; from += START_BATCH) {
    const batch = spec.agents.slice(from, from + START_BATCH);
    for (const [k, a] of batch.entries()) {
      const upstream = await PullUpstream.open(a.joinFile, spec.userAgent, `bench-agent-${from + k}`, log);
      upstream.start(agentManager(views, a.home, metrics));
      upstreams.push(upstream);
    }
    const deadline = Date.now() + 120_000;
    while (serving < from + batch.length && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    console.log(`BENCH-READY ${serving}`);
  }
  console.log(`BENCH-DONE ${serving}`);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
