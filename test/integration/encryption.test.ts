import { randomBytes } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { defaultPayloadConverter, type Payload } from '@temporalio/common';
import { Worker } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AgentClient } from '../../src/client/client.ts';
import { ToolError, textResult } from '../../src/contract/toolResult.ts';
import type { Message } from '../../src/contract/types/messages.ts';
import type { AgentTool } from '../../src/contract/types/tools.ts';
import {
  AesGcmPayloadCodec,
  type CodecKey,
  encryptedDataConverter,
  type RunningCodecServer,
  startCodecServer,
} from '../../src/infrastructure/codec/index.ts';
import { type DevServer, ensureTemporalCli, startDevServer } from '../../src/infrastructure/server/index.ts';
import { startTestAgent, type TestAgent, workflowBundle } from '../support/agentHarness.ts';

const SECRETS = {
  systemPrompt: 'SYSTEM-SECRET-obsidian',
  prompt: 'PROMPT-SECRET-amethyst',
  toolArgument: 'ARGS-SECRET-basalt',
  toolResult: 'RESULT-SECRET-cobalt',
  reply: 'REPLY-SECRET-dolomite',
  failedAttempt: 'FAILURE-SECRET-epidote',
  toolError: 'TOOLERROR-SECRET-fluorite',
};

const attempted = new Set<string>();
const vault: AgentTool = {
  name: 'vault',
  label: 'Vault',
  description: 'Opens a vault',
  inputSchema: { type: 'object', properties: { combination: { type: 'string' } }, required: ['combination'] },
  parallelToolExecute: true,
  policy: { retry: { initialInterval: '10 milliseconds' } },
  // The first attempt fails: its message is stored with the retried activity.
  execute: (_id, args) => {
    if (!attempted.has(String(args.combination))) {
      attempted.add(String(args.combination));
      throw new Error(`Vault jammed: ${SECRETS.failedAttempt}`);
    }
    return textResult(`The vault holds ${SECRETS.toolResult}`);
  },
};

// A tool error fails its activity, with the result the model gets as the failure's details.
const lockedSafe: AgentTool = {
  name: 'lockedSafe',
  label: 'Locked safe',
  description: 'A safe that stays shut',
  inputSchema: { type: 'object', properties: {} },
  parallelToolExecute: true,
  execute: () => {
    throw new ToolError(`The safe stays shut: ${SECRETS.toolError}`);
  },
};

const oldKey: CodecKey = { id: 'key-2025', key: randomBytes(32) };
const newKey: CodecKey = { id: 'key-2026', key: randomBytes(32) };
const codec = new AesGcmPayloadCodec([oldKey]);

/** Every byte the server persisted: the SQLite file and its write-ahead log, if any. */
async function serverFiles(dbFile: string): Promise<Buffer> {
  const dir = path.dirname(dbFile);
  const names = (await readdir(dir)).filter((name) => name.startsWith(path.basename(dbFile)));
  return Buffer.concat(await Promise.all(names.map((name) => readFile(path.join(dir, name)))));
}

describe('encrypted payloads (AES-256-GCM codec)', () => {
  let dataDir: string;
  let server: DevServer;
  let agent: TestAgent;
  let codecServer: RunningCodecServer;
  let conversationId: string;
  let transcript: Message[];

  beforeAll(async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'yiem-encrypted-'));
    server = await startDevServer({ dataDir, port: 0, headless: true, cliPath: await ensureTemporalCli() });
    agent = await startTestAgent({
      address: server.address,
      tools: [vault, lockedSafe],
      // No prebuilt bundle: the worker bundles the workflow with the encrypting failure converter.
      worker: {
        connection: { dataConverter: encryptedDataConverter(codec) },
        worker: { workflowBundle: undefined },
      },
    });
    codecServer = await startCodecServer({
      codec,
      token: 'codec-token',
      allowedOrigins: ['http://localhost:8233'],
      port: 0,
    });

    agent.model.enqueue(
      {
        kind: 'toolCalls',
        toolCalls: [
          { id: 'v1', name: 'vault', arguments: { combination: SECRETS.toolArgument } },
          { id: 's1', name: 'lockedSafe', arguments: {} },
        ],
      },
      { kind: 'text', text: SECRETS.reply },
    );
    const conversation = await agent.client.startConversation({ systemPrompt: SECRETS.systemPrompt });
    conversationId = conversation.id;
    expect(await conversation.send(SECRETS.prompt)).toMatchObject({
      status: 'completed',
      reply: SECRETS.reply,
    });
    transcript = await conversation.messages();
    await conversation.end();
  });

  afterAll(async () => {
    await agent?.close();
    await codecServer?.close();
    await server?.stop();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it('the model and the tool still see plaintext', () => {
    const request = JSON.stringify(agent.model.requests);
    expect(request).toContain(SECRETS.prompt);
    expect(request).toContain(SECRETS.toolResult);
    expect(request).toContain(SECRETS.toolError);
    expect(JSON.stringify(transcript)).toContain(SECRETS.toolArgument);
  });

  it('a client with the old and a newer key reads the conversation; one without keys cannot', async () => {
    const rotated = new AgentClient({
      address: server.address,
      dataConverter: encryptedDataConverter(new AesGcmPayloadCodec([oldKey, newKey])),
    });
    const plain = new AgentClient({ address: server.address });
    try {
      expect(await rotated.getConversation(conversationId).messages()).toEqual(transcript);
      await expect(plain.getConversation(conversationId).messages()).rejects.toThrow();
    } finally {
      await rotated.close();
      await plain.close();
    }
  });

  it('the encrypted history replays with the codec, and not without it', async () => {
    const history = await agent.client.getConversation(conversationId).handle.fetchHistory();
    const bundle = await workflowBundle();
    await expect(
      Worker.runReplayHistory(
        { workflowBundle: bundle, dataConverter: encryptedDataConverter(codec) },
        history,
      ),
    ).resolves.toBeUndefined();
    await expect(Worker.runReplayHistory({ workflowBundle: bundle }, history)).rejects.toThrow();
  });

  it('the codec server decodes what the worker encoded, for the right token and origins only', async () => {
    const history = await agent.client.getConversation(conversationId).handle.fetchHistory();
    const input = history.events?.[0]?.workflowExecutionStartedEventAttributes?.input
      ?.payloads?.[0] as Payload;
    const asJson = {
      metadata: Object.fromEntries(
        Object.entries(input.metadata ?? {}).map(([key, value]) => [
          key,
          Buffer.from(value).toString('base64'),
        ]),
      ),
      data: Buffer.from(input.data ?? new Uint8Array()).toString('base64'),
    };
    expect(Buffer.from(asJson.metadata['encryption-key-id'] ?? '', 'base64').toString()).toBe(oldKey.id);
    const decode = (token: string) =>
      fetch(`${codecServer.url}/decode`, {
        method: 'POST',
        headers: {
          'Content-Type': 'application/json',
          Authorization: `Bearer ${token}`,
          Origin: 'http://localhost:8233',
          'X-Namespace': 'default',
        },
        body: JSON.stringify({ payloads: [asJson] }),
      });

    const decoded = await decode('codec-token');
    expect(decoded.status).toBe(200);
    expect(decoded.headers.get('access-control-allow-origin')).toBe('http://localhost:8233');
    const [payload] = ((await decoded.json()) as { payloads: (typeof asJson)[] }).payloads;
    const options = defaultPayloadConverter.fromPayload<{ systemPrompt: string }>({
      metadata: Object.fromEntries(
        Object.entries(payload?.metadata ?? {}).map(([key, value]) => [key, Buffer.from(value, 'base64')]),
      ),
      data: Buffer.from(payload?.data ?? '', 'base64'),
    });
    expect(options.systemPrompt).toBe(SECRETS.systemPrompt);

    const refused = await decode('wrong-token');
    expect(refused.status).toBe(401);
    expect(await refused.text()).not.toContain(SECRETS.systemPrompt);

    // The Web UI cannot send headers; its endpoint URL carries the token instead.
    const fromUi = (token: string) =>
      fetch(`${codecServer.url}/${token}/decode`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Origin: 'http://localhost:8233' },
        body: JSON.stringify({ payloads: [asJson] }),
      });
    expect((await fromUi('codec-token')).status).toBe(200);
    expect((await fromUi('wrong-token')).status).toBe(401);
    const preflight = await fetch(`${codecServer.url}/codec-token/decode`, {
      method: 'OPTIONS',
      headers: { Origin: 'http://localhost:8233', 'Access-Control-Request-Method': 'POST' },
    });
    expect(preflight.headers.get('access-control-allow-origin')).toBe('http://localhost:8233');
    const foreign = await fetch(`${codecServer.url}/codec-token/decode`, {
      method: 'OPTIONS',
      headers: { Origin: 'http://evil.example', 'Access-Control-Request-Method': 'POST' },
    });
    expect(foreign.headers.get('access-control-allow-origin')).toBeNull();
  });

  it("the server's SQLite file holds no plaintext of the prompt, tool arguments, results, replies or failures", async () => {
    await server.stop();
    const bytes = await serverFiles(server.dbFile);
    // The search can find things: ids and the codec's marker are stored in the clear.
    expect(bytes.includes(conversationId)).toBe(true);
    expect(bytes.includes('binary/encrypted')).toBe(true);
    for (const [what, secret] of Object.entries(SECRETS)) {
      expect(bytes.includes(secret), `${what} in ${server.dbFile}`).toBe(false);
    }
  });
});
