import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FAST_MODEL_RETRY, startTestAgent, type TestAgent } from '../support/agentHarness.ts';
import { historyText } from '../support/history.ts';
import { closedPort } from '../support/ports.ts';

describe('model calls against an OpenAI-compatible endpoint', () => {
  let agent: TestAgent;
  beforeAll(async () => {
    agent = await startTestAgent({ modelTimeoutMs: 300 });
  });
  afterAll(async () => agent?.close());

  const start = () => agent.client.startConversation({ systemPrompt: '', modelPolicy: FAST_MODEL_RETRY });

  it('retries 429 (after Retry-After), 5xx, dropped connections and timeouts, then answers', async () => {
    agent.model.enqueue(
      { kind: 'error', status: 429, headers: { 'retry-after': '1' } },
      { kind: 'error', status: 503 },
      { kind: 'drop' },
      { kind: 'hang', ms: 1_000 },
      { kind: 'text', text: 'finally' },
    );
    const conversation = await agent.client.startConversation({
      systemPrompt: '',
      modelPolicy: { retry: { ...FAST_MODEL_RETRY.retry, maximumAttempts: 6 } },
    });
    const before = agent.model.requestCount;
    const result = await conversation.send('hello?');
    expect(result).toMatchObject({ status: 'completed', reply: 'finally' });
    expect(agent.model.requestCount - before).toBe(5);
    const [rateLimited, afterRateLimit] = agent.model.requests.slice(before, before + 2);
    // The retry policy's interval is 50 ms; only Retry-After explains a wait of a second.
    expect((afterRateLimit?.receivedAt ?? 0) - (rateLimited?.receivedAt ?? 0)).toBeGreaterThanOrEqual(950);
  });

  it.each([400, 401, 403, 404])(
    'does not retry %i: the turn fails clearly and the next message works',
    async (status) => {
      agent.model.enqueue({ kind: 'error', status, message: `provider says ${status}` });
      const conversation = await start();
      const before = agent.model.requestCount;
      const result = await conversation.send('hi');
      expect(agent.model.requestCount - before).toBe(1);
      expect(result.status).toBe('failed');
      expect(result.error).toBe(
        `The model call failed: The model endpoint answered ${status}: provider says ${status} (model scripted at ${agent.model.baseURL})`,
      );
      agent.model.enqueue({ kind: 'text', text: 'recovered' });
      expect(await conversation.send('again')).toMatchObject({
        turn: 2,
        status: 'completed',
        reply: 'recovered',
      });
      const roles = (await conversation.messages()).map((m) => m.role);
      expect(roles).toEqual(['user', 'user', 'assistant']);
    },
  );

  it('ends the turn with the last error once retries run out', async () => {
    agent.model.enqueue(
      { kind: 'error', status: 500, message: 'down' },
      { kind: 'error', status: 500, message: 'down' },
      { kind: 'error', status: 500, message: 'still down' },
    );
    const result = await (await start()).send('hi');
    expect(result).toMatchObject({
      status: 'failed',
      error: `The model call failed: The model endpoint answered 500: still down (model scripted at ${agent.model.baseURL})`,
    });
  });

  it('sends the API key to the endpoint but never writes it into workflow history', async () => {
    agent.model.enqueue({ kind: 'text', text: 'ok' });
    const conversation = await start();
    await conversation.send('secret?');
    expect(agent.model.lastRequest()?.headers.authorization).toBe('Bearer test-key-never-in-history');
    expect(await historyText(conversation.handle)).not.toContain('test-key-never-in-history');
  });

  it("uses the conversation's model name over the worker default", async () => {
    agent.model.enqueue({ kind: 'text', text: 'ok' });
    const conversation = await agent.client.startConversation({ systemPrompt: '', model: 'special-model' });
    await conversation.send('which model?');
    expect(agent.model.lastRequest()?.body.model).toBe('special-model');
  });
});

describe('a model endpoint that does not answer', () => {
  let refused: string;
  let port: number;
  let agent: TestAgent;
  beforeAll(async () => {
    port = await closedPort();
    refused = `http://127.0.0.1:${port}/v1`;
    agent = await startTestAgent({
      worker: {
        models: { model: { baseURL: refused, apiKey: 'k', model: 'local-llama', timeoutMs: 2_000 } },
      },
    });
  });
  afterAll(async () => agent?.close());

  it('fails the turn naming the endpoint, the model and the connection error', async () => {
    const conversation = await agent.client.startConversation({
      systemPrompt: '',
      modelPolicy: FAST_MODEL_RETRY,
    });
    const result = await conversation.send('anyone there?');
    expect(result.status).toBe('failed');
    expect(result.error).toContain(
      `The model call failed: Could not reach the model endpoint ${refused} (model local-llama): Connection error.`,
    );
    expect(result.error).toContain(`connect ECONNREFUSED 127.0.0.1:${port}`);
  });

  it('names the endpoint and the model where the worker says what it runs', () => {
    expect(agent.worker.model).toBe(`model local-llama at ${refused}`);
  });
});
