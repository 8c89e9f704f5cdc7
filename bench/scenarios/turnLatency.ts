import type { AgentClient } from '../../src/client/client.ts';
import { type Summary, summarize, timed } from '../stats.ts';
import { sendOk } from './overhead.ts';

/** Turns whose latency is reported; each is the median of a window of turns ending there. */
export interface LatencyWindow {
  label: string;
  first: number;
  last: number;
}

export interface TurnLatencyResult {
  runs: number;
  turns: number;
  windows: { window: LatencyWindow; ms: Summary }[];
}

export function latencyWindows(turns: number): LatencyWindow[] {
  const middle = Math.min(100, Math.floor(turns / 5));
  return [
    { label: 'turn 1', first: 1, last: 1 },
    { label: 'turns 2–11', first: 2, last: 11 },
    { label: `turns ${middle - 9}–${middle}`, first: middle - 9, last: middle },
    { label: `turns ${turns - 9}–${turns}`, first: turns - 9, last: turns },
  ];
}

/**
 * (c) One conversation, `turns` text turns back to back; latency per turn as the client sees it (the
 * prompt Update's round trip). Each run is a fresh conversation; a window's value per run is the
 * median of its turns, and the table shows the median, min and max of that over runs.
 */
export async function measureTurnLatency(
  agents: AgentClient,
  runs: number,
  turns: number,
): Promise<TurnLatencyResult> {
  const windows = latencyWindows(turns);
  const perRun: number[][] = windows.map(() => []);
  for (let run = 0; run < runs; run++) {
    const conversation = await agents.startConversation({ systemPrompt: '' });
    const latencies: number[] = [];
    for (let turn = 1; turn <= turns; turn++) {
      latencies.push((await timed(() => sendOk(conversation, `hello ${turn}`))).ms);
    }
    await conversation.end();
    windows.forEach((window, index) => {
      perRun[index]?.push(summarize(latencies.slice(window.first - 1, window.last)).median);
    });
  }
  return {
    runs,
    turns,
    windows: windows.map((window, index) => ({ window, ms: summarize(perRun[index] ?? []) })),
  };
}
