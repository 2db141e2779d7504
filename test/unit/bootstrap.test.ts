import { describe, expect, test } from '@jest/globals';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse, parseAllDocuments } from 'yaml';
import { bootstrapManifests, MANIFESTS_KEY } from '../../src/cli/bootstrap-manifests.js';
import { bootstrapSource, type BootstrapFlags } from '../../src/cli/bootstrap-run.js';
import { installManifests } from '../../src/cli/install-manifests.js';
import type { KubeObject } from '../../src/kube/resources.js';
import { ROOT } from '../support/controlplane.js';

const flags = (more: Partial<BootstrapFlags> = {}): BootstrapFlags => ({ artifactApiVersion: 'source.toolkit.fluxcd.io/v1', ...more });

describe('bootstrap', () => {
  test('examples/bootstrap/syncprims.yaml is the Sync that bootstrap writes', () => {
    const example = parse(readFileSync(path.join(ROOT, 'examples', 'bootstrap', 'syncprims.yaml'), 'utf8'), { version: '1.1' }) as KubeObject;
    const sync = bootstrapManifests({}).find((o) => o.kind === 'Sync');
    expect(example).toEqual(sync);
  });

  test('the ConfigMap holds exactly what install prints, for the same options', () => {
    const opts = { namespace: 'platform', clusterId: 'mgmt', image: 'registry.example/syncprims:v1' };
    const [configMap, sync] = bootstrapManifests(opts);
    expect(configMap?.metadata).toMatchObject({ name: 'syncprims-manifests', namespace: 'platform' });
    const docs = parseAllDocuments((configMap as unknown as { data: Record<string, string> }).data[MANIFESTS_KEY]!, { version: '1.1' }).map((d) => d.toJS() as KubeObject);
    expect(docs).toEqual(installManifests(opts));
    expect(sync?.metadata.namespace).toBe('platform');
    expect(sync?.spec).toMatchObject({ deletionPolicy: 'Orphan', source: { configMap: { name: 'syncprims-manifests', key: MANIFESTS_KEY } } });
  });

  test('--url and --artifact: no ConfigMap, the Sync reads from there', () => {
    const byUrl = bootstrapManifests({}, bootstrapSource(flags({ url: 'https://example.com/install.yaml', digest: 'sha256:ab' })));
    expect(byUrl.map((o) => o.kind)).toEqual(['Sync']);
    expect(byUrl[0]?.spec).toMatchObject({ source: { http: { url: 'https://example.com/install.yaml', digest: 'sha256:ab' } } });
    const byArtifact = bootstrapManifests({}, bootstrapSource(flags({ artifact: 'GitRepository/platform' })));
    expect(byArtifact[0]?.spec).toMatchObject({ source: { artifact: { apiVersion: 'source.toolkit.fluxcd.io/v1', kind: 'GitRepository', name: 'platform' } } });
  });

  test.each([
    [{ url: 'https://a', artifact: 'GitRepository/x' }, '--url and --artifact: give one source, not both'],
    [{ digest: 'sha256:ab' }, '--digest goes with --url'],
    [{ url: 'ftp://a' }, '--url ftp://a: want an http(s) URL'],
    [{ artifact: 'platform' }, '--artifact platform: want kind/name of a Flux source, e.g. GitRepository/platform'],
    [{ artifact: 'sync/platform' }, '--artifact sync/platform: want kind/name of a Flux source, e.g. GitRepository/platform'],
  ])('bad usage %j: %s', (more, message) => {
    expect(() => bootstrapSource(flags(more))).toThrow(message);
  });
});
