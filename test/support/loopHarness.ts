import { createHash, randomUUID } from 'node:crypto';
import { mkdir, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Context } from '@temporalio/activity';
import { Client, Connection, type WorkflowHandle } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { bundleWorkflowCode, type InjectedSinks, NativeConnection, Worker } from '@temporalio/worker';
import { inject } from 'vitest';
import { followEvents } from '../../src/client/conversationEvents.ts';
import {
  type ConversationWorkflow,
  cancelUpdate,
  decideToolCallUpdate,
  modelContextQuery,
  promptUpdate,
  statusQuery,
  transcriptQuery,
} from '../../src/contract/definitions.ts';
import { toolErrorMessage, toolResultMessage } from '../../src/contract/messages.ts';
import type {
  AgentActivities,
  AgentEventSinks,
  CallModelInput,
  CallModelOutput,
  CompactContextInput,
  ExecuteToolInput,
  ExecuteToolOutput,
  GuardrailOutcome,
  PreparedToolCall,
  RunGuardrailsInput,
} from '../../src/contract/protocol.ts';
import { CONVERSATION_WORKFLOW_TASK_TIMEOUT } from '../../src/contract/settings.ts';
import { resolveToolPolicy } from '../../src/contract/toolPolicy.ts';
import { textContent } from '../../src/contract/toolResult.ts';
import type { TranscriptEntry } from '../../src/contract/transcript.ts';
import type { ApprovalOutcome } from '../../src/contract/types/approvals.ts';
import type { ActivityPolicy, ToolArguments } from '../../src/contract/types/base.ts';
import type { ConversationOptions, ConversationStatus } from '../../src/contract/types/conversation.ts';
import type { ConversationEventItem } from '../../src/contract/types/events.ts';
import type { Message, ToolResultMessage } from '../../src/contract/types/messages.ts';
import type { TurnResult } from '../../src/contract/types/turns.ts';

/**
 * Loop tests: the real `conversationWorkflow` on a real worker against the run's dev server, with
 * the agent activities replaced by in-memory doubles (a scripted model that also PREPAREs, scripted
 * tools). No HTTP and no model client: what is under test is the turn and the tool batch.
 */

/** What a scripted tool returns: its text, or the whole outcome. */
export type ToolOutcome = string | { text: string; isError?: boolean; terminate?: boolean };

/** One execution of a scripted tool. */
export interface ToolRun {
  toolCallId: string;
  args: ToolArguments;
  attempt: number;
  /** Aborts when the workflow cancels the call (the cancellation comes with a heartbeat). */
  signal: AbortSignal;
  /** The conversation's execution log, to wait on other calls. */
  log: ExecutionLog;
}

export interface ToolDouble {
  /** `parallelToolExecute`. Default true. */
  parallel?: boolean;
  /** Set: every call waits for a person's approval first, for this reason. */
  approval?: string;
  policy?: ActivityPolicy;
  /** Default: answers `<toolCallId> done`. A throw fails the attempt (the activity is retried per policy). */
  run?(call: ToolRun): ToolOutcome | Promise<ToolOutcome>;
}

/** A tool call the scripted model makes. */
export interface ScriptedCall {
  id: string;
  name: string;
  args?: ToolArguments;
}

/** What the scripted model does on one model call. */
export type ModelStep =
  | { reply: string; stopReason?: 'stop' | 'length' }
  | { calls: ScriptedCall[]; text?: string }
  /** The model call fails; `retryable: false` (the default) fails it for good at once. */
  | { fail: string; retryable?: boolean }
  | ((call: ModelCall) => ModelStep | Promise<ModelStep>);

/** One model call as the scripted model saw it. */
export interface ModelCall {
  turn: number;
  attempt: number;
  /** The context the call read from the workflow (the first `messageCount` transcript entries). */
  seen: TranscriptEntry[];
  /** The compaction whose summary the call would send instead of the messages before `upTo`. */
  compaction: CallModelInput['compaction'];
  signal: AbortSignal;
}

/**
 * What ran, in order: `start:<toolCallId>`, then `end:<toolCallId>` when it returned,
 * `threw:<toolCallId>` when it threw, or `cancelled:<toolCallId>` when it saw its cancellation.
 */
export class ExecutionLog {
  readonly entries: string[] = [];
  readonly #waiters: { entry: string; resolve: (seen: boolean) => void }[] = [];

  push(entry: string): void {
    this.entries.push(entry);
    for (const waiter of this.#waiters.filter((w) => w.entry === entry)) waiter.resolve(true);
  }

  /** Resolves true once `entry` is logged, or false after `timeoutMs` (a test fails on it, never hangs). */
  waitFor(entry: string, timeoutMs = 10_000): Promise<boolean> {
    if (this.entries.includes(entry)) return Promise.resolve(true);
    return new Promise((resolve) => {
      const timer = setTimeout(() => resolve(false), timeoutMs);
      this.#waiters.push({
        entry,
        resolve: (seen) => {
          clearTimeout(timer);
          resolve(seen);
        },
      });
    });
  }

  /** The calls that had started and not yet finished when `toolCallId` started. */
  runningWhenStarted(toolCallId: string): string[] {
    const running = new Set<string>();
    for (const entry of this.entries) {
      const [kind, id = ''] = entry.split(':');
      if (kind === 'start' && id === toolCallId) return [...running];
      if (kind === 'start') running.add(id);
      else running.delete(id);
    }
    throw new Error(`${toolCallId} never started; log: ${this.entries.join(', ')}`);
  }
}

/** The `runGuardrails` double's verdict on one message (`undefined`: pass); `signal` aborts on cancellation. */
export type GuardrailDouble = (
  message: TranscriptEntry,
  signal: AbortSignal,
) => GuardrailOutcome | undefined | Promise<GuardrailOutcome | undefined>;

interface ConversationScript {
  tools: Record<string, ToolDouble>;
  steps: ModelStep[];
  modelCalls: ModelCall[];
  compactions: CompactContextInput[];
  /** The window the scripted model reports, in bytes. */
  contextWindow: number | undefined;
  /** Set: every `compactContext` call fails for good with this message. */
  compactionFails: string | undefined;
  /** What the `runGuardrails` double decides about each message; absent: pass. */
  guardrailVerdict: GuardrailDouble | undefined;
  guardrailChecks: RunGuardrailsInput[];
  log: ExecutionLog;
}

/** A conversation under test: the workflow's Updates and Queries, and what its doubles saw. */
export interface LoopConversation {
  handle: WorkflowHandle<ConversationWorkflow>;
  log: ExecutionLog;
  /** Every model call, in order. */
  modelCalls: ModelCall[];
  /** Every `compactContext` call, in order; the double answers `summary of <from>-<upTo>`. */
  compactions: CompactContextInput[];
  /** Every `runGuardrails` call, in order. */
  guardrailChecks: RunGuardrailsInput[];
  prompt(text: string): Promise<TurnResult>;
  cancel(): Promise<boolean>;
  decide(approvalId: string, approve: boolean, reason?: string): Promise<ApprovalOutcome>;
  status(): Promise<ConversationStatus>;
  /** Resolves with the pending approvals once there are `count` of them. */
  approvalsWaiting(count: number): Promise<ConversationStatus['pendingApprovals']>;
  /** The transcript's first page (512 KB): all of it, for the small conversations of these tests. */
  messages(): Promise<Message[]>;
  toolResults(): Promise<ToolResultMessage[]>;
  /** The event log from the start until (and with) the `turnEnd` of `turn`. */
  eventsThroughTurn(turn: number): Promise<ConversationEventItem[]>;
}

export interface LoopHarness {
  start(options: {
    tools?: Record<string, ToolDouble>;
    model?: ModelStep[];
    options?: Partial<ConversationOptions>;
    /** The context window the scripted model reports (bytes); absent: none, as an old worker. */
    contextWindow?: number;
    /** Set: every `compactContext` call fails for good with this message. */
    compactionFails?: string;
    /** What the `runGuardrails` double decides about each message (absent, or `undefined`: pass). */
    guardrailVerdict?: GuardrailDouble;
  }): Promise<LoopConversation>;
  close(): Promise<void>;
}

/**
 * Fast model retries. A cancellation reaches a running double soon through the worker's short
 * heartbeat throttle (HEARTBEAT_THROTTLE), not through a short heartbeat timeout, which a loaded
 * machine misses (a 2-second one failed turns at load 20). A conversation's own `modelPolicy`
 * replaces this one whole.
 */
const DEFAULT_OPTIONS: ConversationOptions = {
  systemPrompt: 'You are a loop test.',
  modelPolicy: {
    heartbeatTimeout: '20 seconds',
    retry: { initialInterval: '10 milliseconds', maximumInterval: '50 milliseconds', maximumAttempts: 3 },
  },
};

/** Tool calls heartbeat this often, and the worker sends them on at most this late. */
const HEARTBEAT_MS = 200;
const HEARTBEAT_THROTTLE = '200 milliseconds';

const DOUBLE_TOOL_POLICY: ActivityPolicy = {
  startToCloseTimeout: '30 seconds',
  heartbeatTimeout: '20 seconds',
  retry: { maximumAttempts: 1, initialInterval: '10 milliseconds', backoffCoefficient: 1 },
};

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
/** What workflow code may import (dependency-cruiser enforces it), so all a bundle is built from. */
const BUNDLE_SOURCES = ['workflows', 'src/contract'];
const BUNDLE_PACKAGES = ['@temporalio/workflow', '@temporalio/common', '@temporalio/workflow-streams'];
const BUNDLE_CACHE = path.join(os.tmpdir(), 'yiem-loop-bundles');
/** Bundles of other sources are left this long for other checkouts, then removed. */
const STALE_BUNDLE_MS = 60 * 60 * 1000;

let bundle: Promise<{ code: string }> | undefined;
/**
 * The real workflow bundle. Bundling takes seconds, and vitest runs the loop test files one after
 * another on this machine, so the files share one bundle on disk, keyed by everything it is built
 * from: the sources workflow code may import and the Temporal packages' versions.
 */
function workflowBundle(): Promise<{ code: string }> {
  bundle ??= (async () => {
    const file = path.join(BUNDLE_CACHE, `${await bundleKey()}.js`);
    const cached = await readFile(file, 'utf8').catch(() => undefined);
    if (cached) return { code: cached };
    const { code } = await bundleWorkflowCode({
      workflowsPath: path.join(ROOT, 'workflows/index.ts'),
      logger: { trace() {}, debug() {}, info() {}, warn() {}, error: console.error, log() {} } as never,
    });
    await mkdir(BUNDLE_CACHE, { recursive: true });
    await removeStaleBundles();
    // Written whole, then renamed: a file running at the same time never reads half a bundle.
    const written = `${file}.${process.pid}.tmp`;
    await writeFile(written, code);
    await rename(written, file);
    return { code };
  })();
  return bundle;
}

async function bundleKey(): Promise<string> {
  const hash = createHash('sha256').update(ROOT);
  for (const dir of BUNDLE_SOURCES) {
    const files = (await readdir(path.join(ROOT, dir), { recursive: true })).sort();
    for (const file of files) {
      const full = path.join(ROOT, dir, file);
      if ((await stat(full)).isFile()) hash.update(`${dir}/${file}\0`).update(await readFile(full));
    }
  }
  for (const name of BUNDLE_PACKAGES) {
    const manifest = JSON.parse(
      await readFile(path.join(ROOT, 'node_modules', name, 'package.json'), 'utf8'),
    );
    hash.update(`${name}@${String(manifest.version)}\0`);
  }
  return hash.digest('hex').slice(0, 32);
}

async function removeStaleBundles(): Promise<void> {
  for (const name of await readdir(BUNDLE_CACHE)) {
    const file = path.join(BUNDLE_CACHE, name);
    const { mtimeMs } = await stat(file).catch(() => ({ mtimeMs: Date.now() }));
    if (Date.now() - mtimeMs > STALE_BUNDLE_MS) await rm(file, { force: true });
  }
}

/** Starts a worker with the activity doubles on a task queue of its own, and a client. */
export async function startLoopHarness(): Promise<LoopHarness> {
  const address = inject('temporalAddress');
  const taskQueue = `loop-${randomUUID()}`;
  const scripts = new Map<string, ConversationScript>();
  const connection = await Connection.connect({ address });
  const client = new Client({ connection });
  const scriptOf = (conversationId: string): ConversationScript => {
    const script = scripts.get(conversationId);
    if (!script) throw ApplicationFailure.nonRetryable(`no script for conversation ${conversationId}`);
    return script;
  };

  const activities: AgentActivities = {
    callModel: (input) => scriptedModelCall(client, scriptOf(input.conversationId), input),
    executeTool: (input) => scriptedToolCall(scriptOf(input.conversationId), input),
    // The loop tests' doubles declare no batched tool, so the workflow never schedules a batch.
    executeTools: async () => {
      throw ApplicationFailure.nonRetryable('the loop harness runs no batched tools');
    },
    compactContext: async (input) => {
      const script = scriptOf(input.conversationId);
      script.compactions.push(input);
      if (script.compactionFails) throw ApplicationFailure.nonRetryable(script.compactionFails);
      return { summary: `summary of ${input.from}-${input.upTo}`, model: 'scripted-double' };
    },
    // Kept inline, as a worker without a payload store keeps it (the loop tests run no Nexus tools).
    keepToolResult: async ({ message }) => message,
    runGuardrails: async (input) => {
      const script = scriptOf(input.conversationId);
      script.guardrailChecks.push(input);
      const context = Context.current();
      const beat = setInterval(() => context.heartbeat(), HEARTBEAT_MS);
      try {
        return await Promise.all(
          input.messages.map(
            async (message) =>
              (await script.guardrailVerdict?.(message, context.cancellationSignal)) ?? {
                action: 'pass' as const,
              },
          ),
        );
      } finally {
        clearInterval(beat);
      }
    },
    defaultModel: async () => 'scripted-double',
    modelRouting: async () => ({ defaultModel: 'scripted-double', queues: {}, routed: false }),
    routeModel: async (input) => input.requested,
    listTools: async () => [],
    checkCallbackOutput: async () => null,
  };
  const workerConnection = await NativeConnection.connect({ address });
  const worker = await Worker.create({
    connection: workerConnection,
    taskQueue,
    workflowBundle: await workflowBundle(),
    activities,
    maxHeartbeatThrottleInterval: HEARTBEAT_THROTTLE,
    defaultHeartbeatThrottleInterval: HEARTBEAT_THROTTLE,
    // Sub-agent, handoff and callback calls report to the worker's event sink; none are under test.
    sinks: {
      yiemAgentEvents: { emit: { fn() {} } },
      yiemLiveEvents: { append: { fn() {} } },
      yiemModelContext: { append: { fn() {} } },
    } satisfies InjectedSinks<AgentEventSinks>,
  });
  const running = worker.run();

  return {
    async start({ tools = {}, model = [], options = {}, contextWindow, compactionFails, guardrailVerdict }) {
      const id = `loop-${randomUUID()}`;
      const script: ConversationScript = {
        tools,
        steps: [...model],
        modelCalls: [],
        compactions: [],
        contextWindow,
        compactionFails,
        guardrailVerdict,
        guardrailChecks: [],
        log: new ExecutionLog(),
      };
      scripts.set(id, script);
      const handle = await client.workflow.start<ConversationWorkflow>('conversationWorkflow', {
        workflowId: id,
        taskQueue,
        args: [{ ...DEFAULT_OPTIONS, ...options }],
        workflowTaskTimeout: CONVERSATION_WORKFLOW_TASK_TIMEOUT,
      });
      const status = () => handle.query(statusQuery);
      const messages = async () => (await handle.query(transcriptQuery, 0)).messages as Message[];
      return {
        handle,
        log: script.log,
        modelCalls: script.modelCalls,
        compactions: script.compactions,
        guardrailChecks: script.guardrailChecks,
        prompt: (text) => handle.executeUpdate(promptUpdate, { args: [text] }),
        cancel: () => handle.executeUpdate(cancelUpdate),
        decide: (approvalId, approve, reason) =>
          handle.executeUpdate(decideToolCallUpdate, {
            args: [{ approvalId, approve, ...(reason ? { reason } : {}) }],
          }),
        status,
        async approvalsWaiting(count) {
          for (;;) {
            const { pendingApprovals } = await status();
            if (pendingApprovals.length >= count) return pendingApprovals;
            await new Promise((resolve) => setTimeout(resolve, 50));
          }
        },
        messages,
        toolResults: async () =>
          (await messages()).filter((m): m is ToolResultMessage => m.role === 'toolResult'),
        async eventsThroughTurn(turn) {
          const events: ConversationEventItem[] = [];
          const stop = new AbortController();
          for await (const event of followEvents(handle, { signal: stop.signal })) {
            events.push(event);
            if (event.type === 'turnEnd' && event.turn === turn) stop.abort();
          }
          return events;
        },
      };
    },
    async close() {
      worker.shutdown();
      await running;
      await workerConnection.close();
      await connection.close();
    },
  };
}

/** The scripted model: reads its context as the real one does (a query), replies, and PREPAREs the calls. */
async function scriptedModelCall(
  client: Client,
  script: ConversationScript,
  input: CallModelInput,
): Promise<CallModelOutput> {
  const context = Context.current();
  const page = await client.workflow.getHandle(input.conversationId).query(modelContextQuery, 0);
  const call: ModelCall = {
    turn: input.turn,
    attempt: context.info.attempt,
    seen: page.messages.slice(0, input.messageCount),
    compaction: input.compaction,
    signal: context.cancellationSignal,
  };
  script.modelCalls.push(call);
  const beat = setInterval(() => context.heartbeat(), HEARTBEAT_MS);
  let step = script.steps.shift();
  try {
    while (typeof step === 'function') step = await step(call);
  } finally {
    clearInterval(beat);
  }
  if (!step) throw ApplicationFailure.nonRetryable('The scripted model has no reply left');
  if ('fail' in step) {
    throw ApplicationFailure.create({ message: step.fail, nonRetryable: !step.retryable });
  }
  const base = { role: 'assistant' as const, model: 'scripted-double', usage: null, timestamp: Date.now() };
  const window = script.contextWindow === undefined ? {} : { contextWindow: script.contextWindow };
  if ('reply' in step) {
    return { ...base, content: step.reply, toolCalls: [], stopReason: step.stopReason ?? 'stop', ...window };
  }
  const toolCalls = step.calls.map(({ id, name, args = {} }) => ({
    type: 'function' as const,
    id,
    name,
    arguments: args,
  }));
  return {
    ...base,
    content: step.text ?? '',
    toolCalls,
    stopReason: 'toolCalls',
    prepared: toolCalls.map((toolCall) => prepare(script, toolCall)),
    ...window,
  };
}

/** PREPARE as the worker does it, for the doubles: a tool nobody registered is answered at once. */
function prepare(script: ConversationScript, call: { id: string; name: string; arguments: ToolArguments }) {
  const tool = script.tools[call.name];
  if (!tool) {
    const known = Object.keys(script.tools).join(', ') || '(none)';
    return {
      kind: 'immediate',
      message: toolErrorMessage(
        call.id,
        call.name,
        `Tool "${call.name}" not found. Available tools: ${known}`,
      ),
    } satisfies PreparedToolCall;
  }
  return {
    kind: 'ready',
    toolCallId: call.id,
    toolName: call.name,
    args: call.arguments,
    parallel: tool.parallel ?? true,
    policy: resolveToolPolicy({
      ...DOUBLE_TOOL_POLICY,
      ...tool.policy,
      retry: { ...DOUBLE_TOOL_POLICY.retry, ...tool.policy?.retry },
    }),
    summary: `${call.name}(${JSON.stringify(call.arguments)})`,
    ...(tool.approval ? { approval: { reason: tool.approval } } : {}),
  } satisfies PreparedToolCall;
}

async function scriptedToolCall(
  script: ConversationScript,
  input: ExecuteToolInput,
): Promise<ExecuteToolOutput> {
  const context = Context.current();
  const tool = script.tools[input.toolName];
  if (!tool)
    throw ApplicationFailure.nonRetryable(`executeTool ran "${input.toolName}", which PREPARE refused`);
  const { toolCallId } = input;
  script.log.push(`start:${toolCallId}`);
  const beat = setInterval(() => context.heartbeat(), HEARTBEAT_MS);
  let outcome: ToolOutcome;
  try {
    outcome =
      (await tool.run?.({
        toolCallId,
        args: input.args,
        attempt: context.info.attempt,
        signal: context.cancellationSignal,
        log: script.log,
      })) ?? `${toolCallId} done`;
  } catch (error) {
    script.log.push(`${context.cancellationSignal.aborted ? 'cancelled' : 'threw'}:${toolCallId}`);
    throw error;
  } finally {
    clearInterval(beat);
  }
  script.log.push(`end:${toolCallId}`);
  const {
    text,
    isError = false,
    terminate = false,
  } = typeof outcome === 'string' ? { text: outcome } : outcome;
  return {
    message: toolResultMessage(
      toolCallId,
      input.toolName,
      { content: [textContent(text)], details: {} },
      isError,
    ),
    terminate,
  };
}

/** Resolves when `signal` aborts: a double that runs until the workflow cancels it. */
export function untilCancelled(signal: AbortSignal): Promise<never> {
  return new Promise((_resolve, reject) => {
    const stop = () => reject(new Error('cancelled by the workflow'));
    if (signal.aborted) stop();
    else signal.addEventListener('abort', stop, { once: true });
  });
}

/** The text of a tool result. */
export function textOf(result: ToolResultMessage | undefined): string {
  return result?.content.map((block) => block.text).join('\n') ?? '(no result)';
}

/** A promise a test resolves by hand: a double waits on it until the test has done its part. */
export function gate(): { opened: Promise<void>; open(): void } {
  let open = (): void => {};
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { opened, open };
}
