import { describe, expect, test } from '@jest/globals';
import { compareHealth, leastReady, MAX_REASON_LENGTH, summarize, type HealthEntry } from '../../src/apply/summary.js';
import { computeHealth, summarize as summarizeFromHealth, type HealthStatus } from '../../src/apply/health.js';
import { KSTATUS_ORDER } from '../../src/api/conditions.js';
import { summarySchema } from '../../src/api/status.js';

describe('summarize', () => {
  test('an empty set is Current', () => {
    expect(summarize([])).toEqual({
      total: 0,
      current: 0,
      inProgress: 0,
      failed: 0,
      terminating: 0,
      notFound: 0,
      unknown: 0,
      leastStatus: 'Current',
    });
  });

  test('counts every status', () => {
    const statuses: HealthStatus[] = [
      'Current',
      'Current',
      'Current',
      'InProgress',
      'InProgress',
      'Failed',
      'Terminating',
      'NotFound',
      'Unknown',
      'Unknown',
    ];
    const summary = summarize(statuses);
    expect(summary).toEqual({
      total: 10,
      current: 3,
      inProgress: 2,
      failed: 1,
      terminating: 1,
      notFound: 1,
      unknown: 2,
      leastStatus: 'NotFound',
    });
    expect(summarySchema.parse(summary)).toEqual(summary);
  });

  // Each status with every status after it in the order: the earlier one is the least.
  const pairs = KSTATUS_ORDER.flatMap((least, i) => KSTATUS_ORDER.slice(i).map((other) => [least, other] as const));
  test.each(pairs)('leastStatus of %s and %s is the first', (least, other) => {
    expect(summarize([other, least]).leastStatus).toBe(least);
    expect(summarize([least, other]).leastStatus).toBe(least);
  });

  test('the order is NotFound < Failed < Terminating < Unknown < InProgress < Current', () => {
    const shuffled: HealthStatus[] = ['Current', 'Unknown', 'Failed', 'InProgress', 'NotFound', 'Terminating'];
    expect([...shuffled].sort(compareHealth)).toEqual(['NotFound', 'Failed', 'Terminating', 'Unknown', 'InProgress', 'Current']);
  });

  test('thousands of objects', () => {
    const statuses: HealthStatus[] = Array.from({ length: 5000 }, (_, i) => (i === 4321 ? 'Terminating' : i % 10 === 0 ? 'InProgress' : 'Current'));
    expect(summarize(statuses)).toMatchObject({ total: 5000, current: 4499, inProgress: 500, terminating: 1, leastStatus: 'Terminating' });
  });

  test('health.ts re-exports it for the pipeline', () => {
    expect(summarizeFromHealth).toBe(summarize);
  });
});

describe('leastReady', () => {
  const web: HealthEntry = { id: 'team-a_web_apps_Deployment', status: 'InProgress', message: 'Deployment web: 0 of 2 replicas available' };
  const migrate: HealthEntry = { id: 'team-a_migrate_batch_Job', status: 'Failed', message: 'Job migrate: failed: Job has reached the specified backoff limit (7 pods failed)' };
  const ns: HealthEntry = { id: '_team-b__Namespace', status: 'Terminating', message: 'Namespace team-b: being deleted' };
  const cfg: HealthEntry = { id: 'team-a_settings__ConfigMap', status: 'Current', message: 'ConfigMap settings: current' };

  test('empty when everything is Current (or nothing is there)', () => {
    expect(leastReady([])).toBe('');
    expect(leastReady([cfg, { ...cfg, id: 'team-a_other__ConfigMap' }])).toBe('');
  });

  test('names the objects with namespace, least ready first, and why', () => {
    expect(leastReady([cfg, web, ns, migrate])).toBe(
      'Job team-a/migrate (Failed): failed: Job has reached the specified backoff limit (7 pods failed); ' +
        'Namespace team-b (Terminating): being deleted; ' +
        'Deployment team-a/web (InProgress): 0 of 2 replicas available',
    );
  });

  test('keeps the input order within one status', () => {
    const entries: HealthEntry[] = ['c', 'a', 'b'].map((name) => ({
      id: `team-a_${name}_apps_Deployment`,
      status: 'InProgress',
      message: `Deployment ${name}: 0 of 1 replicas ready`,
    }));
    expect(leastReady(entries)).toBe(
      'Deployment team-a/c (InProgress): 0 of 1 replicas ready; ' +
        'Deployment team-a/a (InProgress): 0 of 1 replicas ready; ' +
        'Deployment team-a/b (InProgress): 0 of 1 replicas ready',
    );
  });

  test('a NotFound object from computeHealth does not say it twice', () => {
    const missing: HealthEntry = { id: 'team-a_db_syncprims.dev_Sync', ...computeHealth(undefined) };
    expect(leastReady([missing])).toBe('Sync team-a/db (NotFound)');
    expect(leastReady([{ ...missing, message: 'CRD widgets.example.com not installed' }])).toBe(
      'Sync team-a/db (NotFound): CRD widgets.example.com not installed',
    );
  });

  test('a name with underscores (allowed for RBAC objects) is read as one name', () => {
    const role: HealthEntry = { id: '_ops_reader_rbac.authorization.k8s.io_ClusterRole', status: 'Unknown', message: 'ClusterRole ops_reader: no status' };
    expect(leastReady([role])).toBe('ClusterRole ops_reader (Unknown): no status');
  });

  test('a message that does not start with the kind and name is kept whole', () => {
    const entry: HealthEntry = { id: 'team-a_web_apps_Deployment', status: 'Unknown', message: 'Deployment other: cache not synced' };
    expect(leastReady([entry])).toBe('Deployment team-a/web (Unknown): Deployment other: cache not synced');
  });

  test('an id that is not an inventory id is shown as it is', () => {
    expect(leastReady([{ id: 'something-else', status: 'InProgress', message: 'waiting' }])).toBe('something-else (InProgress): waiting');
  });

  test('thousands of objects: the first five, and how many more', () => {
    const entries: HealthEntry[] = Array.from({ length: 3000 }, (_, i) => ({
      id: `team-a_web-${i}_apps_Deployment`,
      status: i % 3 === 0 ? 'Current' : 'InProgress',
      message: `Deployment web-${i}: 0 of 2 replicas available`,
    }));
    const message = leastReady(entries);
    expect(message).toBe(
      [1, 2, 4, 5, 7].map((i) => `Deployment team-a/web-${i} (InProgress): 0 of 2 replicas available`).join('; ') + '; and 1995 more',
    );
    expect(message.length).toBeLessThan(400);
  });

  test('max chooses how many are named', () => {
    const entries = [migrate, web, ns];
    expect(leastReady(entries, 1)).toBe(
      'Job team-a/migrate (Failed): failed: Job has reached the specified backoff limit (7 pods failed); and 2 more',
    );
    expect(leastReady(entries, 3)).not.toContain('more');
    expect(leastReady(entries, 0)).toBe('3 objects not Current');
  });

  test('long reasons are cut, one line each', () => {
    const long: HealthEntry = { ...web, message: `Deployment web: ${'y'.repeat(1000)}\nsecond line` };
    const message = leastReady([long]);
    const reason = message.slice('Deployment team-a/web (InProgress): '.length);
    expect(reason).toHaveLength(MAX_REASON_LENGTH);
    expect(reason.endsWith('y…')).toBe(true);
    expect(message).not.toContain('\n');
  });

  test('the message stays small however long each reason is', () => {
    const entries: HealthEntry[] = Array.from({ length: 10_000 }, (_, i) => ({
      id: `ns-${i}_obj-${i}_example.com_Widget`,
      status: 'Failed',
      message: `Widget obj-${i}: stalled: ${'z'.repeat(10_000)}`,
    }));
    const message = leastReady(entries);
    expect(message.endsWith('; and 9995 more')).toBe(true);
    expect(message.length).toBeLessThan(5 * (MAX_REASON_LENGTH + 60) + 20);
  });
});
