/**
 * Colour only for a person at a terminal: not when the stream is piped or
 * redirected, not with `NO_COLOR` set (https://no-color.org), not on a
 * `TERM=dumb` terminal. Plain ANSI codes: no dependency for four colours.
 */

export interface Style {
  readonly enabled: boolean;
  red(text: string): string;
  green(text: string): string;
  yellow(text: string): string;
  dim(text: string): string;
  bold(text: string): string;
}

export interface StreamLike {
  isTTY?: boolean;
}

export function colourEnabled(stream: StreamLike, env: NodeJS.ProcessEnv = process.env): boolean {
  if (!stream.isTTY) return false;
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== '') return false;
  return env.TERM !== 'dumb';
}

const sgr = (open: number, close: number) => (text: string) => `\x1b[${open}m${text}\x1b[${close}m`;

const COLOURED: Omit<Style, 'enabled'> = {
  red: sgr(31, 39),
  green: sgr(32, 39),
  yellow: sgr(33, 39),
  dim: sgr(2, 22),
  bold: sgr(1, 22),
};

const same = (text: string): string => text;

export const PLAIN: Style = { enabled: false, red: same, green: same, yellow: same, dim: same, bold: same };

export function styleFor(stream: StreamLike, env: NodeJS.ProcessEnv = process.env): Style {
  return colourEnabled(stream, env) ? { enabled: true, ...COLOURED } : PLAIN;
}

// eslint-disable-next-line no-control-regex
const ESCAPES = /\x1b\[[0-9;]*m/g;

/** The text without colour codes. */
export function stripEscapes(text: string): string {
  return text.replace(ESCAPES, '');
}

/** How wide the text shows (colour codes take no room; wide characters are not a concern of ours). */
export function visibleWidth(text: string): number {
  return [...stripEscapes(text)].length;
}
