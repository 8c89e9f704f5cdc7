import { AgentClient } from '../../src/client/client.ts';
import { startScriptedModel } from '../../src/testing/index.ts';
import type { BenchEnvironment } from '../environment.ts';
import { startWorkerProcess } from '../workerHandle.ts';

/** Each streamed piece is one token, `w007 `: its number says which piece it was. */
const TOKEN_CHARS = 5;
const TOKENS_PER_REPLY = 40;
/** A token every 50 ms (20 tokens/s, a fast model); a reply streams for 2 s. */
const TOKEN_INTERVAL_MS = 50;

/** A chat user reads along: text should appear about as fast as a person notices a pause (issue 25). */
export const TOKEN_DELAY_GOAL = { p99Ms: 300 };

export interface TokenDelayResult {
  turns: number;
  tokens: number;
  medianMs: number;
  p99Ms: number;
  maxMs: number;
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN;
}

/**
 * (h) How late a follower sees streamed text: for every token, the time from the scripted model
 * writing it to `Conversation.events()` yielding the event that carries it.
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
  const taskQueue = `bench-tokens-${process.pid}`;
  const worker = await startWorkerProcess({
    address: env.server.address,
    taskQueue,
    bundlePath: env.bundlePath,
    modelBaseURL: model.baseURL,
    crashHeartbeatTimeout: '30 seconds',
  });
  const agents = new AgentClient({ client: env.temporal, taskQueue });
  const delays: number[] = [];
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
    // Turn 0 is not measured: a call scheduled before the follower's first poll reached the workflow
    // is unfollowed and hands its text over with its result (the full run of 2026-12-05 14:41 raced
    // so: 1.8 s p99), which is how a follower attaching mid-call reads, not how a chat reads along.
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
    await conversation.end();
  } finally {
    await worker.stop();
    await model.close();
  }
  const sorted = [...delays].sort((a, b) => a - b);
  return {
    turns,
    tokens: sorted.length,
    medianMs: percentile(sorted, 50),
    p99Ms: percentile(sorted, 99),
    maxMs: sorted.at(-1) ?? Number.NaN,
  };
}
