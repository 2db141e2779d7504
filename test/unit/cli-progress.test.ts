// The progress line of reconcile, suspend and resume: in place on a terminal, plain lines when piped.
import { describe, expect, test } from '@jest/globals';
import { ERASE_LINE, fit, liveLineEnabled, ProgressLine } from '../../src/cli/drive/progress.js';
import { PLAIN, styleFor, visibleWidth } from '../../src/cli/terminal.js';

function sink(columns?: number) {
  const writes: string[] = [];
  return { stream: { isTTY: true, columns, write: (t: string) => writes.push(t) }, writes };
}

describe('liveLineEnabled', () => {
  test('only on a terminal that can rewrite a line; NO_COLOR is about colour, not this', () => {
    expect(liveLineEnabled({ isTTY: true, write: () => true }, {})).toBe(true);
    expect(liveLineEnabled({ isTTY: true, write: () => true }, { NO_COLOR: '1' })).toBe(true);
    expect(liveLineEnabled({ isTTY: true, write: () => true }, { TERM: 'dumb' })).toBe(false);
    expect(liveLineEnabled({ write: () => true }, {})).toBe(false);
  });
});

describe('ProgressLine', () => {
  test('piped: a plain line per new text, nothing for the same text, no escape codes', () => {
    const { stream, writes } = sink();
    const p = new ProgressLine(stream, { style: PLAIN, live: false });
    p.print('► asked');
    p.update('dependencies pending: Sync/base (NotReady)');
    p.update('dependencies pending: Sync/base (NotReady)');
    p.update('applying revision sha256:0123456789ab');
    p.end('✔ done');
    expect(writes.join('')).toBe('► asked\n◎ dependencies pending: Sync/base (NotReady)\n◎ applying revision sha256:0123456789ab\n✔ done\n');
  });

  test('on a terminal: one line rewritten in place with the time waited; the outcome takes its place', () => {
    const { stream, writes } = sink(80);
    let now = 0;
    const p = new ProgressLine(stream, { style: PLAIN, live: true, now: () => now });
    p.print('► asked');
    p.update('dependencies pending: Sync/base (NotReady)');
    now = 3_000;
    p.update('applying');
    p.end('✔ done');
    expect(writes).toEqual([
      '► asked\n',
      `${ERASE_LINE}◎ dependencies pending: Sync/base (NotReady) (0s)`,
      `${ERASE_LINE}◎ applying (3s)`,
      ERASE_LINE,
      '✔ done\n',
    ]);
  });

  test('a line printed while waiting goes above the progress line, which is drawn again', () => {
    const { stream, writes } = sink(80);
    const p = new ProgressLine(stream, { style: PLAIN, live: true, now: () => 0 });
    p.update('waiting');
    p.print('a note');
    expect(writes.slice(1)).toEqual([ERASE_LINE, 'a note\n', `${ERASE_LINE}◎ waiting (0s)`]);
  });

  test('never wider than the terminal (a wrapped line could not be rewritten), colour only in the style given', () => {
    const { stream, writes } = sink(30);
    const style = styleFor({ isTTY: true }, {});
    const p = new ProgressLine(stream, { style, live: true, now: () => 0 });
    p.update('waiting for 1 of 1 objects: Deployment fleet/web (InProgress)');
    const line = writes[0]!;
    expect(line).toBe(`${ERASE_LINE}\x1b[33m◎ \x1b[39mwaiting for 1 of 1 ob…\x1b[2m (0s)\x1b[22m`);
    expect(visibleWidth(line.slice(ERASE_LINE.length))).toBe(29);
  });

  test('the time waited ticks on a terminal until the end', async () => {
    const { stream, writes } = sink(80);
    const p = new ProgressLine(stream, { style: PLAIN, live: true, tickMs: 5 });
    p.update('waiting');
    await new Promise((r) => setTimeout(r, 40));
    p.end();
    const drawn = writes.length;
    expect(drawn).toBeGreaterThan(2);
    await new Promise((r) => setTimeout(r, 20));
    expect(writes).toHaveLength(drawn);
    expect(writes.at(-1)).toBe(ERASE_LINE);
  });
});

describe('fit', () => {
  test.each([
    ['short', 10, 'short'],
    ['exactly10!', 10, 'exactly10!'],
    ['a bit too long', 10, 'a bit too…'],
    ['xy', 1, 'x'],
  ])('%j in %d', (text, width, want) => {
    expect(fit(text, width)).toBe(want);
  });
});
