import { stringify } from 'yaml';
import { customResourceDefinitions } from './crds.js';

/** The CRDs as the YAML files checked in under crds/ (`make crds` writes them). */

export interface CrdFile {
  /** e.g. `syncprims.dev_syncs.yaml` */
  file: string;
  text: string;
}

const HEADER = '# Generated from the zod schemas in src/api by `make crds`. Do not edit.\n---\n';

export function crdFiles(): CrdFile[] {
  return customResourceDefinitions().map((crd) => ({
    file: `${crd.spec.group}_${crd.spec.names.plural}.yaml`,
    text: HEADER + stringify(crd, { sortMapEntries: true, lineWidth: 0, aliasDuplicateObjects: false }),
  }));
}
