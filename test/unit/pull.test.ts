// Pull mode's pure rules (docs/pull.md): where a pull cluster's assignments
// live, what an assignment makes downstream, how its status is told back in
// the assignment's generations, presence from the Lease, token renewal.
import { describe, expect, test } from '@jest/globals';
import { assignmentNamespace } from '../../src/clusters/pull-names.js';
import { pullTargetOf } from '../../src/clusters/pull-target.js';
import { renewalDue, tokenClaims, withToken } from '../../src/controllers/pull-upstream.js';
import { back } from '../../src/controllers/pull-wakes.js';
import type { KubeObject } from '../../src/kube/resources.js';
import { assignmentOf, downstreamCopy, downstreamSync, isCopyOf, targetOf, upstreamStatus } from '../../src/proxy/assignment.js';
import { offlineMessage, presenceOf } from '../../src/proxy/pull-presence.js';

const OWNER = { 'syncprims.dev/owner-kind': 'ProxySync', 'syncprims.dev/owner-namespace': 'team', 'syncprims.dev/owner-name': 'app', 'syncprims.dev/origin': 'hub' };
const pull = { cluster: 'edge-p', inventoryNamespace: 'team', namespace: assignmentNamespace('team', 'edge-p') };
const proxy: KubeObject = { apiVersion: 'syncprims.dev/v1alpha1', kind: 'ProxySync', metadata: { name: 'app', namespace: 'team' } };
const remote: KubeObject = {
  apiVersion: 'syncprims.dev/v1alpha1',
  kind: 'Sync',
  metadata: { name: 'web', namespace: 'shop', labels: { ...OWNER, tier: 'a' }, annotations: { 'syncprims.dev/reconcile-requested-at': 'mark' } },
  spec: { source: { inline: [] } },
};
const ORDER = ['syncprims.dev/owner-kind', 'syncprims.dev/owner-namespace', 'syncprims.dev/owner-name', 'syncprims.dev/origin'];

describe('names and targets', () => {
  test('the assignments namespace: syncprims-pull-<namespace>-<cluster>, bounded to a DNS label, distinct when long', () => {
    expect(assignmentNamespace('team', 'edge-p')).toBe('syncprims-pull-team-edge-p');
    const a = assignmentNamespace('a'.repeat(40), 'x'.repeat(30));
    const b = assignmentNamespace('a'.repeat(40), 'y'.repeat(30));
    expect(a.length).toBeLessThanOrEqual(63);
    expect(a).not.toBe(b);
  });

  test('a Secret labelled cluster-mode pull is a pull target (its name from the cluster label; revoked from its annotation); any other is not', () => {
    const secret = (labels: Record<string, string>): KubeObject => ({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'edge-p-kubeconfig', namespace: 'team', labels } });
    expect(pullTargetOf(secret({ 'syncprims.dev/cluster': 'edge-p', 'syncprims.dev/cluster-mode': 'pull' }), { namespace: 'team', name: 'edge-p-kubeconfig' })).toEqual(pull);
    expect(pullTargetOf(secret({ 'syncprims.dev/cluster-mode': 'pull', 'syncprims.dev/revoked-at': '1796215429' }), { namespace: 'team', name: 'edge-p-kubeconfig' })).toEqual({ ...pull, revokedAt: '2026-12-02T12:43:49Z' });
    expect(pullTargetOf(secret({ 'syncprims.dev/cluster-mode': 'pull', 'syncprims.dev/revoked-at': 'soon' }), { namespace: 'team', name: 'edge-p-kubeconfig' })).toEqual(pull);
    expect(pullTargetOf(secret({ 'syncprims.dev/cluster': 'edge-p' }), { namespace: 'team', name: 'edge-p-kubeconfig' })).toBeUndefined();
    expect(pullTargetOf(undefined, { namespace: 'team', name: 'edge-p-kubeconfig' })).toBeUndefined();
  });
});

describe('an assignment', () => {
  const made = assignmentOf(remote, proxy, pull);
  const assignment: KubeObject = { ...made, metadata: { ...made.metadata, generation: 4 } };

  test('is the remote Sync in the assignments namespace, named after the ProxySync, marked as a carrier, saying where it goes', () => {
    expect(assignment.metadata).toMatchObject({
      name: 'app',
      namespace: 'syncprims-pull-team-edge-p',
      labels: { ...OWNER, tier: 'a', 'syncprims.dev/pull-carrier': 'edge-p' },
      annotations: { 'syncprims.dev/reconcile-requested-at': 'mark', 'syncprims.dev/pull-target': 'shop/web' },
    });
    expect(assignment.spec).toEqual(remote.spec);
    expect(targetOf(assignment)).toEqual({ namespace: 'shop', name: 'web' });
  });

  test('a target that is not <namespace>/<name> is refused, naming the annotation', () => {
    for (const bad of ['', 'shop', 'shop/web/x', '../x/web', 'Shop/web', 'shop/']) {
      const a = { ...assignment, metadata: { ...assignment.metadata, annotations: { 'syncprims.dev/pull-target': bad } } };
      expect(targetOf(a)).toEqual({ problem: `annotation syncprims.dev/pull-target is ${JSON.stringify(bad)}: want <namespace>/<name> of the Sync to keep` });
    }
  });

  test('downstream: the same spec, labels and annotations without the carrier and target, marked with the assignment and its generation', () => {
    const sync = downstreamSync(assignment, { namespace: 'shop', name: 'web' });
    expect(sync.metadata).toEqual({
      namespace: 'shop',
      name: 'web',
      labels: { ...OWNER, tier: 'a', 'syncprims.dev/pull-assignment': 'app' },
      annotations: { 'syncprims.dev/reconcile-requested-at': 'mark', 'syncprims.dev/upstream-generation': '4' },
    });
    expect(sync.spec).toEqual(remote.spec);
  });

  test('its copies: those of the same owner marks; downstream with their data, in the target namespace', () => {
    const copy = { apiVersion: 'v1', kind: 'Secret', type: 'Opaque', metadata: { name: 's', namespace: pull.namespace, labels: OWNER }, data: { k: 'dg==' } } as unknown as KubeObject;
    const othersCopy = { ...copy, metadata: { ...copy.metadata, labels: { ...OWNER, 'syncprims.dev/owner-name': 'other' } } };
    expect(isCopyOf(copy, assignment, ORDER)).toBe(true);
    expect(isCopyOf(othersCopy, assignment, ORDER)).toBe(false);
    expect(isCopyOf({ ...copy, metadata: { name: 's' } }, assignment, ORDER)).toBe(false);
    expect(downstreamCopy(copy, { namespace: 'shop' }, 'app')).toEqual({
      apiVersion: 'v1',
      kind: 'Secret',
      type: 'Opaque',
      metadata: { name: 's', namespace: 'shop', labels: { ...OWNER, 'syncprims.dev/pull-assignment': 'app' } },
      data: { k: 'dg==' },
    });
  });

  test("the status told back: generations the downstream Sync observed of its current spec are the assignment's; any other is 0", () => {
    const local = (observed: number, own = 7): KubeObject => ({
      apiVersion: 'syncprims.dev/v1alpha1',
      kind: 'Sync',
      metadata: { name: 'web', generation: own, annotations: { 'syncprims.dev/upstream-generation': '4' } },
      status: { observedGeneration: observed, lastAppliedRevision: 'r', conditions: [{ type: 'Ready', status: 'True', observedGeneration: observed }] },
    });
    expect(upstreamStatus(local(7))).toEqual({ observedGeneration: 4, lastAppliedRevision: 'r', conditions: [{ type: 'Ready', status: 'True', observedGeneration: 4 }] });
    expect(upstreamStatus(local(6))).toEqual({ observedGeneration: 0, lastAppliedRevision: 'r', conditions: [{ type: 'Ready', status: 'True', observedGeneration: 0 }] });
    expect(upstreamStatus({ ...local(7), status: undefined })).toBeUndefined();
  });
});

describe('presence and credentials', () => {
  const lease = (renewTime: string | undefined, leaseDurationSeconds = 30): KubeObject => ({ apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: 'l' }, spec: { renewTime, leaseDurationSeconds } } as unknown as KubeObject);
  const t0 = Date.parse('2026-12-02T10:00:00Z');

  test('online until renewTime plus its duration; then offline, last seen at renewTime; never without a Lease', () => {
    expect(presenceOf(lease('2026-12-02T10:00:00.000000Z'), t0 + 29_000)).toEqual({ online: true, until: t0 + 30_000 });
    expect(presenceOf(lease('2026-12-02T10:00:00.000000Z'), t0 + 30_000)).toEqual({ online: false, lastSeen: '2026-12-02T10:00:00.000Z' });
    expect(presenceOf(undefined, t0)).toEqual({ online: false });
    expect(presenceOf(lease(undefined), t0)).toEqual({ online: false });
    expect(offlineMessage('edge-p', { lastSeen: '2026-12-02T10:00:00.000Z' }, t0 + 42_000)).toBe(
      'pull cluster edge-p is offline: last seen 2026-12-02T10:00:00.000Z (42 s ago); what it applied keeps running there, and it takes what changed when it connects again',
    );
    expect(offlineMessage('edge-p', {}, t0)).toContain('never seen');
  });

  test("a pull cluster's operator is back when its Lease is renewed after it lapsed, or made: a renewal in time, or a lapsed one, is not", () => {
    const at = (renewTime: string) => lease(renewTime, 10);
    const now = t0 + 15_000;
    expect(back({ type: 'added', object: at('2026-12-02T10:00:14.000000Z') }, now)).toBe(true);
    expect(back({ type: 'updated', old: at('2026-12-02T10:00:00.000000Z'), object: at('2026-12-02T10:00:14.000000Z') }, now)).toBe(true);
    expect(back({ type: 'updated', old: at('2026-12-02T10:00:10.000000Z'), object: at('2026-12-02T10:00:14.000000Z') }, now)).toBe(false);
    expect(back({ type: 'updated', old: at('2026-12-02T10:00:00.000000Z'), object: at('2026-12-02T10:00:01.000000Z') }, now)).toBe(false);
    expect(back({ type: 'deleted', object: at('2026-12-02T10:00:14.000000Z') }, now)).toBe(false);
  });

  const jwt = (claims: Record<string, unknown>): string => `h.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.s`;

  test("a service account token's claims, renewed once 60% of its life is gone; anything else is no token of ours", () => {
    const claims = tokenClaims(jwt({ iat: 1000, exp: 2000, sub: 'system:serviceaccount:syncprims-pull-team-edge-p:syncprims-pull-agent' }));
    expect(claims).toEqual({ iat: 1000, exp: 2000, namespace: 'syncprims-pull-team-edge-p', account: 'syncprims-pull-agent' });
    expect(renewalDue(claims!)).toBe(1_600_000);
    expect(tokenClaims(jwt({ iat: 1000, exp: 2000, sub: 'admin' }))).toBeUndefined();
    expect(tokenClaims('not-a-jwt')).toBeUndefined();
    expect(tokenClaims(jwt({ sub: 'system:serviceaccount:a:b' }))).toBeUndefined();
  });

  test('the bundle with a new token: only the token changes', () => {
    const bundle = 'apiVersion: v1\nkind: Config\nclusters:\n  - name: mgmt\n    cluster:\n      server: https://127.0.0.1:6441\nusers:\n  - name: syncprims-pull/edge-p\n    user:\n      token: old\ncontexts: []\n';
    expect(withToken(bundle, 'new')).toBe(bundle.replace('token: old', 'token: new'));
    expect(() => withToken('apiVersion: v1\n', 'new')).toThrow('the join bundle has no user');
  });
});

describe('syncprims join', () => {
  test("the install's objects, with the bundle in a Secret mounted read-only, the flags that use it, and a Role to update that Secret only", async () => {
    const { joinManifests } = await import('../../src/cli/join/join-manifests.js');
    const { installManifests } = await import('../../src/cli/install/install-manifests.js');
    const objects = joinManifests({ namespace: 'ops' }, 'bundle-text');
    const kinds = (list: KubeObject[]) => list.map((o) => `${o.kind}/${o.metadata.name}`);
    const plain = installManifests({ namespace: 'ops' });
    expect(kinds(objects)).toEqual([
      ...kinds(plain.slice(0, plain.findIndex((o) => o.kind === 'Deployment'))),
      'Secret/syncprims-upstream',
      'Role/syncprims-operator-upstream',
      'RoleBinding/syncprims-operator-upstream',
      ...kinds(plain.slice(plain.findIndex((o) => o.kind === 'Deployment'))),
    ]);
    const secret = objects.find((o) => o.kind === 'Secret') as unknown as { metadata: { namespace: string }; stringData: Record<string, string> };
    expect(secret).toMatchObject({ metadata: { namespace: 'ops' }, stringData: { value: 'bundle-text' } });
    expect((objects.find((o) => o.kind === 'Role' && o.metadata.name === 'syncprims-operator-upstream') as unknown as { rules: unknown[] }).rules).toEqual([{ apiGroups: [''], resources: ['secrets'], resourceNames: ['syncprims-upstream'], verbs: ['get', 'update', 'patch'] }]);
    const pod = (objects.find((o) => o.kind === 'Deployment') as unknown as { spec: { template: { spec: { containers: { args: string[]; volumeMounts: unknown[] }[]; volumes: unknown[] } } } }).spec.template.spec;
    expect(pod.containers[0]!.args.slice(-2)).toEqual(['--upstream-kubeconfig=/etc/syncprims/upstream/value', '--upstream-secret=syncprims-upstream']);
    expect(pod.containers[0]!.volumeMounts).toContainEqual({ name: 'upstream', mountPath: '/etc/syncprims/upstream', readOnly: true });
    expect(pod.volumes).toContainEqual({ name: 'upstream', secret: { secretName: 'syncprims-upstream', defaultMode: 0o400 } });
    // The install's own Deployment is left as it was.
    expect((plain.find((o) => o.kind === 'Deployment') as unknown as { spec: { template: { spec: { volumes: unknown[] } } } }).spec.template.spec.volumes).toHaveLength(1);
  });
});
