import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { textResult } from '../../src/contract/toolResult.ts';
import type { ToolResultMessage } from '../../src/contract/types/messages.ts';
import type { AgentTool } from '../../src/contract/types/tools.ts';
import type { ScriptedReply, ScriptedToolCall } from '../../src/testing/index.ts';
import { startTestAgent, type TestAgent } from '../support/agentHarness.ts';

const BYSTANDER = 'bystander';

/**
 * Written tools that attack the worker they run on. One worker (this test process) runs the whole
 * file: a tool that crashed or stalled it would fail every test after it.
 */
describe('hostile written tools cannot crash, stall or fool the worker', () => {
  let root: string;
  let allowedFile: string;
  let agent: TestAgent;
  let toolCount = 0;
  /** Tool names in the order their beforeToolCall ran (once a call has been validated). */
  const checked: string[] = [];
  /** What happened while the model's batch of checks ran, in order. */
  const timeline: string[] = [];
  let onBatchStart: (() => void) | undefined;

  const marker = (name: string): AgentTool => ({
    name,
    label: name,
    description: 'marks a point in a batch',
    inputSchema: { type: 'object', properties: {} },
    parallelToolExecute: true,
    execute: async () => textResult(name),
  });

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'yiem-hostile-'));
    await mkdir(join(root, 'allowed'));
    allowedFile = join(root, 'allowed', 'wines.csv');
    await writeFile(allowedFile, 'Barolo\n');
    agent = await startTestAgent({
      tools: [marker('batchStart'), marker('batchEnd')],
      selfWriting: {
        toolsDir: join(root, 'tools'),
        // 50,000 reads take a few seconds on a busy machine; no test here waits for this limit.
        timeoutMs: 30_000,
        memoryMb: 64,
        fsAllowlist: [allowedFile],
      },
      hooks: {
        beforeToolCall: ({ toolName }) => {
          checked.push(toolName);
          if (toolName === 'batchStart') onBatchStart?.();
          if (toolName === 'batchEnd') timeline.push('batch checked');
          return undefined;
        },
      },
    });
  });
  afterAll(async () => {
    await agent?.close();
    await rm(root, { recursive: true, force: true });
  });

  const writeToolCall = (name: string, executeCode: string, extra: Record<string, unknown> = {}) => ({
    id: `write_${name}`,
    name: 'writeTool',
    arguments: {
      name,
      label: name,
      description: 'a hostile tool',
      inputSchema: { type: 'object', properties: {} },
      executeCode,
      ...extra,
    },
  });

  /**
   * One conversation: the model writes `hostile` and `ping`, calls the hostile tool with `calls`,
   * then calls ping to show the worker still runs tools, and answers. Returns the tool results by id.
   */
  async function writeAndRun(
    executeCode: string,
    options: { extra?: Record<string, unknown>; calls?: (name: string) => ScriptedToolCall[] } = {},
  ): Promise<{ results: Map<string, ToolResultMessage>; hostile: string }> {
    toolCount += 1;
    const hostile = `hostile${toolCount}`;
    const ping = `ping${toolCount}`;
    const replies: ScriptedReply[] = [
      {
        kind: 'toolCalls',
        toolCalls: [
          writeToolCall(hostile, executeCode, options.extra),
          writeToolCall(ping, 'return textResult("pong");'),
        ],
      },
      {
        kind: 'toolCalls',
        toolCalls: options.calls?.(hostile) ?? [{ id: 'run', name: hostile, arguments: {} }],
      },
      { kind: 'toolCalls', toolCalls: [{ id: 'ping', name: ping, arguments: {} }] },
      { kind: 'text', text: 'done' },
    ];
    agent.model.reset();
    // Routed by system prompt, since a bystander conversation may share the model meanwhile.
    agent.model.respond((request) =>
      request.body.messages.some((message) => message.role === 'system' && message.content === BYSTANDER)
        ? { kind: 'text', text: 'hi there' }
        : (replies.shift() ?? { kind: 'error', status: 500, message: 'the script ran out' }),
    );
    const conversation = await agent.client.startConversation({ systemPrompt: 'hostile' });
    const result = await conversation.send('go');
    agent.model.respond(undefined);
    expect(result).toMatchObject({ status: 'completed', reply: 'done' });
    const results = new Map(
      (await conversation.messages())
        .filter((message): message is ToolResultMessage => message.role === 'toolResult')
        .map((message) => [message.toolCallId, message]),
    );
    expect(text(results.get('ping'))).toBe('pong');
    return { results, hostile };
  }

  const text = (message: ToolResultMessage | undefined): string =>
    message?.content.map((block) => block.text).join('\n') ?? '(no result)';

  it('gets an error inside the sandbox when it calls the host bridges with bad values', async () => {
    const { results } = await writeAndRun(
      [
        'const g = globalThis as any;',
        'const settle = { result: { promise: true, copy: true } };',
        'const seen: string[] = [];',
        'seen.push(await g.__hostReadFile.apply(undefined, [42], settle));',
        'seen.push(await g.__hostReadFile.apply(undefined, [{ path: "/etc/passwd" }], { arguments: { copy: true }, ...settle }));',
        'seen.push(await g.__hostFetch.apply(undefined, ["http://127.0.0.1:9/", "not json"], settle));',
        'return textResult(seen.join("\\n"));',
      ].join('\n'),
    );
    expect(text(results.get('run')).split('\n')).toEqual([
      '{"ok":false,"message":"readFile takes a path string, not a number"}',
      '{"ok":false,"message":"readFile takes a path string, not an object"}',
      '{"ok":false,"message":"fetch init must be an object like { method, headers, body }"}',
    ]);
  });

  it('cannot run the worker out of file descriptors with 50,000 concurrent reads', async () => {
    const { results } = await writeAndRun(
      [
        `const reads = Array.from({ length: 50000 }, () => readFile(${JSON.stringify(allowedFile)}).then((content) => content.trim(), (error) => error.message));`,
        'const outcomes = await Promise.all(reads);',
        'return textResult([...new Set(outcomes)].sort().join("\\n"));',
      ].join('\n'),
    );
    expect(text(results.get('run')).split('\n')).toEqual([
      'Barolo',
      'Too many readFile/fetch calls at once: at most 8 run and 1000 wait; await some before starting more',
    ]);
  });

  it('has no WebAssembly, whose memory the sandbox limit would not count', async () => {
    const { results, hostile } = await writeAndRun(
      'const memory = new (globalThis as any).WebAssembly.Memory({ initial: 16384 });\nreturn textResult("allocated " + memory.buffer.byteLength);',
    );
    expect(text(results.get('run'))).toBe(
      `Tool "${hostile}" failed: TypeError: Cannot read properties of undefined (reading 'Memory')`,
    );
  });

  it('shows the model what a written tool threw, even when it is not an Error', async () => {
    const { results, hostile } = await writeAndRun('throw { code: 42, reason: "no wine" };');
    expect(text(results.get('run'))).toBe(`Tool "${hostile}" failed: {"code":42,"reason":"no wine"}`);
  });

  it('refuses to write a tool whose inputSchema has a catastrophic regular expression', async () => {
    agent.model.reset();
    agent.model.enqueue(
      {
        kind: 'toolCalls',
        toolCalls: [
          writeToolCall('redos', 'return textResult("matched");', {
            inputSchema: {
              type: 'object',
              properties: { word: { type: 'string', pattern: '^(a+)+$' } },
              required: ['word'],
            },
          }),
        ],
      },
      {
        kind: 'toolCalls',
        toolCalls: [{ id: 'run', name: 'redos', arguments: { word: `${'a'.repeat(40)}!` } }],
      },
      { kind: 'text', text: 'done' },
    );
    const conversation = await agent.client.startConversation({ systemPrompt: 'hostile' });
    expect(await conversation.send('go')).toMatchObject({ status: 'completed', reply: 'done' });
    const results = (await conversation.messages()).filter(
      (message): message is ToolResultMessage => message.role === 'toolResult',
    );
    expect(results.map((result) => [result.toolCallId, result.isError, text(result)])).toEqual([
      [
        'write_redos',
        true,
        'Tool "writeTool" failed: writeTool did not write "redos":\n- inputSchema has a regular expression that can backtrack for a very long time on some inputs, stalling the worker: "^(a+)+$". Use patterns without nested or overlapping repetition (e.g. "^a+$", not "^(a+)+$"), or check the value in validateCode',
      ],
      ['run', true, expect.stringMatching(/^Tool "redos" not found\. Available tools: /)],
    ]);
  });

  it('caps the checks of one reply together and keeps serving other conversations while they run', async () => {
    const spins = 10;
    let bystander: Promise<unknown> | undefined;
    onBatchStart = () => {
      onBatchStart = undefined;
      bystander = agent.client
        .startConversation({ systemPrompt: BYSTANDER })
        .then((conversation) => conversation.send('hello'))
        .then((result) => timeline.push(`bystander ${result.status}: ${result.reply}`));
    };
    const { results, hostile } = await writeAndRun('return textResult("ran");', {
      extra: { validateCode: 'for (;;) {}' },
      calls: (name) => [
        { id: 'start', name: 'batchStart', arguments: {} },
        ...Array.from({ length: spins }, (_, index) => ({ id: `spin${index}`, name, arguments: {} })),
        { id: 'end', name: 'batchEnd', arguments: {} },
      ],
    });
    await bystander;

    expect(timeline).toEqual(['bystander completed: hi there', 'batch checked']);
    const killed = `Could not validate the arguments of tool "${hostile}": Killed by the sandbox: it ran longer than its 1000 ms time limit`;
    const outOfBudget = `Could not validate the arguments of tool "${hostile}": Not checked: the written tools' checks of this reply used up their 3000 ms together; call fewer tools at once or make their checks faster`;
    const spinTexts = Array.from({ length: spins }, (_, index) => text(results.get(`spin${index}`)));
    expect(spinTexts[0]).toBe(killed);
    expect(spinTexts.at(-1)).toBe(outOfBudget);
    expect(spinTexts.filter((line) => line !== killed && line !== outOfBudget)).toEqual([]);
    expect(text(results.get('end'))).toBe('batchEnd');
  });

  it('still answers a new conversation at once after every hostile tool', async () => {
    agent.model.reset();
    agent.model.enqueue({ kind: 'text', text: 'still here' });
    const conversation = await agent.client.startConversation({ systemPrompt: '' });
    expect(await conversation.send('are you there?')).toMatchObject({
      status: 'completed',
      reply: 'still here',
    });
    expect(checked).toContain('batchEnd');
  });
});
