// OCI artifacts and Git over SSH through a running operator (issue 48),
// against the loopback registry of test/support/oci-registry.ts (whose front
// counts requests and can serve a tampered layer) and the SSH server of
// git-ssh-server.ts: a Flux artifact by tag (revision `<tag>@sha256:<manifest
// digest>`), by digest (`sha256:<digest>`) and by a semver range (which passes
// over a pre-release); a plain tarball layer picked by layerSelector among two,
// and a single-YAML layer copied as one file; a registry asking for
// credentials is refused without them and read with a dockerconfigjson
// Secret; a tampered layer is a SourceError with nothing applied; a cosign
// signature verified by the key of the verify Secret applies (SourceVerified
// True, naming the key's fingerprint), another key is refused (SourceVerified
// False, VerificationFailed); and a Git repository over ssh:// applies with the
// identity and known_hosts of a Secret, a wrong host key refused with nothing
// applied. Hostile trees and layers read in process: repository-hostile.test.ts;
// Git over HTTP through the operator: git-source.test.ts. Runs the fetch helper
// `make build` builds.
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { createHash, createPublicKey } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { KubeClient } from '../../src/kube/client.js';
import type { Condition } from '../../src/runtime/conditions.js';
import { repositoryTree, sourceLimits } from '../../src/source/index.js';
import { clusterClient, closeClients, ensureClusters } from '../support/controlplane.js';
import { installCrds } from '../support/crds.js';
import { createBareRepo } from '../support/git-repos.js';
import { startSshGitServer, type SshGitServer } from '../support/git-ssh-server.js';
import { useTestNamespace } from '../support/namespace.js';
import { ANNOTATION_TITLE, cosignKeyPair, dockerConfigJson, OCI_EMPTY, OCI_LAYER_TAR_GZIP, startOciRegistry, type OciRegistry } from '../support/oci-registry.js';
import { OperatorProcess } from '../support/operator.js';
import { applySync, find, readyOf, waitForReady, type SyncObject } from '../support/syncs.js';
import { tarGz } from '../support/tarball.js';

const HOME = 'mgmt';
const AUTH = { username: 'puller', password: 'registry-pass-1' };
let mgmt: KubeClient;
let op: OperatorProcess;
let registry: OciRegistry;
let locked: OciRegistry;
let ssh: SshGitServer;
let gitRoot = '';
const ns = useTestNamespace(HOME, 'oci');

const configMap = (name: string, value = 'v'): string => `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\ndata:\n  value: "${value}"\n`;
const valueIn = async (name: string): Promise<string | undefined> =>
  (await find<{ data?: Record<string, string> }>(mgmt, `/api/v1/namespaces/${ns()}/configmaps/${name}`))?.data?.value;
const createSecret = (name: string, stringData: Record<string, string>, type = 'Opaque') =>
  mgmt.request({ method: 'POST', path: `/api/v1/namespaces/${ns()}/secrets`, body: { apiVersion: 'v1', kind: 'Secret', metadata: { name }, type, stringData } });
const oci = (url: string, more: Record<string, unknown> = {}) => ({ oci: { url, insecure: true, ...more } });
const sync = (name: string, source: Record<string, unknown>, more: Record<string, unknown> = {}) =>
  applySync(mgmt, ns(), name, { wait: false, defaultNamespace: ns(), source, ...more });
const conditionOf = (s: SyncObject, type: string): Condition | undefined => s.status?.conditions?.find((c) => c.type === type);

/** Ready=False, SourceError, with nothing applied: no revision, and not `configMap` in the namespace. */
async function refused(name: string, configMapName: string): Promise<SyncObject> {
  const s = await waitForReady(mgmt, ns(), name, 'False', 'SourceError');
  expect(s.status?.lastAppliedRevision).toBeUndefined();
  expect(await valueIn(configMapName)).toBeUndefined();
  return s;
}

beforeAll(async () => {
  await ensureClusters([HOME]);
  mgmt = await clusterClient(HOME);
  gitRoot = mkdtempSync(path.join(os.tmpdir(), 'syncprims-oci-test-git-'));
  [registry, locked, ssh] = await Promise.all([startOciRegistry(), startOciRegistry({ basicAuth: AUTH }), startSshGitServer(gitRoot), installCrds(HOME)]);
  op = await OperatorProcess.start(HOME, ['--namespace', ns(), '--cluster-id', 'mgmt-oci-test']);
}, 120_000);

afterAll(async () => {
  await op?.stop('SIGTERM');
  await Promise.all([registry?.close(), locked?.close(), ssh?.close()]);
  if (gitRoot) rmSync(gitRoot, { recursive: true, force: true });
  await closeClients();
});

describe('a Sync of an OCI artifact in Flux\'s format', () => {
  test('by tag: <tag>@sha256:<manifest digest>; by digest: sha256:<digest>; by a semver range: its highest stable tag', async () => {
    const files = (name: string) => ({ 'apps/cm.yaml': configMap(name), 'README.md': 'not a manifest' });
    const [one, two, rc] = await Promise.all([
      registry.pushFluxArtifact(files('oci-tag'), { repo: 'flux/apps', tag: 'v1.0.0' }),
      registry.pushFluxArtifact(files('oci-range'), { repo: 'flux/apps', tag: 'v1.1.0' }),
      registry.pushFluxArtifact(files('oci-digest'), { repo: 'flux/apps', tag: 'v2.0.0-rc.1' }),
    ]);
    const url = registry.url('flux/apps');
    await Promise.all([
      sync('by-tag', oci(url, { ref: { tag: 'v1.0.0' } }), { paths: ['apps'] }),
      sync('by-digest', oci(url, { ref: { digest: rc.digest } }), { paths: ['apps'] }),
      sync('by-range', oci(url, { ref: { semver: '>=1.0.0' } }), { paths: ['apps'] }),
    ]);
    const revisions = await Promise.all(['by-tag', 'by-digest', 'by-range'].map(async (n) => (await waitForReady(mgmt, ns(), n, 'True')).status?.lastAppliedRevision));
    expect(revisions).toEqual([`v1.0.0@${one.digest}`, rc.digest, `v1.1.0@${two.digest}`]);
    expect(await Promise.all(['oci-tag', 'oci-digest', 'oci-range'].map(valueIn))).toEqual(['v', 'v', 'v']);
  });

  test('a tampered layer (other bytes than its digest) is a SourceError naming the digest, and nothing is applied', async () => {
    const pushed = await registry.pushTampered({ 'cm.yaml': configMap('oci-tampered') }, { repo: 'tampered', tag: 'v1' });
    await sync('tampered', oci(registry.url('tampered'), { ref: { tag: 'v1' } }));
    const s = await refused('tampered', 'oci-tampered');
    expect(readyOf(s)?.message).toContain(registry.url('tampered'));
    expect(readyOf(s)?.message).toContain(`${pushed.layerDigest} of ${registry.url('tampered')} does not match its digest`);
    expect(registry.count('tampered', 'blobs', 'GET')).toBeGreaterThan(0);
  });
});

describe('other layers', () => {
  test('a plain tarball layer is picked by layerSelector.mediaType among two; a single-YAML layer is copied as one file', async () => {
    const manifests = 'application/vnd.example.manifests.tar+gzip';
    const picked = await registry.client.pushImage('plain', 'v1', { mediaType: OCI_EMPTY, data: Buffer.from('{}') }, [
      // The first tar+gzip layer: what the default rule would take.
      { data: await tarGz([{ name: 'decoy.yaml', data: configMap('oci-decoy') }]), descriptor: { mediaType: OCI_LAYER_TAR_GZIP } },
      { data: await tarGz([{ name: 'deploy/cm.yaml', data: configMap('oci-plain') }]), descriptor: { mediaType: manifests } },
    ]);
    const yaml = 'application/vnd.example.manifest.v1+yaml';
    const copied = await registry.client.pushImage('single', 'v1', { mediaType: OCI_EMPTY, data: Buffer.from('{}') }, [
      { data: Buffer.from(`${configMap('oci-copied-1')}---\n${configMap('oci-copied-2')}`), descriptor: { mediaType: yaml, annotations: { [ANNOTATION_TITLE]: 'app.yaml' } } },
    ]);
    await Promise.all([
      sync('plain', oci(registry.url('plain'), { ref: { tag: 'v1' }, layerSelector: { mediaType: manifests } })),
      sync('copied', oci(registry.url('single'), { ref: { tag: 'v1' }, layerSelector: { mediaType: yaml, operation: 'copy' } })),
    ]);
    expect((await waitForReady(mgmt, ns(), 'plain', 'True')).status?.lastAppliedRevision).toBe(`v1@${picked.digest}`);
    expect((await waitForReady(mgmt, ns(), 'copied', 'True')).status?.lastAppliedRevision).toBe(`v1@${copied.digest}`);
    expect(await Promise.all(['oci-plain', 'oci-decoy', 'oci-copied-1', 'oci-copied-2'].map(valueIn))).toEqual(['v', undefined, 'v', 'v']);
  });
});

describe('credentials', () => {
  test('a registry that asks for them is refused without; a dockerconfigjson Secret gives them', async () => {
    await locked.pushFluxArtifact({ 'cm.yaml': configMap('oci-private', 'private') }, { repo: 'private/app', tag: 'v1' });
    const url = locked.url('private/app');
    await sync('private', oci(url, { ref: { tag: 'v1' } }));
    const without = await refused('private', 'oci-private');
    expect(readyOf(without)?.message).toContain(url);
    expect(readyOf(without)?.message).toMatch(/unauthorized|authentication/i);

    await createSecret('registry-creds', { '.dockerconfigjson': dockerConfigJson(locked.host, AUTH.username, AUTH.password) }, 'kubernetes.io/dockerconfigjson');
    await sync('private', oci(url, { ref: { tag: 'v1' }, secretRef: { name: 'registry-creds' } }));
    const ready = await waitForReady(mgmt, ns(), 'private', 'True');
    expect(ready.status?.lastAppliedRevision).toMatch(/^v1@sha256:[0-9a-f]{64}$/);
    expect(await valueIn('oci-private')).toBe('private');
    expect(JSON.stringify(ready.status)).not.toContain(AUTH.password);
  });
});

describe('cosign verification', () => {
  test('an artifact signed by the key of the verify Secret applies (SourceVerified True, naming the key); another key is refused (SourceVerified False) and nothing is applied', async () => {
    const key = cosignKeyPair();
    const other = cosignKeyPair();
    const signed = await registry.pushFluxArtifact({ 'cm.yaml': configMap('oci-signed') }, { repo: 'signed', tag: 'v1' });
    const wrong = await registry.pushFluxArtifact({ 'cm.yaml': configMap('oci-wrong-key') }, { repo: 'signed-too', tag: 'v1' });
    await Promise.all([registry.cosignSign(signed.digest, key.privateKey, { repo: 'signed' }), registry.cosignSign(wrong.digest, key.privateKey, { repo: 'signed-too' })]);
    await Promise.all([createSecret('cosign-key', { 'cosign.pub': key.publicKeyPem }), createSecret('cosign-other', { 'cosign.pub': other.publicKeyPem })]);
    const verify = (secret: string) => ({ provider: 'cosign', secretRef: { name: secret } });
    await Promise.all([
      sync('signed', oci(registry.url('signed'), { ref: { tag: 'v1' }, verify: verify('cosign-key') })),
      sync('wrong-key', oci(registry.url('signed-too'), { ref: { tag: 'v1' }, verify: verify('cosign-other') })),
    ]);

    const ready = await waitForReady(mgmt, ns(), 'signed', 'True');
    expect(ready.status?.lastAppliedRevision).toBe(`v1@${signed.digest}`);
    expect(await valueIn('oci-signed')).toBe('v');
    const refusal = await refused('wrong-key', 'oci-wrong-key');
    expect(readyOf(refusal)?.message).toContain(registry.url('signed-too'));
    expect(readyOf(refusal)?.message).toMatch(/none of the 1 cosign signatures was made by .*; refused$/);
    // Refused before the artifact's layer was fetched (the signature's own payload blob was).
    expect(registry.requests.filter((r) => r.repo === 'signed-too' && r.kind === 'blobs' && r.reference === wrong.layerDigest)).toEqual([]);
    expect(registry.count('signed-too', 'blobs', 'GET')).toBe(1);

    // The condition (API.md, source.oci verify): True naming the key that verified, False with VerificationFailed.
    const fingerprint = `sha256:${createHash('sha256').update(createPublicKey(key.publicKeyPem).export({ type: 'spki', format: 'der' })).digest('hex')}`;
    // What the helper's fetch tells the controller (read in this process, as the operator reads it; its resolve says `absent`).
    const fetched = await repositoryTree({ client: mgmt, namespace: ns(), limits: sourceLimits() }, { oci: { url: registry.url('signed'), ref: { tag: 'v1' }, insecure: true, verify: { provider: 'cosign', secretRef: { name: 'cosign-key' } } } });
    expect(fetched).toMatchObject({ revision: `v1@${signed.digest}`, verified: `cosign: ${fingerprint}` });
    expect(conditionOf(ready, 'SourceVerified')).toMatchObject({ status: 'True', reason: 'Succeeded' });
    expect(conditionOf(ready, 'SourceVerified')?.message).toContain(`cosign: ${fingerprint}`);
    expect(conditionOf(refusal, 'SourceVerified')).toMatchObject({ status: 'False', reason: 'VerificationFailed' });
    expect(conditionOf(refusal, 'SourceVerified')?.message).toContain('cosign');
  });
});

describe('a Git repository over SSH', () => {
  test('applies with the identity and known_hosts of a Secret; a wrong host key is refused naming it, and nothing is applied', async () => {
    const repo = createBareRepo(gitRoot, 'ssh-apps');
    const commit = await repo.commit({ 'cm.yaml': configMap('ssh-one', 'over-ssh') });
    const other = createBareRepo(gitRoot, 'ssh-other');
    await other.commit({ 'cm.yaml': configMap('ssh-two') });
    await Promise.all([
      createSecret('ssh-creds', { identity: ssh.identity, known_hosts: ssh.knownHosts }),
      createSecret('ssh-wrong-host', { identity: ssh.identity, known_hosts: ssh.wrongKnownHosts }),
    ]);
    await Promise.all([
      sync('ssh', { git: { url: ssh.repoUrl('ssh-apps'), secretRef: { name: 'ssh-creds' } } }),
      sync('ssh-wrong-host', { git: { url: ssh.repoUrl('ssh-other'), secretRef: { name: 'ssh-wrong-host' } } }),
    ]);
    const ready = await waitForReady(mgmt, ns(), 'ssh', 'True');
    expect(ready.status?.lastAppliedRevision).toBe(`main@sha1:${commit}`);
    expect(await valueIn('ssh-one')).toBe('over-ssh');

    const wrong = await refused('ssh-wrong-host', 'ssh-two');
    // The URL as shown: without its user (displayRepositoryUrl).
    expect(readyOf(wrong)?.message).toContain(`ssh://${ssh.address}/ssh-other.git: `);
    expect(readyOf(wrong)?.message).toContain(`the SSH host key of ${ssh.address}`);
    expect(readyOf(wrong)?.message).toContain('is not the one knownHosts holds; refused');
    expect(JSON.stringify(wrong.status)).not.toContain('PRIVATE KEY');
  });
});
