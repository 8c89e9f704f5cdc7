import { condition, isCancellation, log, patched, setHandler } from '@temporalio/workflow';
import {
  compactionBoundary,
  contextBytes,
  DEFAULT_COMPACTION_PROMPT,
  type KeptCompaction,
  RECENT_SHARE_OF_WINDOW,
  summaryBytes,
} from '../src/contract/compaction.ts';
import { compactionsQuery, compactUpdate } from '../src/contract/definitions.ts';
import { MAX_KEPT_COMPACTIONS } from '../src/contract/limits.ts';
import type {
  AgentActivities,
  CallModelInput,
  CompactContextInput,
  CompactContextOutput,
  CompactionCarryOver,
  ModelRoutingInfo,
} from '../src/contract/protocol.ts';
import type { CompactionSettings, ConversationSettings } from '../src/contract/settings.ts';
import type { TranscriptEntry } from '../src/contract/transcript.ts';
import type { AgentDefinition } from '../src/contract/types/agents.ts';
import type { Compaction } from '../src/contract/types/compaction.ts';
import { metered, meteredActivities } from './actionMeter.ts';
import { failureMessage } from './activityFailure.ts';
import type { ConversationEvents } from './events.ts';
import { modelCallQueue, workerModelRouting } from './workerActivities.ts';

/**
 * What compaction reads of the conversation's state (`ConversationState` has it all; named here so
 * that state.ts, which holds a `ConversationCompaction`, is not imported back).
 */
interface CompactingConversation {
  readonly conversationId: string;
  /** Names the transcript for the workers' caches (a rewound run names a new one). */
  readonly transcriptId: string;
  readonly settings: ConversationSettings;
  readonly messages: readonly TranscriptEntry[];
  readonly turn: number;
  readonly agent: AgentDefinition | undefined;
  readonly workerModel: string | undefined;
  /** The worker's models' queues, once a turn (or a compaction) asked for them. */
  modelRouting: ModelRoutingInfo | undefined;
  /** Set while a turn runs. */
  readonly running: unknown;
  readonly compaction: ConversationCompaction;
  readonly events: ConversationEvents;
}

/** Compaction came after recorded histories; a run that never compacts records no marker. */
const COMPACTION_PATCH = 'yiem-compaction';

/** Since this patch a compaction's model call runs on its model's queue, as the turn's calls do. */
const COMPACTION_MODEL_QUEUE_PATCH = 'yiem-compaction-model-queue';

/**
 * A conversation's compactions: the summaries that stand for its older messages in model calls, and
 * the window the worker last reported. The transcript itself is never shortened.
 */
export class ConversationCompaction {
  readonly #kept: KeptCompaction[];
  #window: number | undefined;
  /** Set while a compaction runs: a turn's model call and a requested compaction wait for it. */
  #running = false;
  /** The turn whose compaction failed: its later model calls do not try again (the window is cut instead). */
  #failedInTurn: number | undefined;

  constructor(carried: CompactionCarryOver | undefined) {
    this.#kept = carried?.compactions ?? [];
    this.#window = carried?.window;
  }

  /** The compaction model calls use: the latest. */
  latest(): KeptCompaction | undefined {
    return this.#kept.at(-1);
  }

  list(fromId = 0): KeptCompaction[] {
    return this.#kept.filter((compaction) => compaction.id >= fromId);
  }

  /** What a model call's input names of the compaction it starts from. */
  modelCallInput(): Pick<CallModelInput, 'compaction'> {
    const latest = this.latest();
    return latest ? { compaction: { id: latest.id, upTo: latest.upTo } } : {};
  }

  /** Remembers the window a model call reported (absent from workers that predate compaction). */
  noteWindow(window: number | undefined): void {
    if (window !== undefined) this.#window = window;
  }

  carryOver(): { compaction?: CompactionCarryOver } {
    if (this.#kept.length === 0 && this.#window === undefined) return {};
    return {
      compaction: {
        compactions: this.#kept,
        ...(this.#window === undefined ? {} : { window: this.#window }),
      },
    };
  }

  /** Whether the context from the latest compaction on would pass the window, and where to cut it. */
  dueBoundary(state: CompactingConversation, settings: CompactionSettings): number | undefined {
    const window = settings.maxContextBytes ?? this.#window;
    if (window === undefined || this.#failedInTurn === state.turn) return undefined;
    const latest = this.latest();
    const from = latest?.upTo ?? 0;
    if (summaryBytes(latest) + contextBytes(state.messages, from) <= window) return undefined;
    const boundary = compactionBoundary(
      state.messages,
      from,
      settings.keepRecentTurns,
      window * RECENT_SHARE_OF_WINDOW,
    );
    return boundary > from ? boundary : undefined;
  }

  /**
   * Runs `work` alone: a compaction the turn starts and one a client asked for never overlap. The
   * flag is checked and set with no await in between, so two waiters cannot both take it.
   */
  async exclusive<T>(work: () => Promise<T>): Promise<T> {
    while (this.#running) await condition(() => !this.#running);
    this.#running = true;
    try {
      return await work();
    } finally {
      this.#running = false;
    }
  }

  /** Summarises the messages from the latest compaction up to `upTo` (inside `exclusive`). */
  async run(
    state: CompactingConversation,
    settings: CompactionSettings,
    trigger: Compaction['trigger'],
    upTo: number,
  ): Promise<KeptCompaction> {
    const previous = this.latest();
    const from = previous?.upTo ?? 0;
    const id = (previous?.id ?? 0) + 1;
    const model = settings.model ?? state.agent?.model ?? state.settings.model;
    const input: CompactContextInput = {
      conversationId: state.conversationId,
      turn: state.turn,
      id,
      from,
      upTo,
      transcriptId: state.transcriptId,
      ...(previous
        ? {
            previous: {
              summary: previous.summary,
              ...(previous.stored ? { stored: previous.stored } : {}),
            },
          }
        : {}),
      ...(model ? { model } : {}),
      ...(settings.prompt === DEFAULT_COMPACTION_PROMPT ? {} : { prompt: settings.prompt }),
      followed: state.events.followed,
      eventOffset: state.events.offset,
    };
    const output = await compactContext(state, settings, input);
    if (output.events) state.events.publishFromResult(output.events);
    const compaction: KeptCompaction = {
      id,
      turn: state.turn,
      trigger,
      from,
      upTo,
      summary: output.summary,
      ...(output.stored ? { stored: output.stored } : {}),
      model: output.model,
      timestamp: Date.now(),
    };
    this.#kept.push(compaction);
    state.events.publish(state.turn, { type: 'compaction', id, trigger, from, upTo });
    this.#kept.splice(0, Math.max(0, this.#kept.length - MAX_KEPT_COMPACTIONS));
    return compaction;
  }

  failedIn(turn: number): void {
    this.#failedInTurn = turn;
  }
}

/**
 * Before a turn's model call: when the context would pass the window, summarise the older turns
 * first. A compaction that fails for good leaves the window to be cut as without compaction.
 */
export async function compactIfDue(state: CompactingConversation): Promise<void> {
  const { compaction: settings } = state.settings;
  if (!settings) return;
  const { compaction } = state;
  try {
    await compaction.exclusive(async () => {
      const upTo = compaction.dueBoundary(state, settings);
      if (upTo === undefined || !patched(COMPACTION_PATCH)) return;
      await compaction.run(state, settings, 'window', upTo);
    });
  } catch (error) {
    if (isCancellation(error)) return;
    compaction.failedIn(state.turn);
    log.warn('Compaction failed; older turns are left out of the window instead', {
      error: failureMessage(error),
    });
  }
}

/** The `compact` Update and the `compactions` Query. */
export function registerCompactionHandlers(state: CompactingConversation): void {
  setHandler(
    compactUpdate,
    metered(async () => {
      const { compaction } = state;
      // Between turns: a turn's messages are not summarised while it may still add to them.
      await condition(() => state.running === undefined);
      return compaction.exclusive(async () => {
        const settings = state.settings.compaction as CompactionSettings;
        const from = compaction.latest()?.upTo ?? 0;
        const upTo = compactionBoundary(
          state.messages,
          from,
          settings.keepRecentTurns,
          Number.POSITIVE_INFINITY,
        );
        if (upTo <= from) return null;
        patched(COMPACTION_PATCH);
        return compaction.run(state, settings, 'request', upTo);
      });
    }),
    {
      validator: () => {
        if (!state.settings.compaction) {
          throw new Error(
            'This conversation does not compact its context (it was started with compaction: false)',
          );
        }
      },
    },
  );
  setHandler(compactionsQuery, (fromId) => state.compaction.list(fromId));
}

/**
 * The summarising call, named in the Web UI by the messages it summarises, its model and turn. Since
 * patch `yiem-compaction-model-queue` it runs where the turn's calls to its model run (on a
 * rate-limited model's queue); a compaction before the run's first turn asks the worker's models first.
 */
async function compactContext(
  state: CompactingConversation,
  settings: CompactionSettings,
  input: CompactContextInput,
): Promise<CompactContextOutput> {
  const { policy } = settings;
  let queue = {};
  if (patched(COMPACTION_MODEL_QUEUE_PATCH)) {
    state.modelRouting ??= await workerModelRouting();
    queue = modelCallQueue(
      state.modelRouting,
      input.model ?? state.modelRouting.defaultModel,
      input.conversationId,
    );
  }
  const model = input.model ?? state.workerModel;
  return meteredActivities<AgentActivities>({
    ...queue,
    startToCloseTimeout: policy.startToCloseTimeout ?? '2 minutes',
    ...(policy.heartbeatTimeout ? { heartbeatTimeout: policy.heartbeatTimeout } : {}),
    ...(policy.retry ? { retry: policy.retry } : {}),
    summary: `compact messages ${input.from + 1}–${input.upTo} · model ${model ?? '(worker default)'} · turn ${input.turn}`,
  }).compactContext(input);
}
