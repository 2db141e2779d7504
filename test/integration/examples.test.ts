// Every example in examples/ is accepted by the real API server (with the CRDs
// installed), so the examples never rot as the schema changes.
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parseAllDocuments } from 'yaml';
import { parseAnySyncObject } from '../../src/api/index.js';
import { serverSideApply } from '../../src/kube/apply.js';
import type { KubeObject } from '../../src/kube/resources.js';
import { clusterApi, closeClients, ROOT } from '../support/controlplane.js';
import { installCrds } from '../support/crds.js';
import { useTestNamespace } from '../support/namespace.js';

const dir = path.join(ROOT, 'examples');
const files = readdirSync(dir).filter((f) => f.endsWith('.yaml'));

beforeAll(() => installCrds('mgmt'));
afterAll(closeClients);

describe('examples', () => {
  const ns = useTestNamespace('mgmt', 'examples');

  test('there are examples', () => {
    expect(files.length).toBeGreaterThan(0);
  });

  test.each(files)('%s is valid for the schema and the API server', async (file) => {
    const { client, discovery } = await clusterApi('mgmt');
    const docs = parseAllDocuments(readFileSync(path.join(dir, file), 'utf8'), { version: '1.1' });
    for (const doc of docs) {
      expect(doc.errors).toEqual([]);
      const obj = doc.toJS() as KubeObject;
      expect(parseAnySyncObject(obj)).toMatchObject({ ok: true });
      const applied = await serverSideApply(
        client,
        discovery,
        { ...obj, metadata: { ...obj.metadata, namespace: ns() } },
        { fieldManager: 'syncprims-examples', dryRun: true },
      );
      expect(applied.metadata.name).toBe(obj.metadata.name);
    }
  });
});
