import type { Spend } from './types/spend.ts';
import type { TurnResult } from './types/turns.ts';

/** What an observer learns of the turn it wraps. */
export interface ObservedTurn {
  conversationId: string;
  turn: number;
  /** The agent a handoff made active, if any. */
  agentName?: string;
  /** What the turn has spent so far, Temporal Cloud Actions included. */
  spent?: () => Spend;
}

/**
 * Wraps a turn's agent loop (e.g. in a span) and must call `run` exactly once. It runs inside the
 * workflow, so it must be deterministic and schedule nothing: observing a turn changes no history.
 */
export type TurnObserver = (turn: ObservedTurn, run: () => Promise<TurnResult>) => Promise<TurnResult>;

const observers: TurnObserver[] = [];

/**
 * Adds an observer of every turn in this workflow bundle, once however often it is called. Workflow
 * interceptor modules bundled beside the workflows (the tracing one) register here; the workflow
 * code knows no tracer.
 */
export function observeTurns(observer: TurnObserver): void {
  if (!observers.includes(observer)) observers.push(observer);
}

/** Runs a turn's agent loop through the registered observers, the first outermost. */
export function runObservedTurn(turn: ObservedTurn, run: () => Promise<TurnResult>): Promise<TurnResult> {
  const wrapped = observers.reduceRight<() => Promise<TurnResult>>(
    (next, observer) => () => observer(turn, next),
    run,
  );
  return wrapped();
}
