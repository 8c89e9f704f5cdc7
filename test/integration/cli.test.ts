import { execFile, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startTestAgent, type TestAgent } from '../support/agentHarness.ts';
import { YIEM_FROM_SOURCES } from '../support/cli.ts';
import { startFakeOpenMeteo } from '../support/fakeOpenMeteo.ts';
import { executions, scheduledActivities } from '../support/history.ts';

interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** The environment of a user who has set no model endpoint. */
function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const { OPENAI_BASE_URL: _url, OPENAI_API_KEY: _key, YIEM_MODEL: _model, ...env } = process.env;
  return { ...env, ...extra };
}

function yiem(args: string[], options: { env?: NodeJS.ProcessEnv; input?: string } = {}): Promise<CliRun> {
  return new Promise((resolve) => {
    const child = execFile(
      process.execPath,
      [...YIEM_FROM_SOURCES, ...args],
      { env: options.env ?? cleanEnv(), timeout: 100_000 },
      (error, stdout, stderr) =>
        resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr }),
    );
    child.stdin?.end(options.input ?? '');
  });
}

describe('the yiem CLI', () => {
  let agent: TestAgent;
  const address = (): string => inject('temporalAddress');
  beforeAll(async () => {
    agent = await startTestAgent();
  });
  afterAll(async () => agent?.close());

  it('send prints the reply, and history prints the transcript', async () => {
    agent.model.enqueue({ kind: 'text', text: 'Pong from the agent.' });
    const sent = await yiem(['send', '--address', address(), '--task-queue', agent.taskQueue, 'ping']);
    expect(sent).toMatchObject({ code: 0, stdout: 'agent> Pong from the agent.\n' });
    const id = /Started conversation (\S+)/.exec(sent.stderr)?.[1] ?? '';
    expect(id).not.toBe('');
    const history = await yiem(['history', id, '--address', address()]);
    expect(history.code).toBe(0);
    expect(history.stdout).toBe('you> ping\nagent> Pong from the agent.\n');
    expect(history.stderr).toContain(`/namespaces/default/workflows/${id}`);
  });

  it('send without --id ends its conversation after the reply; send --id starts the conversation with that id, then resumes it', async () => {
    agent.model.enqueue({ kind: 'text', text: 'Once.' });
    const once = await yiem(['send', '--address', address(), '--task-queue', agent.taskQueue, 'just once']);
    expect(once.stderr).toContain('it ends after this reply');
    const onceId = /Started conversation (\S+)/.exec(once.stderr)?.[1] ?? '';
    const description = await agent.client.getConversation(onceId).handle.describe();
    expect(description.status.name).toBe('COMPLETED');

    const id = `cli-send-${randomUUID()}`;
    const flags = ['--address', address(), '--task-queue', agent.taskQueue, '--id', id];
    agent.model.enqueue({ kind: 'text', text: 'First.' }, { kind: 'text', text: 'Second.' });
    const first = await yiem(['send', ...flags, 'one']);
    expect(first).toMatchObject({ code: 0, stdout: 'agent> First.\n' });
    expect(first.stderr).toContain(`Started conversation ${id}`);
    const second = await yiem(['send', ...flags, 'two']);
    expect(second).toMatchObject({ code: 0, stdout: 'agent> Second.\n' });
    // Nothing but what the turn spent: a resumed conversation's text turn is 4 Actions.
    expect(second.stderr).toMatch(/^turn spent: 1 model calls · 0 tool calls · .* · 4 Actions · [\d.]+ s\n$/);
    const messages = await agent.client.getConversation(id).messages();
    expect(messages.map((message) => message.content)).toEqual(['one', 'First.', 'two', 'Second.']);
  });

  it('list shows the newest conversation first, whether it still runs or not', async () => {
    const older = await agent.client.startConversation({ systemPrompt: 'older, still running' });
    const newer = await agent.client.startConversation({ systemPrompt: 'newer, ended' });
    await newer.end();
    let listed = '';
    await expect
      .poll(
        async () => {
          listed = (await yiem(['list', '--address', address(), '--limit', '1000'])).stdout;
          return listed.includes(older.id) && listed.includes(`${newer.id}  ended`);
        },
        { timeout: 20_000, interval: 500 },
      )
      .toBe(true);
    expect(listed.indexOf(newer.id)).toBeLessThan(listed.indexOf(older.id));
  });

  it('--version prints the package version, and dev --help says which of --address and --port wins', async () => {
    const manifest = JSON.parse(await readFile(new URL('../../package.json', import.meta.url), 'utf8'));
    expect((await yiem(['--version'])).stdout.trim()).toBe(manifest.version);
    const help = (await yiem(['dev', '--help'])).stdout.replace(/\s+/g, ' ');
    expect(help).toContain('wins over --port');
    expect(help).toContain('gRPC port of the server dev starts when none answers at --address');
  });

  it('send exits non-zero with the reason when the turn fails', async () => {
    agent.model.enqueue({ kind: 'error', status: 401, message: 'invalid api key' });
    const sent = await yiem(['send', '--address', address(), '--task-queue', agent.taskQueue, 'hello']);
    expect(sent.code).toBe(1);
    expect(sent.stdout).toContain('The model endpoint answered 401: invalid api key');
  });

  it('says what to do when no Temporal server answers', async () => {
    const run = await yiem(['history', 'some-id', '--address', '127.0.0.1:1']);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('No Temporal server answers at 127.0.0.1:1. Start one with "yiem server"');
  });

  it('worker refuses a model base URL that is not a URL before it starts, naming the variable', async () => {
    const run = await yiem(['worker', '--address', address(), '--task-queue', `bad-url-${randomUUID()}`], {
      env: cleanEnv({ OPENAI_BASE_URL: 'not-a-url' }),
    });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('yiem: OPENAI_BASE_URL=not-a-url is not an http(s) URL');
  });

  it("worker's start line names its model and endpoint", async () => {
    const taskQueue = `start-line-${randomUUID()}`;
    const child = spawn(
      process.execPath,
      [...YIEM_FROM_SOURCES, 'worker', '--address', address(), '--task-queue', taskQueue],
      {
        env: cleanEnv({ OPENAI_BASE_URL: 'http://127.0.0.1:9/v1', YIEM_MODEL: 'local-llama' }),
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    try {
      let stdout = '';
      child.stdout.setEncoding('utf8');
      for await (const chunk of child.stdout) {
        stdout += chunk;
        if (stdout.includes('\n')) break;
      }
      expect(stdout).toMatch(
        new RegExp(
          `^Worker on task queue ${taskQueue} \\(conversations and tools, model local-llama at http://127\\.0\\.0\\.1:9/v1\\): getTime,`,
        ),
      );
    } finally {
      child.kill('SIGINT');
      await once(child, 'exit');
    }
  });

  it('server says what to install when the Temporal CLI cannot be had', async () => {
    const run = await yiem(['server', '--port', '0'], {
      env: cleanEnv({ TEMPORAL_CLI_PATH: '/nonexistent/temporal' }),
    });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('TEMPORAL_CLI_PATH');
  });

  it('dev runs a chat whose weather-and-time question runs getWeather as an activity and getTime as a local activity', async () => {
    const meteo = await startFakeOpenMeteo();
    try {
      const taskQueue = `cli-dev-${randomUUID()}`;
      const run = await yiem(['dev', '--address', address(), '--task-queue', taskQueue], {
        env: cleanEnv({ YIEM_OPEN_METEO_GEOCODING_URL: meteo.url, YIEM_OPEN_METEO_FORECAST_URL: meteo.url }),
        input: 'What is the weather and time in Tokyo?\n/exit\n',
      });
      expect(run.code).toBe(0);
      expect(run.stdout).toContain('using the offline demo model');
      expect(run.stdout).toContain('⚙ getWeather(city: "Tokyo", units: "celsius")');
      expect(run.stdout).toContain('⚙ getTime(city: "Tokyo")');
      expect(run.stdout).toContain('agent> Weather in Tokyo, Japan: Clear sky, 12.5°C');
      expect(run.stdout).toContain('Current time in Asia/Tokyo');
      const id = /Conversation (\S+)/.exec(run.stdout)?.[1] ?? '';
      const { handle } = agent.client.getConversation(id);
      const activities = await scheduledActivities(handle);
      expect(activities.filter((a) => a.type === 'executeTool').map((a) => a.summary)).toEqual([
        'getWeather(city: "Tokyo", units: "celsius")',
      ]);
      // The built-in getTime is a local activity: a marker, no activity of its own.
      expect(await executions(handle, 'executeTool')).toEqual({ markers: 1, activities: 1 });
    } finally {
      await meteo.close();
    }
  });

  // A `.invalid` host never resolves (RFC 6761): Open-Meteo as a machine without network sees it.
  it('dev answers the weather question with no network, with sample weather labelled as such', async () => {
    const taskQueue = `cli-dev-${randomUUID()}`;
    const run = await yiem(['dev', '--address', address(), '--task-queue', taskQueue], {
      env: cleanEnv({ YIEM_OPEN_METEO_GEOCODING_URL: 'http://geocoding-api.open-meteo.invalid' }),
      input: 'What is the weather and time in Tokyo?\n/exit\n',
    });
    expect(run.code).toBe(0);
    expect(run.stdout).toContain(
      'agent> Offline demo, sample weather, not a forecast (Open-Meteo geocoding at geocoding-api.open-meteo.invalid could not be reached: getaddrinfo ENOTFOUND geocoding-api.open-meteo.invalid): Tokyo: Partly cloudy, 18°C',
    );
    expect(run.stdout).toContain('Current time in Asia/Tokyo');
    expect(run.stdout).not.toContain('✗ getWeather');
  });

  it('dev on its own server leaves cleanly on /exit, with each worker warning as one line and in full in its log', async () => {
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'yiem-dev-'));
    const refused = 'http://127.0.0.1:9/';
    try {
      const run = await yiem(['dev', '--port', '0', '--headless', '--data-dir', dataDir], {
        env: cleanEnv({ YIEM_OPEN_METEO_GEOCODING_URL: refused, YIEM_OPEN_METEO_FORECAST_URL: refused }),
        input: 'What is the weather and time in Tokyo?\n/exit\n',
      });
      expect(run.stderr).not.toContain('Channel has been shut down');
      expect(run.code).toBe(0);
      expect(run.stdout).toMatch(/^Console http:\/\/127\.0\.0\.1:\d+\/$/m);
      expect(run.stdout).toContain('✗ getWeather');
      const warnings = run.stderr.split('\n').filter((line) => line.startsWith('worker WARN'));
      // fetch refuses port 9 outright ("bad port"): a failure that is not the network's, so the demo's
      // offline weather does not stand in for it.
      expect(warnings[0]).toContain(
        'Activity failed (executeTool): Open-Meteo geocoding at 127.0.0.1:9 could not be reached: bad port',
      );
      expect(warnings[0]).toContain(path.join(dataDir, 'worker.log'));
      expect(`${run.stdout}${run.stderr}`).not.toMatch(/^\s+at /m);
      expect(await readFile(path.join(dataDir, 'worker.log'), 'utf8')).toMatch(
        /could not be reached: bad port\n\s+at /,
      );
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  }, 120_000);

  it('dev runs on a task queue of its own, and send from the same folder follows it', async () => {
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'yiem-dev-queue-'));
    const env = cleanEnv({ YIEM_DATA_DIR: dataDir });
    const dev = spawn(process.execPath, [...YIEM_FROM_SOURCES, 'dev', '--address', address()], {
      env,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    try {
      let stdout = '';
      await new Promise<void>((resolve, reject) => {
        dev.stdout.on('data', (chunk: Buffer) => {
          stdout += chunk.toString();
          if (/Conversation \S+/.test(stdout)) resolve();
        });
        dev.once('exit', (code) => reject(new Error(`dev exited (${code}): ${stdout}`)));
      });
      const sent = await yiem(['send', '--address', address(), 'hello'], { env });
      expect(stdout).toMatch(
        /Worker on task queue yiem-dev, model yiem-demo at http:\/\/127\.0\.0\.1:\d+\/v1\n/,
      );
      expect(stdout).toMatch(/\nPayload store: \/\S+ \(store [0-9a-f]{16}\)\n/);
      expect(sent.code).toBe(0);
      expect(sent.stderr).toContain('Using task queue yiem-dev of the yiem dev running here');
      expect(sent.stdout).toMatch(/^agent> \S/);
      const id = /Started conversation (\S+)/.exec(sent.stderr)?.[1] ?? '';
      const described = await agent.client.getConversation(id).handle.describe();
      expect(described.taskQueue).toBe('yiem-dev');
      const chatId = /Conversation (\S+)/.exec(stdout)?.[1] ?? '';
      expect((await agent.client.getConversation(chatId).handle.describe()).taskQueue).toBe('yiem-dev');
    } finally {
      const exited = once(dev, 'exit');
      dev.stdin.end('/exit\n');
      await exited;
      await rm(dataDir, { recursive: true, force: true });
    }
    // Once dev has stopped, send is back on the default queue (and says nothing of dev). No server
    // answers at that address, so the send fails at once instead of waiting for a worker.
    const after = await yiem(['send', '--address', '127.0.0.1:1', '--id', 'none-such', 'x'], {
      env: cleanEnv({ YIEM_DATA_DIR: dataDir }),
    });
    expect(after.stderr).toContain('127.0.0.1:1');
    expect(after.stderr).not.toContain('yiem dev running here');
  }, 120_000);

  it('server --headless says it has no Web UI', async () => {
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'yiem-headless-'));
    const child = spawn(
      process.execPath,
      [...YIEM_FROM_SOURCES, 'server', '--headless', '--port', '0', '--data-dir', dataDir],
      { env: cleanEnv(), stdio: ['ignore', 'pipe', 'pipe'] },
    );
    try {
      // Read without closing the pipe (as a `for await` left early would): the CLI still writes to it.
      let stdout = '';
      child.stdout.setEncoding('utf8');
      await new Promise<void>((resolve) => {
        child.stdout.on('data', (chunk: string) => {
          stdout += chunk;
          if (stdout.includes('Ctrl-C')) resolve();
        });
        child.once('exit', () => resolve());
      });
      expect(stdout).toMatch(/Temporal dev server at 127\.0\.0\.1:\d+ \(no Web UI, data in /);
      expect(stdout).not.toContain('undefined');
    } finally {
      child.kill('SIGINT');
      await once(child, 'exit');
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});
