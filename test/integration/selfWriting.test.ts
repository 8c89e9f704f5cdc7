import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ToolResultMessage } from '../../src/contract/types/messages.ts';
import type { ScriptedReply } from '../../src/testing/index.ts';
import { startTestAgent, type TestAgent } from '../support/agentHarness.ts';
import { scheduledActivities } from '../support/history.ts';

const searchWine = {
  name: 'searchWine',
  label: 'Wine Search',
  description: 'Search a wine database by name, region, or variety',
  inputSchema: {
    type: 'object',
    properties: {
      query: { type: 'string', description: 'Search query' },
      maxResults: { type: 'integer', default: 10 },
    },
    required: ['query'],
  },
  executeCode: [
    'const wines = ["Cabernet Sauvignon, Napa", "Cabernet Franc, Loire", "Merlot, Bordeaux"];',
    'const query = String(args.query).toLowerCase();',
    'const found = wines.filter((wine) => wine.toLowerCase().includes(query)).slice(0, args.maxResults);',
    'onPartialResult({ status: "searched " + wines.length + " wines" });',
    'return textResult("Found " + found.length + " wines matching " + args.query + ": " + found.join("; "), { found });',
  ].join('\n'),
  parallel: false,
};

/** A written tool that answers with a fixed text. */
const echoTool = (name: string, text: string) => ({
  name,
  label: name,
  description: `Says ${text}`,
  inputSchema: { type: 'object', properties: {} },
  executeCode: `return textResult(${JSON.stringify(text)});`,
});

const call = (id: string, name: string, args: Record<string, unknown>): ScriptedReply => ({
  kind: 'toolCalls',
  toolCalls: [{ id, name, arguments: args }],
});

/** The model's final answer quotes the last tool result it was sent, so the reply proves what it read. */
function answerWithLastToolResult(agent: TestAgent): void {
  agent.model.respond((request) => {
    const last = request.body.messages.at(-1);
    const text = last?.role === 'tool' ? String(last.content) : '(no tool result)';
    return { kind: 'text', text: `Answer: ${text}` };
  });
}

async function toolResults(agent: TestAgent, conversationId: string): Promise<ToolResultMessage[]> {
  const messages = await agent.client.getConversation(conversationId).messages();
  return messages.filter((message): message is ToolResultMessage => message.role === 'toolResult');
}

const offeredTools = (agent: TestAgent, requestIndex: number): string[] =>
  (agent.model.requests[requestIndex]?.body.tools ?? []).map((tool) =>
    tool.type === 'function' ? tool.function.name : '',
  );

describe('writeTool: a tool written in a conversation is called in the same conversation', () => {
  let toolsDir: string;
  let agent: TestAgent;
  beforeAll(async () => {
    toolsDir = await mkdtemp(join(tmpdir(), 'yiem-written-'));
    agent = await startTestAgent({ builtinTools: true, selfWriting: { toolsDir } });
  });
  afterAll(async () => {
    await agent?.close();
    await rm(toolsDir, { recursive: true, force: true });
  });

  it('writes searchWine, calls it in the next step, answers with its result, and history shows both activities', async () => {
    agent.model.reset();
    agent.model.enqueue(
      call('call_write', 'writeTool', searchWine),
      call('call_search', 'searchWine', { query: 'cabernet', maxResults: 2 }),
    );
    answerWithLastToolResult(agent);
    const conversation = await agent.client.startConversation({ systemPrompt: 'You can write tools.' });

    const result = await conversation.send('I need to search for wines. Do you have a tool for that?');

    expect(result.status).toBe('completed');
    expect(result.reply).toBe(
      'Answer: Found 2 wines matching cabernet: Cabernet Sauvignon, Napa; Cabernet Franc, Loire',
    );
    const [written, searched] = await toolResults(agent, conversation.id);
    expect(written?.isError).toBe(false);
    expect(written?.content[0]?.text).toContain('Created tool "searchWine"');
    expect(searched?.isError).toBe(false);
    expect(searched?.details).toEqual({
      found: ['Cabernet Sauvignon, Napa', 'Cabernet Franc, Loire'],
    });
    // The first model call did not know searchWine; the one right after writeTool did.
    expect(offeredTools(agent, 0)).not.toContain('searchWine');
    expect(offeredTools(agent, 1)).toContain('searchWine');
    expect(agent.events).toContainEqual(
      expect.objectContaining({
        type: 'toolExecutionUpdate',
        toolName: 'searchWine',
        partialResult: { status: 'searched 3 wines' },
      }),
    );

    const activities = await scheduledActivities(conversation.handle);
    const tools = activities.filter((activity) => activity.type === 'executeTool');
    expect(tools.map((activity) => activity.summary)).toEqual([
      expect.stringMatching(/^writeTool\(name: "searchWine"/),
      'searchWine(query: "cabernet", maxResults: 2)',
    ]);
    expect(tools.map((activity) => activity.activityId)).toEqual(['tool-1-call_write', 'tool-1-call_search']);

    const file = await readFile(join(toolsDir, 'searchWine.ts'), 'utf8');
    expect(file).toContain('export function getTool(');
    expect(file).toContain('async function execute(toolCallId: string, args: ToolArguments');
    expect(file).toContain('    const query = String(args.query).toLowerCase();');
  });

  it('answers each failed attempt with a clear error and writes nothing', async () => {
    agent.model.reset();
    agent.model.enqueue({
      kind: 'toolCalls',
      toolCalls: [
        { id: 'bad_name', name: 'writeTool', arguments: { ...echoTool('search-wine!', 'x') } },
        {
          id: 'bad_schema',
          name: 'writeTool',
          arguments: {
            ...echoTool('badSchema', 'x'),
            inputSchema: { type: 'object', properties: { q: { type: 'text' } } },
          },
        },
        {
          id: 'no_compile',
          name: 'writeTool',
          arguments: {
            ...echoTool('noCompile', 'x'),
            executeCode: 'const n: number = args.query;\nreturn textResult(n.toFixed(2)',
          },
        },
        {
          id: 'type_error',
          name: 'writeTool',
          arguments: {
            ...echoTool('typeError', 'x'),
            executeCode: 'const n: number = "three";\nreturn textResult(lookup(n));',
          },
        },
        { id: 'collision', name: 'writeTool', arguments: { ...echoTool('getWeather', 'x') } },
        { id: 'collision_written', name: 'writeTool', arguments: { ...echoTool('SEARCHWINE', 'x') } },
      ],
    });
    agent.model.enqueue({ kind: 'text', text: 'I could not create those tools.' });
    const before = await readdir(toolsDir);
    const conversation = await agent.client.startConversation({ systemPrompt: '' });

    const result = await conversation.send('make some tools');

    expect(result.status).toBe('completed');
    const results = await toolResults(agent, conversation.id);
    expect(results.map((message) => message.isError)).toEqual([true, true, true, true, true, true]);
    const texts = results.map((message) => message.content[0]?.text ?? '');
    expect(texts[0]).toContain('name "search-wine!" is not an identifier');
    expect(texts[1]).toContain('inputSchema is not valid JSON Schema');
    expect(texts[1]).toContain('/properties/q/type must be equal to one of the allowed values');
    expect(texts[2]).toContain('writeTool did not write "noCompile"');
    expect(texts[2]).toContain("executeCode line 2 (end of the code): ',' expected.");
    expect(texts[3]).toContain(
      `executeCode line 1, column 7: Type 'string' is not assignable to type 'number'.`,
    );
    expect(texts[3]).toContain(`executeCode line 2, column 19: Cannot find name 'lookup'.`);
    expect(texts[4]).toContain('a tool named "getWeather" already exists');
    expect(texts[5]).toContain('a tool named "searchWine" already exists');
    expect(await readdir(toolsDir)).toEqual(before);
  });
});

describe('a worker started without selfWriting', () => {
  let agent: TestAgent;
  beforeAll(async () => {
    agent = await startTestAgent({ builtinTools: true });
  });
  afterAll(async () => agent?.close());

  it('does not offer writeTool, and refuses a call to it with a clear message', async () => {
    agent.model.enqueue(call('call_write', 'writeTool', searchWine), { kind: 'text', text: 'Understood.' });
    const conversation = await agent.client.startConversation({ systemPrompt: '' });

    const result = await conversation.send('write a wine search tool');

    expect(result.status).toBe('completed');
    expect(offeredTools(agent, 0)).toEqual(['getTime', 'getWeather', 'listTools', 'readUserFile']);
    const [refused] = await toolResults(agent, conversation.id);
    expect(refused?.isError).toBe(true);
    expect(refused?.content[0]?.text).toContain(
      'This worker does not allow writing tools: writeTool is off.',
    );
    expect(refused?.content[0]?.text).toContain('--allow-write-tools DIR');
    const activities = await scheduledActivities(conversation.handle);
    expect(activities.filter((activity) => activity.type === 'executeTool')).toEqual([]);
  });
});

describe('workers sharing a tools directory', () => {
  let toolsDir: string;
  let first: TestAgent;
  let second: TestAgent;
  beforeAll(async () => {
    toolsDir = await mkdtemp(join(tmpdir(), 'yiem-shared-'));
    [first, second] = await Promise.all([
      startTestAgent({ selfWriting: { toolsDir } }),
      startTestAgent({ selfWriting: { toolsDir } }),
    ]);
  });
  afterAll(async () => {
    await Promise.all([first?.close(), second?.close()]);
    await rm(toolsDir, { recursive: true, force: true });
  });

  it('run each other’s tools without a restart, in new and in running conversations', async () => {
    // A conversation on the first worker that will continue after the second worker writes a tool.
    first.model.enqueue({ kind: 'text', text: 'Hello.' });
    const running = await first.client.startConversation({ systemPrompt: '' });
    await running.send('hi');

    // The first worker writes pairWine; a conversation on the second worker calls it.
    first.model.enqueue(call('w1', 'writeTool', echoTool('pairWine', 'Riesling with spicy food')), {
      kind: 'text',
      text: 'Written.',
    });
    const writer = await first.client.startConversation({ systemPrompt: '' });
    expect((await writer.send('write pairWine')).status).toBe('completed');
    second.model.enqueue(call('p1', 'pairWine', {}));
    answerWithLastToolResult(second);
    const reader = await second.client.startConversation({ systemPrompt: '' });
    expect((await reader.send('what goes with curry?')).reply).toBe('Answer: Riesling with spicy food');

    // The second worker writes cellarNote; the first worker's running conversation calls it next turn.
    second.model.reset();
    second.model.respond(undefined);
    second.model.enqueue(call('w2', 'writeTool', echoTool('cellarNote', 'Keep at 12 °C')), {
      kind: 'text',
      text: 'Written.',
    });
    const otherWriter = await second.client.startConversation({ systemPrompt: '' });
    expect((await otherWriter.send('write cellarNote')).status).toBe('completed');
    first.model.reset();
    first.model.enqueue(call('c1', 'cellarNote', {}));
    answerWithLastToolResult(first);
    expect((await running.send('how do I store it?')).reply).toBe('Answer: Keep at 12 °C');
    expect(offeredTools(first, 0).sort()).toEqual(['cellarNote', 'pairWine', 'writeTool']);
  });
});
