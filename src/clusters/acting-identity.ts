// Whom a RemoteSync acts as in its cluster: the kubeconfig's user, whom that
// user impersonates (`as:`), or the sync's service account there
// (impersonated: serviceAccountName, else --default-service-account). A
// request carries one impersonated identity: a kubeconfig that impersonates
// and a sync that acts as a service account cannot both be honoured, and
// dropping either would act with rights the other did not give. Refused,
// saying so.
import type { KubeConfig } from '../kube/kubeconfig.js';
import { describeImpersonation, impersonationOf } from '../kube/kubeconfig-impersonation.js';

/** The service account a sync acts as in its cluster, and what set it (for messages). */
export interface ActingAccount {
  namespace: string;
  name: string;
  /** `spec.serviceAccountName` or `--default-service-account`. */
  setBy: string;
}

/** The account a sync acts as: its own, else the operator's default; undefined: the kubeconfig's identity. */
export function actingAccountOf(namespace: string, serviceAccountName: string | undefined, defaultServiceAccount: string | undefined): ActingAccount | undefined {
  if (serviceAccountName) return { namespace, name: serviceAccountName, setBy: 'spec.serviceAccountName' };
  if (defaultServiceAccount) return { namespace, name: defaultServiceAccount, setBy: '--default-service-account' };
  return undefined;
}

/** Why the cluster `name` (of `kubeConfig`) cannot be used acting as `account`; undefined when it can. */
export function impersonationConflict(name: string, kubeConfig: KubeConfig, account: ActingAccount | undefined): string | undefined {
  const own = impersonationOf(kubeConfig.getCurrentUser());
  if (!own || !account) return undefined;
  return (
    `cluster ${name}: its kubeconfig impersonates ${describeImpersonation(own)} (as:), and this sync acts as service account ` +
    `${account.namespace}/${account.name} there (${account.setBy}); a request carries one impersonated identity, so one of them would be dropped: ` +
    `refused, nothing sent; remove as: from the kubeconfig (its user then impersonates the service account), ` +
    `or apply as the kubeconfig's identity (no spec.serviceAccountName, and no --default-service-account)`
  );
}
