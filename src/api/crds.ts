import { APPROVAL_NAMES, rolloutApprovalSpecSchema } from './approval.js';
import { celRule } from './cel.js';
import { tolerateReferences } from './fleet-references.js';
import { structuralSchema, type JSONSchemaProps } from './json-schema.js';
import {
  CATEGORY,
  GROUP,
  KIND_NAMES,
  MAX_NAME_LENGTH,
  NAME_LENGTH_MESSAGE,
  KINDS,
  VERSION,
  type Kind,
  type KindNames,
} from './kinds.js';
import { PRUNE_ANNOTATION, PRUNE_DISABLED } from './marks.js';
import { KIND_SCHEMAS } from './objects.js';

/** The CustomResourceDefinitions of our kinds, generated from the zod schemas. */

// Type aliases rather than interfaces, so that a CRD is also a KubeObject (src/kube).
export type CustomResourceDefinition = {
  apiVersion: 'apiextensions.k8s.io/v1';
  kind: 'CustomResourceDefinition';
  metadata: { name: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  spec: {
    group: string;
    names: {
      kind: string;
      listKind: string;
      plural: string;
      singular: string;
      shortNames: string[];
      categories: string[];
    };
    scope: 'Namespaced';
    versions: CustomResourceDefinitionVersion[];
  };
};

export type CustomResourceDefinitionVersion = {
  name: string;
  served: boolean;
  storage: boolean;
  subresources?: { status: Record<string, never> };
  additionalPrinterColumns: { name: string; type: string; jsonPath: string; description?: string; priority?: number }[];
  schema: { openAPIV3Schema: JSONSchemaProps };
};

const DESCRIPTIONS: Record<Kind, string> = {
  Sync: 'Sync applies a set of manifests to the cluster it lives in.',
  RemoteSync: 'RemoteSync applies a set of manifests directly to a remote cluster.',
  ProxySync: 'ProxySync creates and maintains a Sync inside a remote cluster, and reflects its status back.',
  FleetSync: 'FleetSync makes one ProxySync or RemoteSync per selected cluster of its namespace, and counts them.',
};

const READY = '.status.conditions[?(@.type=="Ready")]';

const PRINTER_COLUMNS: CustomResourceDefinitionVersion['additionalPrinterColumns'] = [
  { name: 'Ready', type: 'string', jsonPath: `${READY}.status` },
  { name: 'Status', type: 'string', jsonPath: `${READY}.message` },
  // In -o wide only: the digest is in the Status message too, and the table stayed too wide to read.
  { name: 'Revision', type: 'string', jsonPath: '.status.lastAppliedRevision', priority: 1 },
  { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
];

/** RemoteSync and ProxySync also show their cluster: a Cluster API cluster, or a kubeconfig Secret. */
const CLUSTER_COLUMNS: CustomResourceDefinitionVersion['additionalPrinterColumns'] = [
  { name: 'Cluster', type: 'string', jsonPath: '.spec.clusterRef.name', description: 'the Cluster API cluster' },
  { name: 'Kubeconfig', type: 'string', jsonPath: '.spec.kubeConfig.secretRef.name', description: 'the Secret holding the kubeconfig' },
];

const FLEET_COLUMNS: CustomResourceDefinitionVersion['additionalPrinterColumns'] = [
  { name: 'Ready', type: 'string', jsonPath: `${READY}.status` },
  { name: 'Phase', type: 'string', jsonPath: '.status.phase' },
  { name: 'Clusters', type: 'string', jsonPath: '.status.readyClusters', description: 'ready/selected' },
  { name: 'Status', type: 'string', jsonPath: `${READY}.message`, priority: 1 },
  { name: 'Revision', type: 'string', jsonPath: '.status.currentRevision', priority: 1 },
  { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
];

function printerColumns(kind: Kind): CustomResourceDefinitionVersion['additionalPrinterColumns'] {
  if (kind === 'FleetSync') return FLEET_COLUMNS;
  if (kind === 'Sync') return PRINTER_COLUMNS;
  // Before Age, which kubectl shows last.
  return [...PRINTER_COLUMNS.slice(0, -1), ...CLUSTER_COLUMNS, ...PRINTER_COLUMNS.slice(-1)];
}

/** The whole object's schema: apiVersion, kind, metadata, spec (required) and status. */
export function openAPIV3Schema(kind: Kind): JSONSchemaProps {
  const { spec, status } = KIND_SCHEMAS[kind];
  const specSchema = structuralSchema(spec);
  // A FleetSync's template may hold `${name}` where a rule wants a name or a duration: checked per cluster, substituted.
  if (kind === 'FleetSync' && specSchema.properties?.template) specSchema.properties.template = tolerateReferences(specSchema.properties.template);
  return {
    type: 'object',
    description: DESCRIPTIONS[kind],
    properties: {
      apiVersion: { type: 'string' },
      kind: { type: 'string' },
      metadata: { type: 'object' },
      spec: specSchema,
      status: structuralSchema(status),
    },
    required: ['spec'],
    ...celRule(`self.metadata.name.size() <= ${MAX_NAME_LENGTH}`, NAME_LENGTH_MESSAGE),
  };
}

export function customResourceDefinition(kind: Kind): CustomResourceDefinition {
  return definition(KIND_NAMES[kind], [CATEGORY], {
    name: VERSION,
    served: true,
    storage: true,
    subresources: { status: {} },
    additionalPrinterColumns: printerColumns(kind),
    schema: { openAPIV3Schema: openAPIV3Schema(kind) },
  });
}

/**
 * RolloutApproval's CRD: no status, no category (`kubectl get syncprims`
 * lists the syncs); who approved what and when, as printer columns.
 */
function rolloutApprovalDefinition(): CustomResourceDefinition {
  const properties = { apiVersion: { type: 'string' }, kind: { type: 'string' }, metadata: { type: 'object' }, spec: structuralSchema(rolloutApprovalSpecSchema) };
  return definition(APPROVAL_NAMES, [], {
    name: VERSION,
    served: true,
    storage: true,
    additionalPrinterColumns: [
      { name: 'FleetSync', type: 'string', jsonPath: '.spec.fleetSync' },
      { name: 'Wave', type: 'string', jsonPath: '.spec.wave' },
      { name: 'Revision', type: 'string', jsonPath: '.spec.revision' },
      { name: 'Approver', type: 'string', jsonPath: '.spec.approver' },
      { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
    ],
    schema: {
      openAPIV3Schema: {
        type: 'object',
        description: "RolloutApproval approves one wave of a FleetSync's rollout of one revision; spec.approver is its creator.",
        properties,
        required: ['spec'],
      },
    },
  });
}

/** A namespaced CRD of the group, of one version. */
function definition(
  names: Pick<KindNames, 'listKind' | 'plural' | 'singular' | 'shortName'> & { kind: string },
  categories: string[],
  version: CustomResourceDefinitionVersion,
): CustomResourceDefinition {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    // Never pruned: deleting the Sync that installed them (bootstrap) must not delete every sync of their kind.
    metadata: { name: `${names.plural}.${GROUP}`, annotations: { [PRUNE_ANNOTATION]: PRUNE_DISABLED } },
    spec: {
      group: GROUP,
      names: { kind: names.kind, listKind: names.listKind, plural: names.plural, singular: names.singular, shortNames: [names.shortName], categories },
      scope: 'Namespaced',
      versions: [version],
    },
  };
}

/** The five CRDs: Sync, RemoteSync, ProxySync, FleetSync, and RolloutApproval. */
export function customResourceDefinitions(): CustomResourceDefinition[] {
  return [...KINDS.map(customResourceDefinition), rolloutApprovalDefinition()];
}
