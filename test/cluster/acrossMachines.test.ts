import { execFile } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtemp, rm, unlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AgentClient } from '../../src/client/client.ts';
import type { Message, ToolResultMessage } from '../../src/contract/types/messages.ts';
import { dataConverterFromEnv } from '../../src/infrastructure/codec/dataConverter.ts';
import { type ScriptedModel, startScriptedModel } from '../../src/testing/index.ts';
import { TSX_LOADER, YIEM_FROM_SOURCES } from '../support/cli.ts';
import { type S3Server, startS3Server } from '../support/s3Server.ts';
import { SOURCE_CONDITION_FLAG } from '../support/sourceCondition.ts';
import {
  type CrashBench,
  createCrashBench,
  startWorkerProcess,
  type WorkerProcess,
} from '../support/workerProcess.ts';
import { type LocalCluster, startLocalCluster } from './localCluster.ts';
import { surveyText } from './survey.ts';

const STORE_WORKER = fileURLToPath(new URL('./storeWorker.ts', import.meta.url));
const REPLAY = fileURLToPath(new URL('./replayConversation.ts', import.meta.url));
/** A user message of 100 KB, the most one may have (maxMessageBytes), naming its site. */
const askFor = (site: string): string => `${site} ${'m'.repeat(100_000 - site.length - 1)}`;

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * What issue 20 asks of a store shared across machines, simulated on one: two worker processes and
 * a client, each in a folder of its own, against the two-node cluster and the S3-compatible store,
 * with the AES-GCM codec before it. One worker is SIGKILLed while it runs a tool.
 */
describe('two workers and a client in three folders, on a two-node cluster and an S3 store', () => {
  let cluster: LocalCluster;
  let s3: S3Server;
  let model: ScriptedModel;
  let bench: CrashBench;
  let env: Record<string, string>;
  let client: AgentClient;
  const folders: string[] = [];
  const workers: WorkerProcess[] = [];
  const taskQueue = `across-${randomUUID()}`;

  const node = (args: string[], cwd: string): Promise<Run> =>
    new Promise((resolve) => {
      execFile(
        process.execPath,
        args,
        { cwd, env: { ...process.env, ...env }, timeout: 120_000, maxBuffer: 64 * 1024 * 1024 },
        (error, stdout, stderr) =>
          resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr }),
      );
    });

  beforeAll(async () => {
    cluster = await startLocalCluster();
    s3 = await startS3Server();
    env = { ...s3.env, YIEM_CODEC_KEYS: `across:${randomBytes(32).toString('base64')}` };
    model = await startScriptedModel();
    // A user message asks for a survey of its site; the survey's result gets the summary.
    model.respond((request) => {
      const messages = request.body.messages;
      const site = String(messages.filter((message) => message.role === 'user').at(-1)?.content).split(
        ' ',
      )[0];
      if (messages.at(-1)?.role === 'user') {
        return {
          kind: 'toolCalls',
          toolCalls: [{ id: `call_${site}`, name: 'survey', arguments: { site } }],
        };
      }
      return { kind: 'text', text: `surveyed ${site}` };
    });
    bench = await createCrashBench();
    for (const name of ['worker-a', 'worker-b', 'client']) {
      folders.push(await mkdtemp(path.join(os.tmpdir(), `yiem-${name}-`)));
    }
    for (const [index, name] of ['worker-a', 'worker-b'].entries()) {
      workers.push(
        await startWorkerProcess({
          name,
          bench,
          address: cluster.address,
          taskQueue,
          modelBaseURL: model.baseURL,
          entry: STORE_WORKER,
          env,
          cwd: folders[index] as string,
        }),
      );
    }
    const dataConverter = dataConverterFromEnv(env);
    client = new AgentClient({
      address: cluster.address,
      taskQueue,
      ...(dataConverter ? { dataConverter } : {}),
    });
  }, 20 * 60_000);
  afterAll(async () => {
    await bench?.release();
    for (const worker of workers) await worker.kill();
    await client?.close();
    await model?.close();
    await s3?.close();
    await cluster?.close();
    await bench?.remove();
    for (const folder of folders) await rm(folder, { recursive: true, force: true });
  });

  it('keeps answering through a SIGKILLed worker; every byte reads back from each folder, and the history replays elsewhere', async () => {
    const conversation = await client.startConversation({ systemPrompt: 'Survey what is asked.' });
    await bench.release();
    expect(await conversation.send(askFor('site-1'))).toMatchObject({
      status: 'completed',
      reply: 'surveyed site-1',
    });

    // The second survey holds until released: the worker running it is killed meanwhile.
    await unlink(path.join(bench.markerDir, 'release'));
    const second = conversation.send(askFor('site-2'));
    let running: string | undefined;
    await expect
      .poll(
        async () => {
          running = (await bench.markers()).find((marker) => marker.startsWith('call_site-2.1.'));
          return running;
        },
        { timeout: 60_000 },
      )
      .toBeDefined();
    const victim = workers.find((worker) => running?.endsWith(`.${worker.name}.json`));
    if (!victim) throw new Error(`no worker ran ${running}`);
    const survivor = workers.find((worker) => worker !== victim) as WorkerProcess;
    const killedAt = Date.now();
    await victim.kill();
    await writeFile(path.join(bench.markerDir, 'release'), '');
    expect(await second).toMatchObject({ status: 'completed', reply: 'surveyed site-2' });
    console.log(
      `${victim.name} SIGKILLed mid-tool; the turn completed on ${survivor.name} after ${Date.now() - killedAt} ms`,
    );
    const attempts = (await bench.markers()).filter((marker) => marker.startsWith('call_site-2.'));
    expect(attempts).toEqual([`call_site-2.1.${victim.name}.json`, `call_site-2.2.${survivor.name}.json`]);

    expect(await conversation.send(askFor('site-3'))).toMatchObject({
      status: 'completed',
      reply: 'surveyed site-3',
    });

    const sites = ['site-1', 'site-2', 'site-3'];
    const expectWhole = (messages: Array<Pick<Message, 'role'> & { content: unknown }>) => {
      expect(messages.map((message) => message.role)).toEqual(
        sites.flatMap(() => ['user', 'assistant', 'toolResult', 'assistant']),
      );
      for (const [index, site] of sites.entries()) {
        expect(messages[index * 4]?.content === askFor(site), `${site}'s message comes back whole`).toBe(
          true,
        );
        const result = (messages[index * 4 + 2] as ToolResultMessage).content;
        expect(result.length).toBe(1);
        expect(
          result[0]?.type === 'text' && result[0].text === surveyText(site),
          `${site}'s 1 MB result`,
        ).toBe(true);
      }
    };
    expectWhole(await conversation.messages());
    // From each folder, the killed worker's too: nothing depends on where a process runs.
    for (const folder of folders) {
      const history = await node(
        [...YIEM_FROM_SOURCES, 'history', conversation.id, '--json', '--address', cluster.address],
        folder,
      );
      expect(history.code, history.stderr).toBe(0);
      expectWhole(JSON.parse(history.stdout));
    }

    const replay = await node(
      [
        SOURCE_CONDITION_FLAG,
        '--import',
        TSX_LOADER,
        REPLAY,
        cluster.address,
        conversation.id,
        bench.bundlePath,
      ],
      folders[2] as string,
    );
    expect(replay.code, replay.stderr).toBe(0);
    expect(replay.stdout).toMatch(/^replayed \d+/);
  });
});
