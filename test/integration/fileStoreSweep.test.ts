import { execFile } from 'node:child_process';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Conversation } from '../../src/client/client.ts';
import { textResult } from '../../src/contract/toolResult.ts';
import type { AgentTool } from '../../src/contract/types/tools.ts';
import { dataConverterFromEnv } from '../../src/infrastructure/codec/dataConverter.ts';
import { pathOfGroup } from '../../src/infrastructure/storage/sweep.ts';
import { startTestAgent, type TestAgent } from '../support/agentHarness.ts';
import { YIEM_FROM_SOURCES } from '../support/cli.ts';

const toolText = `archive: ${'t'.repeat(200_000)}`;
const archive: AgentTool = {
  name: 'archive',
  label: 'Archive',
  description: 'Reads the archive',
  inputSchema: { type: 'object', properties: {} },
  parallelToolExecute: true,
  execute: () => textResult(toolText),
};

describe('yiem payloads sweep on the file store', () => {
  let directory: string;
  let env: Record<string, string>;
  let agent: TestAgent;

  const sweep = (...flags: string[]): Promise<{ code: number; stdout: string; stderr: string }> =>
    new Promise((resolve) => {
      execFile(
        process.execPath,
        [...YIEM_FROM_SOURCES, 'payloads', 'sweep', ...flags, '--address', agent.address],
        { env: { ...process.env, ...env }, timeout: 60_000 },
        (error, stdout, stderr) => resolve({ code: error ? 1 : 0, stdout, stderr }),
      );
    });
  /** The payload files stored for `conversation`'s workflow. */
  const filesOf = (conversation: Conversation): Promise<string[]> =>
    readdir(path.join(directory, pathOfGroup({ namespace: 'default', workflowId: conversation.id }))).catch(
      () => [],
    );
  const archivist = async (): Promise<Conversation> => {
    agent.model.enqueue(
      { kind: 'toolCalls', toolCalls: [{ name: 'archive', arguments: {} }] },
      { kind: 'text', text: 'Read the archive.' },
    );
    const conversation = await agent.client.startConversation({ systemPrompt: 'Archivist.' });
    expect(await conversation.send('Read it.')).toMatchObject({ status: 'completed' });
    return conversation;
  };

  beforeAll(async () => {
    directory = await mkdtemp(path.join(os.tmpdir(), 'yiem-sweep-files-'));
    env = { YIEM_PAYLOADS_DIR: directory, YIEM_PAYLOAD_STORAGE: 'file' };
    const dataConverter = dataConverterFromEnv(env);
    agent = await startTestAgent({
      tools: [archive],
      worker: { connection: { ...(dataConverter ? { dataConverter } : {}) } },
    });
  });
  afterAll(async () => {
    await agent?.close();
    await rm(directory, { recursive: true, force: true });
  });

  it("deletes a deleted conversation's files and keeps a running and a retained one's", async () => {
    const running = await archivist();
    const retained = await archivist();
    const deleted = await archivist();
    await retained.handle.terminate('closed, but within the retention');
    await agent.client.client.workflowService.deleteWorkflowExecution({
      namespace: agent.client.client.options.namespace,
      workflowExecution: { workflowId: deleted.id },
    });
    await expect
      .poll(
        () =>
          deleted.handle.describe().then(
            () => 'exists',
            () => 'gone',
          ),
        { timeout: 30_000 },
      )
      .toBe('gone');
    const runningFiles = await filesOf(running);
    const retainedFiles = await filesOf(retained);
    expect(runningFiles).not.toEqual([]);
    expect(await filesOf(deleted)).not.toEqual([]);

    const young = await sweep();
    expect(young.stdout).toContain(`deleted 0 payload(s) of default/${deleted.id}`);
    expect(await filesOf(deleted)).not.toEqual([]);

    const swept = await sweep('--min-age', '0');
    expect(swept.stderr).toBe('');
    expect(swept.stdout).toMatch(new RegExp(`deleted \\d+ payload\\(s\\) of default/${deleted.id}`));
    expect(swept.stdout).toContain(`${directory}: deleted the payloads of 1 workflow(s)`);
    expect(await filesOf(deleted)).toEqual([]);
    expect(await filesOf(running)).toEqual(runningFiles);
    expect(await filesOf(retained)).toEqual(retainedFiles);

    expect((await retained.messages())[2]).toMatchObject({ content: [{ type: 'text', text: toolText }] });
    agent.model.enqueue({ kind: 'text', text: 'Still here.' });
    expect(await running.send('And now?')).toMatchObject({ status: 'completed' });
    expect((await running.messages())[2]).toMatchObject({ content: [{ type: 'text', text: toolText }] });
  });
});
