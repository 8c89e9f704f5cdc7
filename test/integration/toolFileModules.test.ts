import { afterEach, describe, expect, it } from 'vitest';
import type { ToolResultMessage } from '../../src/contract/types/messages.ts';
import { createToolProject, type ToolProject } from '../support/toolProject.ts';
import { useCrashScene } from '../support/workerProcess.ts';

/**
 * A tool file that reads its call, throws a `ToolError` and counts in a package it shares with the
 * other tools. `typed` adds TypeScript's annotations (for `.ts` and `.mts` files).
 */
function probeTool(name: string, typed: boolean): string {
  return `
import { ${typed ? 'type AgentTool, ' : ''}ToolError, currentToolCall, textResult } from 'yiem-agent';
import { next, same } from 'shared-probe';

export function getTool()${typed ? ': AgentTool' : ''} {
  return {
    name: '${name}',
    label: 'Probe',
    description: 'Tells what it sees of its call',
    inputSchema: { type: 'object', properties: { refuse: { type: 'boolean' } } },
    parallelToolExecute: false,
    async execute(_toolCallId${typed ? ': string' : ''}, args${typed ? ': { refuse?: boolean }' : ''}) {
      const call = currentToolCall();
      const sameToolError = same('ToolError', ToolError);
      if (args.refuse) throw new ToolError(\`refused by \${call.toolName}\`, { details: { sameToolError } });
      return textResult(JSON.stringify({ id: call.toolCallId, attempt: call.attempt, count: next(), sameToolError }));
    },
  };
}
`;
}

describe('tool files in TypeScript and JavaScript share the worker’s yiem-agent and packages', () => {
  const scene = useCrashScene('tool-modules');
  let project: ToolProject | undefined;
  afterEach(async () => {
    await project?.remove();
  });

  it('currentToolCall(), ToolError and a package’s state work alike from .js, .ts and .mts files', async () => {
    project = await createToolProject({
      'probeJs.js': probeTool('probeJs', false),
      'probeTs.ts': probeTool('probeTs', true),
      'probeMts.mts': probeTool('probeMts', true),
    });
    const conversation = await scene.startConversation('modules', { systemPrompt: 'Probe.' });
    const calls = (refuse: boolean) =>
      ['probeJs', 'probeTs', 'probeMts'].map((name) => ({
        id: `call_${name}_${refuse ? 'refuse' : 'run'}`,
        name,
        arguments: refuse ? { refuse: true } : {},
      }));
    scene.model.enqueue(
      { kind: 'toolCalls', toolCalls: calls(false) },
      { kind: 'toolCalls', toolCalls: calls(true) },
      { kind: 'text', text: 'Probed.' },
    );
    await scene.startWorker('tools', { env: { TOOLS_DIR: project.toolsDir }, cwd: project.dir });

    expect(await conversation.send('probe')).toMatchObject({ status: 'completed', reply: 'Probed.' });
    const results = (await conversation.messages()).filter(
      (message): message is ToolResultMessage => message.role === 'toolResult',
    );
    const ran = results.slice(0, 3).map((result) => JSON.parse(result.content[0]?.text ?? '{}'));
    // One count across the three files: they share one copy of the package, and of ToolError.
    expect(ran).toEqual([
      { id: 'call_probeJs_run', attempt: 1, count: 1, sameToolError: true },
      { id: 'call_probeTs_run', attempt: 1, count: 2, sameToolError: true },
      { id: 'call_probeMts_run', attempt: 1, count: 3, sameToolError: true },
    ]);
    // A ToolError reaches the model at once, on the first attempt, from every kind of file.
    expect(results.slice(3).map((result) => [result.isError, result.content[0]?.text])).toEqual([
      [true, expect.stringContaining('refused by probeJs')],
      [true, expect.stringContaining('refused by probeTs')],
      [true, expect.stringContaining('refused by probeMts')],
    ]);
    expect(results.slice(3).map((result) => result.details)).toEqual([
      expect.objectContaining({ sameToolError: true, attempt: 1 }),
      expect.objectContaining({ sameToolError: true, attempt: 1 }),
      expect.objectContaining({ sameToolError: true, attempt: 1 }),
    ]);
  });
});
