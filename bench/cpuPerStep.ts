/**
 * CPU per step, for tuning the hot path: the worker's and the server's CPU time (from /proc) per
 * sequential tool call and per text turn, with the latency per tool call, on one conversation.
 * Not part of `npm run bench`; the session 7 tuning notes (bench/TUNING.md) were measured with it.
 * `--without-live-search-attributes` measures a conversation started with `liveSearchAttributes: false`;
 * `--local-model-calls` one with `modelPolicy: { localActivity: true }`; `--tool=noopLocal` the tool
 * declared `localActivity`.
 *
 *   npx tsx bench/cpuPerStep.ts [--rounds=8] [--calls=20] [--text-turns=20] [--worker-options=JSON]
 *     [--without-live-search-attributes] [--local-model-calls] [--tool=noop|noopLocal]
 */
import os from 'node:os';
import { parseArgs } from 'node:util';
import { startEnvironment } from './environment.ts';
import { processCpuMs } from './machine.ts';
import { sendOk } from './scenarios/overhead.ts';
import { callDirective } from './scriptedReplies.ts';
import { formatSummary, summarize, timed } from './stats.ts';

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '8' },
    calls: { type: 'string', default: '20' },
    'text-turns': { type: 'string', default: '20' },
    'worker-options': { type: 'string' },
    'without-live-search-attributes': { type: 'boolean', default: false },
    'local-model-calls': { type: 'boolean', default: false },
    tool: { type: 'string', default: 'noop' },
  },
});
const calls = Number(values.calls);
const textTurns = Number(values['text-turns']);

const loadBefore = os.loadavg();
const env = await startEnvironment();
try {
  const { agents, worker } = await env.startWorker(
    values['worker-options'] ? { workerOptions: JSON.parse(values['worker-options']) } : {},
  );
  const pids = { server: env.server.pid, worker: worker.child.pid as number };
  const cpu = () => ({ server: processCpuMs(pids.server), worker: processCpuMs(pids.worker) });
  const conversation = await agents.startConversation({
    systemPrompt: '',
    toolExecution: 'sequential',
    maxModelCallsPerTurn: calls + 5,
    liveSearchAttributes: !values['without-live-search-attributes'],
    ...(values['local-model-calls'] ? { modelPolicy: { localActivity: true } } : {}),
  });
  const tools = callDirective(values.tool ?? 'noop', calls);
  const samples = {
    perCallMs: [] as number[],
    toolWorker: [] as number[],
    toolServer: [] as number[],
    textMs: [] as number[],
    textWorker: [] as number[],
    textServer: [] as number[],
  };
  for (let round = -2; round < Number(values.rounds); round++) {
    const beforeText = cpu();
    const text = await timed(async () => {
      for (let turn = 0; turn < textTurns; turn++) await sendOk(conversation, 'hello');
    });
    const afterText = cpu();
    const toolTurn = await timed(() => sendOk(conversation, tools));
    const afterTool = cpu();
    if (round < 0) continue;
    const textWorker = (afterText.worker - beforeText.worker) / textTurns;
    const textServer = (afterText.server - beforeText.server) / textTurns;
    const plainMs = text.ms / textTurns;
    samples.textMs.push(plainMs);
    samples.textWorker.push(textWorker);
    samples.textServer.push(textServer);
    samples.perCallMs.push((toolTurn.ms - plainMs) / calls);
    samples.toolWorker.push((afterTool.worker - afterText.worker - textWorker) / calls);
    samples.toolServer.push((afterTool.server - afterText.server - textServer) / calls);
  }
  await conversation.end();
  const show = (label: string, values: number[]) =>
    console.log(`${label.padEnd(34)} ${formatSummary(summarize(values), 2)}`);
  show('tool call: latency ms', samples.perCallMs);
  show('tool call: worker CPU ms', samples.toolWorker);
  show('tool call: server CPU ms', samples.toolServer);
  show('text turn: latency ms', samples.textMs);
  show('text turn: worker CPU ms', samples.textWorker);
  show('text turn: server CPU ms', samples.textServer);
  show(
    'text turn: server + worker CPU ms',
    samples.textWorker.map((w, i) => w + (samples.textServer[i] ?? 0)),
  );
  console.log(
    `load average before ${loadBefore.map((l) => l.toFixed(2)).join(', ')}, after ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(', ')}`,
  );
} finally {
  await env.close();
}
