import { describe, expect, test } from '@jest/globals';
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { parseAllDocuments } from 'yaml';
import { configFiles } from '../../src/cli/install/config-files.js';
import { UsageError } from '../../src/cli/errors.js';
import { installManifests, operatorArgs } from '../../src/cli/install/install-manifests.js';
import { installOptions } from '../../src/cli/install/install-run.js';
import type { KubeObject } from '../../src/kube/resources.js';
import { LOCAL, ROOT } from '../support/controlplane.js';

const key = (o: KubeObject) => `${o.kind}/${o.metadata.namespace ?? ''}/${o.metadata.name}`;
const byKey = (objects: KubeObject[]) => new Map(objects.map((o) => [key(o), o]));
interface Container {
  image: string;
  args: string[];
  livenessProbe: { httpGet: unknown };
  readinessProbe: { httpGet: unknown };
  resources: { requests: unknown };
  securityContext: unknown;
}
type Deployment = KubeObject & { spec: { replicas: number; template: { spec: { securityContext: unknown; containers: [Container] } } } };

describe('config/', () => {
  test.each(configFiles().map((f) => [f.file, f.text]))('config/%s is up to date', async (file, expected) => {
    const actual = await readFile(path.join(ROOT, 'config', file), 'utf8').catch(() => '(missing)');
    if (actual !== expected) throw new Error(`config/${file} differs from what src/cli/install/install-manifests.ts generates: run \`make crds\` and check the result in`);
  });

  test('kubectl kustomize config/ gives exactly what syncprims install prints', async () => {
    const { stdout } = await promisify(execFile)(path.join(LOCAL, 'bin', 'kubectl'), ['kustomize', path.join(ROOT, 'config')], { maxBuffer: 16 << 20 });
    const built = parseAllDocuments(stdout).map((d) => d.toJS() as KubeObject);
    const want = installManifests();
    expect([...byKey(built).keys()].sort()).toEqual([...byKey(want).keys()].sort());
    for (const [k, obj] of byKey(want)) expect(byKey(built).get(k)).toEqual(obj);
  });
});

describe('the manifests', () => {
  test('the CRDs and the namespace are never pruned; everything namespaced is in the operator namespace', () => {
    const objects = installManifests({ namespace: 'platform' });
    const kept = objects.filter((o) => o.metadata.annotations?.['syncprims.dev/prune'] === 'disabled').map(key);
    expect(kept.sort()).toEqual([
      'CustomResourceDefinition//fleetsyncs.syncprims.dev',
      'CustomResourceDefinition//proxysyncs.syncprims.dev',
      'CustomResourceDefinition//remotesyncs.syncprims.dev',
      'CustomResourceDefinition//rolloutapprovals.syncprims.dev',
      'CustomResourceDefinition//syncs.syncprims.dev',
      'Namespace//platform',
      'ValidatingAdmissionPolicy//rolloutapprovals.syncprims.dev',
      'ValidatingAdmissionPolicyBinding//rolloutapprovals.syncprims.dev',
    ]);
    const namespaced = objects.filter((o) => o.metadata.namespace !== undefined);
    expect(new Set(namespaced.map((o) => o.metadata.namespace))).toEqual(new Set(['platform']));
    expect(namespaced.map((o) => o.kind).sort()).toEqual(['Deployment', 'Role', 'RoleBinding', 'Service', 'ServiceAccount']);
    // Every binding names the operator's account in that namespace.
    for (const b of objects.filter((o) => o.kind.endsWith('RoleBinding'))) {
      expect((b as unknown as { subjects: unknown[] }).subjects).toEqual([{ kind: 'ServiceAccount', name: 'syncprims-operator', namespace: 'platform' }]);
    }
  });

  test('the Deployment: two replicas electing a leader, probes, requests, non-root, read-only root filesystem', () => {
    const d = installManifests({ image: 'registry.example/syncprims:v9', clusterId: 'mgmt', defaultServiceAccount: 'tenant' }).find(
      (o) => o.kind === 'Deployment',
    ) as Deployment;
    expect(d.spec.replicas).toBe(2);
    const pod = d.spec.template.spec;
    expect(pod.securityContext).toMatchObject({ runAsNonRoot: true });
    const [c] = pod.containers;
    expect(c.image).toBe('registry.example/syncprims:v9');
    expect(c.args).toEqual(operatorArgs('syncprims-system', { clusterId: 'mgmt', defaultServiceAccount: 'tenant' }));
    expect(c.args).toEqual(expect.arrayContaining(['run', '--leader-elect', '--leader-election-namespace=syncprims-system', '--cluster-id=mgmt', '--default-service-account=tenant']));
    expect(c.livenessProbe.httpGet).toEqual({ path: '/healthz', port: 'health' });
    expect(c.readinessProbe.httpGet).toEqual({ path: '/readyz', port: 'health' });
    expect(c.resources.requests).toEqual({ cpu: expect.any(String), memory: expect.any(String) });
    expect(c.securityContext).toMatchObject({ readOnlyRootFilesystem: true, allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } });
    // Without the options, the flags are left to the operator's defaults.
    const plain = installManifests().find((o) => o.kind === 'Deployment') as Deployment;
    expect(plain.spec.template.spec.containers[0].args.some((a) => a.startsWith('--cluster-id') || a.startsWith('--default-service-account'))).toBe(false);
  });
});

describe('--multi-tenant', () => {
  type Rule = { apiGroups?: string[]; resources?: string[]; verbs: string[] };
  const rulesOf = (o: KubeObject) => (o as unknown as { rules: Rule[] }).rules;
  const argsOf = (objects: KubeObject[]) => (objects.find((o) => o.kind === 'Deployment') as Deployment).spec.template.spec.containers[0].args;
  const RBAC = ['ClusterRole', 'ClusterRoleBinding', 'Role', 'RoleBinding'];

  test('changes the Deployment\'s args and the RBAC, nothing else', () => {
    const plain = byKey(installManifests({ namespace: 'platform' }));
    const locked = byKey(installManifests({ namespace: 'platform', multiTenant: true }));
    for (const [k, obj] of locked) {
      if (RBAC.includes(obj.kind)) continue;
      if (obj.kind !== 'Deployment') expect(obj).toEqual(plain.get(k));
    }
    expect([...locked.values()].filter((o) => !RBAC.includes(o.kind)).map(key)).toEqual([...plain.values()].filter((o) => !RBAC.includes(o.kind)).map(key));
    const deployment = locked.get('Deployment/platform/syncprims-operator') as Deployment;
    const args = argsOf([deployment]);
    expect(args).toEqual([...argsOf([...plain.values()]), '--default-service-account=default']);
    // Everything of the Deployment but the args is as it was.
    const withArgs = (d: Deployment, a: string[]) => ({ ...d, spec: { ...d.spec, template: { ...d.spec.template, spec: { ...d.spec.template.spec, containers: [{ ...d.spec.template.spec.containers[0], args: a }] } } } });
    expect(withArgs(deployment, [])).toEqual(withArgs(plain.get('Deployment/platform/syncprims-operator') as Deployment, []));
    // Another account than `default` when named.
    expect(argsOf(installManifests({ multiTenant: true, defaultServiceAccount: 'deployer' }))).toContain('--default-service-account=deployer');
  });

  test('the operator\'s account is bound to nothing that writes a kind syncs apply; it reads every kind', () => {
    const objects = installManifests({ multiTenant: true });
    const bound = objects.filter((o) => o.kind.endsWith('RoleBinding')).map((b) => (b as unknown as { roleRef: { name: string } }).roleRef.name);
    expect(bound.sort()).toEqual(['syncprims-operator', 'syncprims-operator-leases', 'syncprims-read']);
    const roles = objects.filter((o) => o.kind === 'ClusterRole' || o.kind === 'Role');
    expect(roles.map((r) => r.metadata.name).sort()).toEqual(bound.sort());
    // What it may write, resource by resource: its own kinds, Events, Leases (in its namespace); and impersonate accounts.
    const writes = new Set<string>();
    for (const role of roles) {
      for (const rule of rulesOf(role)) {
        const verbs = rule.verbs.filter((v) => !['get', 'list', 'watch'].includes(v));
        for (const resource of verbs.length > 0 ? (rule.resources ?? []) : []) writes.add(`${role.kind}:${resource}:${verbs.join(',')}`);
      }
    }
    expect([...writes].sort()).toEqual([
      'ClusterRole:controllerrevisions:create,patch,delete',
      'ClusterRole:events:create,patch',
      'ClusterRole:fleetsyncs/finalizers:update',
      'ClusterRole:fleetsyncs/status:update,patch',
      'ClusterRole:fleetsyncs:update,patch',
      'ClusterRole:proxysyncs/finalizers:update',
      'ClusterRole:proxysyncs/status:update,patch',
      // A FleetSync's children.
      'ClusterRole:proxysyncs:create,update,patch,delete',
      'ClusterRole:remotesyncs/finalizers:update',
      'ClusterRole:remotesyncs/status:update,patch',
      'ClusterRole:remotesyncs:create,update,patch,delete',
      'ClusterRole:serviceaccounts:impersonate',
      'ClusterRole:syncs/finalizers:update',
      'ClusterRole:syncs/status:update,patch',
      'ClusterRole:syncs:update,patch',
      'Role:leases:create,update,patch,delete',
    ]);
    expect(rulesOf(roles.find((r) => r.metadata.name === 'syncprims-read')!)).toEqual([{ apiGroups: ['*'], resources: ['*'], verbs: ['get', 'list', 'watch'] }]);
    // The default mode is as it was: the apply-everything role, bound to the operator.
    expect(installManifests().some((o) => o.kind === 'ClusterRoleBinding' && o.metadata.name === 'syncprims-apply')).toBe(true);
  });
});

describe('--replicas', () => {
  type Rule = { apiGroups?: string[]; resources?: string[]; verbs: string[] };
  const deploymentOf = (objects: KubeObject[]) => objects.find((o) => o.kind === 'Deployment') as Deployment;

  test('N replicas with --shards instead of --leader-elect (1 too); the Leases in the operator namespace; nothing else changes', () => {
    const plain = installManifests({ namespace: 'platform', clusterId: 'mgmt' });
    for (const n of [1, 3, 10]) {
      const sharded = installManifests({ namespace: 'platform', clusterId: 'mgmt', replicas: n });
      const d = deploymentOf(sharded);
      expect(d.spec.replicas).toBe(n);
      const args = d.spec.template.spec.containers[0].args;
      expect(args).toEqual(['run', '--shards', '--leader-election-namespace=platform', '--metrics-addr=:8080', '--health-addr=:8081', '--cluster-id=mgmt']);
      expect(args).toEqual(operatorArgs('platform', { clusterId: 'mgmt', replicas: n }));
      // Everything else, the Deployment's other fields included, is as without --replicas.
      const withoutRun = (o: KubeObject) => {
        if (o.kind !== 'Deployment') return o;
        const copy = structuredClone(o) as Deployment;
        copy.spec.replicas = 0;
        copy.spec.template.spec.containers[0].args = [];
        return copy;
      };
      expect(sharded.map(withoutRun)).toEqual(plain.map(withoutRun));
    }
    const elected = deploymentOf(plain);
    expect(elected.spec.replicas).toBe(2);
    expect(elected.spec.template.spec.containers[0].args.slice(0, 2)).toEqual(['run', '--leader-elect']);
    expect(elected.spec.template.spec.containers[0].args).not.toContain('--shards');
  });

  test("the operator's Lease Role in its namespace grants what sharding needs: get, list, watch, create, update, delete", () => {
    for (const multiTenant of [false, true]) {
      const objects = installManifests({ namespace: 'platform', replicas: 3, multiTenant });
      const role = objects.find((o) => o.kind === 'Role' && o.metadata.name === 'syncprims-operator-leases')!;
      expect(role.metadata.namespace).toBe('platform');
      const verbs = (role as unknown as { rules: Rule[] }).rules
        .filter((r) => r.apiGroups?.includes('coordination.k8s.io') && r.resources?.includes('leases'))
        .flatMap((r) => r.verbs);
      expect(verbs).toEqual(expect.arrayContaining(['get', 'list', 'watch', 'create', 'update', 'delete']));
      const binding = objects.find((o) => o.kind === 'RoleBinding' && o.metadata.name === 'syncprims-operator-leases') as unknown as { roleRef: { name: string }; subjects: unknown[] };
      expect(binding.roleRef.name).toBe('syncprims-operator-leases');
      expect(binding.subjects).toEqual([{ kind: 'ServiceAccount', name: 'syncprims-operator', namespace: 'platform' }]);
    }
  });

  test('the flag: a whole number, at least 1; not given: as before', () => {
    expect(installOptions({ output: 'yaml', replicas: '3' }).replicas).toBe(3);
    expect(installOptions({ output: 'yaml' })).not.toHaveProperty('replicas');
    for (const bad of ['0', '-1', '1.5', 'three', '', ' 2']) {
      expect(() => installOptions({ output: 'yaml', replicas: bad })).toThrow(new UsageError(`--replicas ${bad}: want a whole number of replicas, at least 1`));
    }
  });
});
