import { describe, expect, test } from '@jest/globals';
import { timerWakes, TIMER_CAUSE } from '../support/wakes.js';

const at = (s: number): string => new Date(Date.UTC(2026, 11, 2, 0, 0, s)).toISOString();
const line = (s: number, causes: string[], name = 'kp', msg = 'reconciled') => ({ msg, kind: 'Sync', namespace: 'r1', name, time: at(s), causes });

describe('timerWakes', () => {
  test('a reconcile a timer brought after a long wait is named; one a watch event brought is not', () => {
    const lines = [
      line(0, ['added']),
      line(1, ['owned object released: _monitoring__Namespace']),
      line(31, [TIMER_CAUSE]),
      line(32, ['added'], 'argo'),
      line(33, [TIMER_CAUSE], 'argo', 'reconciled; retrying with backoff'),
    ];
    expect(timerWakes(lines)).toEqual([`Sync r1/kp: woken by a timer after 30000 ms (previous reconcile at ${at(1)})`]);
  });

  test('short retries, a timer beside another cause, and the first reconcile are not timer wakes', () => {
    const lines = [line(0, [TIMER_CAUSE]), line(2, [TIMER_CAUSE]), line(20, [TIMER_CAUSE, 'CRD established']), { msg: 'applied', kind: 'Sync', namespace: 'r1', name: 'kp', time: at(40) }];
    expect(timerWakes(lines)).toEqual([]);
  });
});
