import { PassThrough, Writable } from 'node:stream';
import { stripVTControlCharacters } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { LineReader } from '../../src/cli/lineReader.ts';

let reader: LineReader | undefined;
afterEach(() => reader?.close());

/** Opens a reader; `line()` is the terminal's line as readline last drew it (from its clear-below). */
function open(terminal: boolean): { input: PassThrough; line: () => string } {
  const input = new PassThrough();
  let shown = '';
  const output = new Writable({
    write(chunk, _encoding, done) {
      shown += String(chunk);
      done();
    },
  });
  reader = new LineReader(input, output, terminal);
  return { input, line: () => stripVTControlCharacters(shown.split('\x1b[0J').at(-1) ?? '') };
}

const settled = () => new Promise((resolve) => setTimeout(resolve, 10));

describe('reading the chat’s lines', { timeout: 2_000 }, () => {
  it('gives a question the next line ahead of a prompt that was already waiting', async () => {
    const { input } = open(false);
    const message = reader?.next('you> ');
    const answer = reader?.ask('Approve pay? [y/n] ');
    input.write('y\nhello\n');
    expect(await answer).toBe('y');
    expect(await message).toBe('hello');
  });

  it('keeps lines that came before a question in order, as piped input does', async () => {
    const { input } = open(false);
    input.write('Pay Ana\ny\n');
    await settled();
    expect(await reader?.next('you> ')).toBe('Pay Ana');
    expect(await reader?.ask('Approve pay? [y/n] ')).toBe('y');
  });

  it('gives back what was typed at the prompt when a question took the line', async () => {
    const { input, line } = open(true);
    const message = reader?.next('you> ');
    input.write('Than');
    await settled();
    const answer = reader?.ask('Approve pay? [y/n] ');
    input.write('y\r');
    expect(await answer).toBe('y');
    await settled();
    expect(line()).toBe('you> Than');
    input.write('ks\r');
    expect(await message).toBe('Thanks');
  });

  it('brings a hidden prompt back only on reveal, even after a question was answered', async () => {
    const { input, line } = open(true);
    const message = reader?.next('you> ');
    input.write('Than');
    await settled();
    reader?.hide();
    const answer = reader?.ask('Approve pay? [y/n] ');
    input.write('n\r');
    expect(await answer).toBe('n');
    await settled();
    expect(line()).toBe('Approve pay? [y/n] n\r\n');
    reader?.reveal();
    expect(line()).toBe('you> Than');
    input.write('ks\r');
    expect(await message).toBe('Thanks');
  });

  it('takes a withdrawn question off the screen and gives the next line to the prompt, with its draft', async () => {
    const { input, line } = open(true);
    const message = reader?.next('you> ');
    input.write('Than');
    await settled();
    const withdrawn = new AbortController();
    const answer = reader?.ask('Approve pay? [y/n] ', withdrawn.signal);
    input.write('y');
    await settled();
    withdrawn.abort();
    expect(await answer).toBeNull();
    await settled();
    expect(line()).toBe('you> Than');
    input.write('ks\r');
    expect(await message).toBe('Thanks');
  });
});
