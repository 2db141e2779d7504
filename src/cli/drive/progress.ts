import { humanAge } from '../format.js';
import { styleFor, visibleWidth, type Style } from '../terminal.js';

/**
 * What a command is waiting on, said as it changes. On a terminal it is one
 * line rewritten in place (carriage return, erase line) with the time waited,
 * ticking each second; piped or redirected, each new text is a plain line of
 * its own and nothing else (no escape codes, no carriage returns).
 */

export interface ProgressStream {
  isTTY?: boolean;
  /** The terminal's width, when it is one. */
  columns?: number;
  write(text: string): unknown;
}

/** Lines rewritten in place: only on a terminal that can (not `TERM=dumb`). Colour is a separate matter (NO_COLOR). */
export function liveLineEnabled(stream: ProgressStream, env: NodeJS.ProcessEnv = process.env): boolean {
  return stream.isTTY === true && env.TERM !== 'dumb';
}

/** Carriage return, then erase the whole line. */
export const ERASE_LINE = '\r\x1b[2K';

/** The marks at the start of the lines: an action, a wait, a success (as Flux's CLI writes them). */
export const MARK = { action: '►', waiting: '◎', done: '✔' } as const;

export interface ProgressOptions {
  style: Style;
  /** Rewrite the line in place (a terminal); else a plain line per change. */
  live: boolean;
  /** The clock (ms), for the time waited. */
  now?: () => number;
  /** How often the time waited is redrawn on a terminal; 0: never. */
  tickMs?: number;
}

export class ProgressLine {
  private text: string | undefined;
  private drawn = false;
  private timer: NodeJS.Timeout | undefined;
  private readonly now: () => number;
  private readonly startedAt: number;

  constructor(
    private readonly stream: ProgressStream,
    private readonly opts: ProgressOptions,
  ) {
    this.now = opts.now ?? Date.now;
    this.startedAt = this.now();
  }

  /** For stdout as it is: live and coloured on a terminal, plain lines when piped. */
  static forStream(stream: ProgressStream & NodeJS.WritableStream, env: NodeJS.ProcessEnv = process.env): ProgressLine {
    return new ProgressLine(stream, { style: styleFor(stream, env), live: liveLineEnabled(stream, env), tickMs: 1000 });
  }

  get style(): Style {
    return this.opts.style;
  }

  /** What is being waited on now; the same text again changes nothing. */
  update(text: string): void {
    if (text === this.text) return;
    this.text = text;
    if (!this.opts.live) {
      this.stream.write(`${MARK.waiting} ${text}\n`);
      return;
    }
    this.draw();
    const tick = this.opts.tickMs ?? 0;
    if (tick > 0 && !this.timer) {
      this.timer = setInterval(() => this.draw(), tick);
      this.timer.unref();
    }
  }

  /** A line that stays; on a terminal the progress line is drawn again below it. */
  print(line: string): void {
    if (this.drawn) this.stream.write(ERASE_LINE);
    this.drawn = false;
    this.stream.write(`${line}\n`);
    if (this.opts.live && this.text !== undefined) this.draw();
  }

  /** Stops: the progress line goes, and `line` (if any) takes its place. */
  end(line?: string): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    if (this.drawn) this.stream.write(ERASE_LINE);
    this.drawn = false;
    this.text = undefined;
    if (line !== undefined) this.stream.write(`${line}\n`);
  }

  /** The last text given to `update` (what it was waiting on), if it still waits. */
  get current(): string | undefined {
    return this.text;
  }

  private draw(): void {
    if (this.text === undefined) return;
    const { style } = this.opts;
    const mark = `${MARK.waiting} `;
    const waited = ` (${humanAge(this.now() - this.startedAt)})`;
    // Never wider than the terminal: a wrapped line could not be rewritten in place.
    const room = (this.stream.columns ?? 80) - 1 - visibleWidth(mark) - visibleWidth(waited);
    const text = fit(this.text, room);
    this.stream.write(`${ERASE_LINE}${style.yellow(mark)}${text}${style.dim(waited)}`);
    this.drawn = true;
  }
}

/** `text` cut to `width` characters, with an ellipsis when cut. */
export function fit(text: string, width: number): string {
  const chars = [...text];
  if (chars.length <= width) return text;
  if (width <= 1) return chars.slice(0, Math.max(0, width)).join('');
  return `${chars.slice(0, width - 1).join('')}…`;
}
