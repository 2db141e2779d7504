// The Event recorder against a real API server: Events are best effort and
// sent a bounded number at a time, so a burst of them (1,000 Syncs applied at
// once) neither waits on nor floods the API server.
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import type { KubeClient } from '../../src/kube/client.js';
import type { KubeObject } from '../../src/kube/resources.js';
import { EventRecorder } from '../../src/runtime/events.js';
import { clusterClient, closeClients } from '../support/controlplane.js';
import { useTestNamespace } from '../support/namespace.js';
import { eventsFor } from '../support/syncs.js';

afterAll(async () => {
  await closeClients();
});

describe('EventRecorder', () => {
  const ns = useTestNamespace('mgmt', 'events');
  let client: KubeClient;
  let subject: KubeObject;
  beforeAll(async () => {
    client = await clusterClient('mgmt');
    subject = await client.request<KubeObject>({
      method: 'POST',
      path: `/api/v1/namespaces/${ns()}/configmaps`,
      body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'subject' } },
    });
    subject = { ...subject, apiVersion: 'v1', kind: 'ConfigMap' };
  });

  test('a burst is sent 16 at a time, every Event of it recorded; the same one twice is recorded once', async () => {
    let inFlight = 0;
    let most = 0;
    // The real client, counting the requests it has in flight.
    const counting = new Proxy(client, {
      get(target, prop, receiver) {
        if (prop !== 'request') return Reflect.get(target, prop, receiver) as unknown;
        return async (...args: Parameters<KubeClient['request']>) => {
          most = Math.max(most, ++inFlight);
          try {
            return await target.request(...args);
          } finally {
            inFlight--;
          }
        };
      },
    });
    const recorder = new EventRecorder(counting);
    await Promise.all(Array.from({ length: 60 }, (_, i) => recorder.record(subject, 'Normal', 'Burst', `event ${i}`)));
    await recorder.record(subject, 'Normal', 'Burst', 'event 0');
    expect(most).toBe(16);
    const recorded = (await eventsFor(client, ns(), 'subject')).filter((e) => e.reason === 'Burst');
    expect(recorded.map((e) => e.message).sort()).toEqual(Array.from({ length: 60 }, (_, i) => `event ${i}`).sort());
  });

  test('past 16 sent and 1,000 waiting an Event is dropped, and the same Event later is recorded (not taken for a duplicate)', async () => {
    const recorder = new EventRecorder(client);
    const burst = Array.from({ length: 1016 }, (_, i) => recorder.record(subject, 'Normal', 'Flood', `event ${i}`));
    await recorder.record(subject, 'Normal', 'Flood', 'dropped');
    await Promise.all(burst);
    const messages = async (): Promise<string[]> => (await eventsFor(client, ns(), 'subject')).filter((e) => e.reason === 'Flood').map((e) => e.message);
    expect(await messages()).not.toContain('dropped');
    await recorder.record(subject, 'Normal', 'Flood', 'dropped');
    expect(await messages()).toContain('dropped');
  }, 120_000);
});
