import { Client } from '@temporalio/client';
import { workflowStreamPollUpdate } from '@temporalio/workflow-streams/workflow';
import { AgentClient } from '../../src/client/client.ts';
import { payloadStorageFromEnv } from '../../src/infrastructure/storage/payloadStorage.ts';
import { type ScriptedModel, startScriptedModel } from '../../src/testing/index.ts';
import { startS3Server } from '../../test/support/s3Server.ts';
import type { BenchEnvironment } from '../environment.ts';
import { storedHistory } from '../history.ts';
import { startWorkerProcess } from '../workerHandle.ts';

/** Each streamed piece is one token, `w007 `: its number says which piece it was. */
const TOKEN_CHARS = 5;
const TOKENS_PER_REPLY = 40;
/** A token every 50 ms (20 tokens/s, a fast model); a reply streams for 2 s. */
const TOKEN_INTERVAL_MS = 50;

/** A chat user reads along: text should appear about as fast as a person notices a pause (issue 25). */
export const TOKEN_DELAY_GOAL = { p99Ms: 300 };

/** The follower's and the worker's payload store, where the follower reads the live channel. */
export type TokenDelayStore = 'file' | 's3';

export interface TokenDelayRow {
  store: TokenDelayStore;
  tokens: number;
  medianMs: number;
  p99Ms: number;
  maxMs: number;
  /** The poll Updates in the conversation's history: 0 when the follower read the live channel. */
  pollUpdates: number;
}

export interface TokenDelayResult {
  turns: number;
  rows: TokenDelayRow[];
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN;
}

/**
 * (h) How late a follower sees streamed text: for every token, the time from the scripted model
 * writing it to `Conversation.events()` yielding the event that carries it; with the worker and the
 * follower on the bench's file store, then on an S3 store (a real S3-compatible server).
 */
export async function measureTokenDelay(env: BenchEnvironment, turns: number): Promise<TokenDelayResult> {
  const text = Array.from(
    { length: TOKENS_PER_REPLY },
    (_, index) => `w${String(index).padStart(3, '0')} `,
  ).join('');
  const model = await startScriptedModel({
    chunkSize: TOKEN_CHARS,
    respond: () => ({ kind: 'text', text, deltaDelayMs: TOKEN_INTERVAL_MS }),
  });
  const s3 = await startS3Server();
  try {
    return {
      turns,
      rows: [
        await followedTurns(env, model, turns, 'file', env.temporal, { payloadsDir: env.payloadsDir }),
        await followedTurns(
          env,
          model,
          turns,
          's3',
          new Client({
            connection: env.temporal.connection,
            dataConverter: { externalStorage: payloadStorageFromEnv(s3.env) },
          }),
          { payloadStoreEnv: s3.env },
        ),
      ],
    };
  } finally {
    await model.close();
    await s3.close();
  }
}

async function followedTurns(
  env: BenchEnvironment,
  model: ScriptedModel,
  turns: number,
  store: TokenDelayStore,
  client: Client,
  workerStore: { payloadsDir: string } | { payloadStoreEnv: Record<string, string> },
): Promise<TokenDelayRow> {
  const taskQueue = `bench-tokens-${store}-${process.pid}`;
  const worker = await startWorkerProcess({
    address: env.server.address,
    taskQueue,
    bundlePath: env.bundlePath,
    modelBaseURL: model.baseURL,
    crashHeartbeatTimeout: '30 seconds',
    ...workerStore,
  });
  const agents = new AgentClient({ client, taskQueue });
  const delays: number[] = [];
  let pollUpdates = 0;
  try {
    const conversation = await agents.startConversation({ systemPrompt: '' });
    const following = new AbortController();
    const seen: { at: number; tokens: number[] }[] = [];
    let ended = 0;
    const follower = (async () => {
      for await (const event of conversation.events({ signal: following.signal })) {
        if (event.type === 'textDelta') {
          const at = Date.now();
          seen.push({ at, tokens: [...event.text.matchAll(/w(\d{3}) /g)].map((match) => Number(match[1])) });
        }
        if (event.type === 'turnEnd') ended += 1;
      }
    })();
    // Turn 0 is not measured: a call scheduled before the follower attached hands its text over with
    // its result, which is how a follower attaching mid-call reads, not how a chat reads along.
    for (let turn = 0; turn <= turns; turn++) {
      seen.length = 0;
      await conversation.send(`tell me ${turn}`);
      while (ended <= turn) await new Promise((resolve) => setTimeout(resolve, 20));
      if (turn === 0) continue;
      const sentAt = model.lastRequest()?.textSentAt ?? [];
      for (const { at, tokens } of seen) {
        for (const token of tokens) {
          const sent = sentAt[token];
          if (sent !== undefined) delays.push(at - sent);
        }
      }
    }
    following.abort();
    await follower;
    pollUpdates = ((await storedHistory(conversation.handle)).events ?? []).filter(
      (event) =>
        event.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest?.input?.name ===
        workflowStreamPollUpdate.name,
    ).length;
    await conversation.end();
  } finally {
    await worker.stop();
  }
  const sorted = [...delays].sort((a, b) => a - b);
  return {
    store,
    tokens: sorted.length,
    medianMs: percentile(sorted, 50),
    p99Ms: percentile(sorted, 99),
    maxMs: sorted.at(-1) ?? Number.NaN,
    pollUpdates,
  };
}
