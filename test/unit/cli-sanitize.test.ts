// Strings from a cluster do not drive the terminal (src/cli/sanitize.ts):
// escape sequences and control characters are stripped from all output; on
// a terminal the CLI's own colours and line erase stay.
import { describe, expect, test } from '@jest/globals';
import { PassThrough } from 'node:stream';
import { ERASE_LINE } from '../../src/cli/drive/progress.js';
import { installOutputFilter, stripControls, stripForeignControls } from '../../src/cli/sanitize.js';
import { styleFor } from '../../src/cli/terminal.js';

const HOSTILE: [string, string, string][] = [
  ['an OSC title (BEL)', 'a\x1b]0;pwned\x07b', 'ab'],
  ['an OSC title (ST)', 'a\x1b]2;pwned\x1b\\b', 'ab'],
  ['an OSC 8 hyperlink', '\x1b]8;;http://evil.example\x1b\\click\x1b]8;;\x1b\\', 'click'],
  ['clear screen', 'x\x1b[2Jy', 'xy'],
  ['cursor home and erase', '\x1b[H\x1b[2K\x1b[1;1Hmsg', 'msg'],
  ['a colour', '\x1b[31mred\x1b[0m', 'red'],
  ['a private mode', '\x1b[?1049hz', 'z'],
  ['a DCS string', 'a\x1bPq#0;2;0;0;0\x1b\\b', 'ab'],
  ['a two-character escape (reset)', 'a\x1bcb', 'ab'],
  ['a charset escape', 'a\x1b(0b', 'ab'],
  ['8-bit CSI', 'a\x9b2Jb', 'ab'],
  ['8-bit OSC', 'a\x9d0;pwned\x9cb', 'ab'],
  ['other C1', 'a\x85\x8db', 'ab'],
  ['carriage return', 'real\rfake', 'realfake'],
  ['backspace, bell, NUL, vertical tab, form feed', 'a\x08\x07\x00\x0b\x0cb', 'ab'],
  ['DEL', 'a\x7fb', 'ab'],
  ['a lone ESC', 'a\x1b', 'a'],
  ['an unterminated OSC (its introducer goes)', 'a\x1b]0;pwned', 'a0;pwned'],
];

describe('stripControls', () => {
  test.each(HOSTILE)('%s', (_what, text, want) => {
    expect(stripControls(text)).toBe(want);
  });

  test('newlines, tabs and text (non-ASCII too) stay', () => {
    expect(stripControls('a\tb\nc ✔ ◎ é 日本')).toBe('a\tb\nc ✔ ◎ é 日本');
  });
});

describe('stripForeignControls (a stream that shows colour)', () => {
  test('the CLI’s own colours and line erase stay; the rest goes', () => {
    const style = styleFor({ isTTY: true }, { TERM: 'xterm' });
    const own = `${ERASE_LINE}${style.red('failed')} ${style.green('ok')} ${style.yellow('wait')} ${style.dim('1s')} ${style.bold('x')}`;
    expect(stripForeignControls(own)).toBe(own);
    expect(stripForeignControls(`${style.red('a\x1b]0;pwned\x07\x1b[2Jb')}\rz`)).toBe(`${style.red('ab')}z`);
  });

  test.each(HOSTILE.filter(([what]) => what !== 'a colour'))('%s', (_what, text, want) => {
    expect(stripForeignControls(text)).toBe(want);
  });
});

describe('installOutputFilter', () => {
  test('filters strings and buffers written to the stream', () => {
    const stream = new PassThrough();
    const chunks: string[] = [];
    stream.on('data', (c: Buffer) => chunks.push(c.toString('utf8')));
    installOutputFilter(stream as unknown as NodeJS.WriteStream, false);
    stream.write('msg \x1b]0;pwned\x07one\n');
    stream.write(Buffer.from('\x1b[2Jtwo\x1b[31m\n'));
    expect(chunks.join('')).toBe('msg one\ntwo\n');
  });
});
