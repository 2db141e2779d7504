/** Polls `check` until it returns a value other than undefined, or fails after `timeoutMs`. */
export async function eventually<T>(
  what: string,
  check: () => Promise<T | undefined>,
  timeoutMs = 60_000,
  everyMs = 100,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await check();
      if (v !== undefined) return v;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) {
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last ? `; last error: ${String(last)}` : ''}`);
    }
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/**
 * `count()` once it has not changed for `quietMs`: what trails an action (log lines after a status
 * write, sockets of earlier tests closing) has landed.
 */
export async function steady(count: () => number, quietMs = 1_000): Promise<number> {
  let last = -1;
  let since = Date.now();
  for (;;) {
    const now = count();
    if (now !== last) [last, since] = [now, Date.now()];
    if (Date.now() - since >= quietMs) return now;
    await new Promise((r) => setTimeout(r, 100));
  }
}
