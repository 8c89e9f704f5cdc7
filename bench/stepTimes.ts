/**
 * Where a tool turn's time goes, step by step: runs tool turns on a fresh dev server and prints the
 * per-call overhead of each, the median of each step over the whole history (a workflow task waiting
 * for its worker, a workflow task on the worker, an activity from start to completion), then the last
 * turn's history events with the milliseconds since the previous event. `--floor` runs the same turns
 * on the bare workflow of section (l) (bench/floor/) instead of ours. Not part of `npm run bench`; the
 * tuning notes (bench/TUNING.md) were found with it.
 *
 *   npx tsx bench/stepTimes.ts [--tool=noop|sleep200] [--calls=20] [--mode=sequential|parallel]
 *     [--turns=5] [--dynamic-config=JSON] [--worker-options=JSON] [--local-model-calls] [--floor]
 */
import { parseArgs } from 'node:util';
import type { WorkflowHandle } from '@temporalio/client';
import type { temporal as protoTypes } from '@temporalio/proto';
import proto from '@temporalio/proto';
import { type BenchEnvironment, startEnvironment } from './environment.ts';
import { floorEndSignal, floorTurnUpdate } from './floor/workflows.ts';
import { eventMs } from './history.ts';
import { startFloorWorker } from './scenarios/floor.ts';
import { sendOk } from './scenarios/overhead.ts';
import { callDirective } from './scriptedReplies.ts';
import { summarize, timed } from './stats.ts';

type HistoryEvent = protoTypes.api.history.v1.IHistoryEvent;

const { values } = parseArgs({
  options: {
    tool: { type: 'string', default: 'noop' },
    calls: { type: 'string', default: '20' },
    mode: { type: 'string', default: 'sequential' },
    turns: { type: 'string', default: '5' },
    'dynamic-config': { type: 'string' },
    'worker-options': { type: 'string' },
    'local-model-calls': { type: 'boolean', default: false },
    floor: { type: 'boolean', default: false },
  },
});
const calls = Number(values.calls);
const mode = values.mode === 'parallel' ? 'parallel' : 'sequential';
const { EventType } = proto.temporal.api.enums.v1;

/** Sends a turn whose model reply asks for `count` calls of the tool; resolves when it ends. */
type SendTools = (count: number) => Promise<unknown>;

/** Our conversation on a worker of ours; its history once the turns are sent. */
async function oursConversation(env: BenchEnvironment) {
  const { agents } = await env.startWorker(
    values['worker-options'] ? { workerOptions: JSON.parse(values['worker-options']) } : {},
  );
  const conversation = await agents.startConversation({
    systemPrompt: '',
    toolExecution: mode,
    maxModelCallsPerTurn: 50,
    ...(values['local-model-calls'] ? { modelPolicy: { localActivity: true } } : {}),
  });
  const send: SendTools = (count) => sendOk(conversation, callDirective(values.tool, count));
  return { send, handle: conversation.handle, end: () => conversation.end() };
}

/** The bare workflow of section (l) on its own worker process. */
async function floorWorkflow(env: BenchEnvironment) {
  const { worker, start } = await startFloorWorker(env);
  const handle = await start();
  const send: SendTools = (count) =>
    handle.executeUpdate(floorTurnUpdate, {
      args: [{ text: callDirective(values.tool, count), parallel: mode === 'parallel', tools: 'activity' }],
    });
  const end = async () => {
    await handle.signal(floorEndSignal);
    await worker.stop();
  };
  return { send, handle: handle as WorkflowHandle, end };
}

/** The median of each step over a history: workflow tasks queued and run, activities run. */
function stepMedians(events: readonly HistoryEvent[]): string {
  const at = new Map<string, number>();
  const steps = { queued: [] as number[], workflowTask: [] as number[], activity: [] as number[] };
  const since = (id: unknown, event: HistoryEvent, into: number[]) => {
    const start = at.get(String(id));
    if (start !== undefined) into.push(eventMs(event) - start);
  };
  for (const event of events) {
    at.set(String(event.eventId), eventMs(event));
    since(event.workflowTaskStartedEventAttributes?.scheduledEventId, event, steps.queued);
    since(event.workflowTaskCompletedEventAttributes?.startedEventId, event, steps.workflowTask);
    since(event.activityTaskCompletedEventAttributes?.startedEventId, event, steps.activity);
  }
  const median = (values: number[]) => `${summarize(values).median.toFixed(2)} ms (${values.length})`;
  return `workflow task scheduled → started ${median(steps.queued)}, started → completed ${median(steps.workflowTask)}; activity started → completed ${median(steps.activity)}`;
}

function printEvents(events: readonly HistoryEvent[]): void {
  let previous: number | undefined;
  for (const event of events) {
    const at = eventMs(event);
    const name =
      event.activityTaskScheduledEventAttributes?.activityType?.name ??
      event.workflowExecutionSignaledEventAttributes?.signalName ??
      '';
    const delta = previous === undefined ? '' : (at - previous).toFixed(1);
    console.log(
      `${String(event.eventId).padStart(5)} ${delta.padStart(7)}  ${EventType[event.eventType ?? 0]} ${name}`,
    );
    previous = at;
  }
}

const env = await startEnvironment(
  values['dynamic-config'] ? { dynamicConfig: JSON.parse(values['dynamic-config']) } : {},
);
try {
  const { send, handle, end } = await (values.floor ? floorWorkflow(env) : oursConversation(env));
  await send(calls);
  const perCall: string[] = [];
  for (let turn = 0; turn < Number(values.turns); turn++) {
    const withTools = await timed(() => send(calls));
    const oneCall = await timed(() => send(1));
    perCall.push(((withTools.ms - oneCall.ms) / (calls - 1)).toFixed(1));
  }
  // Both turns make two model calls: the difference is tool calls only.
  console.log(`ms per ${values.tool} call (tool turn − one-call turn) / ${calls - 1}: ${perCall.join(' ')}`);
  const events = (await handle.fetchHistory()).events ?? [];
  console.log(`medians: ${stepMedians(events)}`);
  printEvents(events.slice(-(calls * 6 + 30)));
  await end();
} finally {
  await env.close();
}
