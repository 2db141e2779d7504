import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';
import { KubeClient } from '../kube/client.js';
import { loadKubeConfigFile } from '../kube/config.js';
import { TransportError } from '../kube/errors.js';
import { KubeConfig } from '../kube/kubeconfig.js';
import { packageVersion } from '../version.js';
import { CliError, ExitCode, findCause, serverMessage, UsageError } from './errors.js';

/** The flags that say which cluster and namespace a command works on. */
export interface ClusterFlags {
  kubeconfig?: string;
  context?: string;
  namespace?: string;
}

/** A connection to the cluster a command works on. */
export interface Cluster {
  client: KubeClient;
  kubeConfig: KubeConfig;
  /** `-n`, else the context's namespace, else `default`. */
  namespace: string;
  /** The context used, for messages. */
  context: string;
}

/** How the CLI's requests are told apart in audit logs. */
export const CLI_USER_AGENT = 'syncprims-cli';

/** `$KUBECONFIG`, `~/.kube/config`, or in-cluster: the operator's default too. */
export function defaultKubeConfig(): KubeConfig {
  // With none of them, KubeConfig falls back to http://localhost:8080 (as client-node's does), which then fails with a message nobody can act on.
  const home = process.env.HOME ?? homedir();
  const found = !!process.env.KUBECONFIG || existsSync(path.join(home, '.kube', 'config')) || !!process.env.KUBERNETES_SERVICE_HOST;
  const kc = new KubeConfig();
  if (found) kc.loadFromDefault();
  if (!found || !kc.getCurrentCluster()) {
    throw new UsageError('no kubeconfig found: pass --kubeconfig, set KUBECONFIG, create ~/.kube/config, or run in a cluster');
  }
  return kc;
}

/** The kubeconfig the flags name, switched to `--context` when given. */
export function loadKubeConfig(flags: ClusterFlags): KubeConfig {
  if (!flags.context) return flags.kubeconfig ? loadKubeConfigFile(flags.kubeconfig) : defaultKubeConfig();
  const kc = new KubeConfig();
  const where = flags.kubeconfig ?? 'the default kubeconfig';
  if (flags.kubeconfig) kc.loadFromString(readKubeConfigText(flags.kubeconfig));
  else kc.loadFromDefault();
  if (!kc.getContextObject(flags.context)) {
    const known = kc.getContexts().map((c) => c.name);
    throw new UsageError(`--context ${flags.context}: no such context in ${where} (contexts: ${known.join(', ') || 'none'})`);
  }
  kc.setCurrentContext(flags.context);
  if (!kc.getCurrentCluster()) throw new CliError(`context ${flags.context} in ${where} names no cluster`);
  return kc;
}

function readKubeConfigText(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? 'no such file' : code === 'EACCES' ? 'permission denied' : String(err);
    throw new CliError(`cannot read kubeconfig ${file}: ${why}`, ExitCode.Failure, { cause: err });
  }
}

/** Connects (lazily: the first request opens the connection) to the cluster the flags name. */
export async function connect(flags: ClusterFlags): Promise<Cluster> {
  const kubeConfig = loadKubeConfig(flags);
  const context = kubeConfig.getCurrentContext() || 'local';
  const client = await KubeClient.create(context, kubeConfig, `${CLI_USER_AGENT}/${packageVersion()} (${context})`);
  const namespace = flags.namespace || kubeConfig.getContextObject(context)?.namespace || 'default';
  return { client, kubeConfig, namespace, context };
}

/**
 * Runs `fn` with a connection and closes it after. An error reaching the
 * cluster becomes one line naming the server and what to check (exit 3).
 */
export async function withCluster<T>(flags: ClusterFlags, fn: (cluster: Cluster) => Promise<T>): Promise<T> {
  const cluster = await connect(flags);
  try {
    return await fn(cluster);
  } catch (err) {
    throw unreachable(err, cluster) ?? err;
  } finally {
    cluster.client.close();
  }
}

/** A CliError (exit 3) when `err` is, or is caused by, a failure to reach the cluster. */
export function unreachable(err: unknown, cluster: Pick<Cluster, 'client' | 'context'>): CliError | undefined {
  if (err instanceof CliError) return undefined;
  const transport = findCause(err, TransportError);
  if (!transport) return undefined;
  const server = cluster.client.server.origin;
  return new CliError(
    `cannot reach the cluster at ${server} (context ${cluster.context}): ${serverMessage(transport)}; check --kubeconfig and --context, and that the API server runs`,
    ExitCode.Unreachable,
    { cause: err },
  );
}
