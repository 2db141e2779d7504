import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll } from '@jest/globals';
import { clusterClient } from './controlplane.js';

export const TEST_LABEL = 'syncprims.dev/test';

/**
 * Gives the calling test file a namespace of its own in a cluster: created in
 * beforeAll, deleted in afterAll. Returns a getter for its name.
 */
export function useTestNamespace(cluster: string, prefix: string): () => string {
  let name = '';
  beforeAll(async () => {
    const client = await clusterClient(cluster);
    name = `${prefix}-${randomBytes(3).toString('hex')}`;
    await client.request({
      method: 'POST',
      path: '/api/v1/namespaces',
      body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels: { [TEST_LABEL]: 'true' } } },
    });
  });
  afterAll(async () => {
    if (!name) return;
    const client = await clusterClient(cluster);
    await client.request({ method: 'DELETE', path: `/api/v1/namespaces/${name}` }).catch(() => undefined);
  });
  return () => {
    if (!name) throw new Error('the test namespace exists only inside tests (after beforeAll)');
    return name;
  };
}
