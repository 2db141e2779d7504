import { stringify } from 'yaml';
import { APPROVAL_NAMES, approverPolicy } from './approval.js';
import { customResourceDefinitions } from './crds.js';

/** The CRDs as the YAML files checked in under crds/ (`make crds` writes them). */

export interface CrdFile {
  /** e.g. `syncprims.dev_syncs.yaml` */
  file: string;
  text: string;
}

const HEADER = '# Generated from the zod schemas in src/api by `make crds`. Do not edit.\n---\n';

const yaml = (obj: unknown): string => stringify(obj, { sortMapEntries: true, lineWidth: 0, aliasDuplicateObjects: false });

/** One file per CRD; RolloutApproval's also holds the admission policy that makes its approver the creator (without it, the record would be the author's word). */
export function crdFiles(): CrdFile[] {
  return customResourceDefinitions().map((crd) => {
    const policy = crd.spec.names.plural === APPROVAL_NAMES.plural ? approverPolicy().map((o) => `---\n${yaml(o)}`).join('') : '';
    return { file: `${crd.spec.group}_${crd.spec.names.plural}.yaml`, text: HEADER + yaml(crd) + policy };
  });
}
