/**
 * Where one turn's history bytes go, per event type and per payload field: `npx tsx
 * bench/historyBreakdown.ts [--turns=100] [--local-model-calls]`. Runs `turns - 1` text turns of
 * 2,000-byte messages on a fresh dev server and worker, then measures text turn `turns` and a tool
 * turn (a 2,000-byte message asking for two `noop` calls); `--local-model-calls` starts the
 * conversation with `modelPolicy: { localActivity: true }`. Prints Markdown tables; not part of
 * `npm run bench`.
 */
import { parseArgs } from 'node:util';
import type { temporal as protoTypes } from '@temporalio/proto';
import proto from '@temporalio/proto';
import type { Conversation } from '../src/client/client.ts';
import { startEnvironment } from './environment.ts';
import { encodedBytes, eventTypeName, storedHistory } from './history.ts';
import { MESSAGE_BYTES, paddedText } from './scenarios/historyBytes.ts';
import { callDirective } from './scriptedReplies.ts';

const { temporal } = proto;
type HistoryEvent = protoTypes.api.history.v1.IHistoryEvent;

/** Bytes by row: an event type, or an event type and the payload field inside it. */
type Breakdown = Map<string, { count: number; bytes: number }>;

function add(breakdown: Breakdown, key: string, bytes: number): void {
  const row = breakdown.get(key) ?? { count: 0, bytes: 0 };
  breakdown.set(key, { count: row.count + 1, bytes: row.bytes + bytes });
}

/** Every payload's data inside `value`, by its path (`input.payloads`, `result.payloads`…). */
function payloadBytes(value: unknown, path: string, found: Map<string, number>): void {
  if (!value || typeof value !== 'object' || value instanceof Uint8Array) return;
  const data = (value as { data?: unknown }).data;
  if ('metadata' in value && data instanceof Uint8Array) {
    found.set(path, (found.get(path) ?? 0) + data.length);
    return;
  }
  for (const [key, child] of Object.entries(value)) {
    const index = /^\d+$/.test(key);
    payloadBytes(child, index ? path : path ? `${path}.${key}` : key, found);
  }
}

/** The top-level fields of a JSON payload (a `callModel` input), by their bytes as JSON. */
function jsonFieldBytes(data: Uint8Array, prefix: string, breakdown: Breakdown): void {
  const value = JSON.parse(Buffer.from(data).toString('utf8')) as Record<string, unknown>;
  for (const [key, field] of Object.entries(value)) {
    add(breakdown, `${prefix} .${key}`, Buffer.byteLength(JSON.stringify(field)));
  }
}

function breakdownOf(events: readonly HistoryEvent[]): { events: Breakdown; fields: Breakdown } {
  const byType: Breakdown = new Map();
  const fields: Breakdown = new Map();
  for (const event of events) {
    const type = eventTypeName(event.eventType ?? 0);
    const scheduled = event.activityTaskScheduledEventAttributes;
    const label = scheduled ? `${type}(${scheduled.activityType?.name})` : type;
    add(byType, label, temporal.api.history.v1.HistoryEvent.encode(event).finish().length);
    const found = new Map<string, number>();
    payloadBytes({ ...event, eventTime: undefined }, '', found);
    for (const [path, bytes] of found) add(fields, `${label} ${path}`, bytes);
    const callModelInput =
      scheduled?.activityType?.name === 'callModel' ? scheduled.input?.payloads?.[0] : undefined;
    if (callModelInput?.data) jsonFieldBytes(callModelInput.data, `${label} input`, fields);
  }
  return { events: byType, fields };
}

function table(title: string, breakdown: Breakdown): string {
  const rows = [...breakdown].sort(([, a], [, b]) => b.bytes - a.bytes);
  return [
    `| ${title} | count | bytes |`,
    '| --- | --- | --- |',
    ...rows.map(([key, { count, bytes }]) => `| ${key} | ${count} | ${bytes} |`),
  ].join('\n');
}

async function measuredTurn(conversation: Conversation, text: string, name: string): Promise<string> {
  const before = (await storedHistory(conversation.handle)).events ?? [];
  await conversation.send(text);
  const after = await storedHistory(conversation.handle);
  const added = (after.events ?? []).slice(before.length);
  const { events, fields } = breakdownOf(added);
  const total = encodedBytes({ events: added });
  return [
    `### ${name}: ${added.length} events, ${total} bytes`,
    table('event', events),
    table('payload field', fields),
  ].join('\n\n');
}

const { values } = parseArgs({
  options: {
    turns: { type: 'string', default: '100' },
    'local-model-calls': { type: 'boolean', default: false },
  },
});
const turns = Number(values.turns);
const env = await startEnvironment();
try {
  const { worker, agents } = await env.startWorker();
  const conversation = await agents.startConversation({
    systemPrompt: '',
    ...(values['local-model-calls'] ? { modelPolicy: { localActivity: true } } : {}),
  });
  for (let turn = 1; turn < turns; turn++) await conversation.send(paddedText(String(turn)));
  const text = await measuredTurn(conversation, paddedText(String(turns)), `text turn ${turns}`);
  const tool = await measuredTurn(
    conversation,
    paddedText(callDirective('noop', 2)),
    `tool turn ${turns + 1} (two noop calls)`,
  );
  console.log(`${text}\n\n${tool}\n\nMessages of ${MESSAGE_BYTES} bytes.`);
  await conversation.end();
  await worker.stop();
} finally {
  await env.close();
}
