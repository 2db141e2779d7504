/**
 * Messages built from many problems, and kept within what a condition may
 * carry. A set of 1,000 objects that all fail the same way names the first few
 * and counts the rest; a condition's message longer than its schema allows
 * would have the whole status write refused (422), leaving no condition at all.
 */

/** How many problems a message names; the rest are counted. */
export const LISTED_PROBLEMS = 5;

/** The longest message a condition may carry (metav1.Condition's limit, and our CRDs' schema). */
export const MAX_CONDITION_MESSAGE = 32768;

/** The first `shown` messages joined with '; ', then how many more there are. */
export function listProblems(messages: readonly string[], shown = LISTED_PROBLEMS): string {
  const more = messages.length > shown ? `; and ${messages.length - shown} more` : '';
  return messages.slice(0, shown).join('; ') + more;
}

/** The message, cut to `max` characters (UTF-16 units, so never more code points) with a note that it was. */
export function fitMessage(message: string, max = MAX_CONDITION_MESSAGE): string {
  if (message.length <= max) return message;
  const tail = ` ... (cut: ${message.length.toLocaleString('en-US')} characters in all)`;
  let end = max - tail.length;
  // Not between the two halves of a surrogate pair.
  const last = message.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end -= 1;
  return message.slice(0, end) + tail;
}
