/**
 * Where a JSON text first goes wrong, as an offset: V8's JSON.parse messages
 * name a position only for some errors. A small validating scanner, run only
 * after JSON.parse has failed.
 */

class Stop {
  constructor(readonly at: number) {}
}

const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
const WORDS = ['true', 'false', 'null'];

class Scanner {
  i = 0;
  constructor(private readonly s: string) {}

  fail(): never {
    throw new Stop(this.i);
  }

  ws(): void {
    while (' \t\n\r'.includes(this.s[this.i] ?? 'x')) this.i++;
  }

  expect(ch: string): void {
    if (this.s[this.i] !== ch) this.fail();
    this.i++;
  }

  value(): void {
    this.ws();
    const ch = this.s[this.i];
    if (ch === '{') this.container('}', () => this.member());
    else if (ch === '[') this.container(']', () => this.value());
    else if (ch === '"') this.string();
    else this.scalar();
    this.ws();
  }

  member(): void {
    this.ws();
    this.string();
    this.ws();
    this.expect(':');
    this.value();
  }

  container(close: string, item: () => void): void {
    this.i++;
    this.ws();
    if (this.s[this.i] === close) {
      this.i++;
      return;
    }
    for (;;) {
      item();
      this.ws();
      if (this.s[this.i] === close) {
        this.i++;
        return;
      }
      this.expect(',');
    }
  }

  string(): void {
    this.expect('"');
    for (;;) {
      const ch = this.s[this.i];
      if (ch === undefined || ch < ' ') this.fail();
      this.i++;
      if (ch === '"') return;
      if (ch === '\\') this.escape();
    }
  }

  escape(): void {
    const ch = this.s[this.i];
    if (ch !== undefined && '"\\/bfnrt'.includes(ch)) {
      this.i++;
      return;
    }
    if (ch !== 'u' || !/^[0-9a-fA-F]{4}$/.test(this.s.slice(this.i + 1, this.i + 5))) this.fail();
    this.i += 5;
  }

  scalar(): void {
    const word = WORDS.find((w) => this.s.startsWith(w, this.i));
    if (word) {
      this.i += word.length;
      return;
    }
    NUMBER.lastIndex = this.i;
    if (!NUMBER.test(this.s)) this.fail();
    this.i = NUMBER.lastIndex;
  }
}

/** The offset of the first error in `text`, or undefined when none is found (or the text is too deep to scan). */
export function jsonErrorOffset(text: string): number | undefined {
  const scanner = new Scanner(text);
  try {
    scanner.value();
    return scanner.i < text.length ? scanner.i : undefined;
  } catch (err) {
    if (err instanceof Stop) return err.at;
    return undefined;
  }
}

/** `line:column` (1-based) of an offset. */
export function lineColumn(text: string, offset: number): string {
  const lines = text.slice(0, offset).split('\n');
  return `${lines.length}:${(lines[lines.length - 1]?.length ?? 0) + 1}`;
}
