import { APIError } from 'openai';
import { describe, expect, it } from 'vitest';
import { completionChunks } from '../../activities/models/completionStream.ts';

/** A response whose body arrives in these pieces, each one read. */
function responseOf(pieces: (string | Uint8Array)[]): Response {
  const encoder = new TextEncoder();
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      for (const piece of pieces)
        controller.enqueue(typeof piece === 'string' ? encoder.encode(piece) : piece);
      controller.close();
    },
  });
  return new Response(body, { headers: { 'content-type': 'text/event-stream' } });
}

async function read(pieces: (string | Uint8Array)[]): Promise<unknown[][]> {
  const batches: unknown[][] = [];
  for await (const chunks of completionChunks(responseOf(pieces), new AbortController().signal)) {
    batches.push(chunks);
  }
  return batches;
}

const chunk = (text: string) => ({ choices: [{ index: 0, delta: { content: text } }] });
const event = (text: string) => `data: ${JSON.stringify(chunk(text))}\n\n`;

describe('completionChunks', () => {
  it('hands on the events of each read together, in order, and stops at [DONE]', async () => {
    const batches = await read([event('a') + event('b'), `${event('c')}data: [DONE]\n\n${event('after')}`]);
    expect(batches).toEqual([[chunk('a'), chunk('b')], [chunk('c')]]);
  });

  it('joins an event cut between reads, also inside a UTF-8 character and a \\r\\n', async () => {
    const bytes = new TextEncoder().encode(event('😀 é').replace(/\n/g, '\r\n'));
    const emoji = bytes.indexOf(0xf0);
    // Inside the emoji's four bytes, between a \r and its \n, and before the last \n.
    const cuts = [3, emoji + 2, bytes.length - 3, bytes.length - 1];
    const pieces = cuts.map((cut, index) => bytes.slice(cuts[index - 1] ?? 0, cut));
    pieces.push(bytes.slice(cuts.at(-1)));
    expect((await read(pieces)).flat()).toEqual([chunk('😀 é')]);
  });

  it('skips comments and events without data, joins data lines, and reads a last event without its blank line', async () => {
    const json = JSON.stringify(chunk('x'));
    const cut = json.indexOf(':') + 1;
    const batches = await read([
      ': keep-alive\n\nretry: 10\n\n',
      `data:${json.slice(0, cut)}\ndata: ${json.slice(cut)}`,
    ]);
    // Two data lines join with a newline, which JSON reads as whitespace between tokens.
    expect(batches.flat()).toEqual([JSON.parse(`${json.slice(0, cut)}\n${json.slice(cut)}`)]);
    expect((await read([`data: ${JSON.stringify(chunk('last'))}`])).flat()).toEqual([chunk('last')]);
  });

  it("throws the provider's error event or error data as an APIError, and data that is not JSON", async () => {
    const error = { message: 'overloaded', type: 'server_error' };
    await expect(read([event('a'), `event: error\ndata: ${JSON.stringify({ error })}\n\n`])).rejects.toThrow(
      APIError,
    );
    await expect(read([`data: ${JSON.stringify({ error })}\n\n`])).rejects.toThrow('overloaded');
    await expect(read(['data: {not json\n\n'])).rejects.toThrow('malformed server-sent event JSON');
  });

  it('ends quietly when the call is cancelled mid-stream', async () => {
    const cancel = new AbortController();
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode(event('a')));
        cancel.signal.addEventListener('abort', () => controller.error(cancel.signal.reason));
      },
    });
    const seen: unknown[] = [];
    for await (const chunks of completionChunks(new Response(body), cancel.signal)) {
      seen.push(...chunks);
      cancel.abort();
    }
    expect(seen).toEqual([chunk('a')]);
  });
});
