import { proxySinks } from '@temporalio/workflow';
import type { AgentEventSinks } from '../src/contract/protocol.ts';
import type { AgentEvent } from '../src/contract/types.ts';

const { yiemAgentEvents } = proxySinks<AgentEventSinks>();

/** Hands an event to the worker's `eventSink` (not again on replay). */
export function emitAgentEvent(event: AgentEvent): void {
  yiemAgentEvents.emit(event);
}
