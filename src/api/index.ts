// The syncprims API (group syncprims.dev, version v1alpha1): constants, zod schemas, types, CRDs.
export * from './kinds.js';
export * from './marks.js';
export * from './conditions.js';
export * from './duration.js';
export * from './source.js';
export * from './helm.js';
export * from './sync-spec.js';
export * from './cluster.js';
export * from './fleet.js';
export * from './approval.js';
export * from './status.js';
export * from './objects.js';
export * from './validate.js';
export * from './crds.js';
export { CEL_KEY, type CelRule } from './cel.js';
export { structuralSchema, type JSONSchemaProps } from './json-schema.js';
