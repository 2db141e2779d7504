// Who owns an object, and what a prune keeps: the one module that reads the owner labels.
import { describe, expect, test } from '@jest/globals';
import {
  holderOf,
  holderText,
  keptFromPrune,
  labelledOwner,
  ownedBy,
  ownedByOther,
  ownerLabelOf,
  ownerLabels,
  ownerMarks,
  ownerOf,
  ownerOfKey,
  ownerSelector,
  originOf,
  unowned,
  type Owner,
} from '../../src/apply/owner.js';
import type { KubeObject } from '../../src/kube/resources.js';

const app: Owner = { kind: 'Sync', namespace: 'team', name: 'app' };
const other: Owner = { kind: 'RemoteSync', namespace: 'team', name: 'edge' };

function object(labels?: Record<string, string>, annotations?: Record<string, string>): KubeObject {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm', namespace: 'team', labels, annotations } };
}

describe('owner labels', () => {
  test('written as the three syncprims.dev/owner-* labels, and read back', () => {
    expect(ownerLabels(app)).toEqual({ 'syncprims.dev/owner-kind': 'Sync', 'syncprims.dev/owner-namespace': 'team', 'syncprims.dev/owner-name': 'app' });
    expect(ownerSelector(app)).toBe('syncprims.dev/owner-kind=Sync,syncprims.dev/owner-namespace=team,syncprims.dev/owner-name=app');
    expect(labelledOwner(object(ownerLabels(app)))).toEqual(app);
    expect(ownerLabelOf(object(ownerLabels(app)))).toBe('Sync/team/app');
    expect(holderOf(object(ownerLabels(app)))).toBe('Sync/team/app');
  });

  test('an owner kind without the rest: owned (by a partial name), but no holder', () => {
    const partial = object({ 'syncprims.dev/owner-kind': 'Sync' });
    expect(ownerLabelOf(partial)).toBe('Sync//');
    expect(unowned(partial)).toBe(false);
    expect(labelledOwner(partial)).toBeUndefined();
    expect(holderOf(partial)).toBe('');
    expect(ownedByOther(partial, app)).toBe(true);
  });

  test('no owner kind: nobody owns it, and applying adopts it', () => {
    for (const obj of [object(), object({ 'syncprims.dev/owner-name': 'app', 'syncprims.dev/owner-namespace': 'team' })]) {
      expect(unowned(obj)).toBe(true);
      expect(ownerLabelOf(obj)).toBe('');
      expect(ownedBy(obj, app)).toBe(false);
      expect(ownedByOther(obj, app)).toBe(false);
      expect(holderOf(obj)).toBe('');
    }
    expect(holderOf(undefined)).toBe('');
  });

  test('in a remote cluster, an object of another origin is not ours whatever its owner labels say; at home the origin is not looked at', () => {
    const there: Owner = { ...other, origin: 'mgmt-a' };
    const ours = object({ ...ownerLabels(other), 'syncprims.dev/origin': 'mgmt-a' });
    const twin = object({ ...ownerLabels(other), 'syncprims.dev/origin': 'mgmt-b' });
    const noOrigin = object(ownerLabels(other));
    expect(originOf(twin)).toBe('mgmt-b');
    expect(ownedBy(ours, there)).toBe(true);
    expect([ownedBy(twin, there), ownedByOther(twin, there)]).toEqual([false, true]);
    expect([ownedBy(noOrigin, there), ownedByOther(noOrigin, there)]).toEqual([false, true]);
    expect(keptFromPrune(twin, there)).toBe('not ours (owner: RemoteSync/team/edge (applied from managing cluster mgmt-b))');
    expect(keptFromPrune(ours, there)).toBeUndefined();
    // Where it differs, the message names the other cluster (else the owner would read as itself); elsewhere, only the owner.
    expect(holderText(twin, there)).toBe('RemoteSync/team/edge (applied from managing cluster mgmt-b)');
    expect(holderText(noOrigin, there)).toBe('RemoteSync/team/edge');
    expect(holderText(twin, other)).toBe('RemoteSync/team/edge');
    expect(holderText(object(), there)).toBe('none');
    expect(ownedBy(twin, other)).toBe(true);
  });

  test('ours or another sync', () => {
    expect(ownedBy(object(ownerLabels(app)), app)).toBe(true);
    expect(ownedByOther(object(ownerLabels(app)), app)).toBe(false);
    expect(ownedBy(object(ownerLabels(other)), app)).toBe(false);
    expect(ownedByOther(object(ownerLabels(other)), app)).toBe(true);
    // The same name in another kind is another owner.
    expect(ownedByOther(object(ownerLabels({ ...app, kind: 'ProxySync' })), app)).toBe(true);
  });

  test('the owner a sync object or key is', () => {
    const sync: KubeObject = { apiVersion: 'syncprims.dev/v1alpha1', kind: 'Sync', metadata: { name: 'app', namespace: 'team' } };
    expect(ownerOf(sync)).toEqual(app);
    expect(ownerOf({ ...sync, kind: '' }, 'ProxySync')).toEqual({ ...app, kind: 'ProxySync' });
    expect(ownerOfKey('Sync', 'team/app')).toEqual(app);
    expect(ownerOfKey('Sync', 'team')).toEqual({ kind: 'Sync', namespace: 'team', name: '' });
  });
});

describe('keptFromPrune', () => {
  test('ours and not disabled: pruned; gone: nothing to keep', () => {
    expect(keptFromPrune(object(ownerLabels(app)), app)).toBeUndefined();
    expect(keptFromPrune(object(ownerLabels(app), { 'syncprims.dev/prune': 'enabled' }), app)).toBeUndefined();
    expect(keptFromPrune(undefined, app)).toBeUndefined();
  });

  test('another owner, or none: kept, saying whose it is', () => {
    expect(keptFromPrune(object(ownerLabels(other)), app)).toBe('not ours (owner: RemoteSync/team/edge)');
    expect(keptFromPrune(object(), app)).toBe('not ours (owner: none)');
  });

  test('prune: disabled: kept, even though ours', () => {
    expect(keptFromPrune(object(ownerLabels(app), { 'syncprims.dev/prune': 'disabled' }), app)).toBe('syncprims.dev/prune: disabled');
    // Not ours is said first.
    expect(keptFromPrune(object(ownerLabels(other), { 'syncprims.dev/prune': 'disabled' }), app)).toBe('not ours (owner: RemoteSync/team/edge)');
  });
});

describe('the owner with its origin, made in one place', () => {
  const sync = { apiVersion: 'syncprims.dev/v1alpha1', kind: 'RemoteSync', metadata: { name: 'app', namespace: 'team' } };
  test('ownerOf gives the origin only when there is one; ownerMarks writes it beside the owner labels', () => {
    expect(ownerOf(sync)).toEqual({ kind: 'RemoteSync', namespace: 'team', name: 'app' });
    expect(ownerOf(sync, 'RemoteSync', 'mgmt-uid')).toEqual({ kind: 'RemoteSync', namespace: 'team', name: 'app', origin: 'mgmt-uid' });
    expect(ownerMarks(ownerOf(sync))).toEqual({ 'syncprims.dev/owner-kind': 'RemoteSync', 'syncprims.dev/owner-namespace': 'team', 'syncprims.dev/owner-name': 'app' });
    expect(ownerMarks(ownerOf(sync, 'RemoteSync', 'mgmt-uid'))).toMatchObject({ 'syncprims.dev/origin': 'mgmt-uid', 'syncprims.dev/owner-name': 'app' });
  });

  test('an object of another origin is not ours, one of ours is', () => {
    const owner = ownerOf(sync, 'RemoteSync', 'mgmt-uid');
    const object = (origin: string) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x', labels: ownerMarks({ ...owner, origin }) } });
    expect([ownedBy(object('mgmt-uid'), owner), ownedBy(object('another'), owner)]).toEqual([true, false]);
  });
});
