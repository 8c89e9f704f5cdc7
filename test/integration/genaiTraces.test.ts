import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { textResult } from '../../src/contract/toolResult.ts';
import type { AgentTool } from '../../src/contract/types/tools.ts';
import { currentToolCall } from '../../src/index.ts';
import { startTestAgent, type TestAgent } from '../support/agentHarness.ts';
import { type OtelCollector, type ReceivedSpan, startOtelCollector } from '../support/otelCollector.ts';

/** Fails its first attempt, as a flaky service does; the retry succeeds. */
const lookup: AgentTool = {
  name: 'lookup',
  label: 'Lookup',
  description: 'Looks a key up',
  inputSchema: { type: 'object', properties: { key: { type: 'string' } } },
  parallelToolExecute: true,
  policy: { retry: { maximumAttempts: 3, initialInterval: '50 milliseconds' } },
  execute: (_id, args) => {
    if (currentToolCall().attempt === 1) throw new Error('lookup service hiccup');
    return textResult(`value of ${String(args.key)}`);
  },
};

const ERROR = 2;
const CLIENT = 3;

describe('GenAI traces through a real OpenTelemetry Collector', () => {
  let collector: OtelCollector;
  let processor: BatchSpanProcessor;
  let agent: TestAgent;
  beforeAll(async () => {
    // YIEM_TRACE_SPANS_FILE keeps what the Collector received (docs/tracing.md's trace picture is drawn from it).
    collector = await startOtelCollector(process.env.YIEM_TRACE_SPANS_FILE);
    processor = new BatchSpanProcessor(new OTLPTraceExporter({ url: collector.tracesUrl }));
    const tracing = { spanProcessor: processor };
    agent = await startTestAgent({
      tools: [lookup],
      prices: { scripted: { inputPerMillion: 2, outputPerMillion: 8 } },
      // No prebuilt bundle: the worker bundles the workflow with the tracing interceptors itself.
      worker: { tracing, worker: { workflowBundle: undefined } },
      client: { tracing },
    });
  }, 900_000);
  afterAll(async () => {
    await agent?.close();
    await processor?.shutdown();
    await collector?.close();
  });

  it('exports one trace: conversation, turn, chat and execute_tool spans with GenAI attributes and attempts', async () => {
    agent.model.enqueue(
      { kind: 'toolCalls', toolCalls: [{ id: 'call_k', name: 'lookup', arguments: { key: 'k' } }] },
      { kind: 'text', text: 'k is found' },
    );
    const conversation = await agent.client.startConversation({ systemPrompt: 'Trace me.' });
    expect((await conversation.send('look k up')).reply).toBe('k is found');
    await conversation.end();

    const wanted = [
      'RunWorkflow:conversationWorkflow',
      'invoke_agent',
      'chat scripted',
      'execute_tool lookup',
    ];
    let spans: ReceivedSpan[] = [];
    await expect
      .poll(
        async () => {
          await processor.forceFlush();
          spans = await collector.spans();
          return spans.map((span) => span.name);
        },
        { timeout: 20_000 },
      )
      .toEqual(expect.arrayContaining(wanted));
    const named = (name: string) => spans.filter((span) => span.name === name);
    const byId = new Map(spans.map((span) => [span.spanId, span]));
    const parentOf = (span: ReceivedSpan) => byId.get(span.parentSpanId);
    const ancestors = (span: ReceivedSpan): string[] => {
      const parent = parentOf(span);
      return parent ? [parent.name, ...ancestors(parent)] : [];
    };

    // The conversation is the workflow's run; every span of it is in one trace.
    const [conversationSpan, ...otherRuns] = named('RunWorkflow:conversationWorkflow');
    expect(otherRuns).toEqual([]);
    expect(conversationSpan?.attributes['gen_ai.conversation.id']).toBe(conversation.id);
    const traceId = conversationSpan?.traceId;
    const ofConversation = spans.filter(
      (span) => span.attributes['gen_ai.conversation.id'] === conversation.id,
    );
    expect(ofConversation.length).toBeGreaterThanOrEqual(6);
    expect(new Set(ofConversation.map((span) => span.traceId))).toEqual(new Set([traceId]));

    // The turn is an agent invocation inside the conversation.
    const [turn, ...otherTurns] = named('invoke_agent');
    expect(otherTurns).toEqual([]);
    expect(turn?.parentSpanId).toBe(conversationSpan?.spanId);
    expect(turn?.attributes).toMatchObject({
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.conversation.id': conversation.id,
      'yiem.turn': 1,
      'yiem.turn.status': 'completed',
    });
    // What the turn spent, beside its status: its Temporal Cloud Actions (the run's start, the prompt,
    // a status upsert, the worker's models, two model calls and the tool calls) and its tokens.
    expect(turn?.attributes['yiem.turn.actions']).toBeGreaterThanOrEqual(6);
    expect(turn?.attributes['gen_ai.usage.input_tokens']).toBeGreaterThan(0);

    // Two model calls, each a `chat` client span inside its activity attempt, inside the turn.
    const chats = named('chat scripted');
    expect(chats.map((span) => span.attributes)).toEqual([
      expect.objectContaining({
        'gen_ai.operation.name': 'chat',
        'gen_ai.provider.name': 'openai',
        'gen_ai.request.model': 'scripted',
        'gen_ai.response.model': 'scripted',
        'gen_ai.response.finish_reasons': ['tool_calls'],
        'gen_ai.conversation.id': conversation.id,
        'gen_ai.usage.input_tokens': expect.any(Number),
        'gen_ai.usage.output_tokens': expect.any(Number),
        'yiem.cost': expect.any(Number),
      }),
      expect.objectContaining({ 'gen_ai.response.finish_reasons': ['stop'] }),
    ]);
    for (const chat of chats) {
      expect(chat.kind).toBe(CLIENT);
      expect(chat.traceId).toBe(traceId);
      expect(ancestors(chat)).toEqual([
        'RunActivity:callModel',
        'StartActivity:callModel',
        'invoke_agent',
        'RunWorkflow:conversationWorkflow',
        'StartWorkflow:conversationWorkflow',
      ]);
      const { 'gen_ai.usage.input_tokens': input, 'gen_ai.usage.output_tokens': output } = chat.attributes;
      expect(chat.attributes['yiem.cost']).toBeCloseTo(
        ((input as number) * 2 + (output as number) * 8) / 1e6,
        12,
      );
    }

    // The tool call ran twice: the failed first attempt and the retry, each its own activity span.
    const toolSpans = named('execute_tool lookup');
    expect(toolSpans.map((span) => [parentOf(span)?.attributes['yiem.attempt'], span.status.code])).toEqual([
      [1, ERROR],
      [2, 0],
    ]);
    expect(toolSpans[0]?.status.message).toBe('lookup service hiccup');
    for (const toolSpan of toolSpans) {
      expect(toolSpan.traceId).toBe(traceId);
      expect(toolSpan.attributes).toMatchObject({
        'gen_ai.operation.name': 'execute_tool',
        'gen_ai.tool.name': 'lookup',
        'gen_ai.tool.call.id': 'call_k',
        'gen_ai.conversation.id': conversation.id,
      });
      expect(ancestors(toolSpan).slice(0, 3)).toEqual([
        'RunActivity:executeTool',
        'StartActivity:executeTool',
        'invoke_agent',
      ]);
    }
    expect(spans.every((span) => span.resource['service.name'] === 'yiem-agent')).toBe(true);
  });

  it('exports no span twice when a new worker replays the conversation', async () => {
    agent.model.enqueue({ kind: 'text', text: 'first' }, { kind: 'text', text: 'second' });
    const conversation = await agent.client.startConversation({ systemPrompt: 'Replay me.' });
    expect((await conversation.send('one')).reply).toBe('first');
    // The new worker has no cached run: the second turn's workflow task replays the first turn.
    await agent.restartWorker();
    expect((await conversation.send('two')).reply).toBe('second');
    await conversation.end();

    const ofConversation = async () => {
      await processor.forceFlush();
      return (await collector.spans()).filter(
        (span) => span.attributes['gen_ai.conversation.id'] === conversation.id,
      );
    };
    await expect
      .poll(async () => (await ofConversation()).map((span) => span.name), { timeout: 20_000 })
      .toContain('RunWorkflow:conversationWorkflow');
    const counts = (await ofConversation()).reduce<Record<string, number>>((counted, span) => {
      const key = `${span.name} turn ${span.attributes['yiem.turn'] ?? '-'}`;
      counted[key] = (counted[key] ?? 0) + 1;
      return counted;
    }, {});
    expect(counts).toEqual({
      'RunWorkflow:conversationWorkflow turn -': 1,
      'invoke_agent turn 1': 1,
      'invoke_agent turn 2': 1,
      'RunActivity:callModel turn 1': 1,
      'RunActivity:callModel turn 2': 1,
      'chat scripted turn 1': 1,
      'chat scripted turn 2': 1,
    });
  });
});
