import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ToolError, textContent, textResult } from '../../src/contract/toolResult.ts';
import type { ToolArguments } from '../../src/contract/types/base.ts';
import type { ToolResultMessage } from '../../src/contract/types/messages.ts';
import type { AgentTool } from '../../src/contract/types/tools.ts';
import { startTestAgent, type TestAgent } from '../support/agentHarness.ts';
import { scheduledActivities } from '../support/history.ts';

/** Every argument set `execute` received, by tool name: proves what did and did not run. */
const executed: Record<string, ToolArguments[]> = {};
const record = (name: string, args: ToolArguments): void => {
  executed[name] = [...(executed[name] ?? []), args];
};

const bookTable: AgentTool = {
  name: 'bookTable',
  label: 'Book a Table',
  description: 'Books a restaurant table',
  inputSchema: {
    type: 'object',
    properties: {
      restaurant: { type: 'string' },
      guests: { type: 'integer', minimum: 1 },
      seating: { type: 'string', enum: ['inside', 'terrace'], default: 'inside' },
      email: { type: 'string', format: 'email' },
    },
    required: ['restaurant', 'guests'],
    additionalProperties: false,
  },
  parallelToolExecute: true,
  execute: (_id, args) => {
    record('bookTable', args);
    return textResult(
      `Booked ${String(args.guests)} at ${String(args.restaurant)} (${String(args.seating)})`,
    );
  },
};

const findRoute: AgentTool = {
  name: 'findRoute',
  label: 'Find Route',
  description: 'Finds a route from or to a place',
  inputSchema: { type: 'object', properties: { from: { type: 'string' }, to: { type: 'string' } } },
  parallelToolExecute: true,
  prepareArguments: (args) =>
    'destination' in args ? { ...args, to: args.destination, destination: undefined } : args,
  validateRequiredArgs: (args) => (args.from || args.to ? null : "provide at least one of 'from' or 'to'"),
  execute: (_id, args) => {
    record('findRoute', args);
    return textResult(`Route to ${String(args.to)}`);
  },
};

const progress: AgentTool = {
  name: 'progress',
  label: 'Progress',
  description: 'Reports two progress steps',
  inputSchema: { type: 'object', properties: {} },
  parallelToolExecute: true,
  execute: (_id, _args, _signal, onPartialResult) => {
    onPartialResult({ status: 'Step 1' });
    onPartialResult({ status: 'Step 2' });
    return textResult('Done!');
  },
};

const explode: AgentTool = {
  name: 'explode',
  label: 'Explode',
  description: 'Always fails',
  inputSchema: { type: 'object', properties: { kind: { type: 'string' } } },
  parallelToolExecute: true,
  policy: { retry: { maximumAttempts: 2, initialInterval: '50 milliseconds' } },
  execute: (_id, args) => {
    record('explode', args);
    if (args.kind === 'tool') throw new ToolError('the reactor is offline');
    throw new Error('unexpected meltdown');
  },
};

const finish: AgentTool = {
  name: 'finish',
  label: 'Finish',
  description: 'Ends the turn with a final answer',
  inputSchema: { type: 'object', properties: { answer: { type: 'string' } }, required: ['answer'] },
  parallelToolExecute: true,
  execute: (_id, args) => ({
    content: [textContent(String(args.answer))],
    details: {},
    usage: null,
    terminate: true,
  }),
};

const secret: AgentTool = {
  name: 'secret',
  label: 'Secret',
  description: 'Returns a secret, which afterToolCall redacts',
  inputSchema: { type: 'object', properties: {} },
  parallelToolExecute: true,
  execute: () => textResult('the password is hunter2', { raw: 'hunter2' }),
};

/** afterToolCall throws for it, after it ran. */
const audited: AgentTool = {
  name: 'audited',
  label: 'Audited',
  description: 'Runs, then its audit hook fails',
  inputSchema: { type: 'object', properties: {} },
  parallelToolExecute: true,
  execute: (_id, args) => {
    record('audited', args);
    return textResult('audited work done');
  },
};

const toolResults = async (agent: TestAgent, conversationId: string): Promise<ToolResultMessage[]> =>
  (await agent.client.getConversation(conversationId).messages()).filter(
    (message): message is ToolResultMessage => message.role === 'toolResult',
  );

describe('the tool pipeline against a real Temporal server', () => {
  let agent: TestAgent;
  beforeAll(async () => {
    agent = await startTestAgent({
      tools: [bookTable, findRoute, progress, explode, finish, secret, audited],
      hooks: {
        beforeToolCall: ({ toolName, args }) =>
          toolName === 'bookTable' && args.restaurant === 'Closed Kitchen'
            ? { block: true, reason: 'that restaurant is on the deny list' }
            : undefined,
        afterToolCall: ({ toolName }) => {
          if (toolName === 'audited') throw new Error('the audit log is unreachable');
          return toolName === 'secret'
            ? { content: [textContent('[redacted]')], details: {}, isError: false }
            : undefined;
        },
      },
    });
  });
  afterAll(async () => agent?.close());
  beforeEach(() => {
    for (const key of Object.keys(executed)) delete executed[key];
    agent.events.length = 0;
  });

  async function runOneToolTurn(name: string, args: unknown, id = 'call_1') {
    agent.model.enqueue(
      { kind: 'toolCalls', toolCalls: [{ id, name, arguments: args as Record<string, unknown> }] },
      { kind: 'text', text: 'ok' },
    );
    const conversation = await agent.client.startConversation({ systemPrompt: '' });
    const result = await conversation.send('go');
    const [toolResult] = await toolResults(agent, conversation.id);
    return { conversation, result, toolResult, activities: await scheduledActivities(conversation.handle) };
  }

  it('validates against the whole schema and feeds path, rule and arguments back without executing', async () => {
    const { result, toolResult, activities } = await runOneToolTurn('bookTable', {
      restaurant: 'Noma',
      guests: 'four',
    });
    expect(result.status).toBe('completed');
    expect(toolResult?.isError).toBe(true);
    const text = toolResult?.content[0]?.text ?? '';
    expect(text).toContain('/guests must be integer [rule: type]');
    expect(text).toContain('Received arguments: {"restaurant":"Noma","guests":"four"}');
    expect(executed.bookTable).toBeUndefined();
    // PREPARE ran inside the model call, and nothing was executed. The worker's models are asked
    // once per run, to name the model calls in the Web UI and find rate-limited models' queues.
    expect(activities.map((a) => a.type)).toEqual(['modelRouting', 'callModel', 'callModel']);
    expect(agent.events).toEqual([]);
    // The model sees the error as the tool result, so it can retry.
    expect(agent.model.lastRequest()?.body.messages.at(-1)).toMatchObject({
      role: 'tool',
      tool_call_id: 'call_1',
    });
  });

  it('rejects missing required fields, enum and format violations', async () => {
    const missing = await runOneToolTurn('bookTable', { guests: 2 });
    expect(missing.toolResult?.content[0]?.text).toContain(
      "must have required property 'restaurant' [rule: required]",
    );
    const badEnum = await runOneToolTurn('bookTable', { restaurant: 'Noma', guests: 2, seating: 'roof' });
    expect(badEnum.toolResult?.content[0]?.text).toContain('allowed: ["inside","terrace"]');
    const badEmail = await runOneToolTurn('bookTable', { restaurant: 'Noma', guests: 2, email: 'nope' });
    expect(badEmail.toolResult?.content[0]?.text).toContain('/email must match format "email"');
    expect(executed.bookTable).toBeUndefined();
  });

  it('applies schema defaults before execute', async () => {
    const { toolResult } = await runOneToolTurn('bookTable', { restaurant: 'Noma', guests: 2 });
    expect(toolResult).toMatchObject({ isError: false, content: [{ text: 'Booked 2 at Noma (inside)' }] });
    expect(executed.bookTable).toEqual([{ restaurant: 'Noma', guests: 2, seating: 'inside' }]);
  });

  it("runs prepareArguments, then the tool's own validateRequiredArgs instead of the schema", async () => {
    const prepared = await runOneToolTurn('findRoute', { destination: 'Oslo' });
    expect(prepared.toolResult?.content[0]?.text).toBe('Route to Oslo');
    const invalid = await runOneToolTurn('findRoute', {});
    expect(invalid.toolResult?.isError).toBe(true);
    expect(invalid.toolResult?.content[0]?.text).toContain("provide at least one of 'from' or 'to'");
    expect(executed.findRoute).toHaveLength(1);
  });

  it('lets beforeToolCall block a call with a reason: no activity, no execute, no start event', async () => {
    const { toolResult, activities } = await runOneToolTurn('bookTable', {
      restaurant: 'Closed Kitchen',
      guests: 2,
    });
    expect(toolResult?.isError).toBe(true);
    expect(toolResult?.content[0]?.text).toContain('that restaurant is on the deny list');
    expect(executed.bookTable).toBeUndefined();
    expect(activities.some((a) => a.type === 'executeTool')).toBe(false);
    expect(agent.events.filter((e) => e.type === 'toolExecutionStart')).toEqual([]);
  });

  it('lets afterToolCall replace the content the model sees', async () => {
    const { toolResult } = await runOneToolTurn('secret', {});
    expect(toolResult?.content).toEqual([{ type: 'text', text: '[redacted]' }]);
    expect(toolResult?.details).toEqual({});
    expect(JSON.stringify(agent.model.requests)).not.toContain('hunter2');
  });

  it('answers an unknown tool with the list of available tools', async () => {
    const { toolResult, activities } = await runOneToolTurn('teleport', {});
    expect(toolResult?.content[0]?.text).toBe(
      'Tool "teleport" not found. Available tools: bookTable, findRoute, progress, explode, finish, secret, audited',
    );
    expect(activities.some((a) => a.type === 'executeTool')).toBe(false);
  });

  it('turns malformed JSON arguments into an error result, not a crash', async () => {
    const { result, toolResult } = await runOneToolTurn('bookTable', '{"restaurant": "Noma", guests: 2');
    expect(result.status).toBe('completed');
    expect(toolResult?.isError).toBe(true);
    expect(toolResult?.content[0]?.text).toContain('are not valid JSON');
    expect(toolResult?.content[0]?.text).toContain('{"restaurant": "Noma", guests: 2');
  });

  it('emits toolExecutionStart, one toolExecutionUpdate per partial result, then toolExecutionEnd', async () => {
    const { conversation } = await runOneToolTurn('progress', {}, 'call_progress');
    expect(agent.events.map((e) => e.type)).toEqual([
      'toolExecutionStart',
      'toolExecutionUpdate',
      'toolExecutionUpdate',
      'toolExecutionEnd',
    ]);
    expect(
      agent.events.every((e) => e.toolCallId === 'call_progress' && e.conversationId === conversation.id),
    ).toBe(true);
    expect(agent.events.filter((e) => e.type === 'toolExecutionUpdate').map((e) => e.partialResult)).toEqual([
      { status: 'Step 1' },
      { status: 'Step 2' },
    ]);
    const end = agent.events.at(-1);
    expect(end?.type === 'toolExecutionEnd' && end.result.content[0]?.text).toBe('Done!');
  });

  it('names each execution after its tool in history, with an activity id derived from the tool call id', async () => {
    const { activities } = await runOneToolTurn('bookTable', { restaurant: 'Noma', guests: 2 }, 'call_abc');
    const execution = activities.find((a) => a.type === 'executeTool');
    expect(execution?.activityId).toBe('tool-1-call_abc');
    expect(execution?.summary).toBe('bookTable(restaurant: "Noma", guests: 2, seating: "inside")');
  });

  it('gives a ToolError to the model at once, as an error result; the workflow does not fail', async () => {
    const { result, toolResult } = await runOneToolTurn('explode', { kind: 'tool' });
    expect(result.status).toBe('completed');
    expect(toolResult).toMatchObject({
      isError: true,
      content: [{ text: 'Tool "explode" failed: the reactor is offline' }],
    });
    expect(executed.explode).toHaveLength(1);
  });

  it('retries other errors per the tool policy, then gives the model an error result', async () => {
    const { result, toolResult, conversation } = await runOneToolTurn('explode', { kind: 'other' });
    expect(result.status).toBe('completed');
    expect(toolResult?.content[0]?.text).toBe(
      'Tool "explode" failed (after 2 attempts): unexpected meltdown',
    );
    expect(executed.explode).toHaveLength(2);
    const description = await conversation.handle.describe();
    expect(description.status.name).toBe('RUNNING');
  });

  it('reads the seed’s single tool_call content block as well as tool_calls', async () => {
    agent.model.enqueue(
      {
        kind: 'contentBlocks',
        blocks: [
          { type: 'text', text: 'Let me book. ' },
          {
            type: 'tool_call',
            id: 'block_1',
            name: 'bookTable',
            arguments: { restaurant: 'Geranium', guests: 3 },
          },
        ],
      },
      { kind: 'text', text: 'Booked.' },
    );
    const conversation = await agent.client.startConversation({ systemPrompt: '' });
    expect((await conversation.send('book')).reply).toBe('Booked.');
    const [toolResult] = await toolResults(agent, conversation.id);
    expect(toolResult).toMatchObject({
      toolCallId: 'block_1',
      content: [{ text: 'Booked 3 at Geranium (inside)' }],
    });
  });

  it('ends the turn after a batch in which a tool asks to terminate, without another model call', async () => {
    agent.model.enqueue({
      kind: 'toolCalls',
      toolCalls: [{ id: 'call_f', name: 'finish', arguments: { answer: 'All done.' } }],
    });
    const before = agent.model.requestCount;
    const conversation = await agent.client.startConversation({ systemPrompt: '' });
    const result = await conversation.send('finish up');
    expect(result).toMatchObject({ status: 'terminated', reply: 'All done.' });
    expect(agent.model.requestCount - before).toBe(1);
  });

  it('turns a throwing afterToolCall into an error result; the tool runs once', async () => {
    const { result, toolResult } = await runOneToolTurn('audited', {});
    expect(result.status).toBe('completed');
    expect(toolResult).toMatchObject({
      isError: true,
      content: [{ text: 'afterToolCall failed for "audited": the audit log is unreachable' }],
    });
    expect(executed.audited).toHaveLength(1);
    expect(agent.events.map((e) => e.type)).toEqual(['toolExecutionStart', 'toolExecutionEnd']);
  });

  it('ends every toolExecutionStart with a toolExecutionEnd, a failed attempt that is retried too', async () => {
    const { conversation } = await runOneToolTurn('explode', { kind: 'other' });
    expect(
      agent.events.map((e) => [e.type, e.attempt, e.type === 'toolExecutionEnd' && e.willRetry]),
    ).toEqual([
      ['toolExecutionStart', 1, false],
      ['toolExecutionEnd', 1, true],
      ['toolExecutionStart', 2, false],
      ['toolExecutionEnd', 2, false],
    ]);
    const logged: string[] = [];
    for await (const event of conversation.events({ fromOffset: 0 })) {
      if (event.type === 'toolStart') logged.push(`start ${event.attempt}`);
      if (event.type === 'toolEnd') logged.push(`end ${event.attempt}${event.willRetry ? ' (retried)' : ''}`);
      if (event.type === 'turnEnd') break;
    }
    expect(logged).toEqual(['start 1', 'end 1 (retried)', 'start 2', 'end 2']);
  });

  it('collects content blocks and text that stream over several deltas', async () => {
    agent.model.enqueue(
      {
        kind: 'contentBlocks',
        text: 'Booking both. ',
        blocksPerDelta: 1,
        blocks: [
          { type: 'text', text: 'One moment.' },
          {
            type: 'tool_call',
            id: 'block_a',
            name: 'bookTable',
            arguments: { restaurant: 'Noma', guests: 2 },
          },
          {
            type: 'tool_call',
            id: 'block_b',
            name: 'bookTable',
            arguments: { restaurant: 'Alchemist', guests: 4 },
          },
        ],
      },
      { kind: 'text', text: 'Booked both.' },
    );
    const conversation = await agent.client.startConversation({ systemPrompt: '' });
    expect((await conversation.send('book two')).reply).toBe('Booked both.');
    const [assistant] = (await conversation.messages()).filter((m) => m.role === 'assistant');
    expect(assistant).toMatchObject({
      content: 'Booking both. One moment.',
      toolCalls: [{ id: 'block_a' }, { id: 'block_b' }],
    });
    expect((await toolResults(agent, conversation.id)).map((r) => r.content[0]?.text)).toEqual([
      'Booked 2 at Noma (inside)',
      'Booked 4 at Alchemist (inside)',
    ]);
  });

  it('ends the turn only when every tool of the batch asks to terminate (as the seed does)', async () => {
    agent.model.enqueue(
      {
        kind: 'toolCalls',
        toolCalls: [
          { id: 'call_f', name: 'finish', arguments: { answer: 'Done?' } },
          { id: 'call_b', name: 'bookTable', arguments: { restaurant: 'Noma', guests: 2 } },
        ],
      },
      { kind: 'text', text: 'Booked, and done.' },
    );
    const mixed = await agent.client.startConversation({ systemPrompt: '' });
    expect(await mixed.send('book and finish')).toMatchObject({
      status: 'completed',
      reply: 'Booked, and done.',
    });

    agent.model.enqueue({
      kind: 'toolCalls',
      toolCalls: [
        { id: 'call_f1', name: 'finish', arguments: { answer: 'One.' } },
        { id: 'call_f2', name: 'finish', arguments: { answer: 'Two.' } },
      ],
    });
    const before = agent.model.requestCount;
    const all = await agent.client.startConversation({ systemPrompt: '' });
    expect(await all.send('finish twice')).toMatchObject({ status: 'terminated', reply: 'One.\nTwo.' });
    expect(agent.model.requestCount - before).toBe(1);
  });
});
