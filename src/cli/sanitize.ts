// Strings from a cluster (Event messages, conditions, names, error texts)
// must not drive the terminal: an Event whose message holds `\x1b]0;...\x07`
// would retitle the window, `\x1b[2J` clear the screen, a `\r` overwrite
// what came before. The CLI's output streams are filtered once, at the
// bottom (installOutputFilter): every escape sequence and control character
// goes (stripControls, of runtime/control-chars.ts), but newlines and tabs,
// and, on a stream that shows colour, the few colour codes of the CLI's own
// Style (terminal.ts) and the progress line's erase.

import { stripControls } from '../runtime/control-chars.js';

export { stripControls };

/* eslint-disable no-control-regex */
/** The CLI's own codes (terminal.ts COLOURED, progress.ts ERASE_LINE), kept where colour is shown. */
const OWN_CODES = /(\x1b\[(?:1|2|22|31|32|33|39)m|\r\x1b\[2K)/;
/* eslint-enable no-control-regex */

/** As stripControls, but the CLI's own colour codes and line erase are kept (for a stream that shows colour). */
export function stripForeignControls(text: string): string {
  // split() with a capturing group: the codes at odd indexes.
  return text
    .split(OWN_CODES)
    .map((part, i) => (i % 2 === 1 ? part : stripControls(part)))
    .join('');
}

interface Writable {
  write: (chunk: never, ...rest: never[]) => boolean;
}

/** Filters stdout and stderr: the CLI's own codes are kept on a terminal that can show them. */
export function installOutputFilters(env: NodeJS.ProcessEnv = process.env): void {
  for (const stream of [process.stdout, process.stderr]) installOutputFilter(stream, stream.isTTY === true && env.TERM !== 'dumb');
}

/**
 * Filters everything written to `stream` (console.log and console.error
 * write through it too). `keepOwnCodes`: the stream shows the CLI's colours.
 */
export function installOutputFilter(stream: NodeJS.WriteStream, keepOwnCodes: boolean): void {
  const write = stream.write.bind(stream) as (chunk: unknown, ...rest: unknown[]) => boolean;
  const clean = keepOwnCodes ? stripForeignControls : stripControls;
  (stream as Writable).write = ((chunk: unknown, ...rest: unknown[]) => {
    const text = typeof chunk === 'string' ? chunk : Buffer.isBuffer(chunk) ? chunk.toString('utf8') : chunk;
    return write(typeof text === 'string' ? clean(text) : text, ...rest);
  }) as Writable['write'];
}
