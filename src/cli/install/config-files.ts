import { stringify } from 'yaml';
import type { KubeObject } from '../../kube/resources.js';
import { installManifests } from './install-manifests.js';

/**
 * config/: the manifests of `syncprims install` (default options) as a
 * kustomize base, written by `make crds` and kept equal to
 * what install prints by a test.
 */

export interface ConfigFile {
  file: string;
  text: string;
}

const HEADER = '# Generated from src/cli/install/install-manifests.ts by `make crds`. Do not edit: patch it in an overlay.\n';

/** Which file each kind goes to (the CRDs are those of crds/, in one file: kustomize reads no file outside its folder). */
const FILE_OF: Record<string, string> = {
  CustomResourceDefinition: 'crds.yaml',
  // With the CRDs, as in crds/: RolloutApproval's approver is the creator only where the policy is.
  ValidatingAdmissionPolicy: 'crds.yaml',
  ValidatingAdmissionPolicyBinding: 'crds.yaml',
  Namespace: 'namespace.yaml',
  ServiceAccount: 'rbac.yaml',
  ClusterRole: 'rbac.yaml',
  ClusterRoleBinding: 'rbac.yaml',
  Role: 'rbac.yaml',
  RoleBinding: 'rbac.yaml',
  Deployment: 'operator.yaml',
  Service: 'operator.yaml',
};

export function configFiles(): ConfigFile[] {
  const byFile = new Map<string, KubeObject[]>();
  for (const obj of installManifests()) {
    const file = FILE_OF[obj.kind];
    if (!file) throw new Error(`config/: no file for kind ${obj.kind}`);
    byFile.set(file, [...(byFile.get(file) ?? []), obj]);
  }
  const files = [...byFile].map(([file, objects]) => ({
    file,
    text: HEADER + objects.map((o) => `---\n${stringify(o, { lineWidth: 0, aliasDuplicateObjects: false })}`).join(''),
  }));
  const kustomization = {
    apiVersion: 'kustomize.config.k8s.io/v1beta1',
    kind: 'Kustomization',
    resources: files.map((f) => f.file),
  };
  return [{ file: 'kustomization.yaml', text: HEADER + stringify(kustomization) }, ...files];
}
