// `syncprims diff`'s pure parts: what is left out of the objects, Secret masking, and the unified diff.
import { describe, expect, test } from '@jest/globals';
import { unowned } from '../../src/apply/owner.js';
import { maskSecrets, sortedKeys, withoutNoise } from '../../src/cli/diff/diff-noise.js';
import { differs, unifiedDiff, type ObjectChange } from '../../src/cli/diff/diff-render.js';
import { PLAIN, styleFor, stripEscapes } from '../../src/cli/terminal.js';
import type { KubeObject } from '../../src/kube/resources.js';

const live = (data: Record<string, string>, extra: Partial<KubeObject['metadata']> = {}): KubeObject => ({
  kind: 'ConfigMap',
  apiVersion: 'v1',
  metadata: {
    name: 'demo',
    namespace: 'apps',
    uid: '7d0c',
    resourceVersion: '42',
    generation: 3,
    creationTimestamp: '2026-01-01T00:00:00Z',
    managedFields: [{ manager: 'syncprims', operation: 'Apply' }],
    labels: {
      'syncprims.dev/owner-kind': 'Sync',
      'syncprims.dev/owner-namespace': 'apps',
      'syncprims.dev/owner-name': 'app',
      'syncprims.dev/origin': 'c1',
    },
    ...extra,
  },
  data,
});

const COLOUR = styleFor({ isTTY: true }, {});

describe('withoutNoise', () => {
  test('drops what the server bumps, status, and our owner and origin labels; keeps the rest, keys sorted', () => {
    const obj = { ...live({ b: '2', a: '1' }), status: { phase: 'Active' } };
    obj.metadata.labels = { ...obj.metadata.labels, team: 'blue' };
    obj.metadata.annotations = { note: 'kept' };
    const clean = withoutNoise(obj);
    expect(clean).toEqual({ apiVersion: 'v1', data: { a: '1', b: '2' }, kind: 'ConfigMap', metadata: { annotations: { note: 'kept' }, labels: { team: 'blue' }, name: 'demo', namespace: 'apps' } });
    expect(Object.keys(clean)).toEqual(['apiVersion', 'data', 'kind', 'metadata']);
    expect(Object.keys(clean.data as object)).toEqual(['a', 'b']);
    // The input is not changed.
    expect(obj.metadata.uid).toBe('7d0c');
    expect(obj.status).toEqual({ phase: 'Active' });
  });

  test('labels and annotations that end up empty are left out', () => {
    const clean = withoutNoise(live({}, { annotations: {} }));
    expect(clean.metadata).toEqual({ name: 'demo', namespace: 'apps' });
  });

  test('sortedKeys sorts maps at every depth and keeps arrays in order', () => {
    expect(JSON.stringify(sortedKeys({ b: [{ z: 1, y: 2 }, 3], a: null }))).toBe('{"a":null,"b":[{"y":2,"z":1},3]}');
  });

  test('unowned: no owner labels means the apply adopts it', () => {
    expect(unowned(live({}))).toBe(false);
    expect(unowned({ ...live({}), metadata: { name: 'x' } })).toBe(true);
  });
});

describe('maskSecrets (as kubectl diff)', () => {
  const secret = (data: Record<string, string>, stringData?: Record<string, string>): KubeObject => ({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 's' }, data, ...(stringData ? { stringData } : {}) });

  test('same values ***, changed values *** (before) / *** (after), one-sided ***', () => {
    const [before, after] = maskSecrets(secret({ same: 'YQ==', changed: 'Yg==', gone: 'Yw==' }), secret({ same: 'YQ==', changed: 'ZA==', added: 'ZQ==' }, { s: 'x' }));
    expect(before?.data).toEqual({ same: '***', changed: '*** (before)', gone: '***' });
    expect(after?.data).toEqual({ same: '***', changed: '*** (after)', added: '***' });
    expect(after?.stringData).toEqual({ s: '***' });
  });

  test('one side missing (created, pruned); other kinds untouched; inputs not changed', () => {
    const s = secret({ k: 'dg==' });
    expect(maskSecrets(undefined, s)[1]?.data).toEqual({ k: '***' });
    expect(maskSecrets(s, undefined)[0]?.data).toEqual({ k: '***' });
    expect(s.data).toEqual({ k: 'dg==' });
    const cm = live({ k: 'v' });
    expect(maskSecrets(cm, cm)).toEqual([cm, cm]);
    const crSecret = { ...s, apiVersion: 'example.com/v1' };
    expect(maskSecrets(crSecret, crSecret)[0]?.data).toEqual({ k: 'dg==' });
  });
});

describe('unifiedDiff', () => {
  const change = (c: Partial<ObjectChange>): ObjectChange => ({ action: 'configured', object: 'ConfigMap apps/demo', ...c });

  test('a changed value: --- live / +++ merged headers, one hunk with 3 lines of context, noise left out', () => {
    const text = unifiedDiff(change({ live: live({ a: '1', b: '2' }), merged: { ...live({ a: '9', b: '2' }), metadata: { ...live({}).metadata, resourceVersion: '43' } } }), PLAIN);
    expect(text).toBe(
      [
        '--- live ConfigMap apps/demo',
        '+++ merged ConfigMap apps/demo',
        '@@ -1,6 +1,6 @@',
        ' apiVersion: v1',
        ' data:',
        '-  a: "1"',
        '+  a: "9"',
        '   b: "2"',
        ' kind: ConfigMap',
        ' metadata:',
        '',
      ].join('\n'),
    );
  });

  test('nothing but noise differs: empty, and differs() says so', () => {
    const c = change({ live: live({ a: '1' }), merged: live({ a: '1' }, { resourceVersion: '99', managedFields: [] }) });
    expect(unifiedDiff(c, PLAIN)).toBe('');
    expect(differs(c)).toBe(false);
    expect(differs(change({ live: live({ a: '1' }), merged: live({ a: '2' }) }))).toBe(true);
  });

  test('created: every line added, an empty side starts at 0; pruned: every line removed; notes in the +++ header', () => {
    const created = unifiedDiff(change({ action: 'created', merged: live({ a: '1' }), notes: ['not dry-run: namespace apps is created by the same apply'] }), PLAIN);
    expect(created.split('\n').slice(0, 4)).toEqual([
      '--- live ConfigMap apps/demo',
      '+++ merged ConfigMap apps/demo (would be created; not dry-run: namespace apps is created by the same apply)',
      '@@ -0,0 +1,7 @@',
      '+apiVersion: v1',
    ]);
    expect(created.split('\n').slice(3, -1).every((l) => l.startsWith('+'))).toBe(true);
    const pruned = unifiedDiff(change({ action: 'pruned', live: live({ a: '1' }) }), PLAIN);
    expect(pruned.split('\n').slice(1, 3)).toEqual(['+++ merged ConfigMap apps/demo (would be pruned)', '@@ -1,7 +0,0 @@']);
    expect(pruned.split('\n').slice(3, -1).every((l) => l.startsWith('-'))).toBe(true);
    expect(differs(change({ action: 'pruned', live: live({}) }))).toBe(true);
  });

  test('our labels show when the apply changes them: an adoption, another origin', () => {
    const bare = live({ a: '1' });
    bare.metadata.labels = { team: 'blue' };
    const adopted = unifiedDiff(change({ live: bare, merged: { ...live({ a: '1' }), metadata: { ...live({}).metadata, labels: { ...live({}).metadata.labels, team: 'blue' } } }, notes: ['would be adopted'] }), PLAIN);
    expect(adopted).toContain('+++ merged ConfigMap apps/demo (would be adopted)\n');
    expect(adopted).toContain('   labels:\n+    syncprims.dev/origin: c1\n+    syncprims.dev/owner-kind: Sync\n+    syncprims.dev/owner-name: app\n+    syncprims.dev/owner-namespace: apps\n     team: blue\n');
    const other = live({ a: '1' });
    other.metadata.labels = { ...other.metadata.labels, 'syncprims.dev/origin': 'c2' };
    const moved = unifiedDiff(change({ live: other, merged: live({ a: '1' }) }), PLAIN);
    expect(moved).toContain('-    syncprims.dev/origin: c2\n+    syncprims.dev/origin: c1\n     syncprims.dev/owner-kind: Sync\n');
    // Created and pruned objects: the marks are noise there.
    expect(unifiedDiff(change({ action: 'created', merged: live({}) }), PLAIN)).not.toContain('syncprims.dev');
  });

  test('colour on a terminal: removed red, added green, headers bold; the same text without the codes', () => {
    const c = change({ live: live({ a: '1' }), merged: live({ a: '2' }) });
    const coloured = unifiedDiff(c, COLOUR);
    expect(coloured).toContain('\x1b[31m-  a: "1"\x1b[39m');
    expect(coloured).toContain('\x1b[32m+  a: "2"\x1b[39m');
    expect(coloured).toContain('\x1b[1m--- live ConfigMap apps/demo\x1b[22m');
    expect(stripEscapes(coloured)).toBe(unifiedDiff(c, PLAIN));
  });
});
