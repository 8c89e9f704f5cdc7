import { execFile, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import os from 'node:os';
import { promisify } from 'node:util';
import { Connection } from '@temporalio/client';
import { msToTs } from '@temporalio/common/lib/time.js';
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import { YIEM_AGENT, YIEM_COST, YIEM_FORKED_FROM, YIEM_STATUS } from '../../src/contract/searchAttributes.ts';
import { findTemporalCli } from '../../src/infrastructure/server/index.ts';
import { startTestAgent, type TestAgent } from '../support/agentHarness.ts';
import { YIEM_FROM_SOURCES } from '../support/cli.ts';

/** `yiem doctor` on the namespace in its own process; resolves with its exit code and what it printed. */
async function doctor(env: Record<string, string>): Promise<{ code: number; output: string }> {
  const child = spawn(process.execPath, [...YIEM_FROM_SOURCES, 'doctor'], {
    cwd: os.tmpdir(),
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  for (const stream of [child.stdout, child.stderr]) {
    stream.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
  }
  const [code] = await once(child, 'exit');
  return { code: code as number, output };
}

/**
 * A namespace registered before `YiemCost` and `YiemForkedFrom` existed: conversations start, run and
 * fork there, and the worker and `yiem doctor` name what is missing and the command that adds it.
 */
describe('a namespace without YiemCost and YiemForkedFrom', () => {
  const address = inject('temporalAddress');
  const namespace = `old-${randomUUID().slice(0, 8)}`;
  let connection: Connection;
  let agent: TestAgent;
  const warnings: string[] = [];

  beforeAll(async () => {
    connection = await Connection.connect({ address });
    await connection.workflowService.registerNamespace({
      namespace,
      workflowExecutionRetentionPeriod: msToTs('1 day'),
    });
    // Keyword 2, Int 3: the three attributes of the first releases.
    await connection.operatorService.addSearchAttributes({
      namespace,
      searchAttributes: { YiemStatus: 2, YiemTurns: 3, YiemAgent: 2 },
    });
    const warn = vi.spyOn(console, 'warn').mockImplementation((...args: unknown[]) => {
      warnings.push(args.join(' '));
    });
    agent = await startTestAgentOnceKnown(namespace);
    await vi.waitFor(() => expect(warnings.join('\n')).toContain('lacks the search attributes'), {
      timeout: 20_000,
    });
    warn.mockRestore();
  });
  afterAll(async () => {
    await agent?.close();
    await connection?.close();
  });

  it('the worker says at start which attributes are missing and how to add them', () => {
    const warning = warnings.find((line) => line.includes('lacks the search attributes'));
    expect(warning).toContain(
      `Namespace "${namespace}" lacks the search attributes YiemForkedFrom, YiemCost`,
    );
    expect(warning).toContain(
      `temporal operator search-attribute create --namespace ${namespace} --name YiemForkedFrom --type Keyword`,
    );
    expect(warning).toContain(
      `temporal operator search-attribute create --namespace ${namespace} --name YiemCost --type Double`,
    );
  });

  it('starts, answers and forks conversations, with the attributes it has', async () => {
    agent.model.respond((request) => {
      const last = request.body.messages.at(-1) as { content: string };
      return { kind: 'text', text: `answer to ${last.content}` };
    });
    const conversation = await agent.client.startConversation({ systemPrompt: '' });
    expect(await conversation.send('one')).toMatchObject({ status: 'completed', reply: 'answer to one' });
    expect(await conversation.send('two')).toMatchObject({ status: 'completed', reply: 'answer to two' });
    const attributes = (await conversation.handle.describe()).typedSearchAttributes;
    expect(attributes.get(YIEM_STATUS)).toBe('idle');
    expect(attributes.get(YIEM_AGENT)).toBe(agent.taskQueue);
    expect(attributes.get(YIEM_COST)).toBeUndefined();

    const fork = await conversation.fork({ atTurn: 2, editMessage: 'two, edited' });
    expect(await fork.turnResult(2)).toMatchObject({ status: 'completed', reply: 'answer to two, edited' });
    const forkAttributes = (await fork.handle.describe()).typedSearchAttributes;
    expect(forkAttributes.get(YIEM_STATUS)).toBe('idle');
    expect(forkAttributes.get(YIEM_FORKED_FROM)).toBeUndefined();
  });

  it('yiem doctor fails the check naming them, and passes once its command has run', async () => {
    const env = {
      TEMPORAL_ADDRESS: address,
      TEMPORAL_NAMESPACE: namespace,
      YIEM_TASK_QUEUE: agent.taskQueue,
    };
    const before = await doctor(env);
    expect(before.code).toBe(1);
    const line = before.output.split('\n').find((each) => each.includes('search attributes:')) ?? '';
    expect(line).toMatch(/^FAIL search attributes: /);
    expect(line).toContain('YiemForkedFrom, YiemCost');
    const command = line.slice(line.indexOf('Add them with: ') + 'Add them with: '.length);
    expect(command).toContain(`--address ${address} --namespace ${namespace}`);

    // The printed command, run as a user would paste it, with the CLI the tests use.
    const cli = findTemporalCli();
    if (!cli) throw new Error('the tests run with a temporal CLI');
    for (const part of command.split(' && ')) {
      const [, ...args] = part.split(' ');
      await promisify(execFile)(cli, args, { timeout: 30_000 });
    }
    await vi.waitFor(
      async () => {
        const after = await doctor(env);
        expect(after.output).toMatch(/ok {3}search attributes: /);
      },
      { timeout: 30_000, interval: 1_000 },
    );
  });

  it('starts a new conversation with every attribute once they are added', async () => {
    // Added by the previous case; the server may take a moment before a start may use them.
    await vi.waitFor(
      async () => {
        const conversation = await agent.client.startConversation({ systemPrompt: '' });
        const attributes = (await conversation.handle.describe()).typedSearchAttributes;
        expect(attributes.get(YIEM_COST)).toBe(0);
      },
      { timeout: 30_000, interval: 1_000 },
    );
  });
});

/** A namespace just registered reaches every server service a moment later: retried until the worker starts. */
async function startTestAgentOnceKnown(namespace: string): Promise<TestAgent> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    try {
      return await startTestAgent({ worker: { connection: { namespace } }, client: { namespace } });
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  }
}
