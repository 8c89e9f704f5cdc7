import { readUIMessageStream, type UIMessage, type UIMessageChunk } from 'ai';
import { describe, expect, it } from 'vitest';
import {
  finishReason,
  type TranscriptWindow,
  TurnTranslator,
  type UiMessageChunk,
} from '../../src/client/uiMessageChunks.ts';
import type { ConversationEvent } from '../../src/contract/types/events.ts';
import type { AssistantMessage, Message, ToolResultMessage } from '../../src/contract/types/messages.ts';

const origin = { turn: 1, attempt: 1, seq: 0 };

function transcriptOf(messages: Message[]): TranscriptWindow {
  return {
    count: async () => messages.length,
    read: async (fromIndex, limit) => messages.slice(fromIndex, fromIndex + limit),
  };
}

function reply(calls: { id: string; name: string; arguments: Record<string, unknown> }[]): AssistantMessage {
  return {
    role: 'assistant',
    content: '',
    toolCalls: calls.map((call) => ({ type: 'function', ...call })),
    model: 'm',
    usage: null,
    stopReason: 'toolCalls',
    timestamp: 0,
  };
}

function result(toolCallId: string, text: string, isError = false): ToolResultMessage {
  return {
    role: 'toolResult',
    toolCallId,
    toolName: 'lookup',
    content: [{ type: 'text', text }],
    details: {},
    isError,
    timestamp: 0,
  };
}

async function translate(translator: TurnTranslator, events: ConversationEvent[]): Promise<UiMessageChunk[]> {
  const chunks: UiMessageChunk[] = [];
  for (const event of events) chunks.push(...(await translator.translate(event)));
  return chunks;
}

/** What the AI SDK's own client makes of the chunks: the last message it builds. */
async function messageOf(chunks: UiMessageChunk[]): Promise<UIMessage | undefined> {
  const stream = new ReadableStream<UIMessageChunk>({
    start(controller) {
      for (const chunk of [{ type: 'start' } as const, ...chunks]) controller.enqueue(chunk);
      controller.close();
    },
  });
  let last: UIMessage | undefined;
  for await (const message of readUIMessageStream({ stream, terminateOnError: true })) last = message;
  return last;
}

describe('a turn as UI message chunks', () => {
  it('gives repeated tool call ids their own parts, each with its own input and result', async () => {
    const transcript: Message[] = [
      { role: 'user', content: 'old', timestamp: 0 },
      reply([{ id: 'call_1', name: 'lookup', arguments: { city: 'Old' } }]),
      result('call_1', 'old result'),
      { role: 'user', content: 'now', timestamp: 0 },
      reply([
        { id: 'call_1', name: 'lookup', arguments: { city: 'Tokyo' } },
        { id: 'call_1', name: 'lookup', arguments: { city: 'Paris' } },
      ]),
      result('call_1', 'Tokyo: sunny'),
      result('call_1', 'Paris: rain'),
    ];
    const translator = new TurnTranslator(transcriptOf(transcript), 3);
    const chunks = await translate(translator, [
      { ...origin, type: 'turnStart' },
      { ...origin, type: 'messageStart', model: 'm' },
      {
        ...origin,
        type: 'messageEnd',
        toolCalls: [
          { id: 'call_1', name: 'lookup' },
          { id: 'call_1', name: 'lookup' },
        ],
      },
      { ...origin, type: 'toolStart', toolCallId: 'call_1', toolName: 'lookup', summary: 'lookup(Tokyo)' },
      {
        ...origin,
        type: 'toolEnd',
        toolCallId: 'call_1',
        toolName: 'lookup',
        isError: false,
        willRetry: false,
        text: 'Tokyo: sunny',
      },
      { ...origin, type: 'toolStart', toolCallId: 'call_1', toolName: 'lookup', summary: 'lookup(Paris)' },
      {
        ...origin,
        type: 'toolEnd',
        toolCallId: 'call_1',
        toolName: 'lookup',
        isError: false,
        willRetry: false,
        text: 'Paris: rain',
      },
      { ...origin, type: 'turnEnd', result: { turn: 1, status: 'terminated', reply: '' } },
    ]);
    const message = await messageOf(chunks);
    expect(message?.parts.filter((part) => part.type === 'tool-lookup')).toMatchObject([
      { toolCallId: 'call_1', input: { city: 'Tokyo' }, output: { text: 'Tokyo: sunny' } },
      { toolCallId: 'call_1-2', input: { city: 'Paris' }, output: { text: 'Paris: rain' } },
    ]);
  });

  it('calls no event settled get their result from the transcript when the batch ends, and a cut result arrives whole', async () => {
    const transcript: Message[] = [
      { role: 'user', content: 'go', timestamp: 0 },
      reply([
        { id: 'a', name: 'lookup', arguments: { city: 'Rome' } },
        { id: 'b', name: 'nope', arguments: {} },
      ]),
      result('a', 'Rome: sunny\nwind 3 km/h'),
      result('b', 'Tool "nope" is not registered', true),
    ];
    // No transcript start known: the reply is looked for from the end.
    const translator = new TurnTranslator(transcriptOf(transcript));
    const chunks = await translate(translator, [
      { ...origin, type: 'turnStart' },
      { ...origin, type: 'messageStart', model: 'm' },
      { ...origin, type: 'textDelta', text: 'Checking. ' },
      {
        ...origin,
        type: 'messageEnd',
        toolCalls: [
          { id: 'a', name: 'lookup' },
          { id: 'b', name: 'nope' },
        ],
      },
      { ...origin, type: 'toolStart', toolCallId: 'a', toolName: 'lookup', summary: 'lookup(Rome)' },
      {
        ...origin,
        type: 'toolEnd',
        toolCallId: 'a',
        toolName: 'lookup',
        isError: false,
        willRetry: false,
        text: 'Rome: sunny',
      },
      { ...origin, type: 'messageStart', model: 'm' },
      { ...origin, type: 'textDelta', text: 'Done.' },
      { ...origin, type: 'messageEnd', toolCalls: [] },
      { ...origin, type: 'turnEnd', result: { turn: 1, status: 'completed', reply: 'Done.' } },
    ]);
    const message = await messageOf(chunks);
    expect(message?.parts.map((part) => part.type)).toEqual([
      'step-start',
      'text',
      'tool-lookup',
      'tool-nope',
      'step-start',
      'text',
    ]);
    expect(message?.parts[2]).toMatchObject({
      state: 'output-available',
      output: { text: 'Rome: sunny\nwind 3 km/h' },
    });
    expect(message?.parts[3]).toMatchObject({
      state: 'output-error',
      errorText: 'Tool "nope" is not registered',
    });
  });

  it('a retried model call starts a new text part; the failed attempt keeps what it streamed', async () => {
    const translator = new TurnTranslator(transcriptOf([]), 0);
    const chunks = await translate(translator, [
      { ...origin, type: 'turnStart' },
      { ...origin, type: 'messageStart', model: 'm' },
      { ...origin, type: 'textDelta', text: 'Half' },
      { ...origin, attempt: 2, type: 'messageStart', model: 'm' },
      { ...origin, attempt: 2, type: 'textDelta', text: 'Whole answer.' },
      { ...origin, attempt: 2, type: 'messageEnd', toolCalls: [] },
      { ...origin, type: 'turnEnd', result: { turn: 1, status: 'completed', reply: 'Whole answer.' } },
    ]);
    const message = await messageOf(chunks);
    expect(message?.parts.filter((part) => part.type === 'text').map((part) => part.text)).toEqual([
      'Half',
      'Whole answer.',
    ]);
    expect(chunks.at(-1)).toEqual({ type: 'finish-step' });
  });

  it('a tripped guardrail ends the message with its error and the content-filter finish reason', async () => {
    const translator = new TurnTranslator(transcriptOf([]), 0);
    const trip = { stage: 'output', guardrail: 'noInternal', reason: 'internal plans' } as const;
    const error = `The output guardrail "noInternal" tripped on the model's reply: internal plans`;
    const chunks = await translate(translator, [
      { ...origin, type: 'turnStart' },
      { ...origin, type: 'messageStart', model: 'm' },
      { ...origin, type: 'textDelta', text: 'The INTERNAL plan' },
      { ...origin, type: 'messageEnd', toolCalls: [] },
      { ...origin, type: 'guardrailTripped', ...trip },
      {
        ...origin,
        type: 'turnEnd',
        result: { turn: 1, status: 'guardrailTripped', reply: '', error, guardrail: trip },
      },
    ]);
    expect(chunks.at(-1)).toEqual({ type: 'error', errorText: error });
    expect(finishReason(translator.ended)).toBe('content-filter');
  });

  it('tells a steered message as it queues and joins, in transient data parts the message keeps out', async () => {
    const translator = new TurnTranslator(transcriptOf([]), 0);
    const steer = { messageId: 4, delivery: 'steer' } as const;
    const chunks = await translate(translator, [
      { ...origin, type: 'turnStart' },
      { ...origin, type: 'messageStart', model: 'm' },
      { ...origin, type: 'messageQueued', ...steer, text: 'Prefer trains' },
      { ...origin, type: 'textDelta', text: 'On it.' },
      { ...origin, type: 'messageEnd', toolCalls: [] },
      { ...origin, type: 'messageDelivered', ...steer, afterModelCall: 1 },
    ]);
    const data = [
      {
        type: 'data-yiem-message-queued',
        data: { ...steer, text: 'Prefer trains', turn: 1 },
        transient: true,
      },
      {
        type: 'data-yiem-message-delivered',
        data: { ...steer, turn: 1, afterModelCall: 1 },
        transient: true,
      },
    ];
    expect(chunks.filter((chunk) => chunk.type.startsWith('data-'))).toEqual(data);
    // The AI SDK's own client reads them and leaves them out of the assistant's parts.
    const message = await messageOf(chunks);
    expect(message?.parts.map((part) => part.type)).toEqual(['step-start', 'text']);
  });
});
