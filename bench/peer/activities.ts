/** The peer's tools, as activities: the same work as the benchmarks' tools of ours (bench/tools.ts). */
import { SLOW_TOOL_MS } from '../tools.ts';

export async function noop(): Promise<string> {
  return 'ok';
}

export async function sleep200(): Promise<string> {
  await new Promise((resolve) => setTimeout(resolve, SLOW_TOOL_MS));
  return 'ok';
}
