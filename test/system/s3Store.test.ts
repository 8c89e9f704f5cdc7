import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { GetObjectCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { defaultPayloadConverter, type Payload } from '@temporalio/common';
import { Worker } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { storedHistory } from '../../bench/history.ts';
import { AgentClient, type Conversation } from '../../src/client/client.ts';
import { textResult } from '../../src/contract/toolResult.ts';
import type { ToolResultMessage } from '../../src/contract/types/messages.ts';
import type { AgentTool } from '../../src/contract/types/tools.ts';
import { codecFromEnv, dataConverterFromEnv } from '../../src/infrastructure/codec/dataConverter.ts';
import { type RunningCodecServer, startCodecServer } from '../../src/infrastructure/codec/index.ts';
import { payloadStorageFromEnv } from '../../src/infrastructure/storage/payloadStorage.ts';
import { S3StorageDriver } from '../../src/infrastructure/storage/s3Driver.ts';
import { pathOfGroup } from '../../src/infrastructure/storage/sweep.ts';
import { startTestAgent, type TestAgent, workflowBundle } from '../support/agentHarness.ts';
import { YIEM_FROM_SOURCES } from '../support/cli.ts';
import { type S3Server, startS3Server } from '../support/s3Server.ts';
import {
  collectTurn,
  SURVEY_REPLY,
  SURVEY_TURN_EVENTS,
  scriptSurveyTurn,
  surveyTool,
  updatesAndSignals,
  userView,
} from '../support/surveyTurn.ts';

const USER_SECRET = 'USER-SECRET-labradorite';
const TOOL_SECRET = 'TOOL-SECRET-chrysoprase';
// 100 KB, the most a user message may have (maxMessageBytes).
const userText = `${USER_SECRET} ${'u'.repeat(100_000 - USER_SECRET.length - 1)}`;
const toolText = `${TOOL_SECRET} ${'t'.repeat(1_000_000)}`;

const archive: AgentTool = {
  name: 'archive',
  label: 'Archive',
  description: 'Reads the archive',
  inputSchema: { type: 'object', properties: {} },
  parallelToolExecute: true,
  execute: () => textResult(toolText),
};

const survey = surveyTool('survey');

/** Where the payloads stored for workflow `id` of the default namespace are kept. */
const groupOf = (id: string): string => pathOfGroup({ namespace: 'default', workflowId: id });

interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

describe('the S3 payload store (YIEM_PAYLOAD_STORAGE=s3) against a real S3-compatible server', () => {
  let s3: S3Server;
  let env: Record<string, string>;
  let agent: TestAgent;
  let raw: S3Client;

  const yiem = (args: string[]): Promise<CliRun> =>
    new Promise((resolve) => {
      execFile(
        process.execPath,
        [...YIEM_FROM_SOURCES, ...args, '--address', agent.address, '--task-queue', agent.taskQueue],
        { env: { ...process.env, ...env }, timeout: 100_000, maxBuffer: 64 * 1024 * 1024 },
        (error, stdout, stderr) =>
          resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr }),
      );
    });

  const objects = async (): Promise<Map<string, Buffer>> => {
    const found = new Map<string, Buffer>();
    const listing = await raw.send(new ListObjectsV2Command({ Bucket: s3.bucket }));
    for (const { Key } of listing.Contents ?? []) {
      if (!Key) continue;
      const object = await raw.send(new GetObjectCommand({ Bucket: s3.bucket, Key }));
      found.set(Key, Buffer.from((await object.Body?.transformToByteArray()) ?? []));
    }
    return found;
  };

  const keysOf = async (conversation: Conversation): Promise<string[]> =>
    [...(await objects()).keys()].filter((key) => key.startsWith(groupOf(conversation.id)));

  const archivistConversation = async (): Promise<Conversation> => {
    agent.model.enqueue(
      { kind: 'toolCalls', toolCalls: [{ id: 'call_archive', name: 'archive', arguments: {} }] },
      { kind: 'text', text: 'Read the archive.' },
    );
    // Its 1 MB result and 100 KB message pass the 1 MB window; the model's replies here are scripted
    // for the turns alone, so the window is cut rather than compacted.
    const conversation = await agent.client.startConversation({
      systemPrompt: 'Archivist.',
      compaction: false,
    });
    expect(await conversation.send(userText)).toMatchObject({ status: 'completed' });
    return conversation;
  };

  beforeAll(async () => {
    s3 = await startS3Server();
    env = { ...s3.env, YIEM_CODEC_KEYS: `s3-key:${randomBytes(32).toString('base64')}` };
    const dataConverter = dataConverterFromEnv(env);
    agent = await startTestAgent({
      tools: [archive, survey.tool],
      worker: { connection: { ...(dataConverter ? { dataConverter } : {}) } },
    });
    raw = new S3Client({
      endpoint: s3.endpoint,
      forcePathStyle: true,
      region: env.AWS_REGION,
      credentials: { accessKeyId: 'yiem-test', secretAccessKey: 'yiem-test-secret' },
    });
  }, 600_000);
  afterAll(async () => {
    raw?.destroy();
    await agent?.close();
    await s3?.close();
  });

  describe('a conversation with a 100 KB message and a 1 MB tool result', () => {
    let conversation: Conversation;
    let codecServer: RunningCodecServer;
    beforeAll(async () => {
      conversation = await archivistConversation();
      const codec = codecFromEnv(env, { allowUnencrypted: true });
      const externalStorage = payloadStorageFromEnv(env);
      if (!codec || !externalStorage) throw new Error('the environment configures no codec or store');
      codecServer = await startCodecServer({
        codec,
        externalStorage,
        token: 's3-token',
        allowedOrigins: [],
        port: 0,
      });
    });
    afterAll(async () => {
      await codecServer?.close();
    });

    it('round-trips every byte through the client and the model', async () => {
      const messages = await conversation.messages();
      expect(messages.map((message) => message.role)).toEqual([
        'user',
        'assistant',
        'toolResult',
        'assistant',
      ]);
      expect(messages[0]).toMatchObject({ role: 'user', content: userText });
      expect((messages[2] as ToolResultMessage).content).toEqual([{ type: 'text', text: toolText }]);
      expect(JSON.stringify(agent.model.lastRequest()?.body.messages)).toContain(toolText);
    });

    it('keeps only ciphertext in the bucket, under the conversation', async () => {
      const stored = await objects();
      const all = Buffer.concat([...stored.values()]);
      expect(all.length).toBeGreaterThan(userText.length + toolText.length);
      expect(all.includes(USER_SECRET)).toBe(false);
      expect(all.includes(TOOL_SECRET)).toBe(false);
      expect(all.includes('tttttttttttttttt')).toBe(false);
      expect((await keysOf(conversation)).length).toBeGreaterThanOrEqual(2);
    });

    it('gives the CLI the whole transcript from the bucket', async () => {
      const run = await yiem(['history', conversation.id, '--json']);
      expect(run.code, run.stderr).toBe(0);
      const messages = JSON.parse(run.stdout) as Array<{ role: string; content: unknown }>;
      expect(messages[0]?.content).toBe(userText);
      expect(messages[2]?.content).toEqual([{ type: 'text', text: toolText }]);
    });

    it('lets the codec server resolve an S3 claim and decrypt it', async () => {
      const history = await storedHistory(conversation.handle);
      const accepted = history.events?.find((event) => event.workflowExecutionUpdateAcceptedEventAttributes);
      const reference = accepted?.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest?.input?.args
        ?.payloads?.[0] as Payload;
      const base64 = (bytes: Uint8Array | null | undefined) =>
        Buffer.from(bytes ?? new Uint8Array()).toString('base64');
      const response = await fetch(`${codecServer.url}/decode`, {
        method: 'POST',
        headers: { Authorization: 'Bearer s3-token', 'Content-Type': 'application/json' },
        body: JSON.stringify({
          payloads: [
            {
              metadata: Object.fromEntries(
                Object.entries(reference.metadata ?? {}).map(([key, value]) => [key, base64(value)]),
              ),
              data: base64(reference.data),
            },
          ],
        }),
      });
      expect(response.status).toBe(200);
      const [decoded] = (
        (await response.json()) as { payloads: { metadata: Record<string, string>; data: string }[] }
      ).payloads;
      const payload: Payload = {
        metadata: Object.fromEntries(
          Object.entries(decoded?.metadata ?? {}).map(([key, value]) => [key, Buffer.from(value, 'base64')]),
        ),
        data: Buffer.from(decoded?.data ?? '', 'base64'),
      };
      expect(defaultPayloadConverter.fromPayload(payload)).toBe(userText);
    });

    it('replays its history with the payloads read from the bucket', async () => {
      const history = await conversation.handle.fetchHistory();
      const dataConverter = dataConverterFromEnv(env);
      await expect(
        Worker.runReplayHistory(
          { workflowBundle: await workflowBundle(), ...(dataConverter ? { dataConverter } : {}) },
          history,
          conversation.id,
        ),
      ).resolves.toBeUndefined();
    });
  });

  describe('the store a worker announces', () => {
    it("announces the store's id in the worker identity, and a client on another prefix is refused a large prompt", async () => {
      const own = payloadStorageFromEnv(env)?.drivers[0];
      if (!(own instanceof S3StorageDriver)) throw new Error('not the S3 driver');
      const { id } = await own.identity();
      const doctor = await yiem(['doctor']);
      expect(doctor.stdout).toContain(`s3://${s3.bucket}/ via ${s3.endpoint} (store ${id})`);
      expect(doctor.stdout).toMatch(/ok +payload store: workers and this client use the same store/);

      const elsewhere = { ...env, YIEM_S3_PREFIX: 'elsewhere/' };
      const otherDataConverter = dataConverterFromEnv(elsewhere);
      const otherClient = new AgentClient({
        address: agent.address,
        taskQueue: agent.taskQueue,
        ...(otherDataConverter ? { dataConverter: otherDataConverter } : {}),
      });
      const conversation = await otherClient.startConversation({ systemPrompt: 'Reader.' });
      const refused = conversation.send(userText);
      // The worker's identity holds the first digits of its store's id, not where the store is.
      await expect(refused).rejects.toThrow(`uses the payload store with id ${id.slice(0, 8)}`);
      await expect(refused).rejects.toThrow(`s3://${s3.bucket}/elsewhere/ via ${s3.endpoint}`);
      await expect(refused).rejects.toThrow(/same YIEM_S3_BUCKET, YIEM_S3_PREFIX and YIEM_S3_ENDPOINT/);
      agent.model.enqueue({ kind: 'text', text: 'Still answering.' });
      expect(await conversation.send('A small prompt.')).toMatchObject({ reply: 'Still answering.' });
      await otherClient.close();
    });
  });

  /** Stores one payload as the SDK does for a workflow with this id (a sub-agent's, say). */
  const storeFor = async (workflowId: string): Promise<void> => {
    const driver = payloadStorageFromEnv(env)?.drivers[0];
    if (!(driver instanceof S3StorageDriver)) throw new Error('not the S3 driver');
    await driver.store({ target: { kind: 'workflow', namespace: 'default', id: workflowId } }, [
      defaultPayloadConverter.toPayload('a child conversation’s input'),
    ]);
  };

  describe('yiem payloads sweep', () => {
    it('keeps the payloads of a gone workflow while its parent or a sub-agent of it still exists', async () => {
      const parent = await archivistConversation();
      const goneChild = `${parent.id}.helper.turn-1.call_1`;
      await storeFor(goneChild);
      const goneParent = `gone-parent-${randomBytes(4).toString('hex')}`;
      await storeFor(goneParent);
      const child = await agent.client.startConversation({
        id: `${goneParent}.helper.turn-1.call_2`,
        systemPrompt: 'Child.',
      });
      const sweep = await yiem(['payloads', 'sweep', '--min-age', '0']);
      expect(sweep.stderr).toBe('');
      expect(sweep.stdout).not.toContain(goneChild);
      expect(sweep.stdout).not.toContain(goneParent);
      const keys = [...(await objects()).keys()];
      expect(keys.some((key) => key.startsWith(groupOf(goneChild)))).toBe(true);
      expect(keys.some((key) => key.startsWith(groupOf(goneParent)))).toBe(true);
      await child.handle.terminate('done');
    });

    it('deletes the payloads of a deleted conversation and keeps those of running and closed, retained ones', async () => {
      const running = await archivistConversation();
      const retained = await archivistConversation();
      const deleted = await archivistConversation();
      await retained.handle.terminate('closed, but within the retention');
      const service = agent.client.client.workflowService;
      await service.deleteWorkflowExecution({
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
      const runningKeys = await keysOf(running);
      const retainedKeys = await keysOf(retained);
      expect(await keysOf(deleted)).not.toEqual([]);

      const young = await yiem(['payloads', 'sweep']);
      expect(young.stdout).toMatch(new RegExp(`deleted 0 payload\\(s\\) of default/${deleted.id}`));
      expect(await keysOf(deleted)).not.toEqual([]);

      const dryRun = await yiem(['payloads', 'sweep', '--dry-run', '--min-age', '0']);
      expect(dryRun.stdout).toContain(`would delete default/${deleted.id}`);
      expect(await keysOf(deleted)).not.toEqual([]);

      const sweep = await yiem(['payloads', 'sweep', '--min-age', '0']);
      expect(sweep.stderr).toBe('');
      expect(sweep.stdout).toMatch(new RegExp(`deleted \\d+ payload\\(s\\) of default/${deleted.id}`));
      expect(sweep.stdout).not.toContain(running.id);
      expect(sweep.stdout).not.toContain(retained.id);
      expect(await keysOf(deleted)).toEqual([]);
      expect(await keysOf(running)).toEqual(runningKeys);
      expect(await keysOf(retained)).toEqual(retainedKeys);

      expect((await retained.messages())[2]).toMatchObject({ content: [{ type: 'text', text: toolText }] });
      agent.model.enqueue({ kind: 'text', text: 'Still here.' });
      expect(await running.send('And now?')).toMatchObject({ status: 'completed' });
      expect((await running.messages())[2]).toMatchObject({ content: [{ type: 'text', text: toolText }] });
    });
  });

  describe('the live channel in the bucket', () => {
    /** The keys of a conversation's live channel: its entries and its followers' presence. */
    const liveKeys = async (conversation: Conversation): Promise<string[]> => {
      const listing = await raw.send(
        new ListObjectsV2Command({ Bucket: s3.bucket, Prefix: `live/default/${conversation.id}/` }),
      );
      return (listing.Contents ?? []).flatMap(({ Key }) => (Key ? [Key] : []));
    };

    it('streams a followed tool turn through the bucket, encrypted, with no Update or signal but the prompt', async () => {
      scriptSurveyTurn(agent.model, 2_000);
      const conversation = await agent.client.startConversation({ systemPrompt: '' });
      const following = collectTurn(conversation);
      await sleep(500);
      const runs = survey.started;
      const turn = conversation.send('How many answered?');
      while (survey.started === runs) await sleep(50);
      await sleep(1_000);

      const during = await liveKeys(conversation);
      expect(during.filter((key) => key.includes('/followers/'))).toHaveLength(1);
      const entries = during.filter((key) => !key.includes('/followers/'));
      expect(entries.length).toBeGreaterThan(0);
      for (const key of entries) {
        const object = await raw.send(new GetObjectCommand({ Bucket: s3.bucket, Key: key }));
        const bytes = Buffer.from((await object.Body?.transformToByteArray()) ?? []);
        expect(bytes.toString('latin1')).not.toContain('toolProgress');
      }
      expect(await turn).toMatchObject({ status: 'completed', reply: SURVEY_REPLY });

      const seen = await following;
      expect(userView(seen)).toEqual({ types: SURVEY_TURN_EVENTS, progress: 8, text: SURVEY_REPLY });
      // Read while the tool ran, not with its result.
      const liveProgress = seen.filter(({ event }) => event.type === 'toolProgress' && event.live);
      expect(liveProgress.length).toBeGreaterThan(2);
      expect(await updatesAndSignals(conversation)).toEqual(['prompt']);
      // The last follower to go takes the channel's objects with it.
      await expect.poll(() => liveKeys(conversation), { timeout: 10_000 }).toEqual([]);
    });

    it('is not used when the workers turn it off (YIEM_S3_LIVE_CHANNEL=0): followers poll the conversation', async () => {
      const dataConverter = dataConverterFromEnv({ ...env, YIEM_S3_LIVE_CHANNEL: '0' });
      const polled = await startTestAgent({
        tools: [survey.tool],
        worker: { connection: { ...(dataConverter ? { dataConverter } : {}) } },
        // The client would read the channel; the workers say they do not write it.
        client: { dataConverter: dataConverterFromEnv(env) },
      });
      try {
        scriptSurveyTurn(polled.model, 500);
        const conversation = await polled.client.startConversation({ systemPrompt: '' });
        const following = collectTurn(conversation);
        await sleep(500);
        expect(await conversation.send('How many answered?')).toMatchObject({ reply: SURVEY_REPLY });
        expect(userView(await following).types).toEqual(SURVEY_TURN_EVENTS);
        expect(await updatesAndSignals(conversation)).toContain('__temporal_workflow_stream_poll');
        expect(await liveKeys(conversation)).toEqual([]);
      } finally {
        await polled.close();
      }
    });
  });
});
