import { z } from 'zod';
import { celRule, matchingString } from './cel.js';
import { GROUP, MAX_NAME_LENGTH, VERSION } from './kinds.js';
import { PRUNE_ANNOTATION, PRUNE_DISABLED } from './marks.js';
import { objectName } from './names.js';

/**
 * RolloutApproval (docs/adr/0010-rollout-approvals.md): one person's approval
 * of one wave of one FleetSync's rollout of one revision. A right of its own
 * (`create rolloutapprovals`), apart from editing the FleetSync; its
 * `spec.approver` is the user who created it, as the ValidatingAdmissionPolicy
 * below makes sure, and the spec never changes once created.
 */

export const APPROVAL_KIND = 'RolloutApproval';
export const APPROVAL_NAMES = {
  kind: APPROVAL_KIND,
  listKind: 'RolloutApprovalList',
  plural: 'rolloutapprovals',
  singular: 'rolloutapproval',
  shortName: 'rap',
} as const;

/** Where RolloutApprovals live in the API (a ResourceInfo of src/kube). */
export const APPROVAL_RESOURCE = { group: GROUP, version: VERSION, kind: APPROVAL_KIND, resource: APPROVAL_NAMES.plural, namespaced: true } as const;

/** A template revision: the 16 hex digits of `status.updateRevision`. */
const REVISION = '^[0-9a-f]{16}$';
const REVISION_MESSAGE = "must be a FleetSync's template revision (16 hex digits, as status.updateRevision says it)";
/** Usernames are the authenticator's: long OIDC subjects fit. */
const MAX_USERNAME = 512;

export const IMMUTABLE_MESSAGE = 'a RolloutApproval does not change once made: delete it (that withdraws the approval) and create another';

export const rolloutApprovalSpecSchema = z
  .object({
    fleetSync: objectName(MAX_NAME_LENGTH).describe('the FleetSync of this namespace whose rollout is approved'),
    revision: matchingString(REVISION, REVISION_MESSAGE, 16).describe('the template revision approved (status.updateRevision): an approval of another revision approves nothing'),
    wave: objectName(MAX_NAME_LENGTH).describe('the wave approved (a wave with approval: true)'),
    approver: z
      .string()
      .min(1)
      .max(MAX_USERNAME)
      .describe('who approves: must be the user who creates the object (the API server checks it: ValidatingAdmissionPolicy rolloutapprovals.syncprims.dev)'),
  })
  .meta(celRule('self == oldSelf', IMMUTABLE_MESSAGE));

export type RolloutApprovalSpec = z.infer<typeof rolloutApprovalSpecSchema>;

/** Where ValidatingAdmissionPolicies are served (GA since Kubernetes 1.30). */
export const ADMISSION_API = 'admissionregistration.k8s.io/v1';
/** The name of both the ValidatingAdmissionPolicy and its binding. */
export const APPROVER_POLICY = `${APPROVAL_NAMES.plural}.${GROUP}`;
export const APPROVER_MESSAGE = 'spec.approver must be the user creating the RolloutApproval';
/** The policy's check, which the operator also looks for before it trusts an approver. */
export const APPROVER_EXPRESSION = 'object.spec.approver == request.userInfo.username';

/**
 * The admission policy that makes `spec.approver` a record of the API
 * server's, not of the author's: on create it must equal the requesting user
 * (the spec is immutable after, by the CRD's own rule). GA since Kubernetes 1.30.
 */
export function approverPolicy(): { apiVersion: string; kind: string; metadata: { name: string; annotations: Record<string, string> }; spec: Record<string, unknown> }[] {
  // Kept as the CRDs are (never pruned): while approvals can be made, their approver must be the creator.
  const metadata = { name: APPROVER_POLICY, annotations: { [PRUNE_ANNOTATION]: PRUNE_DISABLED } };
  return [
    {
      apiVersion: ADMISSION_API,
      kind: 'ValidatingAdmissionPolicy',
      metadata,
      spec: {
        failurePolicy: 'Fail',
        matchConstraints: {
          resourceRules: [{ apiGroups: [GROUP], apiVersions: ['*'], operations: ['CREATE'], resources: [APPROVAL_NAMES.plural] }],
        },
        validations: [
          {
            expression: APPROVER_EXPRESSION,
            messageExpression: `'${APPROVER_MESSAGE} (' + request.userInfo.username + '); syncprims rollout approve fills it in'`,
            reason: 'Forbidden',
          },
        ],
      },
    },
    {
      apiVersion: ADMISSION_API,
      kind: 'ValidatingAdmissionPolicyBinding',
      metadata,
      spec: { policyName: APPROVER_POLICY, validationActions: ['Deny'] },
    },
  ];
}
