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
    // These tests are about sending; the per-object limit has its own test below.
    const recorder = new EventRecorder(counting, { burst: Infinity });
    await Promise.all(Array.from({ length: 60 }, (_, i) => recorder.record(subject, 'Normal', 'Burst', `event ${i}`)));
    await recorder.record(subject, 'Normal', 'Burst', 'event 0');
    expect(most).toBe(16);
    const recorded = (await eventsFor(client, ns(), 'subject')).filter((e) => e.reason === 'Burst');
    expect(recorded.map((e) => e.message).sort()).toEqual(Array.from({ length: 60 }, (_, i) => `event ${i}`).sort());
  });

  test('past 16 sent and 1,000 waiting an Event is dropped, and the same Event later is recorded (not taken for a duplicate)', async () => {
    const recorder = new EventRecorder(client, { burst: Infinity });
    const burst = Array.from({ length: 1016 }, (_, i) => recorder.record(subject, 'Normal', 'Flood', `event ${i}`));
    await recorder.record(subject, 'Normal', 'Flood', 'dropped');
    await Promise.all(burst);
    const messages = async (): Promise<string[]> => (await eventsFor(client, ns(), 'subject')).filter((e) => e.reason === 'Flood').map((e) => e.message);
    expect(await messages()).not.toContain('dropped');
    await recorder.record(subject, 'Normal', 'Flood', 'dropped');
    expect(await messages()).toContain('dropped');
  }, 120_000);

  test('one object has at most 25 Event writes, then one per 5 minutes; another object is not held back; a repeat takes none', async () => {
    let now = Date.parse('2026-01-01T00:00:00Z');
    const recorder = new EventRecorder(client, { now: () => now });
    const other = await client.request<KubeObject>({ method: 'POST', path: `/api/v1/namespaces/${ns()}/configmaps`, body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'other' } } });
    // A message that changes at each retry is no duplicate: without the limit, 40 Events.
    for (let i = 0; i < 40; i++) await recorder.record(subject, 'Warning', 'Spam', `failed, request ${i}`);
    await recorder.record({ ...other, apiVersion: 'v1', kind: 'ConfigMap' }, 'Warning', 'Spam', 'on another object');
    now += 4 * 60_000; // not yet one more
    await recorder.record(subject, 'Warning', 'Spam', 'after 4 minutes');
    now += 60_000; // one more: a repeat of an Event written takes none of it (it is only counted)
    await recorder.record(subject, 'Warning', 'Spam', 'failed, request 0');
    await recorder.record(subject, 'Warning', 'Spam', 'after 5 minutes');
    await recorder.record(subject, 'Warning', 'Spam', 'after 5 minutes, another');
    const spam = async (name: string) => (await eventsFor(client, ns(), name)).filter((e) => e.reason === 'Spam').map((e) => e.message);
    expect((await spam('subject')).sort()).toEqual([...Array.from({ length: 25 }, (_, i) => `failed, request ${i}`), 'after 5 minutes'].sort());
    expect(await spam('other')).toEqual(['on another object']);
  });

  test('a repeat counts on the Event already there (written at most every 10 minutes); a new Event once that one is gone, or an hour old', async () => {
    const start = Date.parse('2026-01-01T00:00:00Z');
    let now = start;
    const recorder = new EventRecorder(client, { now: () => now });
    const at = (minutes: number) => new Date(start + minutes * 60_000).toISOString().replace(/\.\d+Z$/, 'Z');
    const repeated = async () => (await eventsFor(client, ns(), 'subject')).filter((e) => e.reason === 'Repeated');
    const repeat = async (minutes: number) => {
      now = start + minutes * 60_000;
      await recorder.record(subject, 'Warning', 'Repeated', 'the same failure');
    };
    await repeat(0);
    await repeat(1); // counted, not written
    await repeat(2);
    expect((await repeated()).map((e) => e.count)).toEqual([1]);
    await repeat(11); // written with the two before it
    const [first] = await repeated();
    expect(first).toMatchObject({ count: 4, firstTimestamp: at(0), lastTimestamp: at(11) });
    // Another type is another Event.
    await recorder.record(subject, 'Normal', 'Repeated', 'the same failure');
    expect((await repeated()).map((e) => [e.type, e.count]).sort()).toEqual([['Normal', 1], ['Warning', 4]]);
    await client.request({ method: 'DELETE', path: `/api/v1/namespaces/${ns()}/events/${first!.metadata.name}` });
    await repeat(22); // the Event it counted on is gone (the API server's TTL): a new one
    const warnings = async () => (await repeated()).filter((e) => e.type === 'Warning');
    const [second] = await warnings();
    expect(second).toMatchObject({ count: 1, firstTimestamp: at(22) });
    expect(second!.metadata.name).not.toBe(first!.metadata.name);
    await repeat(83); // an hour after its last write the API server has deleted it: not looked for
    expect((await warnings()).map((e) => [e.count, e.firstTimestamp]).sort()).toEqual([[1, at(22)], [1, at(83)]]);
  });
});
