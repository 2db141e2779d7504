import { describe, expect, test } from '@jest/globals';
import { ChangeSet, formatChangeSet } from '../../src/apply/changeset.js';

function realistic(): ChangeSet {
  const cs = new ChangeSet();
  cs.add('_shop__Namespace', 'created');
  cs.add('shop_settings__ConfigMap', 'created');
  cs.add('shop_web__Service', 'created');
  cs.add('shop_web_apps_Deployment', 'configured');
  for (let i = 0; i < 12; i++) cs.add(`shop_cm-${i}__ConfigMap`, 'unchanged');
  cs.add('shop_old_apps_Deployment', 'deleted');
  return cs;
}

describe('ChangeSet', () => {
  test('counts every action, zero for none', () => {
    expect(realistic().counts()).toEqual({ created: 3, configured: 1, unchanged: 12, deleted: 1, skipped: 0 });
    expect(new ChangeSet().counts()).toEqual({ created: 0, configured: 0, unchanged: 0, deleted: 0, skipped: 0 });
  });

  test('has changes only when something was created, configured or deleted', () => {
    expect(realistic().hasChanges()).toBe(true);
    expect(new ChangeSet().hasChanges()).toBe(false);
    const quiet = new ChangeSet()
      .add('shop_web_apps_Deployment', 'unchanged')
      .add('shop_theirs__ConfigMap', 'skipped', 'owned by Sync other/x');
    expect(quiet.hasChanges()).toBe(false);
    expect(new ChangeSet().add({ id: '_shop__Namespace', action: 'deleted' }).hasChanges()).toBe(true);
    expect(new ChangeSet([{ id: 'a_b__ConfigMap', action: 'configured' }]).hasChanges()).toBe(true);
  });

  test('keeps entries in order with their messages, and copies what it is given', () => {
    const entry = { id: 'shop_theirs__ConfigMap', action: 'skipped' as const, message: 'owned by Sync other/x' };
    const cs = new ChangeSet().add('_shop__Namespace', 'unchanged').add(entry);
    entry.message = 'changed later';
    expect(cs.entries).toEqual([
      { id: '_shop__Namespace', action: 'unchanged' },
      { id: 'shop_theirs__ConfigMap', action: 'skipped', message: 'owned by Sync other/x' },
    ]);
    expect(cs.changed()).toEqual([cs.entries[1]]);
    expect(cs.size).toBe(2);
  });

  test('appends another change set', () => {
    const prune = new ChangeSet().add('shop_old__ConfigMap', 'deleted');
    const cs = new ChangeSet().add('shop_web_apps_Deployment', 'unchanged').append(prune);
    expect(cs.entries.map((e) => e.action)).toEqual(['unchanged', 'deleted']);
  });
});

describe('formatChangeSet', () => {
  test('counts, then the changed objects by display name', () => {
    expect(formatChangeSet(realistic())).toBe(
      '3 created, 1 configured, 12 unchanged, 1 deleted: Namespace/shop created, ConfigMap/shop/settings created, ' +
        'Service/shop/web created, Deployment/shop/web configured, Deployment/shop/old deleted',
    );
  });

  test('names at most max objects and says how many more', () => {
    expect(formatChangeSet(realistic(), 2)).toBe(
      '3 created, 1 configured, 12 unchanged, 1 deleted: Namespace/shop created, ConfigMap/shop/settings created, and 3 more',
    );
    expect(formatChangeSet(realistic(), 0)).toBe('3 created, 1 configured, 12 unchanged, 1 deleted');
    const many = new ChangeSet();
    for (let i = 0; i < 25; i++) many.add(`shop_cm-${String(i).padStart(2, '0')}__ConfigMap`, 'created');
    const line = formatChangeSet(many);
    expect(line.startsWith('25 created: ConfigMap/shop/cm-00 created, ')).toBe(true);
    expect(line.endsWith('ConfigMap/shop/cm-09 created, and 15 more')).toBe(true);
  });

  test('lists skipped objects without their messages, and no unchanged ones', () => {
    const cs = new ChangeSet()
      .add('shop_web_apps_Deployment', 'unchanged')
      .add('_shop-reader_rbac.authorization.k8s.io_ClusterRole', 'skipped', 'owned by Sync other/x');
    expect(formatChangeSet(cs)).toBe('1 unchanged, 1 skipped: ClusterRole/shop-reader skipped');
  });

  test('a set with nothing changed is only its count; an empty one says so', () => {
    const cs = new ChangeSet().add('shop_web_apps_Deployment', 'unchanged').add('_shop__Namespace', 'unchanged');
    expect(formatChangeSet(cs)).toBe('2 unchanged');
    expect(formatChangeSet(new ChangeSet())).toBe('no objects');
  });

  test('shows an id that does not parse as it is', () => {
    expect(formatChangeSet(new ChangeSet().add('garbage', 'deleted'))).toBe('1 deleted: garbage deleted');
  });
});
