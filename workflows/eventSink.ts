import { proxySinks } from '@temporalio/workflow';
import type { AgentEventSinks, LiveEntry } from '../src/contract/protocol.ts';
import type { AgentEvent } from '../src/contract/types/events.ts';

const { yiemAgentEvents, yiemLiveEvents } = proxySinks<AgentEventSinks>();

/** Hands an event to the worker's `eventSink` (not again on replay). */
export function emitAgentEvent(event: AgentEvent): void {
  yiemAgentEvents.emit(event);
}

/** Hands what the event log took to the worker for the live channel (not again on replay). */
export function appendLiveEntries(entries: LiveEntry[]): void {
  yiemLiveEvents.append(entries);
}
