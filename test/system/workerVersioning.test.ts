import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { cp, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import type { WorkflowHandle } from '@temporalio/client';
import type proto from '@temporalio/proto';
import { bundleWorkflowCode } from '@temporalio/worker';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { AgentClient, type Conversation } from '../../src/client/client.ts';
import { textResult } from '../../src/contract/toolResult.ts';
import type { AgentTool } from '../../src/contract/types/tools.ts';
import { startScriptedModel } from '../../src/testing/index.ts';
import { type AgentWorker, createAgentWorker } from '../../src/worker/worker.ts';
import { workflowBundle } from '../support/agentHarness.ts';
import { YIEM_FROM_SOURCES } from '../support/cli.ts';
import { replayAndRecord } from '../support/fixtures.ts';

type HistoryEvent = proto.temporal.api.history.v1.IHistoryEvent;

const repo = fileURLToPath(new URL('../../', import.meta.url));
const quiet = { trace() {}, debug() {}, info() {}, warn() {}, error: console.error, log() {} } as never;

/**
 * Version 2 of the workflow code: the turn loop starts every turn with a 1 ms timer. Replaying a
 * version-1 history on it fails nondeterministically, so a conversation must never do so.
 */
async function bundleVersion2(): Promise<{ code: string }> {
  const copy = path.join(repo, `.versioning-v2-${randomUUID().slice(0, 8)}`);
  try {
    await cp(path.join(repo, 'workflows'), path.join(copy, 'workflows'), { recursive: true });
    await cp(path.join(repo, 'src/contract'), path.join(copy, 'src/contract'), { recursive: true });
    const turn = path.join(copy, 'workflows/turn.ts');
    const source = await readFile(turn, 'utf8');
    const changed = `import { sleep as versionTwoPause } from '@temporalio/workflow';\n${source.replace(
      '  recordTurnStart(state);\n',
      "  recordTurnStart(state);\n  await versionTwoPause('1 millisecond');\n",
    )}`;
    expect(changed).toContain('versionTwoPause(');
    await writeFile(turn, changed);
    return await bundleWorkflowCode({ workflowsPath: path.join(copy, 'workflows/index.ts'), logger: quiet });
  } finally {
    await rm(copy, { recursive: true, force: true });
  }
}

/** v2's pause: a timer without a name (the Web UI's named waits have one). */
const versionTwoPause = (event: HistoryEvent): boolean =>
  Boolean(event.timerStartedEventAttributes && !event.userMetadata?.summary);

const transferMoney: AgentTool = {
  name: 'transferMoney',
  label: 'Transfer Money',
  description: 'Sends money',
  inputSchema: { type: 'object', properties: { amount: { type: 'number' } } },
  parallelToolExecute: true,
  requiresApproval: true,
  execute: (_id, args) => textResult(`Sent ${String(args.amount)}`),
};

async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      const value = await probe();
      if (value !== undefined) return value;
    } catch (error) {
      last = error;
    }
    await sleep(250);
  }
  throw new Error(`Timed out waiting for ${what}${last ? `: ${String(last)}` : ''}`);
}

/** Every run of a conversation, first to latest. */
async function runs(conversation: Conversation): Promise<WorkflowHandle[]> {
  const client = conversation.handle.client;
  const found: WorkflowHandle[] = [];
  let runId: string | undefined = (await client.getHandle(conversation.id).describe()).runId;
  while (runId) {
    const run: WorkflowHandle = client.getHandle(conversation.id, runId);
    found.unshift(run);
    const started = (await run.fetchHistory()).events?.[0]?.workflowExecutionStartedEventAttributes;
    runId = started?.continuedExecutionRunId || undefined;
  }
  return found;
}

/** The build a conversation's current run is pinned to, and how. */
async function pinnedBuild(
  conversation: Conversation,
): Promise<{ buildId: string; behavior: string } | undefined> {
  const description = await conversation.handle.client.getHandle(conversation.id).describe();
  const info = description.raw.workflowExecutionInfo?.versioningInfo;
  const buildId = info?.deploymentVersion?.buildId;
  return buildId ? { buildId, behavior: String(info?.behavior) } : undefined;
}

describe('safe deploys with Worker Versioning', () => {
  const address = inject('temporalAddress');
  const taskQueue = `versioning-${randomUUID()}`;
  const deploymentName = `yiem-test-${randomUUID().slice(0, 8)}`;
  const workers: { worker: AgentWorker; running: Promise<void> }[] = [];
  let client: AgentClient | undefined;
  let closeModel: (() => Promise<void>) | undefined;
  afterAll(async () => {
    for (const { worker, running } of workers) {
      await worker.shutdown();
      await running;
    }
    await client?.close();
    await closeModel?.();
  });

  it('moves idle and mid-approval conversations from v1 to v2 between turns; none fails on v1 history', async () => {
    const model = await startScriptedModel();
    closeModel = () => model.close();
    model.respond((request) => {
      const last = request.body.messages.at(-1) as { role: string; content: unknown };
      if (last.role === 'tool') return { kind: 'text', text: 'transferred' };
      if (last.content === 'transfer 5') {
        return { kind: 'toolCalls', toolCalls: [{ name: 'transferMoney', arguments: { amount: 5 } }] };
      }
      return { kind: 'text', text: `answer to ${String(last.content)}` };
    });
    const startWorker = async (buildId: string, bundle: { code: string }) => {
      const worker = await createAgentWorker({
        connection: { address, taskQueue },
        tools: { tools: [transferMoney], builtinTools: false },
        models: { model: { baseURL: model.baseURL, apiKey: 'test', model: 'scripted', timeoutMs: 5_000 } },
        deployment: { name: deploymentName, buildId },
        worker: { workflowBundle: bundle },
      });
      const started = { worker, running: worker.run() };
      workers.push(started);
      return started;
    };
    client = new AgentClient({ address, taskQueue });
    const service = client.client.workflowService;
    const namespace = client.client.options.namespace;
    const makeCurrent = (buildId: string) =>
      until(`${buildId} as the current version`, async () => {
        await service.setWorkerDeploymentCurrentVersion({ namespace, deploymentName, buildId });
        return true;
      });

    const v1 = await startWorker('v1', await workflowBundle());
    await makeCurrent('v1');
    const idle = await client.startConversation({ systemPrompt: 'Be brief.' });
    expect(await idle.send('hello')).toMatchObject({ status: 'completed', reply: 'answer to hello' });
    const waiting = await client.startConversation({ systemPrompt: 'Be brief.' });
    const transfer = waiting.send('transfer 5');
    const approval = await until('the approval', async () => (await waiting.status()).pendingApprovals[0]);
    expect(await pinnedBuild(idle)).toEqual({ buildId: 'v1', behavior: '1' });
    expect(await pinnedBuild(waiting)).toMatchObject({ buildId: 'v1' });
    // What docs/operations.md tells operators to count before retiring a build.
    const onV1 = async () =>
      (
        await client?.client.workflow.count(
          `TemporalWorkerDeploymentVersion = '${deploymentName}:v1' AND ExecutionStatus = 'Running' AND TaskQueue = '${taskQueue}'`,
        )
      )?.count;
    await until('both conversations counted on v1', async () => ((await onV1()) === 2 ? true : undefined));

    // Deploy v2 (a changed turn loop) and ramp it to every conversation; v1 stays the current version.
    await startWorker('v2', await bundleVersion2());
    await until('v2 ramping', async () => {
      await service.setWorkerDeploymentRampingVersion({
        namespace,
        deploymentName,
        buildId: 'v2',
        percentage: 100,
      });
      return true;
    });

    // The waiting turn finishes on the code it started on, then its conversation moves to v2.
    await waiting.approve(approval.approvalId);
    expect(await transfer).toMatchObject({ status: 'completed', reply: 'transferred' });
    // The idle one moves when woken (or after its next turn). A ramp reaches the conversations a
    // moment after it is set: a conversation woken before sees no new target and stays, so waking
    // is repeated until every conversation has moved (what `yiem upgrade` tells operators to do).
    await until('both conversations on v2', async () => {
      await client?.upgradeConversations();
      await sleep(1_000);
      const builds = await Promise.all([idle, waiting].map(pinnedBuild));
      return builds.every((build) => build?.buildId === 'v2') ? true : undefined;
    });
    await makeCurrent('v2');
    await until('no conversation counted on v1', async () => ((await onV1()) === 0 ? true : undefined));

    // Retire v1: nothing runs on it any more.
    await v1.worker.shutdown();
    await v1.running;
    expect(await idle.send('again')).toMatchObject({
      turn: 2,
      status: 'completed',
      reply: 'answer to again',
    });
    expect(await waiting.send('and now')).toMatchObject({
      turn: 2,
      status: 'completed',
      reply: 'answer to and now',
    });

    for (const conversation of [idle, waiting]) {
      const all = await runs(conversation);
      expect(all.length).toBeGreaterThanOrEqual(2);
      for (const run of all) {
        const events = (await run.fetchHistory()).events ?? [];
        // No workflow task ever failed: no run replayed on code it did not start on.
        expect(events.filter((event) => event.workflowTaskFailedEventAttributes)).toEqual([]);
      }
      // The last turn ran v2's loop (its unnamed timer), the first v1's (named waits only).
      const latest = (await all.at(-1)?.fetchHistory())?.events ?? [];
      expect(latest.filter(versionTwoPause)).not.toEqual([]);
      const first = (await all[0]?.fetchHistory())?.events ?? [];
      expect(first.filter(versionTwoPause)).toEqual([]);
      // The v1 run, with its move to v2 (patch yiem-upgrade-between-turns), replays on this (v1) code.
      if (all[0]) await replayAndRecord(all[0], 'moved-to-new-version');
      await conversation.end();
    }
  });

  it('yiem worker runs as a build of a deployment, and refuses half a version', async () => {
    const env = { ...process.env, TEMPORAL_ADDRESS: address, OPENAI_BASE_URL: 'http://127.0.0.1:9/v1' };
    const worker = spawn(
      process.execPath,
      [
        ...YIEM_FROM_SOURCES,
        'worker',
        '--no-builtin-tools',
        '--task-queue',
        `cli-${taskQueue}`,
        '--deployment-name',
        deploymentName,
        '--build-id',
        'cli-1',
      ],
      { env, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    const output: string[] = [];
    worker.stderr?.on('data', (chunk: Buffer) => output.push(chunk.toString()));
    const line = await new Promise<string>((resolve, reject) => {
      createInterface({ input: worker.stdout as NodeJS.ReadableStream }).on('line', (text) => {
        output.push(text);
        if (text.startsWith('Worker Deployment')) resolve(text);
      });
      worker.once('exit', (code) => reject(new Error(`yiem worker exited (${code}): ${output.join('\n')}`)));
    });
    expect(line).toBe(
      `Worker Deployment ${deploymentName} build cli-1: conversations are pinned to their build and move to the current one between turns`,
    );
    worker.kill('SIGINT');
    await once(worker, 'exit');

    const half = spawn(process.execPath, [...YIEM_FROM_SOURCES, 'worker', '--build-id', 'cli-2'], {
      env: { ...env, YIEM_DEPLOYMENT_NAME: '' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    half.stderr?.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const [code] = await once(half, 'exit');
    expect(code).toBe(1);
    expect(stderr).toContain('A versioned worker needs both a deployment name and a build id');
  });
});
