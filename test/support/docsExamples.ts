import type { ScriptedReply } from '../../src/testing/index.ts';

/**
 * The ```ts blocks of README.md and docs/ that use a real model, and how test/docs/examples.test.ts
 * runs each against the test server with the scripted model instead: what the model answers, the
 * few words a reader changes for their own setup (a server's address, a model's URL), and what must
 * exist before (a worker on the block's queue, a conversation it opens by id). Every block a reader
 * would run is here, in `SELF_SCRIPTED` (it brings its own scripted model), or in `NOT_RUN` with why;
 * the test fails on a block that is in none of them, so a new block gets a script or a reason.
 */

/** A block run against the scripted model. */
export interface ScriptedExample {
  page: string;
  /** A line of the block that tells it from the page's other blocks. */
  line: string;
  /** What the model answers, in order (`OPENAI_BASE_URL` of the block, or the prepared worker's). */
  replies: ScriptedReply[];
  /**
   * A worker of the test's while the block runs, the block being its client: on the queue the block
   * names, or else on a queue of its own that the block reads from `YIEM_TASK_QUEUE`.
   */
  worker?: { taskQueue?: string };
  /** A conversation the block opens by id, made first on `worker` with this many finished turns. */
  conversation?: { id: string; turns: number };
  /**
   * The numbers of model calls the block may make, when it is not one per reply: messages that
   * reach a conversation before its turn's first model call join that turn.
   */
  modelCalls?: number[];
  /** Schedules the block leaves behind on purpose, deleted after it. */
  schedules?: string[];
}

/** What a model call the reader's model would make answers here: a short text. */
const text = (reply: string): ScriptedReply => ({ kind: 'text', text: reply });

export const SCRIPTED: ScriptedExample[] = [
  {
    page: 'docs/conversations.md',
    line: "const result = await conversation.send('What is the weather in Oslo?');",
    replies: [text('Oslo: 4 °C, rain.'), text('Bergen: 6 °C, rain.'), text('Tromsø: -3 °C, snow.')],
    // The posted and the submitted message join one turn when both arrive before its model call.
    modelCalls: [2, 3],
  },
  {
    page: 'docs/control.md',
    line: "const taskQueue = 'budgeted-agent';",
    replies: [
      // The reply that passes the turn's cost limit (0.05 at gpt-4o-mini's prices: 0.0513) asks for a
      // tool, so the turn stops at the safe point before the batch.
      {
        kind: 'toolCalls',
        toolCalls: [{ name: 'teaRegistry', arguments: { region: 'Yunnan' } }],
        usage: { promptTokens: 2_000, completionTokens: 85_000 },
      },
      text('Pu-erh, Dianhong and Yunnan green: earthy, malty, fresh.'),
    ],
  },
  {
    page: 'docs/control.md',
    line: "await conversation.pause({ prompts: 'refuse' });",
    replies: [],
    worker: {},
    conversation: { id: 'conversation-1234', turns: 1 },
  },
  {
    page: 'docs/models.md',
    line: "connection: { taskQueue: 'routed-agent' },",
    replies: [text('The contract binds both parties for a year.'), text('You are welcome.')],
  },
  {
    page: 'docs/models.md',
    line: 'modelPolicy: { localActivity: true },',
    replies: [],
    worker: { taskQueue: 'weather-agent' },
  },
  {
    page: 'docs/streaming.md',
    line: 'for await (const event of conversation.events({ fromOffset: 0 })) {',
    replies: [],
    worker: {},
    conversation: { id: 'conversation-123', turns: 1 },
  },
  {
    page: 'docs/operations.md',
    line: "id: 'standup',",
    replies: [],
    worker: {},
    schedules: ['standup'],
  },
  {
    page: 'docs/operations.md',
    line: 'const fork = await conversation.fork(',
    replies: [text('Pareil, mais en français.'), text('Et maintenant, la suite.')],
    worker: {},
    conversation: { id: 'conversation-123', turns: 3 },
  },
  {
    page: 'docs/operations.md',
    line: 'const rewound = await conversation.rewind({ toTurn: 2 });',
    replies: [text('Trying that again.')],
    worker: {},
    conversation: { id: 'conversation-123', turns: 3 },
  },
  {
    page: 'docs/sub-agents.md',
    line: "console.log(await conversation.send('Research tea and coffee, in parallel.'));",
    replies: [
      {
        kind: 'toolCalls',
        toolCalls: [
          { name: 'researcher', arguments: { task: 'Research tea' } },
          { name: 'researcher', arguments: { task: 'Research coffee' } },
        ],
      },
      text('Findings: one of the two drinks.'),
      text('Findings: the other drink.'),
      text('Tea and coffee both came from a sub-agent each.'),
    ],
  },
  {
    page: 'docs/self-writing-tools.md',
    line: "toolsDir: './written-tools',",
    replies: [],
  },
];

/**
 * The words of a block a reader changes for their own setup, and what the test runs instead: the
 * Temporal server's address, and the model endpoints (all the scripted model).
 */
export function forThisRun(code: string, address: string, baseURL: string): string {
  return code
    .replaceAll("'127.0.0.1:7233'", `'${address}'`)
    .replaceAll(
      /'https?:\/\/(localhost:11434|api\.openai\.com|other-provider\.example)\/v1'/g,
      `'${baseURL}'`,
    );
}

/** Blocks that bring their own scripted model (`yiem-agent/testing`) and name their file: run as they are. */
export const SELF_SCRIPTED = "from 'yiem-agent/testing'";

/** The blocks not run here, each with why (by page and a line of the block). A block marked
 * ```ts fragment (a piece of a program) is never run, and needs no entry. */
export const NOT_RUN: { page: string; line: string; why: string }[] = [
  { page: 'README.md', line: '// agent.ts', why: 'test/package runs it against the packed package' },
  { page: 'README.md', line: '// writer.ts', why: 'test/package runs it against the packed package' },
  { page: 'README.md', line: '// tools/getStock.ts', why: 'a tool file, loaded by the worker of agent.ts' },
  {
    page: 'docs/tools.md',
    line: '// tools/getStock.ts',
    why: "a tool file: the README's, which test/package loads",
  },
  {
    page: 'docs/tools.md',
    line: 'export const convert: AgentTool = {',
    why: 'a tool file, not a program',
  },
  {
    page: 'docs/tools.md',
    line: 'export const readFile: AgentTool = {',
    why: 'a tool file, not a program; test/integration/batchedTools.test.ts runs batched tools',
  },
  {
    page: 'docs/tools.md',
    line: '// tools/sendInvoice.ts',
    why: 'a tool file; test/system/typeScriptToolCrash.test.ts loads it from this page and kills its worker',
  },
  {
    page: 'docs/callbacks-and-nexus.md',
    line: "import { createInterface } from 'node:readline/promises';",
    why: 'asks a person at the terminal (readline) for each call; test/integration/callbackTools.test.ts serves the same',
  },
  {
    page: 'docs/callbacks-and-nexus.md',
    line: "// orders-worker.ts, in the orders team's namespace",
    why: 'needs a second namespace and a Nexus endpoint; test/integration/nexusTools.test.ts sets them up',
  },
  {
    page: 'docs/callbacks-and-nexus.md',
    line: "// the agent's worker and client, in the agent's namespace",
    why: 'needs a second namespace and a Nexus endpoint; test/integration/nexusTools.test.ts sets them up',
  },
  {
    page: 'docs/chat-endpoint.md',
    line: "// server.ts: Node's http",
    why: 'serves until stopped, for a browser page; test/integration/chatEndpoint.test.ts drives it with `ai`',
  },
  {
    page: 'docs/chat-endpoint.md',
    line: '// A fetch-style runtime',
    why: 'a handler for a web framework; test/integration/chatEndpoint.test.ts calls it',
  },
  { page: 'docs/chat-endpoint.md', line: '// The page', why: 'a React component, for a browser' },
  {
    page: 'docs/console.md',
    line: 'const running = await serveConsole({',
    why: 'listens on the fixed port 8234 until stopped; test/integration/consoleCli.test.ts serves the console (`yiem console`)',
  },
  {
    page: 'docs/control.md',
    line: "const first = conversation.send('Plan a week in Norway.');",
    why: 'which turn each message joins depends on when the tools finish; test/integration/steering.test.ts checks each delivery',
  },
  {
    page: 'docs/conversations.md',
    line: "import { Worker } from '@temporalio/worker';",
    why: "a worker made with Temporal's own API and never run; test/integration/plugin.test.ts runs AgentPlugin",
  },
  {
    page: 'docs/conversations.md',
    line: "import { bundleWorkflowCode } from '@temporalio/worker';",
    why: 'start-up code of a worker it never runs; every test worker is built from such a bundle',
  },
  {
    page: 'docs/models.md',
    line: "const metrics = await (await fetch('http://127.0.0.1:9091/metrics')).text();",
    why: "reads a server's metrics endpoint, which the test server does not open; test/integration/contextCache.test.ts counts the queries",
  },
  {
    page: 'docs/tracing.md',
    line: "import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';",
    why: 'exports to an OpenTelemetry collector; test/integration/genaiTraces.test.ts runs one',
  },
];
