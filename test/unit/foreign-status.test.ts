// --shards: a RemoteSync's status written by another replica over this one's (controllers/foreign-status.ts), pure:
// informer events in, the keys woken out.
import { describe, expect, test } from '@jest/globals';
import { ForeignStatusWatch } from '../../src/controllers/foreign-status.js';
import type { KubeObject } from '../../src/kube/resources.js';
import type { InformerEvent, InformerHandler } from '../../src/runtime/informer.js';

const sync = (rv: string, status: Record<string, unknown>, generation = 1): KubeObject => ({
  apiVersion: 'syncprims.dev/v1alpha1',
  kind: 'RemoteSync',
  metadata: { name: 'a', namespace: 'ns', uid: 'u1', resourceVersion: rv, generation },
  status,
});

function watch(works = true): { send: (e: InformerEvent<KubeObject>) => void; woken: string[]; w: ForeignStatusWatch } {
  let handler: InformerHandler<KubeObject> | undefined;
  const woken: string[] = [];
  const w = new ForeignStatusWatch({
    onEvent: (h: InformerHandler<KubeObject>) => {
      handler = h;
      return () => undefined;
    },
  }, () => works, (key) => woken.push(key));
  return { send: (e) => handler!(e), woken, w };
}

describe('a status written by another replica', () => {
  test('wakes the object on the replica that holds its key; our own writes (by resourceVersion) do not', () => {
    const { send, woken, w } = watch();
    w.noteWrite(sync('11', {}));
    send({ type: 'updated', old: sync('10', { phase: 'a' }), object: sync('11', { phase: 'b' }) });
    expect(woken).toEqual([]);
    send({ type: 'updated', old: sync('11', { phase: 'b' }), object: sync('12', { phase: 'stale' }) });
    expect(woken).toEqual(['ns/a']);
  });

  test('nothing for a change the controller reconciles anyway (spec), an unchanged status, an added object, or a key held elsewhere', () => {
    const { send, woken } = watch();
    send({ type: 'updated', old: sync('10', { phase: 'a' }), object: sync('11', { phase: 'b' }, 2) });
    send({ type: 'updated', old: sync('11', { phase: 'b' }, 2), object: sync('12', { phase: 'b' }, 2) });
    send({ type: 'added', object: sync('13', { phase: 'c' }, 2) });
    expect(woken).toEqual([]);
    const elsewhere = watch(false);
    elsewhere.send({ type: 'updated', old: sync('10', { phase: 'a' }), object: sync('11', { phase: 'b' }) });
    expect(elsewhere.woken).toEqual([]);
  });

  test('remembers the last few writes of ours per object, and forgets a deleted one', () => {
    const { send, woken, w } = watch();
    for (const rv of ['20', '21', '22', '23', '24']) w.noteWrite(sync(rv, {}));
    send({ type: 'updated', old: sync('23', { n: 3 }), object: sync('24', { n: 4 }) });
    send({ type: 'updated', old: sync('19', { n: 0 }), object: sync('21', { n: 1 }) });
    expect(woken).toEqual([]);
    send({ type: 'updated', old: sync('19', { n: 0 }), object: sync('20', { n: 9 }) });
    expect(woken).toEqual(['ns/a']);
    send({ type: 'deleted', object: sync('25', {}) });
    send({ type: 'updated', old: sync('23', { n: 3 }), object: sync('24', { n: 5 }) });
    expect(woken).toEqual(['ns/a', 'ns/a']);
  });
});
