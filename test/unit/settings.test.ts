import { describe, expect, it } from 'vitest';
import { DEFAULT_MODEL, describeModel, resolveModelSettings } from '../../activities/models/settings.ts';
import { DEFAULT_COMPACTION_PROMPT } from '../../src/contract/compaction.ts';
import { DEFAULT_MAX_CONTEXT_BYTES } from '../../src/contract/limits.ts';
import {
  conversationOptionsProblem,
  resolveConversationSettings,
  userTextProblem,
} from '../../src/contract/settings.ts';

describe('userTextProblem', () => {
  it('accepts an ordinary message', () => {
    expect(userTextProblem('What is the weather in Tokyo?', 100)).toBeNull();
  });

  it('rejects an empty or whitespace-only message', () => {
    expect(userTextProblem('', 100)).toBe('A message must not be empty');
    expect(userTextProblem('  \n\t ', 100)).toBe('A message must not be empty');
  });

  it.each([
    ['a number', 42],
    ['undefined', undefined],
    ['null', null],
    ['an object', { text: 'hi' }],
  ])('rejects %s', (_label, value) => {
    expect(userTextProblem(value, 100)).toBe('A message must be a string');
  });

  it('accepts a message of exactly the maximum size', () => {
    expect(userTextProblem('a'.repeat(10), 10)).toBeNull();
  });

  it('rejects a message over the maximum, saying both sizes', () => {
    expect(userTextProblem('a'.repeat(11), 10)).toBe('A message may have at most 10 bytes; this one has 11');
  });

  it('counts UTF-8 bytes, not characters', () => {
    // 'é' is 2 bytes, '日' 3 bytes, '😀' 4 bytes (2 UTF-16 code units).
    expect(userTextProblem('ééééé', 10)).toBeNull();
    expect(userTextProblem('éééééé', 10)).toBe('A message may have at most 10 bytes; this one has 12');
    expect(userTextProblem('日本語', 8)).toBe('A message may have at most 8 bytes; this one has 9');
    expect(userTextProblem('😀😀', 8)).toBeNull();
    expect(userTextProblem('😀😀😀', 8)).toBe('A message may have at most 8 bytes; this one has 12');
  });
});

describe('conversationOptionsProblem', () => {
  it('accepts the documented options', () => {
    expect(
      conversationOptionsProblem({
        systemPrompt: 'sys',
        toolExecution: 'sequential',
        model: 'gpt-4o',
        maxModelCallsPerTurn: 3,
        maxMessageBytes: 1_000_000,
        maxTurnsPerRun: 10,
        approvalTimeout: '10 minutes',
        onApprovalTimeout: 'approve',
        modelPolicy: { startToCloseTimeout: '1 minute' },
      }),
    ).toBeNull();
  });

  it('names every field that is wrong, with what it got', () => {
    expect(
      conversationOptionsProblem({
        systemPrompt: 7,
        maxMessageBytes: 1_000_001,
        maxTurnsPerRun: 1.5,
        onApprovalTimeout: 'maybe',
        modelPolicy: [],
      }),
    ).toBe(
      'Invalid conversation options: systemPrompt must be a string of at most 1000000 bytes, got 7; maxMessageBytes must be a whole number from 1 to 1000000, got 1000001; maxTurnsPerRun must be a whole number of at least 1, got 1.5; onApprovalTimeout must be "approve" or "deny", got "maybe"; modelPolicy must be an object whose localActivity, if given, is true or false, got []',
    );
  });

  it('takes model calls as local activities only as true or false', () => {
    expect(conversationOptionsProblem({ systemPrompt: 'sys', modelPolicy: { localActivity: 'yes' } })).toBe(
      'Invalid conversation options: modelPolicy must be an object whose localActivity, if given, is true or false, got {"localActivity":"yes"}',
    );
    expect(
      conversationOptionsProblem({ systemPrompt: 'sys', modelPolicy: { localActivity: true } }),
    ).toBeNull();
    const settings = resolveConversationSettings({
      systemPrompt: 'sys',
      modelPolicy: { localActivity: true },
    });
    expect(settings.modelPolicy.localActivity).toBe(true);
    // The summarising call stays an activity.
    expect(settings.compaction && 'localActivity' in settings.compaction.policy).toBe(false);
  });

  it('names what is wrong with the compaction option', () => {
    expect(conversationOptionsProblem({ systemPrompt: 'sys', compaction: true })).toBe(
      'Invalid conversation options: compaction must be false or an object { model?, prompt?, keepRecentTurns?, maxContextBytes?, policy? }, got true',
    );
    expect(conversationOptionsProblem({ systemPrompt: 'sys', compaction: { keepRecentTurns: 0 } })).toBe(
      'Invalid conversation options: compaction must be an object whose keepRecentTurns is a whole number of at least 1, got {"keepRecentTurns":0}',
    );
    expect(conversationOptionsProblem({ systemPrompt: 'sys', compaction: false })).toBeNull();
    expect(conversationOptionsProblem({ systemPrompt: 'sys', compaction: {} })).toBeNull();
  });

  it('names what is wrong with the guardrails option', () => {
    expect(conversationOptionsProblem({ systemPrompt: 'sys', guardrails: { inputs: ['a'] } })).toBe(
      'Invalid conversation options: guardrails must be an object { input?, output?, toolResult? } of lists of guardrail names, not "inputs"',
    );
    expect(conversationOptionsProblem({ systemPrompt: 'sys', guardrails: { output: 'noLeaks' } })).toBe(
      'Invalid conversation options: guardrails must be an object { input?, output?, toolResult? } of lists of guardrail names; output is not a list of names',
    );
    expect(
      conversationOptionsProblem({ systemPrompt: 'sys', guardrails: { input: ['a'], toolResult: [] } }),
    ).toBeNull();
  });

  it('refuses options that are not an object', () => {
    expect(conversationOptionsProblem('sys')).toBe(
      'Invalid conversation options: they must be an object such as { systemPrompt: "..." }',
    );
  });
});

describe('resolveConversationSettings', () => {
  it('fills in the documented defaults', () => {
    const settings = resolveConversationSettings({ systemPrompt: 'sys' });
    expect(settings).toEqual({
      systemPrompt: 'sys',
      toolExecution: 'parallel',
      model: undefined,
      maxModelCallsPerTurn: 25,
      maxMessageBytes: 100_000,
      modelPolicy: {
        startToCloseTimeout: '2 minutes',
        heartbeatTimeout: '30 seconds',
        retry: {
          maximumAttempts: 5,
          initialInterval: '1 second',
          backoffCoefficient: 2,
          maximumInterval: '30 seconds',
        },
      },
      approval: { timeout: undefined, onTimeout: 'deny' },
      compaction: {
        prompt: DEFAULT_COMPACTION_PROMPT,
        keepRecentTurns: 4,
        policy: settings.modelPolicy,
      },
    });
  });

  it('compacts with its own settings, or not at all with compaction: false', () => {
    const policy = { startToCloseTimeout: '5 minutes' };
    expect(
      resolveConversationSettings({
        systemPrompt: 'sys',
        compaction: { model: 'small', prompt: 'Sum up.', keepRecentTurns: 2, maxContextBytes: 9_000, policy },
      }).compaction,
    ).toEqual({ model: 'small', prompt: 'Sum up.', keepRecentTurns: 2, maxContextBytes: 9_000, policy });
    expect(resolveConversationSettings({ systemPrompt: 'sys', compaction: false }).compaction).toBe(false);
  });

  it('keeps given options and merges a partial retry policy over the defaults', () => {
    const settings = resolveConversationSettings({
      systemPrompt: 'sys',
      toolExecution: 'sequential',
      model: 'other-model',
      maxModelCallsPerTurn: 3,
      maxMessageBytes: 10,
      modelPolicy: {
        startToCloseTimeout: '10 seconds',
        heartbeatTimeout: '5 seconds',
        retry: { maximumAttempts: 1 },
      },
    });
    expect(settings.toolExecution).toBe('sequential');
    expect(settings.model).toBe('other-model');
    expect(settings.maxModelCallsPerTurn).toBe(3);
    expect(settings.maxMessageBytes).toBe(10);
    expect(settings.modelPolicy).toEqual({
      startToCloseTimeout: '10 seconds',
      heartbeatTimeout: '5 seconds',
      retry: {
        maximumAttempts: 1,
        initialInterval: '1 second',
        backoffCoefficient: 2,
        maximumInterval: '30 seconds',
      },
    });
  });
});

describe('resolveModelSettings', () => {
  it('uses explicit values over the environment', () => {
    const env = { OPENAI_BASE_URL: 'http://env/v1', OPENAI_API_KEY: 'env-key', YIEM_MODEL: 'env-model' };
    expect(
      resolveModelSettings(
        {
          baseURL: 'http://given/v1',
          apiKey: 'given-key',
          model: 'given-model',
          timeoutMs: 5,
          maxContextBytes: 2048,
        },
        { ...env, YIEM_MAX_CONTEXT_BYTES: '4096' },
      ),
    ).toEqual({
      baseURL: 'http://given/v1',
      apiKey: 'given-key',
      model: 'given-model',
      timeoutMs: 5,
      maxContextBytes: 2048,
    });
  });

  it('reads what was left out from the environment', () => {
    const env = {
      OPENAI_BASE_URL: 'http://localhost:11434/v1',
      OPENAI_API_KEY: 'env-key',
      YIEM_MODEL: 'llama3',
      YIEM_MAX_CONTEXT_BYTES: '500000',
    };
    expect(resolveModelSettings({ timeoutMs: 1000 }, env)).toEqual({
      baseURL: 'http://localhost:11434/v1',
      apiKey: 'env-key',
      model: 'llama3',
      timeoutMs: 1000,
      maxContextBytes: 500_000,
    });
  });

  it('falls back to the defaults with an empty environment', () => {
    expect(resolveModelSettings({}, {})).toEqual({
      baseURL: undefined,
      apiKey: 'not-needed',
      model: DEFAULT_MODEL,
      timeoutMs: 60_000,
      maxContextBytes: DEFAULT_MAX_CONTEXT_BYTES,
    });
    expect(DEFAULT_MODEL).toBe('gpt-4o-mini');
  });

  it('refuses a context window that is not a number of bytes', () => {
    expect(() => resolveModelSettings({}, { YIEM_MAX_CONTEXT_BYTES: '1 MB' })).toThrow(
      'YIEM_MAX_CONTEXT_BYTES=1 MB: expected a number of bytes',
    );
  });

  it.each([
    [{}, { OPENAI_BASE_URL: 'not-a-url' }, 'OPENAI_BASE_URL=not-a-url is not an http(s) URL'],
    [{ baseURL: 'localhost:11434/v1' }, {}, 'model.baseURL=localhost:11434/v1 is not an http(s) URL'],
  ])(
    'refuses a base URL that is not http(s) at start, naming where it came from',
    (settings, env, message) => {
      expect(() => resolveModelSettings(settings, env)).toThrow(message);
    },
  );

  it('describes the model and endpoint, OpenAI when no base URL is set', () => {
    expect(describeModel(resolveModelSettings({}, {}))).toBe(
      'model gpt-4o-mini at https://api.openai.com/v1',
    );
    expect(
      describeModel(resolveModelSettings({ baseURL: 'http://localhost:11434/v1', model: 'llama3' }, {})),
    ).toBe('model llama3 at http://localhost:11434/v1');
  });

  it('reads process.env when no environment is given', () => {
    const saved = process.env.YIEM_MODEL;
    process.env.YIEM_MODEL = 'from-process-env';
    try {
      expect(resolveModelSettings().model).toBe('from-process-env');
    } finally {
      if (saved === undefined) delete process.env.YIEM_MODEL;
      else process.env.YIEM_MODEL = saved;
    }
  });

  // Regression: an empty OPENAI_API_KEY (e.g. `OPENAI_API_KEY=` in a .env file, or docker-compose passing an
  // unset host variable through) yields apiKey '' instead of the placeholder, and `new OpenAI({apiKey: ''})`
  // then throws "Missing credentials", so a worker for a keyless local endpoint cannot start.
  it('uses the placeholder key when OPENAI_API_KEY is set but empty', () => {
    expect(resolveModelSettings({}, { OPENAI_API_KEY: '' }).apiKey).toBe('not-needed');
  });

  // Regression: an empty YIEM_MODEL yields model '' instead of the default, so every request names no model.
  it('uses the default model when YIEM_MODEL is set but empty', () => {
    expect(resolveModelSettings({}, { YIEM_MODEL: '' }).model).toBe(DEFAULT_MODEL);
  });
});
