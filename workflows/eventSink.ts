import { proxySinks } from '@temporalio/workflow';
import type { AgentEventSinks, LiveEntry } from '../src/contract/protocol.ts';
import type { TranscriptTail } from '../src/contract/transcript.ts';
import type { AgentEvent } from '../src/contract/types/events.ts';

const { yiemAgentEvents, yiemLiveEvents, yiemModelContext } = proxySinks<AgentEventSinks>();

/** Hands an event to the worker's `eventSink` (not again on replay). */
export function emitAgentEvent(event: AgentEvent): void {
  yiemAgentEvents.emit(event);
}

/** Hands what the event log took to the worker for the live channel (not again on replay). */
export function appendLiveEntries(entries: LiveEntry[]): void {
  yiemLiveEvents.append(entries);
}

/** Hands the entries the next model call reads to the worker's context cache (not again on replay). */
export function feedModelContext(transcriptId: string, tail: TranscriptTail): void {
  yiemModelContext.append(transcriptId, tail);
}
