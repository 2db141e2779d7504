// What a ProxySync wants in its remote cluster and what it reads back: the
// remote Sync from the template, the mark for related objects, and when the
// remote status may speak for what we gave it.
import { describe, expect, test } from '@jest/globals';
import type { ProxySyncSpec } from '../../src/api/objects.js';
import {
  contains,
  copiesDigest,
  desiredRemoteSync,
  relatedCopy,
  relatedRefs,
  remoteLocation,
  remoteMark,
  carriesAll,
  remoteWriter,
  tenancyProblem,
} from '../../src/proxy/remote-sync.js';
import { mirroredStatus } from '../../src/controllers/proxysync-status.js';
import { MAX_REMOTE_MESSAGE, MAX_REMOTE_REVISION, remoteReason, remoteStatusOf } from '../../src/proxy/remote-status.js';
import type { KubeObject } from '../../src/kube/resources.js';

const proxy: KubeObject = { apiVersion: 'syncprims.dev/v1alpha1', kind: 'ProxySync', metadata: { name: 'app', namespace: 'team' } };
const spec = (template: Partial<ProxySyncSpec['template']> = {}): ProxySyncSpec =>
  ({ clusterRef: { name: 'edge' }, template: { spec: { source: { configMap: { name: 'manifests' } } }, ...template } }) as ProxySyncSpec;
const marks = { 'syncprims.dev/owner-kind': 'ProxySync' };

describe('related objects', () => {
  test("the source's and the chart's valuesFrom, each once, with the field naming it and whether it may be missing", () => {
    const template = {
      spec: {
        source: { helmRepository: { url: 'https://charts.test', chart: 'web', secretRef: { name: 'repo-auth' } } },
        helm: { valuesFrom: [{ kind: 'ConfigMap', name: 'base' }, { kind: 'Secret', name: 'repo-auth' }, { kind: 'Secret', name: 'extra', optional: true }] },
      },
    } as unknown as ProxySyncSpec['template'];
    expect(relatedRefs(spec(template))).toEqual([
      { kind: 'Secret', name: 'repo-auth', field: 'spec.template.spec.source.helmRepository.secretRef' },
      { kind: 'ConfigMap', name: 'base', field: 'spec.template.spec.helm.valuesFrom[0]', optional: undefined },
      { kind: 'Secret', name: 'extra', field: 'spec.template.spec.helm.valuesFrom[2]', optional: true },
    ]);
  });

  test("a git source's credentials and CA, an oci source's credentials, CA and cosign keys, each Secret once; a webhook token is not copied", () => {
    const git = { spec: { source: { git: { url: 'ssh://git@git.test/org/apps.git', secretRef: { name: 'ssh-creds' }, caSecretRef: { name: 'git-ca' }, webhookSecretRef: { name: 'hook' } } } } };
    expect(relatedRefs(spec(git as unknown as ProxySyncSpec['template']))).toEqual([
      { kind: 'Secret', name: 'ssh-creds', field: 'spec.template.spec.source.git.secretRef' },
      { kind: 'Secret', name: 'git-ca', field: 'spec.template.spec.source.git.caSecretRef' },
    ]);
    const oci = {
      spec: {
        source: { oci: { url: 'oci://registry.test/org/app', secretRef: { name: 'pull' }, caSecretRef: { name: 'pull' }, verify: { provider: 'cosign', secretRef: { name: 'cosign-keys' } } } },
        helm: { valuesFrom: [{ kind: 'Secret', name: 'cosign-keys' }, { kind: 'ConfigMap', name: 'pull' }] },
      },
    };
    expect(relatedRefs(spec(oci as unknown as ProxySyncSpec['template']))).toEqual([
      { kind: 'Secret', name: 'pull', field: 'spec.template.spec.source.oci.secretRef' },
      { kind: 'Secret', name: 'cosign-keys', field: 'spec.template.spec.source.oci.verify.secretRef' },
      { kind: 'ConfigMap', name: 'pull', field: 'spec.template.spec.helm.valuesFrom[1]', optional: undefined },
    ]);
  });
});

describe('the remote Sync', () => {
  test('is named and placed after the ProxySync unless the template says otherwise', () => {
    expect(remoteLocation(proxy, spec())).toEqual({ namespace: 'team', name: 'app' });
    expect(remoteLocation(proxy, spec({ metadata: { name: 'x', namespace: 'y' } }))).toEqual({ namespace: 'y', name: 'x' });
  });

  test('carries the template, our marks and the mark to echo', () => {
    const s = desiredRemoteSync(proxy, spec({ metadata: { labels: { team: 'a' } } }), 'mgmt-id', 'syncprims:abc');
    expect(s.metadata).toEqual({
      name: 'app',
      namespace: 'team',
      labels: {
        team: 'a',
        'syncprims.dev/owner-kind': 'ProxySync',
        'syncprims.dev/owner-namespace': 'team',
        'syncprims.dev/owner-name': 'app',
        'syncprims.dev/origin': 'mgmt-id',
      },
      annotations: { 'syncprims.dev/reconcile-requested-at': 'syncprims:abc' },
    });
    expect(s.spec).toEqual({ source: { configMap: { name: 'manifests' } } });
  });

  test('matches a live one that has every field the template sets, whatever else it has', () => {
    const desired = desiredRemoteSync(proxy, spec(), 'id', undefined);
    const live = { ...desired, metadata: { ...desired.metadata, generation: 3 }, spec: { ...(desired.spec as Record<string, unknown>), prune: true, interval: '10m' } };
    expect(carriesAll(live, desired)).toBe(true);
    const edited = { ...live, spec: { ...live.spec, source: { configMap: { name: 'other' } } } } as KubeObject;
    expect(carriesAll(edited, desired)).toBe(false);
    expect(carriesAll(undefined, desired)).toBe(false);
  });

  test('contains compares arrays element by element and objects by the keys wanted', () => {
    expect(contains({ a: [{ x: 1, y: 2 }], b: 1 }, { a: [{ x: 1 }] })).toBe(true);
    expect(contains({ a: [{ x: 1 }, { x: 2 }] }, { a: [{ x: 1 }] })).toBe(false);
    expect(contains({ a: '1' }, { a: 1 })).toBe(false);
  });
});

describe('the related objects copied beside the remote Sync', () => {
  test('are what the source names, a Helm repository\'s Secrets and a chart\'s valuesFrom, each once', () => {
    const chart = spec({
      spec: {
        source: { helmRepository: { url: 'https://charts.example/', chart: 'web', caSecretRef: { name: 'repo-ca' }, secretRef: { name: 'repo-login' } } },
        helm: { valuesFrom: [{ kind: 'ConfigMap', name: 'web-values' }, { kind: 'Secret', name: 'web-db', key: 'password', targetPath: 'db.password' }, { kind: 'Secret', name: 'repo-login', key: 'x' }] },
      },
    } as Partial<ProxySyncSpec['template']>);
    expect(relatedRefs(chart)).toEqual([
      { kind: 'Secret', name: 'repo-ca', field: 'spec.template.spec.source.helmRepository.caSecretRef' },
      { kind: 'Secret', name: 'repo-login', field: 'spec.template.spec.source.helmRepository.secretRef' },
      { kind: 'ConfigMap', name: 'web-values', field: 'spec.template.spec.helm.valuesFrom[0]' },
      { kind: 'Secret', name: 'web-db', field: 'spec.template.spec.helm.valuesFrom[1]' },
    ]);
    expect(relatedRefs(spec())).toEqual([{ kind: 'ConfigMap', name: 'manifests', field: 'spec.template.spec.source.configMap' }]);
  });
});

describe('the mark of related objects', () => {
  test('changes with their content and with a reconcile request, and is absent with neither', () => {
    const copy = (value: string): KubeObject => relatedCopy({ kind: 'ConfigMap', name: 'manifests', data: { 'a.yaml': value } }, 'team', marks);
    expect(copiesDigest([])).toBeUndefined();
    expect(remoteMark(undefined, undefined)).toBeUndefined();
    const a = remoteMark(copiesDigest([copy('1')]), undefined);
    expect(a).toMatch(/^syncprims:[0-9a-f]{16}$/);
    expect(remoteMark(copiesDigest([copy('1')]), undefined)).toBe(a);
    expect(remoteMark(copiesDigest([copy('2')]), undefined)).not.toBe(a);
    expect(remoteMark(copiesDigest([copy('1')]), 'now')).not.toBe(a);
    expect(remoteMark(undefined, 'now')).toMatch(/^syncprims:/);
  });
});

describe('tenancy: who writes in the remote cluster, and what the multi-tenant mode refuses', () => {
  const withAccount = (serviceAccountName?: string): ProxySyncSpec => {
    const s = spec();
    return { ...s, template: { ...s.template, spec: { ...s.template.spec, ...(serviceAccountName ? { serviceAccountName } : {}) } } };
  };

  test('the writer: none (the kubeconfig identity) unless the operator impersonates; then the template account, else the default', () => {
    expect(remoteWriter(withAccount(), undefined)).toBeUndefined();
    expect(remoteWriter(withAccount('deployer'), undefined)).toBeUndefined();
    expect(remoteWriter(withAccount(), 'default')).toBe('default');
    expect(remoteWriter(withAccount('deployer'), 'default')).toBe('deployer');
  });

  test('impersonating: the remote Sync stays in the namespace of the ProxySync, and adopt is refused; without it, both are allowed', () => {
    const elsewhere = spec({ metadata: { namespace: 'team-b' } });
    expect(tenancyProblem(proxy, elsewhere, 'default')).toBe(
      'spec.template.metadata.namespace team-b: when the operator impersonates (--default-service-account default: the multi-tenant mode), a ProxySync of namespace team keeps its remote Sync in the namespace team of the remote cluster, written as its account there; the service accounts of team-b are not this namespace\'s: remove spec.template.metadata.namespace, or make the ProxySync in team-b',
    );
    expect(tenancyProblem(proxy, { ...spec(), adopt: true }, 'default')).toBe(
      'spec.adopt: true is refused when the operator impersonates (--default-service-account default: the multi-tenant mode): a tenant takes over nothing in the remote cluster it did not make; remove spec.adopt (an object there without syncprims owner labels is then reported as an OwnershipConflict and left alone)',
    );
    expect(tenancyProblem(proxy, spec({ metadata: { namespace: 'team', name: 'other' } }), 'default')).toBeUndefined();
    expect(tenancyProblem(proxy, { ...spec(), adopt: false }, 'default')).toBeUndefined();
    expect(tenancyProblem(proxy, { ...elsewhere, adopt: true }, undefined)).toBeUndefined();
  });
});

describe('the mirrored status', () => {
  const live = (status: Record<string, unknown>, generation = 2, annotations?: Record<string, string>): KubeObject => ({
    apiVersion: 'syncprims.dev/v1alpha1',
    kind: 'Sync',
    metadata: { name: 'app', namespace: 'team', generation, annotations },
    status,
  });
  const readyTrue = { type: 'Ready', status: 'True', reason: 'Succeeded', message: 'applied', observedGeneration: 2, lastTransitionTime: '2026-01-01T00:00:00Z' };
  const summary = { total: 1, current: 1, inProgress: 0, failed: 0, terminating: 0, notFound: 0, unknown: 0, leastStatus: 'Current' };
  const remote = { cluster: 'edge', mark: undefined, inventory: [{ id: 'team_app_syncprims.dev_Sync', v: 'syncprims.dev/v1alpha1' }] };
  const now = new Date('2026-11-23T10:00:00Z');
  const ready = (s: { conditions?: { type: string; message?: string }[] }) => s.conditions?.find((c) => c.type === 'Ready');

  test('a remote Sync that has not observed its generation is not Ready, whatever its Ready says', () => {
    const s = mirroredStatus({}, live({ observedGeneration: 1, conditions: [readyTrue] }), remote, 5, now);
    expect(ready(s)).toMatchObject({ status: 'Unknown', reason: 'RemoteNotReady', observedGeneration: 5 });
    expect(ready(s)?.message).toContain('to observe generation 2 (observed: 1');
  });

  test('nor one that has not echoed the mark of the related objects', () => {
    const s = mirroredStatus({}, live({ observedGeneration: 2, conditions: [readyTrue], lastHandledReconcileAt: 'old' }), { ...remote, mark: 'new' }, 5, now);
    expect(ready(s)).toMatchObject({ status: 'Unknown', reason: 'RemoteNotReady' });
  });

  test('nor one changed by another manager whose correction is held back (a fight): its Ready speaks for their spec, and says who changed what', () => {
    const heldBack = { id: 'team_app_syncprims.dev_Sync', fields: ['.spec.interval', '.spec.suspend'], managers: ['fighter'] };
    const s = mirroredStatus({}, live({ observedGeneration: 2, conditions: [readyTrue] }), { ...remote, heldBack }, 5, now);
    expect(ready(s)).toMatchObject({ status: 'Unknown', reason: 'RemoteNotReady' });
    expect(ready(s)?.message).toBe(
      'the remote Sync team/app differs from the template, .spec.interval, .spec.suspend changed by fighter: it is put back when its correction, backed off while it keeps being changed (fighting), is due (see the Drifted Event)',
    );
  });

  test('once caught up, Ready, revisions and summary are mirrored, and the rest goes under remote', () => {
    const pending = [{ kind: 'Sync', name: 'db', reason: 'NotReady' }];
    const rs = { observedGeneration: 2, conditions: [readyTrue], lastAttemptedRevision: 'sha256:1', lastAppliedRevision: 'sha256:1', summary, pendingDependencies: pending };
    const s = mirroredStatus({ observedGeneration: 5 }, live(rs), remote, 5, now);
    expect(ready(s)).toMatchObject({ status: 'True', reason: 'Succeeded', message: 'applied', observedGeneration: 5 });
    expect(s).toMatchObject({ observedGeneration: 5, lastAttemptedRevision: 'sha256:1', lastAppliedRevision: 'sha256:1', summary, inventory: { entries: remote.inventory } });
    expect(s.remote).toEqual({ cluster: 'edge', namespace: 'team', name: 'app', observedGeneration: 2, pendingDependencies: pending, lastSeenAt: now.toISOString() });
    // Seen again unchanged: lastSeenAt stays, so nothing is written.
    const again = mirroredStatus(s, live(rs), remote, 5, new Date('2026-11-23T11:00:00Z'));
    expect(again.remote).toEqual(s.remote);
    expect(again.conditions).toEqual(s.conditions);
  });

  const caughtUp = { observedGeneration: 2, lastAttemptedRevision: 'sha256:1', lastAppliedRevision: 'sha256:1' };

  test('a Ready condition alone counts for nothing: one of another generation, or True with no revision applied, or another than it attempted', () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ ...caughtUp, conditions: [{ ...readyTrue, observedGeneration: 1 }] }, 'to report Ready for generation 2: its Ready condition is of generation 1 (not counted)'],
      [{ ...caughtUp, conditions: [{ ...readyTrue, observedGeneration: undefined }] }, 'its Ready condition is of generation none (not counted)'],
      [{ observedGeneration: 2, conditions: [readyTrue] }, 'it says Ready with lastAppliedRevision none and lastAttemptedRevision none (not counted'],
      [{ ...caughtUp, lastAppliedRevision: 'sha256:forged', conditions: [readyTrue] }, 'it says Ready with lastAppliedRevision sha256:forged and lastAttemptedRevision sha256:1 (not counted'],
    ];
    for (const [status, message] of cases) {
      const s = mirroredStatus({}, live(status), remote, 5, now);
      expect(ready(s)).toMatchObject({ status: 'Unknown', reason: 'RemoteNotReady', observedGeneration: 5 });
      expect(ready(s)?.message).toContain(message);
      expect(s.conditions?.find((c) => c.type === 'Stalled')).toBeUndefined();
    }
    // A failure for the generation it observed is mirrored as it is, revisions apart (a failed attempt leaves them apart).
    const failed = { ...caughtUp, lastAttemptedRevision: 'sha256:2', conditions: [{ ...readyTrue, status: 'False', reason: 'ApplyFailed', message: 'no' }] };
    expect(ready(mirroredStatus({}, live(failed), remote, 5, now))).toMatchObject({ status: 'False', reason: 'ApplyFailed', message: 'no' });
  });

  test('remote text is stripped of control sequences and bounded; fields of another shape are left out rather than copied', () => {
    const forged = {
      ...caughtUp,
      lastAttemptedRevision: 'sha256:2\x1b[2K',
      conditions: [
        { ...readyTrue, status: 'False', reason: '\x1b[1A\x1b[2K\rHealthy\x1b[32m ok', message: `line\r\x1b[2K\x1b[32mfine\x1b]0;title\x07\nnext\t${'x'.repeat(10_000)}` },
        { type: 'Stalled', status: 'True', reason: '\x1b[31m', message: 'stalled', observedGeneration: 2 },
        { type: 'Ready', status: 'Maybe', reason: 'X', message: 'a second Ready of no status' },
        { type: 'Injected', status: 'True', reason: 'X', message: 'not a condition we mirror' },
      ],
      summary: { total: 'many' },
      pendingDependencies: [{ kind: 'Sync', name: 'db', reason: 'NotReady' }, { kind: 'Sync', name: 'Bad\x1b[2K', reason: 'NotReady' }, { kind: 'Pod', name: 'p', reason: 'NotReady' }],
    };
    const s = mirroredStatus({}, live(forged), remote, 5, now);
    const r = ready(s) as unknown as { reason: string; message: string };
    expect(r.reason).toBe('Healthyok');
    expect(r.message.startsWith('linefine next xxx')).toBe(true);
    expect(r.message.length).toBeLessThanOrEqual(MAX_REMOTE_MESSAGE);
    expect(r.message).toMatch(/ \(cut: 10,014 characters in all\)$/);
    expect(s.conditions?.find((c) => c.type === 'Stalled')).toMatchObject({ status: 'True', reason: 'Unknown', message: 'stalled' });
    expect(s.conditions?.map((c) => c.type).sort()).toEqual(['Ready', 'Stalled']);
    expect(s.lastAttemptedRevision).toBe('sha256:2');
    const strings = (v: unknown): string[] => (typeof v === 'string' ? [v] : v !== null && typeof v === 'object' ? Object.values(v).flatMap(strings) : []);
    // eslint-disable-next-line no-control-regex -- what must not be there
    expect(strings(s).filter((t) => /[\u0000-\u001f\u007f-\u009f]/.test(t))).toEqual([]);
    expect(s.summary).toBeUndefined();
    expect((s.remote as { pendingDependencies?: unknown[] }).pendingDependencies).toEqual([{ kind: 'Sync', name: 'db', reason: 'NotReady' }]);
    expect(remoteReason('x'.repeat(1000))).toHaveLength(128);
    expect(remoteReason('\x1b[2K')).toBe('Unknown');
    expect(remoteStatusOf(live({ ...caughtUp, lastAppliedRevision: 'r'.repeat(100_000) })).lastAppliedRevision!.length).toBeLessThanOrEqual(MAX_REMOTE_REVISION);
    expect(remoteStatusOf(live({ observedGeneration: '2', conditions: 'x' }))).toMatchObject({ observedGeneration: undefined, conditions: [] });
  });
});
