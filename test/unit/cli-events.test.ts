// `syncprims events`'s pure parts: when an Event was last seen, time order, and its table row.
import { describe, expect, test } from '@jest/globals';
import { eventRow, lastSeen } from '../../src/cli/events/events-table.js';
import { inTimeOrder, lastSeenAt, objectOf, type EventObject, type FoundEvent } from '../../src/views/events-order.js';
import { PLAIN, styleFor } from '../../src/cli/terminal.js';

const event = (name: string, fields: Partial<EventObject> = {}): EventObject => ({
  apiVersion: 'v1',
  kind: 'Event',
  metadata: { name, namespace: 'apps', creationTimestamp: '2026-01-01T00:00:00Z' },
  involvedObject: { apiVersion: 'v1', kind: 'ConfigMap', name: 'demo', namespace: 'apps' },
  type: 'Normal',
  reason: 'Reason',
  message: 'message',
  ...fields,
});

const NOW = Date.parse('2026-01-01T01:00:00Z');

describe('lastSeenAt (as kubectl orders Events)', () => {
  test('series, then lastTimestamp, then eventTime, then firstTimestamp, then creation', () => {
    const all = { series: { count: 2, lastObservedTime: '2026-01-01T00:05:00Z' }, lastTimestamp: '2026-01-01T00:04:00Z', eventTime: '2026-01-01T00:03:00Z', firstTimestamp: '2026-01-01T00:02:00Z' };
    expect(lastSeenAt(event('e', all))).toBe('2026-01-01T00:05:00Z');
    expect(lastSeenAt(event('e', { ...all, series: null }))).toBe('2026-01-01T00:04:00Z');
    expect(lastSeenAt(event('e', { ...all, series: null, lastTimestamp: null }))).toBe('2026-01-01T00:03:00Z');
    expect(lastSeenAt(event('e', { firstTimestamp: '2026-01-01T00:02:00Z', eventTime: null }))).toBe('2026-01-01T00:02:00Z');
    expect(lastSeenAt(event('e'))).toBe('2026-01-01T00:00:00Z');
  });
});

describe('inTimeOrder', () => {
  test('oldest first, across core and events.k8s.io styles; ties by first seen, then name; input not changed', () => {
    const found: FoundEvent[] = [
      { event: event('d', { lastTimestamp: '2026-01-01T00:30:00Z', firstTimestamp: '2026-01-01T00:20:00Z' }) },
      { event: event('c', { eventTime: '2026-01-01T00:10:00.000000Z' }), cluster: 'edge-1' },
      { event: event('b', { lastTimestamp: '2026-01-01T00:30:00Z', firstTimestamp: '2026-01-01T00:01:00Z' }) },
      { event: event('a', { lastTimestamp: '2026-01-01T00:30:00Z', firstTimestamp: '2026-01-01T00:01:00Z' }) },
      { event: event('z', { series: { lastObservedTime: '2026-01-01T00:45:00Z', count: 4 }, eventTime: '2026-01-01T00:00:01.000000Z' }) },
    ];
    expect(inTimeOrder(found).map((f) => f.event.metadata.name)).toEqual(['c', 'a', 'b', 'd', 'z']);
    expect(found.map((f) => f.event.metadata.name)).toEqual(['d', 'c', 'b', 'a', 'z']);
  });
});

describe('rows', () => {
  test('LAST SEEN: the age, with the count and how long over when seen more than once', () => {
    expect(lastSeen(event('e', { lastTimestamp: '2026-01-01T00:59:15Z', count: 1 }), NOW)).toBe('45s');
    expect(lastSeen(event('e', { lastTimestamp: '2026-01-01T00:58:00Z', firstTimestamp: '2026-01-01T00:30:00Z', count: 3 }), NOW)).toBe('2m (x3 over 30m)');
    expect(lastSeen(event('e', { series: { count: 5, lastObservedTime: '2026-01-01T00:59:00Z' }, eventTime: '2026-01-01T00:50:00.000000Z' }), NOW)).toBe('60s (x5 over 10m)');
  });

  test('OBJECT: Kind/name, the namespace when not the sync\'s, the cluster when remote', () => {
    expect(objectOf({ event: event('e') }, 'apps')).toBe('ConfigMap/demo');
    expect(objectOf({ event: event('e') }, 'other')).toBe('ConfigMap/apps/demo');
    expect(objectOf({ event: event('e', { involvedObject: { kind: 'Namespace', name: 'apps' } }) }, 'apps')).toBe('Namespace/apps');
    expect(objectOf({ event: event('e'), cluster: 'edge-1' }, 'apps')).toBe('[edge-1] ConfigMap/demo');
  });

  test('a Warning is yellow on a terminal; messages on one line', () => {
    const warning = event('e', { type: 'Warning', reason: 'Failed', message: 'it broke:\n  twice', lastTimestamp: '2026-01-01T00:59:00Z' });
    expect(eventRow({ event: warning }, 'apps', PLAIN, NOW)).toEqual(['60s', 'Warning', 'Failed', 'ConfigMap/demo', 'it broke: twice']);
    expect(eventRow({ event: warning }, 'apps', styleFor({ isTTY: true }, {}), NOW)[1]).toBe('\x1b[33mWarning\x1b[39m');
    expect(eventRow({ event: event('n', { lastTimestamp: '2026-01-01T00:59:00Z' }) }, 'apps', styleFor({ isTTY: true }, {}), NOW)[1]).toBe('Normal');
  });
});
