import { describe, expect, it } from 'vitest';
import type { AgentTool } from '../../src/contract/types/tools.ts';
import { type AgentWorkerOptions, groupWorkerOptions } from '../../src/worker/options.ts';

const TOOL = { name: 'echo' } as AgentTool;
const afterToolCall = async () => undefined;
const eventSink = () => {};

function grouped(options: AgentWorkerOptions) {
  const warnings: string[] = [];
  return { options: groupWorkerOptions(options, (message) => warnings.push(message)), warnings };
}

describe('worker options by group', () => {
  it('moves each old flat name to its group, naming the new place', () => {
    const connection = { close: async () => {} } as unknown as AgentWorkerOptions['connection'];
    const { options, warnings } = grouped({
      address: 'temporal:7233',
      taskQueue: 'q',
      connection,
      model: { model: 'm' },
      fallbacks: { a: ['b'] },
      tools: [TOOL],
      toolsDir: 'tools',
      mcpSessionIdleMs: 5,
      hooks: { afterToolCall },
      eventSink,
      compact: async () => 'summary',
      workflows: false,
      workerOptions: { maxConcurrentActivityTaskExecutions: 3 },
    });
    expect(options.connection).toEqual({
      address: 'temporal:7233',
      taskQueue: 'q',
      nativeConnection: connection,
    });
    expect(options.models).toEqual({ model: { model: 'm' }, fallbacks: { a: ['b'] } });
    expect(options.tools).toEqual({ tools: [TOOL], toolsDir: 'tools', mcpSessionIdleMs: 5 });
    expect(options.hooks).toEqual({ toolCalls: { afterToolCall }, eventSink });
    expect(options.compaction?.compact).toBeTypeOf('function');
    expect(options.worker).toEqual({ workflows: false, options: { maxConcurrentActivityTaskExecutions: 3 } });
    expect(warnings).toContain('yiem-agent: AgentWorkerOptions.model is deprecated; use models.model');
    expect(warnings).toContain('yiem-agent: AgentWorkerOptions.tools is deprecated; use tools.tools');
    expect(warnings).toContain('yiem-agent: AgentWorkerOptions.hooks is deprecated; use hooks.toolCalls');
    expect(warnings).toContain(
      'yiem-agent: AgentWorkerOptions.connection is deprecated; use connection.nativeConnection',
    );
    expect(warnings).toContain(
      'yiem-agent: AgentWorkerOptions.workerOptions is deprecated; use worker.options',
    );
    expect(warnings).toHaveLength(13);
  });

  it('reads old models by name as models.models, and the new group as it is', () => {
    const fast = { model: 'fast-1' };
    expect(grouped({ models: { fast, slow: {} } }).options.models).toEqual({ models: { fast, slow: {} } });
    const group = { models: { fast }, defaultModel: 'fast' };
    expect(grouped({ models: group }).options.models).toEqual(group);
  });

  it('warns about a name once per process', () => {
    const first = grouped({ defaultModel: 'a', models: { models: { a: {} } } });
    const second = grouped({ defaultModel: 'a', models: { models: { a: {} } } });
    expect(first.warnings).toEqual([
      'yiem-agent: AgentWorkerOptions.defaultModel is deprecated; use models.defaultModel',
    ]);
    expect(second.warnings).toEqual([]);
    expect(second.options.models).toEqual({ models: { a: {} }, defaultModel: 'a' });
  });

  it('takes the grouped value over the flat one, and warns about nothing when only groups are given', () => {
    expect(grouped({ builtinTools: true, tools: { builtinTools: false } }).options.tools).toEqual({
      builtinTools: false,
    });
    const { warnings } = grouped({
      connection: { taskQueue: 'q' },
      models: { model: { model: 'm' } },
      tools: { tools: [TOOL], mcpServers: {} },
      hooks: { toolCalls: { afterToolCall }, eventSink },
      compaction: {},
      worker: { workflows: true },
    });
    expect(warnings).toEqual([]);
  });
});
