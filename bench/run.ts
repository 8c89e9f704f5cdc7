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
import { machineInfo } from './machine.ts';
import { type BenchResults, renderReport } from './report.ts';
import { measureActionsPerTurn } from './scenarios/actionsPerTurn.ts';
import { measureCrashRecovery } from './scenarios/crashRecovery.ts';
import { measureFeatureCost } from './scenarios/featureCost.ts';
import { measureHistoryBytes } from './scenarios/historyBytes.ts';
import { measureIdleMemory } from './scenarios/idleMemory.ts';
import { measureLargeContent } from './scenarios/largeContent.ts';
import { measureLargeResults } from './scenarios/largeResults.ts';
import { measureOverhead } from './scenarios/overhead.ts';
import { measureParallel } from './scenarios/parallel.ts';
import { measurePeer } from './scenarios/peer.ts';
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
try {
  const workerOptions = config.workerOptions ? { workerOptions: config.workerOptions } : {};
  if (['a', 'b', 'c', 'd'].some((id) => config.only.has(id))) {
    const main = await env.startWorker({ ...workerOptions, baseline: true });
    if (config.only.has('a')) {
      step('a: overhead per tool call');
      results.overhead = await measureOverhead(env, main.agents, config.overheadRuns);
    }
    if (config.only.has('b')) {
      step('b: parallel vs sequential');
      results.parallel = await measureParallel(env, main.agents, config.parallelRuns);
    }
    if (config.only.has('c')) {
      step('c: turn latency vs conversation length');
      results.turnLatency = await measureTurnLatency(main.agents, config.latencyRuns, config.latencyTurns);
    }
    if (config.only.has('d')) {
      step('d: history bytes per turn');
      results.historyBytes = await measureHistoryBytes(
        env,
        main.agents,
        main.taskQueue,
        config.historyCheckpoints,
      );
    }
    await main.worker.stop();
  }
  if (config.only.has('e')) {
    step('e: throughput');
    const busy = await env.startWorker(workerOptions);
    results.throughput = await measureThroughput(
      busy.agents,
      busy.worker,
      config.throughputLevels,
      config.throughputRuns,
      config.throughputSeconds,
      { serverPid: env.server.pid, workerPid: busy.worker.child.pid as number },
    );
    await busy.worker.stop();
    step('e: idle conversations');
    const idle = await env.startWorker(workerOptions);
    results.idleMemory = await measureIdleMemory(idle.agents, idle.worker, config.idleConversations);
    await idle.worker.stop();
  }
  if (config.only.has('f')) {
    step('f: crash recovery');
    results.crashRecovery = await measureCrashRecovery(env, config.crashRuns, config.workerOptions);
  }
  if (config.only.has('g')) {
    step('g: Temporal Cloud Actions per turn');
    results.actions = await measureActionsPerTurn(env, config.idleChatSeconds, config.longToolSeconds);
  }
  if (config.only.has('k')) {
    step('k: what each control of a running agent adds to a turn');
    const controls = await env.startWorker(workerOptions);
    results.featureCost = await measureFeatureCost(env, controls.agents);
    await controls.worker.stop();
  }
  if (config.only.has('h')) {
    step('h: token delay for a follower');
    results.tokenDelay = await measureTokenDelay(env, config.tokenDelayTurns);
  }
  if (config.only.has('i')) {
    step('i: large content');
    const large = await env.startWorker(workerOptions);
    results.largeContent = await measureLargeContent(
      large.agents,
      large.worker,
      config.largeContentCheckpoints,
    );
    await large.worker.stop();
  }
  if (config.only.has('p')) {
    step("p: side by side with Temporal's own agent integration");
    const ours = await env.startWorker(workerOptions);
    results.peer = await measurePeer(env, ours.agents, config.peerRuns, config.peerLateTurn);
    await ours.worker.stop();
  }
  if (config.only.has('j')) {
    step('j: a 12 MB tool result beside a bystander conversation');
    results.largeResults = await measureLargeResults(env);
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
