import { InMemorySpanExporter, type ReadableSpan, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { textResult } from '../../src/contract/toolResult.ts';
import type { AgentTool } from '../../src/contract/types/tools.ts';
import { startTestAgent, type TestAgent } from '../support/agentHarness.ts';

const lookup: AgentTool = {
  name: 'lookup',
  label: 'Lookup',
  description: 'Looks a key up',
  inputSchema: { type: 'object', properties: { key: { type: 'string' } } },
  parallelToolExecute: true,
  execute: (_id, args) => textResult(`value of ${String(args.key)}`),
};

describe('OpenTelemetry tracing', () => {
  const exporter = new InMemorySpanExporter();
  let agent: TestAgent;
  beforeAll(async () => {
    const tracing = { spanProcessor: new SimpleSpanProcessor(exporter) };
    agent = await startTestAgent({
      tools: [lookup],
      // No prebuilt bundle: the worker bundles the workflow with the tracing interceptors itself.
      worker: { tracing, worker: { workflowBundle: undefined } },
      client: { tracing },
    });
  });
  afterAll(async () => agent?.close());

  it('records a span for the turn, each model call and each tool call, in one trace', async () => {
    agent.model.enqueue(
      { kind: 'toolCalls', toolCalls: [{ id: 'c1', name: 'lookup', arguments: { key: 'k' } }] },
      { kind: 'text', text: 'found it' },
    );
    const conversation = await agent.client.startConversation({ systemPrompt: 'Trace me.' });
    expect((await conversation.send('look k up')).status).toBe('completed');
    await conversation.end();

    const names = () => exporter.getFinishedSpans().map((span) => span.name);
    await expect
      .poll(names, { timeout: 10_000 })
      .toEqual(
        expect.arrayContaining([
          'StartWorkflow:conversationWorkflow',
          'RunWorkflow:conversationWorkflow',
          'HandleUpdate:prompt',
          'RunActivity:callModel',
          'RunActivity:executeTool',
        ]),
      );
    const spans = exporter.getFinishedSpans();
    const named = (name: string): ReadableSpan[] => spans.filter((span) => span.name === name);
    const one = (name: string): ReadableSpan => {
      const [span, ...others] = named(name);
      expect(others, name).toEqual([]);
      return span as ReadableSpan;
    };
    const idOf = (span: ReadableSpan) => span.spanContext().spanId;
    const traceOf = (span: ReadableSpan) => span.spanContext().traceId;

    // The client's start is the parent of the conversation; the prompt's update is the parent of the turn.
    const conversationSpan = one('RunWorkflow:conversationWorkflow');
    expect(conversationSpan.parentSpanId).toBe(idOf(one('StartWorkflow:conversationWorkflow')));
    const turn = one('HandleUpdate:prompt');
    expect(turn.parentSpanId).toBe(idOf(one('StartWorkflowUpdate:prompt')));

    // Model and tool calls run on the worker, in the conversation's trace, labelled with what they did.
    const modelCalls = named('RunActivity:callModel');
    expect(modelCalls.map((span) => span.attributes)).toEqual([
      expect.objectContaining({
        'yiem.conversation_id': conversation.id,
        'yiem.turn': 1,
        'yiem.model': 'scripted',
      }),
      expect.objectContaining({
        'yiem.conversation_id': conversation.id,
        'yiem.turn': 1,
        'yiem.model': 'scripted',
      }),
    ]);
    const toolCall = one('RunActivity:executeTool');
    expect(toolCall.attributes).toMatchObject({
      'yiem.tool.name': 'lookup',
      'yiem.tool.call_id': 'c1',
      'yiem.turn': 1,
    });
    for (const span of [...modelCalls, toolCall]) expect(traceOf(span)).toBe(traceOf(conversationSpan));
    expect(spans.every((span) => span.resource.attributes['service.name'] === 'yiem-agent')).toBe(true);
  });
});
