import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Conversation } from '../../src/client/client.ts';
import { agentTool } from '../../src/contract/agents.ts';
import { textResult } from '../../src/contract/toolResult.ts';
import type { ConversationOptions } from '../../src/contract/types/conversation.ts';
import type { ConversationEventItem } from '../../src/contract/types/events.ts';
import type { Guardrail, WorkerGuardrails } from '../../src/contract/types/guardrails.ts';
import type { AgentTool } from '../../src/contract/types/tools.ts';
import { type RecordedRequest, type ScriptedModel, startScriptedModel } from '../../src/testing/index.ts';
import { startTestAgent, type TestAgent } from '../support/agentHarness.ts';
import { scriptAgents } from '../support/agentScript.ts';
import { scheduledActivities, tokenReservationRecorded } from '../support/history.ts';
import { closedPort } from '../support/ports.ts';

const JUDGE_PROMPT = 'Answer SAFE or UNSAFE: is this message safe to answer?';

const noPasswords: Guardrail = {
  name: 'noPasswords',
  execute: (text) =>
    /password/i.test(text) ? { action: 'trip', reason: 'it contains a password' } : { action: 'pass' },
};
const politeness: Guardrail = {
  name: 'politeness',
  execute: (text) =>
    /stupid/.test(text)
      ? { action: 'rewrite', text: text.replaceAll('stupid', '[removed]') }
      : { action: 'pass' },
};
/** How often `brittle` was asked about a message that makes it throw. */
let brittleAttempts = 0;
const brittle: Guardrail = {
  name: 'brittle',
  execute: (text) => {
    if (text.includes('explode')) {
      brittleAttempts += 1;
      throw new Error('the policy service is down');
    }
    return { action: 'pass' };
  },
};
/** A guardrail that asks the worker's model to judge the message. */
const judge: Guardrail = {
  name: 'judge',
  execute: async (text, context) => {
    const answer = await context.complete({ instructions: JUDGE_PROMPT, input: text });
    return answer.trim() === 'SAFE'
      ? { action: 'pass' }
      : { action: 'trip', reason: `the judge said ${answer}` };
  },
};
const noInternal: Guardrail = {
  name: 'noInternal',
  execute: (text) =>
    text.includes('INTERNAL')
      ? { action: 'trip', reason: 'the reply names internal plans' }
      : { action: 'pass' },
};
const redactKeys: Guardrail = {
  name: 'redactKeys',
  execute: (text) => {
    const redacted = text.replace(/sk-[a-z0-9]+/g, '[redacted key]');
    return redacted === text ? { action: 'pass' } : { action: 'rewrite', text: redacted };
  },
};

const GUARDRAILS: WorkerGuardrails = {
  input: [noPasswords, politeness, brittle, judge],
  output: [noInternal],
  toolResult: [redactKeys],
};

const readConfig: AgentTool = {
  name: 'readConfig',
  label: 'Read config',
  description: 'Reads the service configuration',
  inputSchema: { type: 'object', properties: {} },
  parallelToolExecute: true,
  execute: () => textResult('endpoint=https://api.example.com\nkey=sk-live12345'),
};

const PLANNER = 'You plan.';
/** An agent with guardrails of its own: its child conversation runs them. */
const planner = agentTool({
  name: 'planner',
  description: 'Writes plans',
  systemPrompt: PLANNER,
  guardrails: { output: ['noInternal'] },
});

/** Every text the model was sent in `request`, system prompt aside. */
function sentTexts(request: RecordedRequest | undefined): string[] {
  return (request?.body.messages ?? [])
    .filter((message) => message.role !== 'system')
    .map((message) => String(message.content ?? ''));
}

async function eventsOfTurn(conversation: Conversation, turn: number): Promise<ConversationEventItem[]> {
  const events: ConversationEventItem[] = [];
  for await (const event of conversation.events()) {
    if (event.turn === turn) events.push(event);
    if (event.type === 'turnEnd' && event.turn === turn) break;
  }
  return events;
}

describe('guardrails', () => {
  let agent: TestAgent;
  beforeAll(async () => {
    agent = await startTestAgent({
      tools: [readConfig, planner],
      worker: { hooks: { guardrails: GUARDRAILS } },
    });
  });
  afterAll(async () => agent?.close());
  afterEach(() => {
    agent.model.reset();
    agent.model.respond(undefined);
  });

  const start = (guardrails: ConversationOptions['guardrails']) =>
    agent.client.startConversation({
      systemPrompt: 'You help.',
      guardrails,
      modelPolicy: { retry: { initialInterval: '50 milliseconds', maximumAttempts: 2 } },
    });

  it('an input guardrail that trips ends the turn before any model call; the message is never sent to the model', async () => {
    const conversation = await start({ input: ['noPasswords'] });
    const result = await conversation.send('My password is hunter2, log me in');
    expect(result).toMatchObject({
      status: 'guardrailTripped',
      reply: '',
      guardrail: { stage: 'input', guardrail: 'noPasswords', reason: 'it contains a password' },
    });
    expect(result.error).toBe(
      `The input guardrail "noPasswords" tripped on the user's message: it contains a password`,
    );
    expect(agent.model.requestCount).toBe(0);
    const [message] = await conversation.messages();
    expect(message).toMatchObject({
      role: 'user',
      content: 'My password is hunter2, log me in',
      guardrail: { tripped: { guardrail: 'noPasswords', reason: 'it contains a password' } },
    });
    const events = await eventsOfTurn(conversation, 1);
    expect(events.map((event) => event.type)).toEqual(['turnStart', 'guardrailTripped', 'turnEnd']);

    // The conversation goes on, and the model never reads the refused message.
    agent.model.enqueue({ kind: 'text', text: 'Hello!' });
    expect(await conversation.send('Hello')).toMatchObject({ status: 'completed', reply: 'Hello!' });
    expect(sentTexts(agent.model.lastRequest())).toEqual(['Hello']);
  });

  it('an input guardrail that rewrites: the model reads the rewrite, the transcript keeps both', async () => {
    const conversation = await start({ input: ['noPasswords', 'politeness'] });
    agent.model.enqueue({ kind: 'text', text: 'Sorry about that.' });
    const result = await conversation.send('you stupid bot');
    expect(result).toMatchObject({ status: 'completed', reply: 'Sorry about that.' });
    expect(sentTexts(agent.model.lastRequest())).toEqual(['you [removed] bot']);
    const [message] = await conversation.messages();
    expect(message).toMatchObject({
      role: 'user',
      content: 'you [removed] bot',
      guardrail: { rewrittenBy: ['politeness'], original: 'you stupid bot' },
    });
    const events = await eventsOfTurn(conversation, 1);
    expect(events.find((event) => event.type === 'guardrailRewrote')).toMatchObject({
      stage: 'input',
      guardrail: 'politeness',
    });
  });

  it('an output guardrail that trips on the reply ends the turn without it; the model never reads it again', async () => {
    const conversation = await start({ output: ['noInternal'] });
    agent.model.enqueue({ kind: 'text', text: 'The INTERNAL roadmap says: launch in May.' });
    const result = await conversation.send('What is the plan?');
    expect(result).toMatchObject({
      status: 'guardrailTripped',
      reply: '',
      guardrail: { stage: 'output', guardrail: 'noInternal', reason: 'the reply names internal plans' },
    });
    expect(result.error).toContain(`The output guardrail "noInternal" tripped on the model's reply`);
    const messages = await conversation.messages();
    expect(messages[1]).toMatchObject({
      role: 'assistant',
      guardrail: { tripped: { guardrail: 'noInternal' } },
    });

    agent.model.enqueue({ kind: 'text', text: 'I cannot say.' });
    expect(await conversation.send('Anything public?')).toMatchObject({ status: 'completed' });
    expect(sentTexts(agent.model.lastRequest())).toEqual(['What is the plan?', 'Anything public?']);
  });

  it('a tool-result guardrail redacts a secret before the model reads the result', async () => {
    const conversation = await start({ toolResult: ['redactKeys'] });
    agent.model.enqueue(
      { kind: 'toolCalls', toolCalls: [{ id: 'call_cfg', name: 'readConfig', arguments: {} }] },
      { kind: 'text', text: 'The endpoint is api.example.com.' },
    );
    const result = await conversation.send('Where does the service point?');
    expect(result).toMatchObject({ status: 'completed', reply: 'The endpoint is api.example.com.' });
    const sent = sentTexts(agent.model.lastRequest()).join('\n');
    expect(sent).toContain('key=[redacted key]');
    expect(sent).not.toContain('sk-live12345');
    const toolResult = (await conversation.messages()).find((message) => message.role === 'toolResult');
    expect(toolResult).toMatchObject({
      content: [{ type: 'text', text: 'endpoint=https://api.example.com\nkey=[redacted key]' }],
      guardrail: { rewrittenBy: ['redactKeys'] },
    });
    const events = await eventsOfTurn(conversation, 1);
    expect(events.find((event) => event.type === 'guardrailRewrote')).toMatchObject({
      stage: 'toolResult',
      guardrail: 'redactKeys',
      toolCallId: 'call_cfg',
    });
  });

  it('a guardrail that throws fails the turn with an error naming it, and the next message works', async () => {
    const conversation = await start({ input: ['brittle'] });
    const result = await conversation.send('make it explode');
    expect(result.status).toBe('failed');
    expect(result.error).toBe('The input guardrail "brittle" failed: the policy service is down');
    expect(brittleAttempts).toBe(2); // the conversation's modelPolicy: 2 attempts
    expect(agent.model.requestCount).toBe(0);

    agent.model.enqueue({ kind: 'text', text: 'Hi there.' });
    expect(await conversation.send('hi')).toMatchObject({ status: 'completed', reply: 'Hi there.' });
    // The message it could not check is kept from the model.
    expect(sentTexts(agent.model.lastRequest())).toEqual(['hi']);
  });

  it('a guardrail that is a model call: the worker model judges the message', async () => {
    agent.model.respond((request) => {
      const [system, user] = request.body.messages;
      if (system?.content === JUDGE_PROMPT) {
        return { kind: 'text', text: String(user?.content).includes('bomb') ? 'UNSAFE' : 'SAFE' };
      }
      return { kind: 'text', text: 'Happy to help.' };
    });
    const conversation = await start({ input: ['judge'] });
    const refused = await conversation.send('How do I build a bomb?');
    expect(refused).toMatchObject({
      status: 'guardrailTripped',
      guardrail: { stage: 'input', guardrail: 'judge', reason: 'the judge said UNSAFE' },
    });
    expect(agent.model.requestCount).toBe(1);

    expect(await conversation.send('How do I bake bread?')).toMatchObject({
      status: 'completed',
      reply: 'Happy to help.',
    });
    expect(agent.model.requests.map((request) => request.body.messages[0]?.content)).toEqual([
      JUDGE_PROMPT,
      JUDGE_PROMPT,
      'You help.',
    ]);
  });

  it('a conversation that names a guardrail the worker lacks fails its turn saying so', async () => {
    const conversation = await start({ output: ['missing'] });
    agent.model.enqueue({ kind: 'text', text: 'Hello.' });
    const result = await conversation.send('Hi');
    expect(result.status).toBe('failed');
    expect(result.error).toBe(
      'This worker has no output guardrail "missing" (its output guardrails: "noInternal")',
    );
  });

  it("a sub-agent runs its agent's guardrails: its tripped reply reaches the caller's model as a result that says so", async () => {
    scriptAgents(agent.model, {
      'You help.': (_request, toolResults) =>
        toolResults === 0
          ? {
              kind: 'toolCalls',
              toolCalls: [{ id: 'call_plan', name: 'planner', arguments: { task: 'Plan May' } }],
            }
          : { kind: 'text', text: 'The planner could not help.' },
      [PLANNER]: () => ({ kind: 'text', text: 'The INTERNAL plan: launch in May.' }),
    });
    const conversation = await start(undefined);
    expect(await conversation.send('Plan the launch')).toMatchObject({
      status: 'completed',
      reply: 'The planner could not help.',
    });
    const result = (await conversation.messages()).find((message) => message.role === 'toolResult');
    expect(result?.isError).toBe(true);
    expect(result?.content[0]?.text).toContain(
      `Agent planner did not finish (guardrailTripped): The output guardrail "noInternal" tripped on the model's reply`,
    );
  });
});

/** A guardrail that asks one of the worker's models, by name, whether the message is safe. */
function judgeOn(model: string): Guardrail {
  return {
    name: `judge-${model}`,
    execute: async (text, context) => {
      const answer = await context.complete({ instructions: JUDGE_PROMPT, input: text, model });
      return answer.trim() === 'SAFE' ? { action: 'pass' } : { action: 'trip', reason: answer };
    },
  };
}

describe("a guardrail's model call is held to its model's rules, as the turn's calls are", () => {
  let limited: ScriptedModel;
  let backup: ScriptedModel;
  let agent: TestAgent;
  beforeAll(async () => {
    const judgeOrAnswer = (request: RecordedRequest) =>
      ({
        kind: 'text',
        text: request.body.messages[0]?.content === JUDGE_PROMPT ? 'SAFE' : 'Happy to help.',
      }) as const;
    [limited, backup] = await Promise.all([
      startScriptedModel({ respond: judgeOrAnswer }),
      startScriptedModel({ respond: judgeOrAnswer }),
    ]);
    agent = await startTestAgent({
      worker: {
        models: {
          model: undefined,
          models: {
            backup: { baseURL: backup.baseURL },
            limited: {
              baseURL: limited.baseURL,
              rateLimit: { requestsPerMinute: 6_000, tokensPerMinute: 100_000 },
            },
            down: { baseURL: `http://127.0.0.1:${await closedPort()}/v1`, timeoutMs: 2_000 },
          },
          fallbacks: { down: ['backup'] },
        },
        hooks: { guardrails: { input: [judgeOn('limited'), judgeOn('down')] } },
      },
    });
  });
  afterAll(async () => {
    await agent?.close();
    await limited?.close();
    await backup?.close();
  });

  it("counts in the model's token window", async () => {
    const conversation = await agent.client.startConversation({
      systemPrompt: 'You help.',
      guardrails: { input: ['judge-limited'] },
    });
    expect(await conversation.send('How do I bake bread?')).toMatchObject({ status: 'completed' });
    expect(limited.requests.map((request) => request.body.messages[0]?.content)).toEqual([JUDGE_PROMPT]);
    const guardrails = (await scheduledActivities(conversation.handle)).find(
      (activity) => activity.type === 'runGuardrails',
    );
    // The limiter workflow of the model reserved the guardrail's request, by its activity id.
    expect(
      await tokenReservationRecorded(
        agent.client.client,
        agent.taskQueue,
        'limited',
        conversation.handle,
        guardrails?.activityId,
      ),
    ).toBe(true);
  });

  it('goes on to the fallback when its model cannot answer, and the event log says so', async () => {
    const conversation = await agent.client.startConversation({
      systemPrompt: 'You help.',
      guardrails: { input: ['judge-down'] },
    });
    expect(await conversation.send('How do I bake bread?')).toMatchObject({
      status: 'completed',
      reply: 'Happy to help.',
    });
    const events = await eventsOfTurn(conversation, 1);
    expect(events.filter((event) => event.type === 'modelFallback')).toMatchObject([
      { from: 'down', to: 'backup', cause: expect.stringContaining('ECONNREFUSED') },
    ]);
    expect(
      backup.requests.filter((request) => request.body.messages[0]?.content === JUDGE_PROMPT),
    ).toHaveLength(1);
  });
});
