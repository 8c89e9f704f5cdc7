import { randomBytes } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { defaultPayloadConverter, type Payload } from '@temporalio/common';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { largestPayload, storedHistory } from '../../bench/history.ts';
import { AgentClient } from '../../src/client/client.ts';
import { DEFAULT_PAYLOAD_THRESHOLD_BYTES } from '../../src/contract/limits.ts';
import { textResult } from '../../src/contract/toolResult.ts';
import type { Message, ToolResultMessage } from '../../src/contract/types/messages.ts';
import type { AgentTool } from '../../src/contract/types/tools.ts';
import {
  AesGcmPayloadCodec,
  encryptedDataConverter,
  type RunningCodecServer,
  startCodecServer,
} from '../../src/infrastructure/codec/index.ts';
import { payloadStorage } from '../../src/infrastructure/storage/payloadStorage.ts';
import { startTestAgent, type TestAgent } from '../support/agentHarness.ts';

const USER_SECRET = 'USER-SECRET-tourmaline';
const TOOL_SECRET = 'TOOL-SECRET-malachite';
const userText = `${USER_SECRET} ${'u'.repeat(90_000)}`;
const toolText = `${TOOL_SECRET} ${'t'.repeat(300_000)}`;

const archive: AgentTool = {
  name: 'archive',
  label: 'Archive',
  description: 'Reads the archive',
  inputSchema: { type: 'object', properties: {} },
  parallelToolExecute: true,
  execute: () => textResult(toolText),
};

async function storedFiles(directory: string): Promise<Buffer[]> {
  const files = await readdir(directory, { recursive: true, withFileTypes: true });
  return Promise.all(
    files.filter((file) => file.isFile()).map((file) => readFile(path.join(file.parentPath, file.name))),
  );
}

describe('the payload store (External Storage) with encryption', () => {
  let directory: string;
  let agent: TestAgent;
  let codecServer: RunningCodecServer;
  let messages: Message[];
  let conversationId: string;
  const codec = new AesGcmPayloadCodec([{ id: 'store-key', key: randomBytes(32) }]);

  beforeAll(async () => {
    directory = await mkdtemp(path.join(os.tmpdir(), 'yiem-payloads-'));
    const storage = payloadStorage({ directory });
    agent = await startTestAgent({
      tools: [archive],
      worker: { connection: { dataConverter: encryptedDataConverter(codec, storage) } },
    });
    codecServer = await startCodecServer({
      codec,
      externalStorage: storage,
      token: 'store-token',
      allowedOrigins: [],
      port: 0,
    });
    agent.model.enqueue(
      { kind: 'toolCalls', toolCalls: [{ id: 'call_archive', name: 'archive', arguments: {} }] },
      { kind: 'text', text: 'Read the archive.' },
    );
    const conversation = await agent.client.startConversation({ systemPrompt: 'Archivist.' });
    conversationId = conversation.id;
    expect(await conversation.send(userText)).toMatchObject({ status: 'completed' });
    messages = await conversation.messages();
  });
  afterAll(async () => {
    await agent?.close();
    await codecServer?.close();
    if (directory) await rm(directory, { recursive: true, force: true });
  });

  it('gives back large messages whole, and the model got them whole', () => {
    expect(messages.map((message) => message.role)).toEqual(['user', 'assistant', 'toolResult', 'assistant']);
    expect(messages[0]).toMatchObject({ role: 'user', content: userText });
    expect((messages[2] as ToolResultMessage).content).toEqual([{ type: 'text', text: toolText }]);
    expect(JSON.stringify(agent.model.lastRequest()?.body.messages)).toContain(toolText);
  });

  it('reads part of the transcript on request', async () => {
    const part = await agent.client.getConversation(conversationId).messages({ fromIndex: 2, limit: 1 });
    expect(part).toEqual([messages[2]]);
  });

  it('keeps large payloads out of history and only ciphertext in the store', async () => {
    const history = await storedHistory(agent.client.getConversation(conversationId).handle);
    const raw = JSON.stringify(history, (_key, value) =>
      value instanceof Uint8Array ? Buffer.from(value).toString('latin1') : value,
    );
    expect(raw).not.toContain(USER_SECRET);
    expect(raw).not.toContain(TOOL_SECRET);
    expect(largestPayload(history)).toBeLessThan(DEFAULT_PAYLOAD_THRESHOLD_BYTES);

    const files = await storedFiles(directory);
    const stored = Buffer.concat(files);
    expect(stored.length).toBeGreaterThan(userText.length + toolText.length);
    expect(stored.includes(USER_SECRET)).toBe(false);
    expect(stored.includes(TOOL_SECRET)).toBe(false);
    expect(stored.includes('uuuuuuuuuuuuuuuu')).toBe(false);
  });

  it('lets the codec server show a stored payload: it fetches the reference and decrypts it', async () => {
    const history = await storedHistory(agent.client.getConversation(conversationId).handle);
    const accepted = history.events?.find((event) => event.workflowExecutionUpdateAcceptedEventAttributes);
    const reference = accepted?.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest?.input?.args
      ?.payloads?.[0] as Payload;
    const asJson = (payload: Payload) => ({
      metadata: Object.fromEntries(
        Object.entries(payload.metadata ?? {}).map(([key, value]) => [
          key,
          Buffer.from(value).toString('base64'),
        ]),
      ),
      data: Buffer.from(payload.data ?? new Uint8Array()).toString('base64'),
    });
    const response = await fetch(`${codecServer.url}/decode`, {
      method: 'POST',
      headers: { Authorization: 'Bearer store-token', 'Content-Type': 'application/json' },
      body: JSON.stringify({ payloads: [asJson(reference)] }),
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

  it('tells a client without the payload store what it lacks instead of returning empty messages', async () => {
    const withoutStore = new AgentClient({
      address: agent.address,
      taskQueue: agent.taskQueue,
      dataConverter: encryptedDataConverter(codec),
    });
    try {
      await expect(withoutStore.getConversation(conversationId).messages()).rejects.toThrow(
        /payload store, and this client has none/,
      );
    } finally {
      await withoutStore.close();
    }
  });
});
