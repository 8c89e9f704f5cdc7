import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import type { DataConverter } from '@temporalio/common';
import { bundleWorkflowCode, type InjectedSinks, type ReplayWorkerOptions, Worker } from '@temporalio/worker';
import type { AgentEventSinks } from '../contract/protocol.ts';
import { describeThrown } from '../contract/thrown.ts';
import { AGENT_WORKFLOWS_PATH } from './plugin.ts';

/** What `replayCheck` replays the histories against. */
export interface ReplayCheckOptions {
  /** The workflows module of the worker being checked. Default: yiem's own (`AGENT_WORKFLOWS_PATH`). */
  workflowsPath?: string;
  /** A prebuilt bundle (from `bundleWorkflowCode`) instead of `workflowsPath`. */
  workflowBundle?: {
    /** The bundle's JavaScript. */
    code: string;
  };
  /** The workers' data converter, when the histories' payloads are encrypted. */
  dataConverter?: DataConverter;
}

/** One history that did not replay. */
export interface ReplayCheckFailure {
  /** The history's file. */
  file: string;
  /** The conversation (workflow) id of the recorded run. */
  conversationId: string;
  /** The run's id. */
  runId: string;
  /** Whether today's code makes other commands than the history recorded (else the replay failed otherwise). */
  nondeterministic: boolean;
  /**
   * The recorded event where today's code went another way: the first event of the workflow task whose
   * commands no longer match (the one the error names, when it names one), or that task's completion.
   */
  eventId: number | undefined;
  /** That event's type, e.g. `ActivityTaskScheduled`. */
  eventType: string | undefined;
  /** The SDK's error (for a nondeterminism, the core's sentence naming what differs). */
  message: string;
}

/** What a replay check found. */
export interface ReplayCheckReport {
  /** How many histories were replayed. */
  checked: number;
  /** The histories that did not replay, each with why; empty when all did. */
  failures: ReplayCheckFailure[];
}

/** Events are never emitted during replay; the sink is there so the workflow finds it. */
const REPLAY_SINKS: InjectedSinks<AgentEventSinks> = {
  yiemAgentEvents: { emit: { fn: () => undefined, callDuringReplay: false } },
  yiemLiveEvents: { append: { fn: () => undefined, callDuringReplay: false } },
  yiemModelContext: { append: { fn: () => undefined, callDuringReplay: false } },
};

interface RecordedEvent {
  eventId?: string | number;
  eventType?: string;
  workflowExecutionStartedEventAttributes?: { workflowId?: string; originalExecutionRunId?: string };
}

interface RecordedHistory {
  file: string;
  conversationId: string;
  runId: string;
  events: RecordedEvent[];
}

/**
 * Replays every `*.json` history in `dir` (as `yiem export-histories` writes them, or
 * `historyToJSON(await handle.fetchHistory())`) against today's workflow code, and reports each one
 * that does not replay with its conversation, run and the event where the code went another way.
 * A conversation that would fail so on a deployed worker is one that a code change broke.
 */
export async function replayCheck(dir: string, options: ReplayCheckOptions = {}): Promise<ReplayCheckReport> {
  const histories = await readHistories(dir);
  const replayOptions: ReplayWorkerOptions = {
    workflowBundle:
      options.workflowBundle ?? (await bundle(path.resolve(options.workflowsPath ?? AGENT_WORKFLOWS_PATH))),
    ...(options.dataConverter ? { dataConverter: options.dataConverter } : {}),
    sinks: REPLAY_SINKS,
  };
  const failures: ReplayCheckFailure[] = [];
  for (const history of histories) {
    const error = await replayError(replayOptions, history.conversationId, history.events);
    if (!error) continue;
    const nondeterministic = error.name === 'DeterminismViolationError';
    const event = nondeterministic ? await divergingEvent(replayOptions, history, error.message) : undefined;
    failures.push({
      file: history.file,
      conversationId: history.conversationId,
      runId: history.runId,
      nondeterministic,
      eventId: event?.eventId === undefined ? undefined : Number(event.eventId),
      eventType: event?.eventType === undefined ? undefined : eventTypeName(event.eventType),
      message: coreMessage(error.message),
    });
  }
  return { checked: histories.length, failures };
}

/** One line per failure, as `yiem replay-check` prints them. */
export function formatReplayFailure(failure: ReplayCheckFailure): string {
  const where =
    failure.eventId === undefined ? '' : ` at event ${failure.eventId} (${failure.eventType ?? 'unknown'})`;
  const what = failure.nondeterministic ? 'nondeterminism' : 'replay failed';
  return `${failure.file}: conversation ${failure.conversationId} run ${failure.runId}: ${what}${where}: ${failure.message}`;
}

async function readHistories(dir: string): Promise<RecordedHistory[]> {
  const files = (
    await readdir(dir).catch((error: unknown) => {
      throw new Error(`Cannot read the history folder ${dir}: ${describeThrown(error)}`);
    })
  )
    .filter((file) => file.endsWith('.json'))
    .sort();
  if (files.length === 0) throw new Error(`No history files (*.json) in ${dir}`);
  return Promise.all(files.map((file) => readHistory(path.join(dir, file))));
}

async function readHistory(file: string): Promise<RecordedHistory> {
  let parsed: { events?: RecordedEvent[] };
  try {
    parsed = JSON.parse(await readFile(file, 'utf8'));
  } catch (error) {
    throw new Error(`${file} is no history JSON: ${describeThrown(error)}`);
  }
  const started = parsed.events?.[0]?.workflowExecutionStartedEventAttributes;
  if (!parsed.events || !started) {
    throw new Error(`${file} is no workflow history: its first event is not WorkflowExecutionStarted`);
  }
  // Exported files are named <conversation>__<run>.json; old servers record no workflow id in the start event.
  const [namedId, namedRun] = path.basename(file, '.json').split('__');
  return {
    file: path.basename(file),
    conversationId: started.workflowId || decodeURIComponent(namedId ?? ''),
    runId: started.originalExecutionRunId || (namedRun ?? ''),
    events: parsed.events,
  };
}

async function replayError(
  options: ReplayWorkerOptions,
  workflowId: string,
  events: RecordedEvent[],
): Promise<Error | undefined> {
  for await (const result of Worker.runReplayHistories(options, [{ workflowId, history: { events } }])) {
    return result.error;
  }
  return undefined;
}

/**
 * The recorded event where the replay went another way. Most of the core's errors name no event,
 * so the workflow task that diverges is found by replaying ever longer beginnings of the history (bisection over its workflow tasks): a beginning that ends just
 * before task k+1 starts checks the commands of tasks 1..k.
 */
async function divergingEvent(
  options: ReplayWorkerOptions,
  history: RecordedHistory,
  message: string,
): Promise<RecordedEvent | undefined> {
  const { events } = history;
  // Some of the core's errors name the event themselves.
  const namedId = /HistoryEvent\(id: (\d+)/.exec(message)?.[1];
  const named = namedId ? events.find((event) => String(event.eventId) === namedId) : undefined;
  if (named) return named;
  const completed = events.flatMap((event, index) =>
    isType(event, 'WORKFLOW_TASK_COMPLETED') ? [index] : [],
  );
  const checkedThrough = (task: number): number => {
    const nextStart = events.findIndex(
      (event, index) => index > (completed[task] as number) && isType(event, 'WORKFLOW_TASK_STARTED'),
    );
    return nextStart === -1 ? events.length : nextStart + 1;
  };
  // The first task whose beginning fails: low passes (or is -1), high fails.
  let low = -1;
  let high = completed.length - 1;
  while (high - low > 1) {
    const middle = Math.floor((low + high) / 2);
    const failed = await replayError(
      options,
      history.conversationId,
      events.slice(0, checkedThrough(middle)),
    );
    if (failed) high = middle;
    else low = middle;
  }
  const taskCompleted = completed[high];
  if (taskCompleted === undefined) return undefined;
  const commandEvents = events
    .slice(taskCompleted + 1, checkedThrough(high))
    .filter((event) => !isType(event, 'WORKFLOW_TASK_SCHEDULED') && !isType(event, 'WORKFLOW_TASK_STARTED'));
  // The error quotes what differs ('renamedActivity', an activity or timer id): the event that holds it.
  const quoted = [...message.matchAll(/'([^']+)'/g)].map((match) => match[1] as string);
  const holding = commandEvents.find((event) => {
    const text = JSON.stringify(event);
    return quoted.some((token) => text.includes(JSON.stringify(token)));
  });
  return holding ?? commandEvents[0] ?? events[taskCompleted];
}

/** The core's own sentence (`[TMPRL1100] Nondeterminism error: ...`) out of the SDK's wrapping of it. */
function coreMessage(message: string): string {
  return /message: "((?:[^"\\]|\\.)*)"/.exec(message)?.[1] ?? message;
}

function isType(event: RecordedEvent, type: string): boolean {
  return event.eventType === `EVENT_TYPE_${type}`;
}

/** `EVENT_TYPE_ACTIVITY_TASK_SCHEDULED` as the Web UI names it: `ActivityTaskScheduled`. */
function eventTypeName(type: string): string {
  return type
    .replace(/^EVENT_TYPE_/, '')
    .toLowerCase()
    .replace(/(^|_)([a-z])/g, (_match, _separator, letter: string) => letter.toUpperCase());
}

function bundle(workflowsPath: string): Promise<{ code: string }> {
  return bundleWorkflowCode({
    workflowsPath,
    logger: { trace() {}, debug() {}, info() {}, warn() {}, error: console.error, log() {} } as never,
  });
}
