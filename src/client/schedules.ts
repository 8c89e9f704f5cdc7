import type { Client, ScheduleSpec, ScheduleSummary } from '@temporalio/client';
import type { ScheduledPromptWorkflow } from '../contract/definitions.ts';
import { MAX_MESSAGE_BYTES_LIMIT } from '../contract/limits.ts';
import { YIEM_AGENT, YIEM_STATUS, YIEM_TURNS } from '../contract/searchAttributes.ts';
import {
  conversationOptionsProblem,
  resolveConversationSettings,
  userTextProblem,
} from '../contract/settings.ts';
import type { ConversationOptions, ScheduledPrompt } from '../contract/types/conversation.ts';
import { defaultTitle } from './conversationTitle.ts';

/** The workflow type a prompt schedule starts; how `list` tells prompt schedules from others. */
const SCHEDULED_PROMPT_WORKFLOW = 'scheduledPromptWorkflow';
/** The memo key that keeps what a prompt schedule sends, for `list`. */
const PROMPT_MEMO = 'yiemScheduledPrompt';

/** A new conversation per run, as `AgentClient.startConversation` takes its options (no id). */
export interface ScheduledConversationOptions extends ConversationOptions {
  /** The title the Web UI shows for each run's conversation. Default: the agent and the system prompt's start. */
  title?: string;
  /** The `YiemAgent` search attribute. Default: the task queue. */
  agent?: string;
}

/** A prompt sent on a timetable: `every` or `cron`, to `conversationId` or to `newConversation`. */
export interface PromptScheduleOptions {
  /** The schedule's id (Temporal's schedule id), to list and delete it by. */
  id: string;
  /** The user message sent on each run. */
  text: string;
  /** How often: `'2s'`, `'15 minutes'`, `'1 day'`, or milliseconds. */
  every?: string | number;
  /** When, as a cron expression (`'0 9 * * MON-FRI'`), in UTC. */
  cron?: string;
  /** An existing conversation that gets the message on each run (posted: it joins its next turn). */
  conversationId?: string;
  /** Each run starts a conversation with these options, sends the message and ends it after the reply. */
  newConversation?: ScheduledConversationOptions;
}

/** One row of `schedules.list()`. */
export interface PromptScheduleListing {
  /** The schedule's id. */
  id: string;
  /** Where each run's message goes: `conversation <id>`, or `a new conversation` per run. */
  target: string;
  /** The user message sent on each run. */
  text: string;
  /** The timetable as it was given, e.g. `every 2s` or `cron 0 9 * * *`. */
  timetable: string;
  /** Whether the schedule is paused (in the Web UI, say): no runs until it is unpaused. */
  paused: boolean;
  /** When it runs next; undefined when paused or it has no more runs. */
  nextRunAt: Date | undefined;
  /** The workflow ids of the latest runs, oldest first (a new conversation per run is `conversation-<run id>`). */
  recentRuns: string[];
}

/**
 * Prompt schedules (Temporal Schedules that start `scheduledPromptWorkflow`, run by every agent
 * worker): `AgentClient.schedules`.
 */
export class PromptSchedules {
  readonly #client: Client;
  readonly #taskQueue: string;

  constructor(client: Client, taskQueue: string) {
    this.#client = client;
    this.#taskQueue = taskQueue;
  }

  /** Creates the schedule; its first run is at the first time of its timetable. Fails if the id is taken. */
  async create(options: PromptScheduleOptions): Promise<void> {
    const prompt = await this.#scheduledPrompt(options);
    await this.#client.schedule.create({
      scheduleId: options.id,
      spec: timetableSpec(options),
      action: {
        type: 'startWorkflow',
        workflowType: SCHEDULED_PROMPT_WORKFLOW,
        args: [prompt] satisfies Parameters<ScheduledPromptWorkflow>,
        taskQueue: this.#taskQueue,
        workflowId: options.id,
        staticSummary: `scheduled prompt ${options.id}`,
      },
      // Each run is on its own: one still waiting for its reply never holds up the next.
      policies: { overlap: 'ALLOW_ALL' },
      memo: {
        [PROMPT_MEMO]: { target: targetOf(prompt), text: prompt.text, timetable: timetableOf(options) },
      },
    });
  }

  /** The prompt schedules of the namespace. */
  async list(): Promise<PromptScheduleListing[]> {
    const listings: PromptScheduleListing[] = [];
    for await (const schedule of this.#client.schedule.list()) {
      if (schedule.action?.workflowType !== SCHEDULED_PROMPT_WORKFLOW) continue;
      listings.push(listingOf(schedule));
    }
    return listings.sort((a, b) => a.id.localeCompare(b.id));
  }

  /** Deletes the schedule: no run starts after this; runs under way finish. */
  async delete(id: string): Promise<void> {
    await this.#client.schedule.getHandle(id).delete();
  }

  async #scheduledPrompt(options: PromptScheduleOptions): Promise<ScheduledPrompt> {
    const { conversationId, newConversation, text } = options;
    if (Boolean(conversationId) === Boolean(newConversation)) {
      throw new Error(
        'A prompt schedule needs either conversationId (an existing conversation) or newConversation (one per run)',
      );
    }
    if (!newConversation) {
      refuseText(text, MAX_MESSAGE_BYTES_LIMIT);
      return { text, conversationId: conversationId as string };
    }
    const { title, agent = this.#taskQueue, ...conversationOptions } = newConversation;
    const invalid = conversationOptionsProblem(conversationOptions);
    if (invalid) throw new Error(invalid);
    refuseText(text, resolveConversationSettings(conversationOptions).maxMessageBytes);
    return {
      text,
      newConversation: {
        options: conversationOptions,
        title: title ?? defaultTitle(agent, conversationOptions.systemPrompt),
        agent,
        searchable: await this.#hasYiemSearchAttributes(),
      },
    };
  }

  /** Whether the namespace has yiem's search attributes, which each run's conversation is started with. */
  async #hasYiemSearchAttributes(): Promise<boolean> {
    try {
      const { customAttributes } = await this.#client.connection.operatorService.listSearchAttributes({
        namespace: this.#client.options.namespace,
      });
      return [YIEM_STATUS, YIEM_TURNS, YIEM_AGENT].every((key) => customAttributes?.[key.name] !== undefined);
    } catch {
      // A server that does not say (Temporal Cloud without operator rights): unsearchable, but it runs.
      return false;
    }
  }
}

function refuseText(text: string, maxBytes: number): void {
  const problem = userTextProblem(text, maxBytes);
  if (problem) throw new Error(problem);
}

function timetableSpec(options: PromptScheduleOptions): ScheduleSpec {
  if ((options.every === undefined) === (options.cron === undefined)) {
    throw new Error('A prompt schedule needs either every (an interval) or cron (a cron expression)');
  }
  return options.cron === undefined
    ? { intervals: [{ every: options.every as string | number }] }
    : { cronExpressions: [options.cron] };
}

function timetableOf(options: PromptScheduleOptions): string {
  return options.cron === undefined ? `every ${options.every}` : `cron ${options.cron}`;
}

function targetOf(prompt: ScheduledPrompt): string {
  return prompt.conversationId ? `conversation ${prompt.conversationId}` : 'a new conversation';
}

function listingOf(schedule: ScheduleSummary): PromptScheduleListing {
  const memo = schedule.memo?.[PROMPT_MEMO] as
    | { target?: string; text?: string; timetable?: string }
    | undefined;
  return {
    id: schedule.scheduleId,
    target: memo?.target ?? '?',
    text: memo?.text ?? '',
    timetable: memo?.timetable ?? '?',
    paused: schedule.state.paused,
    nextRunAt: schedule.info.nextActionTimes[0],
    recentRuns: schedule.info.recentActions.map((run) => run.action.workflow.workflowId),
  };
}
