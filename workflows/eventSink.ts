import { proxySinks, type Sinks } from '@temporalio/workflow';
import type { AgentEvent } from '../src/types.ts';

/** The worker's `eventSink`, reached from workflow code for calls the workflow runs itself. */
export interface AgentEventSinks extends Sinks {
  yiemAgentEvents: { emit(event: AgentEvent): void };
}

const { yiemAgentEvents } = proxySinks<AgentEventSinks>();

/** Hands an event to the worker's `eventSink` (not again on replay). */
export function emitAgentEvent(event: AgentEvent): void {
  yiemAgentEvents.emit(event);
}
