import type { Command } from 'commander';
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { SERVICE_ACCOUNT_NAME } from '../../api/kinds.js';
import { outboundAddressPolicy } from '../../kube/address-policy.js';
import type { KubeClient } from '../../kube/client.js';
import type { PushHandler } from '../../runtime/webhook-server.js';
import type { FleetReachability } from '../../clusters/fleet-reachability.js';
import { kubeSystemUid } from '../../kube/cluster-id.js';
import { closeServer, DEFAULT_DEBUG_ADDR, parseAddr } from '../../runtime/http-endpoints.js';
import type { Logger } from '../../runtime/logger.js';
import type { Manager } from '../../runtime/manager.js';
import { packageVersion } from '../../version.js';
import { DEFAULT_FLEET_QUOTA } from '../../fleet/quota.js';
import { durationFlag, wholeNumberFlag } from '../flag-values.js';
import { addSourceOptions, useSourceFlags, type SourceFlags } from '../source-flags.js';

const MiB = 1024 * 1024;

/** How long in-flight reconciles may run on after SIGTERM (a Deployment's default grace is 30 s). */
const SHUTDOWN_GRACE_MS = 25_000;

/** The operator's User-Agent prefix: how its requests are told apart in audit logs. */
export const OPERATOR_USER_AGENT = 'syncprims-operator';

/**
 * This process's instance id: host, pid and a random suffix (a pid is reused
 * across containers and restarts). It ends the User-Agent, so that an audit
 * log tells two operators (a leader and its standby, a process and the one
 * restarted after it) apart.
 */
export function newInstanceId(): string {
  return `${hostname()}-${process.pid}-${randomBytes(3).toString('hex')}`;
}

/** `syncprims-operator/<version> (<context>) instance/<id>`: the context stays in parentheses where tests and readers look for it. */
export function operatorUserAgent(context: string, instance: string): string {
  return `${OPERATOR_USER_AGENT}/${packageVersion()} (${context}) instance/${instance}`;
}

interface RunFlags extends SourceFlags {
  kubeconfig?: string;
  namespace?: string;
  concurrency: string;
  leaderElect?: boolean;
  shards?: boolean;
  upstreamKubeconfig?: string;
  upstreamSecret?: string;
  upstreamLeaseDuration: string;
  leaderElectionNamespace: string;
  leaderElectionLeaseDuration: string;
  leaderElectionRenewDeadline: string;
  leaderElectionRetryPeriod: string;
  metricsAddr: string;
  healthAddr: string;
  logLevel: string;
  allowCrossNamespaceRefs?: boolean;
  enableDebugEndpoints?: boolean;
  debugAddr: string;
  clusterId?: string;
  allowKubeconfigExec?: boolean | string;
  allowInsecureKubeconfigTls?: boolean;
  qps: string;
  burst: string;
  lostClusterGrace: string;
  remoteRequestTimeout: string;
  defaultServiceAccount?: string;
  livenessLeaseDuration: string;
  uiAddr?: string;
  webhookAddr?: string;
  fleetMaxClusters: string;
  fleetMaxSize: string;
}

/** `syncprims run`: the operator. */
export function addRunCommand(program: Command): void {
  const command = program
    .command('run')
    .description('run the operator: reconcile Syncs, RemoteSyncs, ProxySyncs and FleetSyncs')
    .option('--kubeconfig <file>', 'kubeconfig of the cluster to manage (default: $KUBECONFIG, ~/.kube/config, in-cluster)')
    .option('--namespace <ns>', 'watch one namespace (default: all)')
    .option(
      '--upstream-kubeconfig <file>',
      'pull mode: the join bundle (syncprims cluster add --pull) of the managing cluster this cluster takes its assignments from; its token is renewed in place',
    )
    .option('--upstream-secret <name>', 'with --upstream-kubeconfig mounted from a Secret (syncprims join): that Secret of the leader election namespace, where the renewed token is written')
    .option(
      '--upstream-lease-duration <duration>',
      "with --upstream-kubeconfig: how long the Lease syncprims-pull-agent in the managing cluster says this cluster is online after its last renewal (renewed every third of it; whole seconds, at least 3s); past it, the managing cluster's ProxySyncs here say ClusterOffline",
      '30s',
    )
    .option('--concurrency <n>', 'workers per controller', '8')
    .option('--leader-elect', 'run only while holding the leader Lease')
    .option(
      '--shards',
      'run as one of several replicas that share the work: each renews a membership Lease (in --leader-election-namespace, with its lease flags); each remote cluster and each namespace of local syncs goes to one live replica by rendezvous hashing (a `syncprims.dev/shard: <replica>` label on a cluster\'s Secret, Cluster or ClusterProfile pins it) and is worked only while that replica holds its Lease (docs/shards.md); not with --leader-elect',
    )
    .option(
      '--leader-election-namespace <ns>',
      'namespace of the Lease syncprims-leader; without --leader-elect and --namespace, also of the liveness Lease syncprims-operator',
      'syncprims-system',
    )
    .option('--leader-election-lease-duration <duration>', 'with --leader-elect: how long a standby waits, after it last saw the leader renew, before it takes the Lease; with --shards: how long a replica counts as live after its membership Lease last changed', '15s')
    .option('--leader-election-renew-deadline <duration>', 'with --leader-elect: how long the leader goes on leading without a successful renewal (less than the lease duration); with --shards: how long a replica goes on writing without renewing its membership', '10s')
    .option('--leader-election-retry-period <duration>', 'with --leader-elect (or --shards): the pause between attempts to take or renew the Lease', '2s')
    .option(
      '--liveness-lease-duration <duration>',
      'without --leader-elect: how long the Lease syncprims-operator (in the --namespace watched, else the leader election namespace) says this operator is alive after its last renewal (renewed every 2/15 of it); `syncprims doctor` reads it',
      '15s',
    )
    .option('--metrics-addr <addr>', 'where /metrics listens', ':8080')
    .option('--health-addr <addr>', 'where /healthz and /readyz listen', ':8081')
    .option('--log-level <level>', 'trace, debug, info, warn or error', 'info')
    .option(
      '--ui-addr <addr>',
      'serve the read-only web view here (default: off); `8082` or `:8082` listen on loopback only, name a host (`0.0.0.0:8082`) to listen on others; no login of its own (docs/ui.md)',
    )
    .option(
      '--webhook-addr <addr>',
      'serve POST /hooks/<token> here (default: off): a push event (GitHub, GitLab, or {"url": ...}) makes every sync of the repository it names whose source.git or source.oci webhookSecretRef holds <token> look at once; any other request is a 404',
    )
    .option(
      '--enable-debug-endpoints',
      'serve /debug/cache (every cached object as JSON; the values of Secrets are redacted wherever they are, cached Secrets and Secrets inline in sync specs alike) on --debug-addr',
    )
    .option(
      '--debug-addr <addr>',
      'where the debug endpoints listen, apart from /healthz (which a kubelet must reach); `8083` or `:8083` listen on loopback only (reach it with kubectl port-forward), name a host (`0.0.0.0:8083`) to listen on others',
      DEFAULT_DEBUG_ADDR,
    );
  addSourceOptions(addTenancyOptions(command)).action(run);
}

/** What syncs may reach and do: other namespaces, remote clusters and their kubeconfigs, accounts, fleets' quotas. */
function addTenancyOptions(command: Command): Command {
  return command
    .option('--allow-cross-namespace-refs', 'let dependsOn name syncs in other namespaces (default: refused, reason Forbidden)')
    .option('--cluster-id <id>', 'the syncprims.dev/origin label on objects applied to remote clusters (default: the uid of the kube-system namespace)')
    .option(
      '--allow-kubeconfig-exec [namespaces]',
      'accept kubeconfigs in Secrets of these namespaces (comma-separated) whose user runs a command (exec) or an auth-provider (default: refused); bare, in every namespace (refused with --default-service-account, the multi-tenant mode)',
    )
    .option('--allow-insecure-kubeconfig-tls', 'accept kubeconfigs in Secrets with insecure-skip-tls-verify (default: refused)')
    .option('--qps <n>', 'requests per second to each remote cluster (client-side, as client-go)', '50')
    .option('--burst <n>', 'requests each remote cluster may get at once above --qps', '100')
    .option(
      '--remote-request-timeout <duration>',
      "the deadline of each request to a remote cluster, its whole answer included (a watch: each event); past it, or past an answer's byte limit, the request fails and the cluster's syncs say so",
      '15s',
    )
    .option(
      '--lost-cluster-grace <duration>',
      'a RemoteSync or ProxySync being deleted whose kubeconfig Secret is gone tries to clean up this long (from its deletion), then goes with a Warning Event naming what it left',
      '5m',
    )
    .option(
      '--default-service-account <name>',
      'syncs that name no serviceAccountName apply as this service account of their namespace (a RemoteSync: of the namespace of that name in its cluster; a ProxySync: its remote Sync gets it)',
    )
    .option('--fleet-max-clusters <n>', 'the most children (selected clusters) one FleetSync may have; past it the FleetSync is refused (QuotaExceeded) before anything is written', String(DEFAULT_FLEET_QUOTA.maxClusters))
    .option(
      '--fleet-max-size <MiB>',
      "the most one FleetSync may place in the managing cluster's etcd, in MiB: its template's size times its children, plus its revisions kept; past it it is refused (QuotaExceeded) before anything is written",
      String(DEFAULT_FLEET_QUOTA.maxBytes / MiB),
    );
}

/** The operator's modules, loaded when it runs: the other commands (and --help) start without them. */
async function operatorModules() {
  const [{ syncControllers }, { KubeClient }, { loadKubeConfigFile }, { createLogger }, { Manager }, { defaultKubeConfig }] = await Promise.all([
    import('../../controllers/index.js'),
    import('../../kube/client.js'),
    import('../../kube/config.js'),
    import('../../runtime/logger.js'),
    import('../../runtime/manager.js'),
    import('../cluster.js'),
  ]);
  return { syncControllers, KubeClient, loadKubeConfigFile, createLogger, Manager, defaultKubeConfig };
}

async function run(flags: RunFlags): Promise<void> {
  const { boundHeapGrowth } = await import('../../runtime/heap.js');
  const heapGrowingPercent = boundHeapGrowth();
  const { syncControllers, KubeClient, loadKubeConfigFile, createLogger, Manager, defaultKubeConfig } = await operatorModules();
  const log = createLogger({ level: flags.logLevel });
  const concurrency = Number(flags.concurrency);
  if (!Number.isInteger(concurrency) || concurrency < 1) throw new Error(`--concurrency ${flags.concurrency}: want a positive integer`);
  const kc = flags.kubeconfig ? loadKubeConfigFile(flags.kubeconfig) : defaultKubeConfig();
  const liveness = livenessOf(flags);
  const upstreamAt = upstreamOf(flags);
  if (flags.uiAddr !== undefined) addrFlag('--ui-addr', flags.uiAddr);
  if (flags.webhookAddr !== undefined) addrFlag('--webhook-addr', flags.webhookAddr);
  addrFlag('--debug-addr', flags.debugAddr);
  const leaderElection = flags.leaderElect ? leaderElectionOf(flags) : undefined;
  useSourceFlags(flags);
  const name = kc.getCurrentContext() || 'local';
  const instance = newInstanceId();
  const userAgent = operatorUserAgent(name, instance);
  const shards = shardsOf(flags, instance);
  const client = await KubeClient.create(name, kc, userAgent);
  const manager = new Manager({
    client,
    logger: log,
    namespace: flags.namespace,
    metricsAddr: flags.metricsAddr,
    healthAddr: flags.healthAddr,
    debugEndpoints: flags.enableDebugEndpoints ?? false,
    debugAddr: flags.debugAddr,
    leaderElection,
    shards,
    liveness,
  });
  shutDownOnSignals(manager, log);
  const allowCrossNamespaceRefs = flags.allowCrossNamespaceRefs ?? false;
  log.info({ server: client.server.origin, instance, userAgent, namespace: flags.namespace ?? '(all)', concurrency, allowCrossNamespaceRefs, heapGrowingPercent, sharded: shards !== undefined }, 'starting');
  const { allowExecOf } = await import('./kubeconfig-exec-flag.js');
  const remote = remoteFlags(flags, allowExecOf(flags.allowKubeconfigExec, defaultServiceAccountOf(flags) !== undefined));
  const clusterId = flags.clusterId ?? (await defaultClusterId(client));
  const defaultServiceAccount = defaultServiceAccountOf(flags);
  log.info({ clusterId, ...remote.remoteRateLimit, lostClusterGraceMs: remote.lostClusterGraceMs, defaultServiceAccount: defaultServiceAccount ?? '(none)', ...remote.kubeconfigPolicy }, 'remote clusters');
  const fleetQuota = { maxClusters: wholeNumberFlag('--fleet-max-clusters', flags.fleetMaxClusters, 'clusters'), maxBytes: wholeNumberFlag('--fleet-max-size', flags.fleetMaxSize, 'MiB') * MiB };
  const controllers = syncControllers({ concurrency, allowCrossNamespaceRefs, clusterId, userAgent, defaultServiceAccount, fleetQuota, ...remote });
  // A signal while it still waits (for its CRDs) ends the start: then there is nothing to run.
  await manager.start(controllers).catch((err: unknown) => {
    if (!manager.shuttingDown) throw err;
  });
  await startListeners(manager, flags, log, controllers);
  const upstream = await startUpstream(manager, upstreamAt, userAgent, instance, log);
  log.info({ ports: manager.ports }, 'running');
  await manager.stopped;
  await upstream?.stop();
  await manager.shutdown(SHUTDOWN_GRACE_MS);
  client.close();
  // Done: exit now rather than wait for timers and sockets that nothing needs any more.
  process.exit();
}

/** Pull mode's flags: the join bundle, the Secret it is mounted from, the Lease's duration in whole seconds (at least 3). */
function upstreamOf(flags: RunFlags): UpstreamAt {
  const text = flags.upstreamLeaseDuration;
  const ms = durationFlag('--upstream-lease-duration', text);
  if (ms < 3_000 || ms % 1_000 !== 0) throw new Error(`--upstream-lease-duration ${text}: want whole seconds, at least 3s`);
  const secret = flags.upstreamSecret ? { namespace: flags.leaderElectionNamespace, name: flags.upstreamSecret } : undefined;
  return { file: flags.upstreamKubeconfig, secret, leaseSeconds: ms / 1_000 };
}

type UpstreamAt = { file?: string; secret?: { namespace: string; name: string }; leaseSeconds: number };

/** Pull mode's link to the managing cluster (controllers/pull-upstream.ts): loaded only when asked for. */
async function startUpstream(manager: Manager, where: UpstreamAt, userAgent: string, holder: string, log: Logger) {
  if (where.file === undefined || manager.shuttingDown) return undefined;
  const { PullUpstream } = await import('../../controllers/pull-upstream.js');
  const upstream = await PullUpstream.open(where.file, userAgent, holder, log, { secret: where.secret, leaseSeconds: where.leaseSeconds });
  upstream.start(manager);
  return upstream;
}

/** The web view, above the controllers: its module is loaded only when asked for. */
async function startUiOf(manager: Manager, addr: string, log: Logger, reachability: FleetReachability): Promise<void> {
  const { startUi } = await import('../../ui/index.js');
  const ui = await startUi(manager, addr, reachability);
  log.info({ url: ui.url, port: ui.port }, 'ui listening');
}

/** The web view and the push webhook, where asked for. */
async function startListeners(manager: Manager, flags: RunFlags, log: Logger, controllers: { reachability: FleetReachability; pushes: PushHandler }): Promise<void> {
  if (manager.shuttingDown) return;
  if (flags.uiAddr !== undefined) await startUiOf(manager, flags.uiAddr, log, controllers.reachability);
  if (flags.webhookAddr !== undefined) await startWebhookOf(manager, flags.webhookAddr, log, controllers.pushes);
}

/** The push webhook (runtime/webhook-server.ts): its module is loaded only when asked for. */
async function startWebhookOf(manager: Manager, addr: string, log: Logger, pushes: PushHandler): Promise<void> {
  const { serveWebhook } = await import('../../runtime/webhook-server.js');
  const webhook = await serveWebhook(addr, pushes, (err) => log.error({ err }, 'webhook: a push could not be handled'));
  manager.onShutdown(() => closeServer(webhook.server));
  log.info({ port: webhook.port }, 'webhook listening');
}

/** SIGTERM or SIGINT: shut down within the grace period; a second signal exits at once. */
function shutDownOnSignals(manager: { shutdown(graceMs: number): Promise<void> }, log: Logger): void {
  let signals = 0;
  const onSignal = (sig: string): void => {
    if (++signals > 1) {
      log.warn({ signal: sig }, 'second signal: exiting now');
      process.exit(1);
    }
    log.info({ signal: sig, graceMs: SHUTDOWN_GRACE_MS }, 'signal received');
    // Whatever still runs after the grace period (and a margin to stop watching) is cut short.
    setTimeout(() => {
      log.error({ graceMs: SHUTDOWN_GRACE_MS }, 'shutdown did not finish within the grace period: exiting');
      process.exit(1);
    }, SHUTDOWN_GRACE_MS + 5_000).unref();
    void manager.shutdown(SHUTDOWN_GRACE_MS);
  };
  process.on('SIGTERM', () => onSignal('SIGTERM'));
  process.on('SIGINT', () => onSignal('SIGINT'));
}

/** The flags about remote clusters, checked; `allowExec`: --allow-kubeconfig-exec's (kubeconfig-exec-flag.ts). */
function remoteFlags(flags: RunFlags, allowExec: boolean | string[]) {
  const qps = Number(flags.qps);
  const burst = Number(flags.burst);
  if (!(qps > 0)) throw new Error(`--qps ${flags.qps}: want a positive number`);
  if (!Number.isInteger(burst) || burst < 1) throw new Error(`--burst ${flags.burst}: want a positive integer`);
  return {
    remoteRateLimit: { qps, burst },
    lostClusterGraceMs: durationFlag('--lost-cluster-grace', flags.lostClusterGrace),
    remoteRequestTimeoutMs: durationFlag('--remote-request-timeout', flags.remoteRequestTimeout),
    kubeconfigPolicy: {
      allowExec,
      allowInsecureTls: flags.allowInsecureKubeconfigTls ?? false,
      // --source-deny-cidrs, set by useSourceFlags: kubeconfig servers may not be those addresses either.
      addressPolicy: outboundAddressPolicy(),
    },
  };
}

function addrFlag(flag: string, text: string): void {
  try {
    parseAddr(text);
  } catch (err) {
    throw new Error(`${flag} ${text}: want [host:]port (${(err as Error).message})`);
  }
}

/** --default-service-account: a service account's name, as serviceAccountName must be. */
function defaultServiceAccountOf(flags: RunFlags): string | undefined {
  const name = flags.defaultServiceAccount;
  if (name !== undefined && !SERVICE_ACCOUNT_NAME.test(name)) {
    throw new Error(`--default-service-account ${name}: want a service account's name (lowercase letters, digits, - and .), without its namespace`);
  }
  return name;
}

/** The leader Lease and its timing, checked as the elector would (renew deadline under the lease, above the retry period). */
function leaderElectionOf(flags: RunFlags) {
  const leaseDurationMs = durationFlag('--leader-election-lease-duration', flags.leaderElectionLeaseDuration);
  const renewDeadlineMs = durationFlag('--leader-election-renew-deadline', flags.leaderElectionRenewDeadline);
  const retryPeriodMs = durationFlag('--leader-election-retry-period', flags.leaderElectionRetryPeriod);
  if (!(retryPeriodMs > 0)) throw new Error(`--leader-election-retry-period ${flags.leaderElectionRetryPeriod}: want a positive duration`);
  if (!(renewDeadlineMs < leaseDurationMs)) {
    throw new Error(`--leader-election-renew-deadline ${flags.leaderElectionRenewDeadline}: want less than --leader-election-lease-duration ${flags.leaderElectionLeaseDuration}`);
  }
  if (!(renewDeadlineMs > retryPeriodMs * 1.2)) {
    throw new Error(`--leader-election-renew-deadline ${flags.leaderElectionRenewDeadline}: want more than 1.2 x --leader-election-retry-period ${flags.leaderElectionRetryPeriod}`);
  }
  return { namespace: flags.leaderElectionNamespace, name: 'syncprims-leader', leaseDurationMs, renewDeadlineMs, retryPeriodMs };
}

/** --shards: this replica's membership, timed by the leader election flags; its name is the instance id; it waits while --leader-elect's Lease is held. */
function shardsOf(flags: RunFlags, instance: string) {
  if (!flags.shards) return undefined;
  if (flags.leaderElect) throw new Error('--shards and --leader-elect do not go together: with --shards every replica works its share, none stands by');
  const { namespace, name, leaseDurationMs, renewDeadlineMs, retryPeriodMs } = leaderElectionOf(flags);
  return { namespace, leaseDurationMs, renewDeadlineMs, retryPeriodMs, member: instance, leaderLease: name };
}

/** The liveness Lease (without --leader-elect): in the namespace watched, else the leader election namespace; at least 2 s. */
function livenessOf(flags: RunFlags): { namespace: string; leaseDurationMs: number } {
  const text = flags.livenessLeaseDuration;
  const ms = durationFlag('--liveness-lease-duration', text);
  if (ms < 2_000) throw new Error(`--liveness-lease-duration ${text}: want at least 2s`);
  return { namespace: flags.namespace ?? flags.leaderElectionNamespace, leaseDurationMs: ms };
}

/** The managing cluster's id by default: the uid of its kube-system namespace (stable for the cluster's life). */
async function defaultClusterId(client: KubeClient): Promise<string> {
  try {
    return await kubeSystemUid(client);
  } catch (err) {
    throw new Error(`cannot read the kube-system namespace for the default --cluster-id (${err instanceof Error ? err.message : String(err)}): pass --cluster-id`, { cause: err });
  }
}
