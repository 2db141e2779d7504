// `syncprims cluster add`: registers a cluster in a namespace's inventory, as
// the kubeconfig Secret `<name>-kubeconfig` labelled `syncprims.dev/cluster:
// <name>` (key `value`), holding the kubeconfig minified and checked as the
// operator checks it (cluster-kubeconfig.ts). A name another source of the
// inventory has already is refused. `--value key=value` sets the cluster's
// values (annotations `values.syncprims.dev/<key>`, value-flags.ts); each run
// sets the labels and values anew: those it does not give are removed.
import { CLUSTER_LABEL } from '../../api/marks.js';
import { readInventory } from '../../clusters/inventory-read.js';
import { CLUSTER_MODE_LABEL, PULL_SECRET_TYPE } from '../../clusters/pull-names.js';
import { REVOKED_AT_LABEL } from '../../clusters/pull-target.js';
import { valueName, VALUES_ANNOTATION_PREFIX } from '../../clusters/cluster-values.js';
import { getIfExists, type Requester } from '../../kube/client.js';
import { CORE, objectPath, type KubeObject } from '../../kube/resources.js';
import { withCluster } from '../cluster.js';
import { CliError, UsageError } from '../errors.js';
import { minifiedKubeconfig } from './cluster-kubeconfig.js';
import { staleValueAnnotations, valueAnnotations } from './value-flags.js';

export interface AddFlags {
  kubeconfig: string;
  context?: string;
  label: string[];
  value: string[];
  namespace?: string;
  mgmtKubeconfig?: string;
  mgmtContext?: string;
}

/** The field manager of what the CLI writes. */
export const CLI_FIELD_MANAGER = 'syncprims-cli';
/** A cluster's name is a label value and part of its children's names (`<fleetsync>-<cluster>`): a DNS label. */
export const CLUSTER_NAME = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;
const LABEL_NAME = /^([A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)$/;
const LABEL_PREFIX = /^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/;

/** `--label k=v` (repeated) as labels, each checked as the API server would. */
export function parseLabels(flags: readonly string[]): Record<string, string> {
  const labels: Record<string, string> = {};
  for (const flag of flags) {
    const eq = flag.indexOf('=');
    if (eq <= 0) throw new UsageError(`--label ${flag}: want key=value`);
    const key = flag.slice(0, eq);
    const value = flag.slice(eq + 1);
    const [prefix, name] = key.includes('/') ? [key.slice(0, key.indexOf('/')), key.slice(key.indexOf('/') + 1)] : [undefined, key];
    if (!LABEL_NAME.test(name) || (prefix !== undefined && !LABEL_PREFIX.test(prefix))) throw new UsageError(`--label ${flag}: ${key} is not a valid label key`);
    if (value !== '' && !LABEL_NAME.test(value)) throw new UsageError(`--label ${flag}: ${value} is not a valid label value (at most 63 letters, digits, '-', '_', '.')`);
    if (key === CLUSTER_LABEL) throw new UsageError(`--label ${flag}: ${CLUSTER_LABEL} is set to the cluster's name`);
    // Set by the CLI alone: one given by hand would make a push cluster's Secret read as a pull cluster's, or a pull cluster read as revoked.
    if (key === CLUSTER_MODE_LABEL) throw new UsageError(`--label ${flag}: ${CLUSTER_MODE_LABEL} is set by the mode (--pull, or --kubeconfig: push)`);
    if (key === REVOKED_AT_LABEL) throw new UsageError(`--label ${flag}: ${REVOKED_AT_LABEL} is set by syncprims cluster revoke`);
    labels[key] = value;
  }
  return labels;
}

export async function addCluster(name: string, flags: AddFlags): Promise<void> {
  if (!CLUSTER_NAME.test(name)) throw new UsageError(`cluster name ${name}: want a DNS label (at most 63 lower-case letters, digits and '-')`);
  const labels = parseLabels(flags.label);
  const annotations = valueAnnotations(flags.value);
  const kubeconfig = minifiedKubeconfig(flags.kubeconfig, flags.context);
  await withCluster({ kubeconfig: flags.mgmtKubeconfig, context: flags.mgmtContext, namespace: flags.namespace }, async ({ client, namespace }) => {
    const secret = `${name}-kubeconfig`;
    const path = objectPath(CORE.secrets, secret, namespace);
    const taken = (await readInventory(client, namespace)).find((c) => c.name === name && c.definedBy !== `Secret ${namespace}/${secret}`);
    if (taken) throw new CliError(`cluster name ${name} is taken in namespace ${namespace} by ${taken.definedBy}: choose another name, or remove that one first`);
    const existing = await getIfExists<KubeObject>(client, path);
    if ((existing as { type?: string } | undefined)?.type === PULL_SECRET_TYPE) {
      throw new CliError(`cluster ${name} is registered as a pull cluster (Secret ${namespace}/${secret}): left alone; to register it with a kubeconfig, revoke it (syncprims cluster revoke ${name}) and delete that Secret first`);
    }
    if (existing && existing.metadata.labels?.[CLUSTER_LABEL] !== name) {
      throw new CliError(`Secret ${namespace}/${secret} exists and does not register cluster ${name} (no label ${CLUSTER_LABEL}=${name}): left alone; remove it, or choose another name`);
    }
    await client.request({
      method: 'PATCH',
      path,
      query: { fieldManager: CLI_FIELD_MANAGER, force: 'true' },
      contentType: 'application/apply-patch+yaml',
      body: {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: secret, namespace, labels: { ...labels, [CLUSTER_LABEL]: name }, ...(Object.keys(annotations).length > 0 && { annotations }) },
        type: 'Opaque',
        data: { value: Buffer.from(kubeconfig.text).toString('base64') },
      },
    });
    await removeValues(client, path, staleValueAnnotations(existing?.metadata.annotations, annotations));
    const verb = existing ? 'updated' : 'registered';
    console.log(`cluster ${name} ${verb} in namespace ${namespace}: Secret ${secret} (context ${kubeconfig.context}, server ${kubeconfig.server})${valuesNote(annotations)}`);
  });
}

/**
 * Removes value annotations the new run does not give. Server-side apply
 * drops those the CLI set before; this removes those set otherwise
 * (`kubectl annotate`) too, so that the cluster's values are the ones given.
 */
export async function removeValues(client: Requester, path: string, keys: string[]): Promise<void> {
  if (keys.length === 0) return;
  await client.request({
    method: 'PATCH',
    path,
    query: { fieldManager: CLI_FIELD_MANAGER },
    contentType: 'application/merge-patch+json',
    body: { metadata: { annotations: Object.fromEntries(keys.map((k) => [k, null])) } },
  });
}

/** `; values ${region}, ${tier}`: the names a template writes them by. */
export function valuesNote(annotations: Record<string, string>): string {
  const names = Object.keys(annotations).map((k) => `\${${valueName(k.slice(VALUES_ANNOTATION_PREFIX.length))}}`);
  return names.length > 0 ? `; values ${names.join(', ')}` : '';
}
