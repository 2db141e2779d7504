// spec.helm is in the API before charts are rendered: a sync that sets it is
// refused with a SourceError saying so, and its source is never read as manifests.
import { expect, test } from '@jest/globals';
import { renderSet } from '../../src/apply/render-set.js';
import { SourceError } from '../../src/source/index.js';

test('a sync with spec.helm is refused before its source is read', async () => {
  let read = 0;
  const client = { request: () => { read++; throw new Error('read'); } } as never;
  const err = await renderSet({
    reader: { client },
    namespace: 'apps',
    spec: { source: { configMap: { name: 'chart' } }, helm: {} },
    owner: { kind: 'Sync', name: 'web', namespace: 'apps' } as never,
    scopeOf: async () => 'Namespaced',
  }).then(() => undefined, (e: unknown) => e);
  expect(err).toBeInstanceOf(SourceError);
  expect((err as Error).message).toMatch(/^spec.helm: this version of the operator does not render Helm charts yet/);
  expect(read).toBe(0);
});
