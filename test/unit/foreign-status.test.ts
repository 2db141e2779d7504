// --shards: a status written by another replica over this one's (controllers/foreign-status.ts), pure:
// informer events and the store in, the keys woken out.
import { describe, expect, test } from '@jest/globals';
import { setTimeout as delay } from 'node:timers/promises';
import { ForeignStatusWatch } from '../../src/controllers/foreign-status.js';
import type { KubeObject } from '../../src/kube/resources.js';
import type { InformerEvent, InformerHandler } from '../../src/runtime/informer.js';
import { ObjectStore } from '../../src/runtime/store.js';

const SETTLE_MS = 20;

const sync = (rv: string, status: Record<string, unknown>, generation = 1): KubeObject => ({
  apiVersion: 'syncprims.dev/v1alpha1',
  kind: 'RemoteSync',
  metadata: { name: 'a', namespace: 'ns', uid: 'u1', resourceVersion: rv, generation },
  status,
});

function watch(works = true): { send: (e: InformerEvent<KubeObject>) => void; woken: string[]; ours: Set<string> } {
  let handler: InformerHandler<KubeObject> | undefined;
  const store = new ObjectStore<KubeObject>();
  const woken: string[] = [];
  const informer = {
    store,
    onEvent: (h: InformerHandler<KubeObject>) => {
      handler = h;
      return () => undefined;
    },
  };
  /** The resourceVersions our own status writes produced (ObjectWriter.wroteStatus in the operator). */
  const ours = new Set<string>();
  new ForeignStatusWatch(informer, (obj) => ours.has(obj.metadata.resourceVersion ?? ''), () => works, (key) => woken.push(key), SETTLE_MS);
  const send = (e: InformerEvent<KubeObject>): void => {
    if (e.type === 'deleted') store.delete('ns/a');
    else store.upsert(e.object);
    handler!(e);
  };
  return { send, woken, ours };
}

const settled = (): Promise<void> => delay(SETTLE_MS * 3);

describe('a status written by another replica', () => {
  test('wakes the object on the replica that holds its key, once its latest version is not ours; our own writes (by resourceVersion) do not', async () => {
    const { send, woken, ours } = watch();
    ours.add('11');
    send({ type: 'updated', old: sync('10', { phase: 'a' }), object: sync('11', { phase: 'b' }) });
    await settled();
    expect(woken).toEqual([]);
    send({ type: 'updated', old: sync('11', { phase: 'b' }), object: sync('12', { phase: 'stale' }) });
    send({ type: 'updated', old: sync('12', { phase: 'stale' }), object: sync('13', { phase: 'stale2' }) });
    await settled();
    expect(woken).toEqual(['ns/a']);
  });

  test('our write whose echo the watch brings before its answer does wakes nothing; a foreign one over it, after, does', async () => {
    const { send, woken, ours } = watch();
    send({ type: 'updated', old: sync('10', { phase: 'a' }), object: sync('11', { phase: 'b' }) });
    ours.add('11');
    await settled();
    expect(woken).toEqual([]);
    send({ type: 'updated', old: sync('11', { phase: 'b' }), object: sync('12', { phase: 'stale' }) });
    await settled();
    expect(woken).toEqual(['ns/a']);
    // A foreign write, then ours over it before the judging: the latest is ours.
    send({ type: 'updated', old: sync('12', { phase: 'stale' }), object: sync('13', { phase: 'stale2' }) });
    send({ type: 'updated', old: sync('13', { phase: 'stale2' }), object: sync('14', { phase: 'c' }) });
    ours.add('14');
    await settled();
    expect(woken).toEqual(['ns/a']);
  });

  test('nothing for a change the controller reconciles anyway (spec), an unchanged status, an added object, or a key held elsewhere', async () => {
    const { send, woken } = watch();
    send({ type: 'updated', old: sync('10', { phase: 'a' }), object: sync('11', { phase: 'b' }, 2) });
    send({ type: 'updated', old: sync('11', { phase: 'b' }, 2), object: sync('12', { phase: 'b' }, 2) });
    send({ type: 'added', object: sync('13', { phase: 'c' }, 2) });
    const elsewhere = watch(false);
    elsewhere.send({ type: 'updated', old: sync('10', { phase: 'a' }), object: sync('11', { phase: 'b' }) });
    await settled();
    expect(woken).toEqual([]);
    expect(elsewhere.woken).toEqual([]);
  });
});
