// `--allow-kubeconfig-exec[=ns1,ns2]`: from which namespaces' Secrets a
// kubeconfig may run a command for its credentials (exec, auth-provider). A
// command runs in the operator's process, with its service account's token at
// hand: one tenant allowed is as good as every tenant being the operator. So a
// list names the namespaces trusted so; the bare flag (every namespace, as
// before) is for an operator of one tenant, and refused in the multi-tenant
// mode (syncs impersonate an account: --default-service-account).
import { DNS1123_LABEL, DNS1123_LABEL_MESSAGE } from '../../api/names.js';
import { ALLOW_EXEC_FLAG } from '../../clusters/kubeconfig.js';

const NAMESPACE = new RegExp(DNS1123_LABEL);

/**
 * The policy's `allowExec` from the flag's value (commander gives `true` for
 * the bare flag, the text after `=` otherwise): true for every namespace, a
 * list, or false. `multiTenant`: syncs impersonate (--default-service-account).
 */
export function allowExecOf(value: boolean | string | undefined, multiTenant: boolean): boolean | string[] {
  if (value === undefined || value === false) return false;
  if (value === true) {
    if (multiTenant) {
      throw new Error(
        `${ALLOW_EXEC_FLAG} without namespaces lets the kubeconfig of every namespace run a command in the operator, which the multi-tenant mode (--default-service-account) does not allow: name the namespaces trusted to, ${ALLOW_EXEC_FLAG}=ns1,ns2`,
      );
    }
    return true;
  }
  const namespaces = value.split(',').map((s) => s.trim());
  const bad = namespaces.find((ns) => !NAMESPACE.test(ns) || ns.length > 63);
  if (bad !== undefined) throw new Error(`${ALLOW_EXEC_FLAG}=${value}: ${JSON.stringify(bad)} ${DNS1123_LABEL_MESSAGE}; want a comma-separated list of namespaces`);
  return [...new Set(namespaces)];
}
