/**
 * `npm run bench`: starts a dev server, a scripted model server and worker processes, runs the
 * benchmarks and writes BENCHMARKS.md. Flags: `--quick` (check the harness), `--only=a,c`,
 * `--out=FILE`, `--json=FILE` (raw results), `--worker-options=JSON`, `--dynamic-config=JSON`.
 */
import { spawnSync } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import os from 'node:os';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { readConfig } from './config.ts';
import { startEnvironment } from './environment.ts';
import { machineInfo, startSectionMeter } from './machine.ts';
import { type BenchResults, renderReport, type SectionKey } from './report.ts';
import { measureActionsPerTurn } from './scenarios/actionsPerTurn.ts';
import { measureCrashRecovery } from './scenarios/crashRecovery.ts';
import { measureFeatureCost } from './scenarios/featureCost.ts';
import { measureFlood } from './scenarios/flood.ts';
import { measureFloor } from './scenarios/floor.ts';
import { measureHistoryBytes } from './scenarios/historyBytes.ts';
import { measureIdleMemory } from './scenarios/idleMemory.ts';
import { measureLargeContent } from './scenarios/largeContent.ts';
import { measureLargeResults } from './scenarios/largeResults.ts';
import { measureOverhead } from './scenarios/overhead.ts';
import { measureParallel } from './scenarios/parallel.ts';
import { measurePeer } from './scenarios/peer.ts';
import { measureRateLimits } from './scenarios/rateLimits.ts';
import { measureThroughput } from './scenarios/throughput.ts';
import { measureTokenDelay } from './scenarios/tokenDelay.ts';
import { measureTurnLatency } from './scenarios/turnLatency.ts';

const config = readConfig(process.argv.slice(2));
Runtime.install({ logger: new DefaultLogger('ERROR') });
const machine = machineInfo();
const started = Date.now();
const results: BenchResults = {};
const step = (name: string) =>
  console.error(`[bench ${((Date.now() - started) / 1000).toFixed(0)} s] ${name}`);

const env = await startEnvironment({
  ...(config.dynamicConfig ? { dynamicConfig: config.dynamicConfig } : {}),
  metrics: ['g', 'k', 'p'].some((id) => config.only.has(id)),
});
/** Runs one section's measurement and records the machine's load and the CPU each process used during it. */
async function section<K extends SectionKey>(
  key: K,
  name: string,
  measure: () => Promise<NonNullable<BenchResults[K]>>,
): Promise<void> {
  step(name);
  const meter = startSectionMeter(env.server.pid);
  results[key] = await measure();
  results.sectionLoad = { ...results.sectionLoad, [key]: meter.stop() };
}

try {
  const workerOptions = config.workerOptions ? { workerOptions: config.workerOptions } : {};
  if (['a', 'b', 'c', 'd'].some((id) => config.only.has(id))) {
    const main = await env.startWorker({ ...workerOptions, baseline: true });
    if (config.only.has('a')) {
      await section('overhead', 'a: overhead per tool call', () =>
        measureOverhead(env, main, config.overheadRuns),
      );
    }
    if (config.only.has('b')) {
      await section('parallel', 'b: parallel vs sequential', () =>
        measureParallel(env, main.agents, config.parallelRuns),
      );
    }
    if (config.only.has('c')) {
      await section('turnLatency', 'c: turn latency vs conversation length', () =>
        measureTurnLatency(main.agents, config.latencyRuns, config.latencyTurns),
      );
    }
    if (config.only.has('d')) {
      await section('historyBytes', 'd: history bytes per turn', () =>
        measureHistoryBytes(env, main.agents, main.taskQueue, config.historyCheckpoints),
      );
    }
    await main.worker.stop();
  }
  if (config.only.has('e')) {
    const busy = await env.startWorker(workerOptions);
    await section('throughput', 'e: throughput', () =>
      measureThroughput(
        busy.agents,
        busy.worker,
        config.throughputLevels,
        config.throughputRuns,
        config.throughputSeconds,
        { serverPid: env.server.pid, workerPid: busy.worker.child.pid as number },
      ),
    );
    await busy.worker.stop();
    const idle = await env.startWorker(workerOptions);
    await section('idleMemory', 'e: idle conversations', () =>
      measureIdleMemory(idle.agents, idle.worker, config.idleConversations),
    );
    await idle.worker.stop();
  }
  if (config.only.has('f')) {
    await section('crashRecovery', 'f: crash recovery', () =>
      measureCrashRecovery(env, config.crashRuns, config.workerOptions),
    );
  }
  if (config.only.has('g')) {
    await section('actions', 'g: Temporal Cloud Actions per turn', () =>
      measureActionsPerTurn(env, config.idleChatSeconds, config.longToolSeconds),
    );
  }
  if (config.only.has('k')) {
    const controls = await env.startWorker(workerOptions);
    await section('featureCost', 'k: what each control of a running agent adds to a turn', () =>
      measureFeatureCost(env, controls.agents),
    );
    await controls.worker.stop();
  }
  if (config.only.has('h')) {
    await section('tokenDelay', 'h: token delay for a follower', () =>
      measureTokenDelay(env, config.tokenDelayTurns),
    );
  }
  if (config.only.has('i')) {
    const large = await env.startWorker(workerOptions);
    await section('largeContent', 'i: large content', () =>
      measureLargeContent(large.agents, large.worker, config.largeContentCheckpoints),
    );
    await large.worker.stop();
  }
  if (config.only.has('l')) {
    await section('floor', "l: the platform's floor, a bare Temporal workflow", () =>
      measureFloor(env, {
        runs: config.overheadRuns,
        parallelRuns: config.parallelRuns,
        throughputConversations: Math.max(...config.throughputLevels),
        throughputRuns: config.throughputRuns,
        seconds: config.throughputSeconds,
      }),
    );
  }
  if (config.only.has('p')) {
    const ours = await env.startWorker(workerOptions);
    await section('peer', "p: side by side with Temporal's own agent integration", () =>
      measurePeer(env, ours, {
        runs: config.peerRuns,
        lateTurn: config.peerLateTurn,
        idleConversations: config.peerIdleConversations,
      }),
    );
    await ours.worker.stop();
  }
  if (config.only.has('j')) {
    await section('largeResults', 'j: a 12 MB tool result beside a bystander conversation', () =>
      measureLargeResults(env),
    );
  }
  if (config.only.has('m')) {
    await section(
      'flood',
      'm: floods (a long model reply in 8-character deltas, a console flood) beside a bystander conversation',
      () => measureFlood(env),
    );
  }
  if (config.only.has('r')) {
    await section('rateLimits', 'r: a rate-limited provider shared by 100 conversations', () =>
      measureRateLimits(env, config.rateLimitConversations, config.rateLimitTurns, config.rateLimitPerSecond),
    );
  }
} finally {
  await env.close();
}

const report = renderReport({
  config,
  machine: { ...machine, loadAfter: os.loadavg() },
  durationSeconds: (Date.now() - started) / 1000,
  date: new Date(started).toISOString(),
  command: ['npm run bench', ...(process.argv.length > 2 ? ['--', ...process.argv.slice(2)] : [])].join(' '),
  results,
});
await writeFile(config.out, report);
// The repository's formatter owns Markdown layout (aligned tables); a regenerated report stays lint-clean.
const formatted = spawnSync('npx', ['biome', 'format', '--write', config.out], { stdio: 'ignore' });
if (formatted.status !== 0) console.error(`biome could not format ${config.out}; run npm run format`);
if (config.json)
  await writeFile(
    config.json,
    `${JSON.stringify({ machine, config: { ...config, only: [...config.only] }, results }, null, 2)}\n`,
  );
step(`wrote ${config.out}`);
