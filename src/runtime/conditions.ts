import { fitMessage } from './messages.js';

/** A metav1.Condition. */
export interface Condition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  reason: string;
  message: string;
  observedGeneration?: number;
  lastTransitionTime: string;
}

export type ConditionInput = Omit<Condition, 'lastTransitionTime'>;

/**
 * Sets a condition, keeping its lastTransitionTime while its status stays the
 * same (so an unchanged condition compares equal and is not written again);
 * a message longer than a condition may carry is cut to fit.
 */
export function setCondition(conditions: Condition[] = [], next: ConditionInput, now = new Date()): Condition[] {
  const old = conditions.find((c) => c.type === next.type);
  const lastTransitionTime = old && old.status === next.status ? old.lastTransitionTime : now.toISOString().replace(/\.\d+Z$/, 'Z');
  const updated: Condition = { ...next, message: fitMessage(next.message), lastTransitionTime };
  return old ? conditions.map((c) => (c.type === next.type ? updated : c)) : [...conditions, updated];
}

export function removeCondition(conditions: Condition[] = [], type: string): Condition[] {
  return conditions.filter((c) => c.type !== type);
}

export function findCondition(conditions: Condition[] | undefined, type: string): Condition | undefined {
  return conditions?.find((c) => c.type === type);
}
