// Text from elsewhere (a remote cluster's status, an Event message, an error
// text) must not drive a terminal that shows it later: an escape sequence
// `\x1b]0;...\x07` retitles the window, `\x1b[2J` clears the screen, a `\r`
// overwrites what came before. stripControls takes them all out; the CLI
// filters its output with it (cli/sanitize.ts), and what the operator copies
// from a remote cluster into a status is stripped where it enters.

/* eslint-disable no-control-regex */
/** Escape sequences, whole: CSI (7- and 8-bit), OSC and the other strings (DCS, SOS, PM, APC) up to their terminator, and two-character escapes. */
const SEQUENCES = new RegExp(
  [
    '(?:\\x1b\\[|\\x9b)[\\x30-\\x3f]*[\\x20-\\x2f]*[\\x40-\\x7e]',
    '(?:\\x1b[\\]PX^_]|[\\x90\\x98\\x9d-\\x9f])[^\\x07\\x1b\\x9c]*(?:\\x07|\\x1b\\\\|\\x9c)',
    '\\x1b[\\x20-\\x2f]*[\\x30-\\x7e]',
  ].join('|'),
  'g',
);
/** What is left of control characters: C0 but tab and newline, DEL, C1 (a lone ESC among them). */
const CONTROLS = /[\x00-\x08\x0b-\x1f\x7f-\x9f]/g;
/* eslint-enable no-control-regex */

/** `text` without escape sequences and control characters (newlines and tabs kept). */
export function stripControls(text: string): string {
  return text.replace(SEQUENCES, '').replace(CONTROLS, '');
}
