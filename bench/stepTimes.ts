/**
 * Where a tool turn's time goes, step by step: runs tool turns on a fresh dev server and prints the
 * per-call overhead of each, then the last turn's history events with the milliseconds since the
 * previous event. Not part of `npm run bench`; the tuning notes (bench/TUNING.md) were found with it.
 *
 *   npx tsx bench/stepTimes.ts [--tool=noop|sleep200] [--calls=20] [--mode=sequential|parallel]
 *     [--turns=5] [--dynamic-config=JSON] [--worker-options=JSON] [--local-model-calls]
 */
import { parseArgs } from 'node:util';
import proto from '@temporalio/proto';
import { startEnvironment } from './environment.ts';
import { eventMs } from './history.ts';
import { sendOk } from './scenarios/overhead.ts';
import { callDirective } from './scriptedReplies.ts';
import { timed } from './stats.ts';

const { values } = parseArgs({
  options: {
    tool: { type: 'string', default: 'noop' },
    calls: { type: 'string', default: '20' },
    mode: { type: 'string', default: 'sequential' },
    turns: { type: 'string', default: '5' },
    'dynamic-config': { type: 'string' },
    'worker-options': { type: 'string' },
    'local-model-calls': { type: 'boolean', default: false },
  },
});
const calls = Number(values.calls);
const mode = values.mode === 'parallel' ? 'parallel' : 'sequential';
const { EventType } = proto.temporal.api.enums.v1;

const env = await startEnvironment(
  values['dynamic-config'] ? { dynamicConfig: JSON.parse(values['dynamic-config']) } : {},
);
try {
  const { agents } = await env.startWorker(
    values['worker-options'] ? { workerOptions: JSON.parse(values['worker-options']) } : {},
  );
  const conversation = await agents.startConversation({
    systemPrompt: '',
    toolExecution: mode,
    maxModelCallsPerTurn: 50,
    ...(values['local-model-calls'] ? { modelPolicy: { localActivity: true } } : {}),
  });
  await sendOk(conversation, callDirective(values.tool, calls));
  const perCall: string[] = [];
  for (let turn = 0; turn < Number(values.turns); turn++) {
    const withTools = await timed(() => sendOk(conversation, callDirective(values.tool, calls)));
    const oneCall = await timed(() => sendOk(conversation, callDirective(values.tool, 1)));
    perCall.push(((withTools.ms - oneCall.ms) / (calls - 1)).toFixed(1));
  }
  // Both turns make two model calls: the difference is tool calls only.
  console.log(`ms per ${values.tool} call (tool turn − one-call turn) / ${calls - 1}: ${perCall.join(' ')}`);

  const events = (await conversation.handle.fetchHistory()).events ?? [];
  const lastToolTurn = events.slice(-(calls * 6 + 30));
  let previous: number | undefined;
  for (const event of lastToolTurn) {
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
  await conversation.end();
} finally {
  await env.close();
}
