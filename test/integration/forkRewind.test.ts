import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { transcriptQuery } from '../../src/contract/definitions.ts';
import { YIEM_FORKED_FROM } from '../../src/contract/searchAttributes.ts';
import { startTestAgent, type TestAgent } from '../support/agentHarness.ts';
import { YIEM_FROM_SOURCES } from '../support/cli.ts';
import { replayAndRecord } from '../support/fixtures.ts';

const yiem = async (...args: string[]) =>
  promisify(execFile)(
    process.execPath,
    [...YIEM_FROM_SOURCES, ...args, '--address', inject('temporalAddress')],
    {
      timeout: 100_000,
    },
  );

/** The scripted model answers each user message with `answer to <message>`, naming the model it was asked for. */
function answerLastMessage(agent: TestAgent): void {
  agent.model.respond((request) => {
    const last = request.body.messages.at(-1) as { content: string };
    return { kind: 'text', text: `answer to ${last.content}` };
  });
}

const contents = (messages: { content: unknown }[]) => messages.map((message) => message.content);

describe('fork and rewind', () => {
  let agent: TestAgent;
  beforeAll(async () => {
    agent = await startTestAgent();
  });
  afterAll(async () => agent?.close());

  it('forks from an earlier turn with the message edited and another model; the source stays', async () => {
    agent.model.reset();
    answerLastMessage(agent);
    const source = await agent.client.startConversation({ systemPrompt: 'Be brief.' });
    for (const text of ['one', 'two', 'three']) await source.send(text);

    const fork = await source.fork({ atTurn: 2, editMessage: 'two, edited', model: 'other-model' });
    expect(await fork.turnResult(2)).toMatchObject({
      turn: 2,
      status: 'completed',
      reply: 'answer to two, edited',
    });
    expect(contents(await fork.messages())).toEqual([
      'one',
      'answer to one',
      'two, edited',
      'answer to two, edited',
    ]);
    // The fork's model call went to the other model, with the source's system prompt and turn 1.
    const request = agent.model.lastRequest()?.body;
    expect(request?.model).toBe('other-model');
    expect(request?.messages).toEqual([
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'one' },
      { role: 'assistant', content: 'answer to one' },
      { role: 'user', content: 'two, edited' },
    ]);
    // It goes on as a conversation of its own; the source is untouched.
    expect(await fork.send('four')).toMatchObject({ turn: 3, reply: 'answer to four' });
    expect(contents(await source.messages())).toEqual(
      ['one', 'two', 'three'].flatMap((text) => [text, `answer to ${text}`]),
    );
    // The Web UI shows where it came from: a search attribute, the memo and its details.
    const description = await fork.handle.describe();
    expect(description.typedSearchAttributes.get(YIEM_FORKED_FROM)).toBe(source.id);
    expect(description.memo?.yiemForkedFrom).toMatchObject({ conversationId: source.id, atTurn: 2 });
    expect(await description.staticDetails()).toContain(`Forked from conversation ${source.id}`);
    const listed = [];
    for await (const execution of agent.client.client.workflow.list({
      query: `YiemForkedFrom = '${source.id}'`,
    })) {
      listed.push(execution.workflowId);
    }
    expect(listed).toEqual([fork.id]);
    // A fork's history replays: it is a conversation started with carried state, nothing new.
    await replayAndRecord(fork.handle.client.getHandle(fork.id), 'fork-edited-message');
    await fork.end();
    await source.end();
  });

  it('forks a conversation whose large messages live in the payload store, by reference', async () => {
    agent.model.reset();
    answerLastMessage(agent);
    const source = await agent.client.startConversation({ systemPrompt: 'Be brief.' });
    const large = `big ${'x'.repeat(20_000)}`;
    await source.send(large);
    await source.send('two');
    const fork = await source.fork({ atTurn: 2, editMessage: 'two, edited' });
    expect(await fork.turnResult(2)).toMatchObject({ reply: 'answer to two, edited' });
    const messages = await fork.messages();
    expect(messages[0]?.content).toBe(large);
    expect(agent.model.lastRequest()?.body.messages[1]).toEqual({ role: 'user', content: large });
    // The fork holds the same reference as its source: nothing was copied.
    const [sourceEntry, forkEntry] = await Promise.all(
      [source, fork].map(
        async (conversation) => (await conversation.handle.query(transcriptQuery)).messages[0],
      ),
    );
    expect(forkEntry).toMatchObject({ role: 'user', content: '', stored: sourceEntry?.stored });
    expect(sourceEntry?.stored).toBeDefined();
    await Promise.all([fork.end(), source.end()]);
  });

  it('forks with the original message of a turn, and refuses a turn it does not have', async () => {
    agent.model.reset();
    answerLastMessage(agent);
    const source = await agent.client.startConversation({ systemPrompt: 'Be brief.' });
    await source.send('one');
    await source.send('two');
    const retry = await source.fork({ atTurn: 2, systemPrompt: 'Be thorough.' });
    expect(await retry.turnResult(2)).toMatchObject({ reply: 'answer to two' });
    expect(agent.model.lastRequest()?.body.messages[0]).toEqual({ role: 'system', content: 'Be thorough.' });
    await expect(source.fork({ atTurn: 4 })).rejects.toThrow(/has no turn 4 to start from: turns 1 to 3/);
    // One past the last turn copies the whole transcript and waits for a message.
    const copy = await source.fork({ atTurn: 3 });
    expect(contents(await copy.messages())).toEqual(['one', 'answer to one', 'two', 'answer to two']);
    expect(await copy.send('three')).toMatchObject({ turn: 3, reply: 'answer to three' });
    await Promise.all([retry.end(), copy.end(), source.end()]);
  });

  it('rewinds in place to before a turn, says what it discarded, then takes a new turn', async () => {
    agent.model.reset();
    answerLastMessage(agent);
    const conversation = await agent.client.startConversation({ systemPrompt: 'Be brief.' });
    for (const text of ['one', 'two', 'three']) await conversation.send(text);
    const before = (await conversation.handle.describe()).runId;

    const rewound = await conversation.rewind({ toTurn: 2 });
    expect(rewound).toMatchObject({
      resetRunId: before,
      discardedTurns: { from: 2, to: 3 },
      keptMessages: 2,
      discardedMessages: 4,
      requeuedMessages: 0,
    });
    expect(rewound.runId).not.toBe(before);
    expect(contents(await conversation.messages())).toEqual(['one', 'answer to one']);
    expect(await conversation.status()).toMatchObject({ state: 'idle', turn: 1, messageCount: 2 });

    expect(await conversation.send('two, again')).toMatchObject({
      turn: 2,
      status: 'completed',
      reply: 'answer to two, again',
    });
    expect(contents(await conversation.messages())).toEqual([
      'one',
      'answer to one',
      'two, again',
      'answer to two, again',
    ]);
    expect(await conversation.end()).toMatchObject({ turns: 2, messageCount: 4 });
    // The reset run's history (the replayed part, the reset, the new turn) replays on this code.
    await replayAndRecord(conversation.handle.client.getHandle(conversation.id), 'rewound');
  });

  it('rewinds a conversation that posts its messages, and one that continued as new', async () => {
    agent.model.reset();
    answerLastMessage(agent);
    const conversation = await agent.client.startConversation({
      systemPrompt: 'Be brief.',
      maxTurnsPerRun: 2,
    });
    await conversation.send('one');
    await conversation.post('two');
    await conversation.turnResult(2);
    await conversation.send('three');
    await conversation.send('four');
    // Turn 2 began in the first run: it is reset, and the later runs are gone.
    const rewound = await conversation.rewind({ toTurn: 2 });
    expect(rewound).toMatchObject({
      discardedTurns: { from: 2, to: 4 },
      keptMessages: 2,
      requeuedMessages: 0,
    });
    expect(contents(await conversation.messages())).toEqual(['one', 'answer to one']);
    expect(await conversation.send('two, again')).toMatchObject({ turn: 2, reply: 'answer to two, again' });
    await conversation.end();
  });

  it('yiem fork prints the forked turn, yiem rewind what it discarded', async () => {
    agent.model.reset();
    answerLastMessage(agent);
    const conversation = await agent.client.startConversation({ systemPrompt: 'Be brief.' });
    await conversation.send('one');
    await conversation.send('two');
    const forked = await yiem(
      'fork',
      conversation.id,
      '--at-turn',
      '2',
      '--message',
      'deux',
      '--id',
      `${conversation.id}-b`,
    );
    expect(forked.stdout).toContain('answer to deux');
    expect(forked.stderr).toContain(
      `Forked ${conversation.id} at turn 2 into conversation ${conversation.id}-b`,
    );
    const rewound = await yiem('rewind', conversation.id, '--to-turn', '2');
    expect(rewound.stdout).toContain(`Rewound ${conversation.id} to before turn 2`);
    expect(rewound.stdout).toContain('Discarded: turn 2, 2 transcript message(s)');
    expect(rewound.stdout).toContain(
      'Not undone: what the discarded tool calls did outside the conversation.',
    );
    expect(contents(await conversation.messages())).toEqual(['one', 'answer to one']);
    await Promise.all([conversation.end(), agent.client.getConversation(`${conversation.id}-b`).end()]);
  });
});
