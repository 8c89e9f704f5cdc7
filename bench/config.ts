import { parseArgs } from 'node:util';

/** How much each benchmark does; `--quick` is for checking the harness, not for numbers. */
export interface BenchConfig {
  quick: boolean;
  only: Set<string>;
  out: string;
  json: string | undefined;
  workerOptions: Record<string, unknown> | undefined;
  dynamicConfig: Record<string, string | number | boolean> | undefined;
  overheadRuns: number;
  parallelRuns: number;
  latencyRuns: number;
  latencyTurns: number;
  historyCheckpoints: number[];
  throughputLevels: number[];
  throughputRuns: number;
  throughputSeconds: number;
  idleConversations: number;
  crashRuns: number;
  idleChatSeconds: number;
  longToolSeconds: number;
  tokenDelayTurns: number;
  /** Turns at which the large-content benchmark reads history and worker memory; the last is its length. */
  largeContentCheckpoints: number[];
  /** Runs of each side-by-side figure against Temporal's own integration, and its late turn. */
  peerRuns: number;
  peerLateTurn: number;
  /** Idle conversations each side's worker holds in section (p). */
  peerIdleConversations: number;
  /** Rate limits (r): conversations at once, turns each, and the provider's requests per second. */
  rateLimitConversations: number;
  rateLimitTurns: number;
  rateLimitPerSecond: number;
}

export const BENCHMARK_IDS = [
  'a',
  'b',
  'c',
  'd',
  'e',
  'f',
  'g',
  'h',
  'i',
  'j',
  'k',
  'l',
  'm',
  'p',
  'r',
] as const;

export function readConfig(argv: string[]): BenchConfig {
  const { values } = parseArgs({
    args: argv,
    options: {
      quick: { type: 'boolean', default: false },
      only: { type: 'string' },
      out: { type: 'string', default: 'BENCHMARKS.md' },
      json: { type: 'string' },
      'worker-options': { type: 'string' },
      'dynamic-config': { type: 'string' },
    },
  });
  const quick = values.quick ?? false;
  return {
    quick,
    only: new Set(values.only ? values.only.split(',') : BENCHMARK_IDS),
    out: values.out ?? 'BENCHMARKS.md',
    json: values.json,
    workerOptions: values['worker-options'] ? JSON.parse(values['worker-options']) : undefined,
    dynamicConfig: values['dynamic-config'] ? JSON.parse(values['dynamic-config']) : undefined,
    overheadRuns: quick ? 2 : 9,
    parallelRuns: quick ? 2 : 5,
    latencyRuns: quick ? 1 : 3,
    latencyTurns: quick ? 50 : 500,
    historyCheckpoints: quick ? [1, 5, 10] : [1, 10, 50, 100],
    throughputLevels: quick ? [1, 10] : [1, 10, 100],
    throughputRuns: quick ? 1 : 3,
    throughputSeconds: quick ? 3 : 8,
    idleConversations: quick ? 100 : 10_000,
    crashRuns: quick ? 1 : 3,
    idleChatSeconds: quick ? 5 : 120,
    longToolSeconds: quick ? 3 : 60,
    tokenDelayTurns: quick ? 2 : 10,
    largeContentCheckpoints: quick ? [10, 20, 30] : [10, 50, 100, 200, 300],
    peerRuns: quick ? 2 : 7,
    peerLateTurn: quick ? 5 : 50,
    peerIdleConversations: quick ? 50 : 1_000,
    rateLimitConversations: quick ? 20 : 100,
    rateLimitTurns: quick ? 1 : 2,
    rateLimitPerSecond: 10,
  };
}
