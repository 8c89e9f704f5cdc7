/**
 * The in-process baseline: `@mariozechner/pi-agent-core`'s agent loop against the same scripted
 * model server (through pi-ai's OpenAI-compatible provider, which takes a custom base URL) and the
 * same trivial tools.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { Agent, type AgentTool } from '@mariozechner/pi-agent-core';
import { type Model, Type } from '@mariozechner/pi-ai';
import { SLOW_TOOL_MS } from './tools.ts';

const ok = { content: [{ type: 'text' as const, text: 'ok' }], details: {} };

const piTools: AgentTool[] = [
  {
    name: 'noop',
    label: 'No-op',
    description: 'Does nothing and answers "ok".',
    parameters: Type.Object({}),
    execute: async () => ok,
  },
  {
    name: 'sleep200',
    label: 'Sleep 200 ms',
    description: 'Waits 200 ms and answers "ok".',
    parameters: Type.Object({}),
    execute: async (_id, _params, signal) => {
      await sleep(SLOW_TOOL_MS, undefined, { signal });
      return ok;
    },
  },
];

export interface PiAgent {
  /** Runs one prompt to the end; returns its wall time and the tool batch's wall time (if any). */
  prompt(text: string): Promise<{ ms: number; batchMs: number | undefined }>;
}

export function createPiAgent(baseURL: string, toolExecution: 'sequential' | 'parallel'): PiAgent {
  const model: Model<'openai-completions'> = {
    id: 'scripted',
    name: 'Scripted model',
    api: 'openai-completions',
    provider: 'bench',
    baseUrl: baseURL,
    reasoning: false,
    input: ['text'],
    cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
    contextWindow: 1_000_000,
    maxTokens: 1_000,
  };
  const agent = new Agent({
    initialState: { systemPrompt: '', model, tools: piTools },
    getApiKey: () => 'bench',
    toolExecution,
  });
  let batchStart: number | undefined;
  let batchMs: number | undefined;
  agent.subscribe((event) => {
    if (
      event.type === 'message_end' &&
      event.message.role === 'assistant' &&
      event.message.content.some((part) => part.type === 'toolCall')
    ) {
      batchStart = performance.now();
    } else if (event.type === 'turn_end' && batchStart !== undefined) {
      batchMs = performance.now() - batchStart;
      batchStart = undefined;
    }
  });
  return {
    async prompt(text) {
      batchMs = undefined;
      const start = performance.now();
      await agent.prompt(text);
      const ms = performance.now() - start;
      if (agent.state.errorMessage) throw new Error(`pi-agent-core: ${agent.state.errorMessage}`);
      return { ms, batchMs };
    },
  };
}
