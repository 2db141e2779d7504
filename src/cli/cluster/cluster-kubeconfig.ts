// The kubeconfig `syncprims cluster add` stores: the one context asked for,
// its cluster and user only, with the files it names read in (the operator
// reads no file: clusters/kubeconfig.ts), then checked as the operator checks
// it, so that what is stored is what the operator will accept.
import { readFileSync } from 'node:fs';
import { checkedKubeconfig, KubeconfigError } from '../../clusters/kubeconfig.js';
import { KubeConfig } from '../../kube/kubeconfig.js';
import { loadKubeConfig } from '../cluster.js';
import { CliError } from '../errors.js';
import { toYaml } from '../output.js';

export interface MinifiedKubeconfig {
  /** The kubeconfig to store (YAML). */
  text: string;
  context: string;
  server: string;
}

/** The kubeconfig of `file` (at `context`, else its current one), minified, its files inlined, and checked. */
export function minifiedKubeconfig(file: string, context?: string): MinifiedKubeconfig {
  const kc = loadKubeConfig({ kubeconfig: file, context });
  const name = kc.getCurrentContext();
  const ctx = kc.getContextObject(name);
  const cluster = kc.getCurrentCluster();
  const user = kc.getCurrentUser();
  if (!ctx || !cluster || !user) throw new CliError(`--kubeconfig ${file}: context ${name || '(none)'} needs a cluster and a user`);
  const one = new KubeConfig();
  one.loadFromOptions({
    clusters: [{ ...cluster, caData: cluster.caData ?? inline(cluster.caFile, `--kubeconfig ${file}`), caFile: undefined }],
    users: [{ ...user, certData: user.certData ?? inline(user.certFile, `--kubeconfig ${file}`), keyData: user.keyData ?? inline(user.keyFile, `--kubeconfig ${file}`), certFile: undefined, keyFile: undefined }],
    contexts: [{ name, cluster: cluster.name, user: user.name, namespace: ctx.namespace }],
    currentContext: name,
  });
  const text = toYaml(JSON.parse(one.exportConfig()));
  try {
    checkedKubeconfig(text, `--kubeconfig ${file} (context ${name})`);
  } catch (err) {
    if (err instanceof KubeconfigError) throw new CliError(`${err.message}; the operator would refuse it, so it is not stored`, undefined, { cause: err });
    throw err;
  }
  return { text, context: name, server: cluster.server };
}

/** A file a kubeconfig names (a CA, a certificate, a key), base64 as the `-data` fields hold it (`kubeconfig` says who names it, in the error). */
export function inline(path: string | undefined, kubeconfig: string): string | undefined {
  if (!path) return undefined;
  try {
    return readFileSync(path).toString('base64');
  } catch (err) {
    throw new CliError(`${kubeconfig} names ${path}, which cannot be read: ${(err as NodeJS.ErrnoException).code ?? String(err)}`, undefined, { cause: err });
  }
}
