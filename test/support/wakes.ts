// What woke each reconcile of an operator's run, read from its `reconciled`
// debug lines (runtime/controller.ts lists the causes of each run; a run with
// none was brought by a timer: "requeue or retry").

/** A line of the operator's JSON log (the fields read here). */
export interface ReconcileLine {
  msg?: unknown;
  kind?: unknown;
  namespace?: unknown;
  name?: unknown;
  time?: unknown;
  causes?: unknown;
}

/** The cause the controller gives a run that nothing but a timer (a requeue, a retry) brought. */
export const TIMER_CAUSE = 'requeue or retry';

/**
 * The reconciles that a timer brought after the object had waited at least
 * `idleMs` since its previous reconcile: it sat waiting for something, and
 * what ended the wait was its own timer, not a watch event of what it waited
 * for (issue 37: a round that took 252 s instead of 8). One line each:
 * `Sync ns/name: woken by a timer after 30012 ms (previous reconcile at ...)`.
 */
export function timerWakes(lines: readonly ReconcileLine[], idleMs = 5_000): string[] {
  const last = new Map<string, number>();
  const found: string[] = [];
  for (const l of lines) {
    if (typeof l.msg !== 'string' || !l.msg.startsWith('reconciled')) continue;
    const key = `${String(l.kind)} ${String(l.namespace)}/${String(l.name)}`;
    const at = Date.parse(String(l.time));
    const causes = Array.isArray(l.causes) ? (l.causes as string[]) : [];
    const before = last.get(key);
    last.set(key, at);
    if (before === undefined || causes.length !== 1 || causes[0] !== TIMER_CAUSE) continue;
    if (at - before >= idleMs) found.push(`${key}: woken by a timer after ${at - before} ms (previous reconcile at ${new Date(before).toISOString()})`);
  }
  return found;
}
