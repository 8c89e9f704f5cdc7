import path from 'node:path';
import { AgentClient } from '../client/client.ts';
import { endSignal } from '../contract/definitions.ts';
import type { ConversationSearchStatus } from '../contract/searchAttributes.ts';
import { describeThrown } from '../contract/thrown.ts';
import type { ToolExecutionMode } from '../contract/types/conversation.ts';
import type { McpServerConfig } from '../contract/types/mcp.ts';
import type { DeliveryOptions, MessageDelivery } from '../contract/types/messages.ts';
import type { SelfWritingOptions } from '../contract/types/sandbox.ts';
import {
  type DevServer,
  defaultDataDir,
  startDevServer,
  waitForServer,
} from '../infrastructure/server/index.ts';
import { FileStorageDriver } from '../infrastructure/storage/fileDriver.ts';
import { payloadStorageFromEnv } from '../infrastructure/storage/payloadStorage.ts';
import { S3StorageDriver } from '../infrastructure/storage/s3Driver.ts';
import { sweepPayloads } from '../infrastructure/storage/sweep.ts';
import { loadMcpConfig } from '../worker/mcp/config.ts';
import type { WorkerConnectionOptions } from '../worker/options.ts';
import { openConversation, runChat } from './chat.ts';
import {
  type ConnectionConfig,
  type ConnectionFlags,
  cliDecider,
  connectionConfig,
  conversationUiUrl,
  defaultUiUrl,
} from './config.ts';
import { consoleLink, DEFAULT_CONSOLE_PORT, openConsole } from './console.ts';
import { DEMO_MODEL_BANNER, installOfflineDemoWeather, startDemoModel, wantsDemoModel } from './demoModel.ts';
import { announceDevStack, DEV_TASK_QUEUE, runningDevStack } from './devStack.ts';
import { cliEnvironment } from './environment.ts';
import {
  formatCompaction,
  formatListing,
  formatServerRecord,
  formatStatus,
  formatToolEvent,
  formatTranscript,
  formatTurnResult,
  formatTurnSpend,
} from './format.ts';
import { type SelfWritingFlags, selfWritingConfig } from './selfWritingFlags.ts';

export interface ServerFlags {
  dataDir?: string;
  port: string;
  uiPort?: string;
  headless?: boolean;
}

export interface WorkerFlags extends ConnectionFlags, SelfWritingFlags {
  toolsDir?: string[];
  /** An MCP config file (`--mcp`). */
  mcp?: string;
  /** A models file (`--models`): several models, their fallbacks and rate limits. */
  models?: string;
  builtinTools: boolean;
  workflows: boolean;
  /** Worker Versioning: `--deployment-name` and `--build-id` (else env YIEM_DEPLOYMENT_NAME, YIEM_BUILD_ID). */
  deploymentName?: string;
  buildId?: string;
}

export interface ChatFlags extends ConnectionFlags {
  id?: string;
  system: string;
  mode: ToolExecutionMode;
}

export const DEFAULT_SYSTEM_PROMPT = 'You are a helpful assistant. Use the tools when they help.';

/** `yiem server`: the embedded Temporal dev server, until Ctrl-C. */
export async function serverCommand(flags: ServerFlags): Promise<void> {
  const server = await startServer(flags);
  // Listening before saying so: a Ctrl-C sent the moment the line shows must stop the server too,
  // not end this process by Node's default and leave the server running.
  const interrupted = untilInterrupted();
  const ui = server.uiUrl ? `Web UI ${server.uiUrl}` : 'no Web UI';
  console.log(`Temporal dev server at ${server.address} (${ui}, data in ${server.dbFile})`);
  console.log('Press Ctrl-C to stop.');
  await interrupted;
  await server.stop();
}

/** `yiem worker`: runs conversations and their tools, until Ctrl-C. */
export async function workerCommand(flags: WorkerFlags): Promise<void> {
  const config = connectionConfig(flags);
  await probeServer(config);
  const worker = await loadWorker();
  const { createAgentWorker, loadModelsConfig } = worker;
  const logFile = worker.workerLogFile(config.taskQueue, cliEnvironment());
  worker.installWorkerLog(config.taskQueue, cliEnvironment(), logFile);
  // A worker with no model named would call api.openai.com without a key: the demo says what it is.
  const demo = flags.workflows && !flags.models && wantsDemoModel() ? await startDemoModel() : undefined;
  const agent = await createAgentWorker({
    connection: workerConnection(config),
    models: {
      ...(flags.models ? await loadModelsConfig(flags.models) : {}),
      ...(demo ? { model: { baseURL: demo.baseURL, apiKey: 'demo', model: 'yiem-demo' } } : {}),
    },
    tools: {
      builtinTools: flags.builtinTools,
      ...(flags.toolsDir ? { toolsDir: flags.toolsDir } : {}),
      ...(await mcpServersOption(flags.mcp)),
      ...withSelfWriting(flags),
    },
    worker: { workflows: flags.workflows },
    ...deploymentOption(flags),
    hooks: {
      eventSink: (event) => console.log(`[${event.conversationId}] ${formatToolEvent(event).trim()}`),
    },
  });
  const runs = flags.workflows ? 'conversations and tools' : 'tools only';
  const model = flags.workflows ? `, ${agent.model}` : '';
  console.log(
    `Worker on task queue ${agent.taskQueue} (${runs}${model}): ${agent.registry.names().join(', ')}`,
  );
  if (demo) {
    installOfflineDemoWeather(agent.registry);
    console.log(DEMO_MODEL_BANNER);
  }
  console.log(`Payload store: ${agent.payloadStore}`);
  console.log(`Worker log: ${logFile}`);
  if (agent.deployment) {
    console.log(
      `Worker Deployment ${agent.deployment}: conversations are pinned to their build and move to the current one between turns`,
    );
  }
  const stopping = untilInterrupted().then(() => agent.shutdown());
  await agent.run();
  await stopping;
  await demo?.close();
}

/** `--deployment-name` and `--build-id`, each over its environment variable. */
function deploymentOption(flags: WorkerFlags): { deployment?: { name: string; buildId: string } } {
  const env = cliEnvironment();
  const name = flags.deploymentName ?? env.YIEM_DEPLOYMENT_NAME;
  const buildId = flags.buildId ?? env.YIEM_BUILD_ID;
  // Only one given: the worker names what is missing.
  return name || buildId ? { deployment: { name: name ?? '', buildId: buildId ?? '' } } : {};
}

/** The worker's connection: the CLI's resolved address, namespace, task queue and profile. */
function workerConnection(config: ConnectionConfig): WorkerConnectionOptions {
  const { address, namespace, taskQueue, profile } = config;
  return { address, namespace, taskQueue, ...(profile ? { profile } : {}) };
}

/** `yiem upgrade`: after a deploy, moves idle conversations onto the deployment's current version. */
export async function upgradeCommand(flags: ConnectionFlags): Promise<void> {
  const client = await connectedClient(connectionConfig(flags));
  try {
    const woken = await client.upgradeConversations();
    console.log(
      `Woke ${woken} running conversation(s) on task queue ${client.taskQueue}: each moves to its deployment's current version once its running turn, if any, is done.`,
    );
  } finally {
    await client.close();
  }
}

/** `yiem dev`: server, worker and chat in one process; the way to try yiem on one machine. */
export async function devCommand(
  flags: ChatFlags & ServerFlags & { toolsDir?: string[]; mcp?: string; consolePort?: string },
): Promise<void> {
  const config = { ...connectionConfig(flags), taskQueue: givenTaskQueue(flags) ?? DEV_TASK_QUEUE };
  const mcpServers = await mcpServersOption(flags.mcp);
  const reused = await waitForServer(config.address, 500).then(
    () => true,
    () => false,
  );
  const server: DevServer | undefined = reused ? undefined : await startServer(flags);
  const address = server?.address ?? config.address;
  if (reused) console.log(`Using the Temporal server already running at ${address} (no server started).`);
  const demo = wantsDemoModel() ? await startDemoModel() : undefined;
  if (demo) console.log(DEMO_MODEL_BANNER);
  const dataDir = flags.dataDir ?? defaultDataDir();
  const worker = await loadWorker();
  const { createAgentWorker } = worker;
  worker.installWorkerLog(config.taskQueue, cliEnvironment(), path.join(dataDir, 'worker.log'));
  const agent = await createAgentWorker({
    connection: { address, namespace: config.namespace, taskQueue: config.taskQueue },
    models: demo ? { model: { baseURL: demo.baseURL, apiKey: 'demo', model: 'yiem-demo' } } : {},
    tools: { ...(flags.toolsDir ? { toolsDir: flags.toolsDir } : {}), ...mcpServers },
  });
  if (demo) installOfflineDemoWeather(agent.registry);
  const running = agent.run();
  console.log(`Worker on task queue ${agent.taskQueue}, ${agent.model}`);
  console.log(`Payload store: ${agent.payloadStore}`);
  const client = new AgentClient({ address, namespace: config.namespace, taskQueue: config.taskQueue });
  const { namespace, taskQueue } = config;
  const withdraw = await announceDevStack(dataDir, { address, namespace, taskQueue, pid: process.pid });
  const uiUrl = server?.uiUrl ?? defaultUiUrl(address);
  const consoleServer = await openConsole({
    client,
    host: '127.0.0.1',
    port: flags.consolePort === undefined ? DEFAULT_CONSOLE_PORT : Number(flags.consolePort),
    webUiUrl: uiUrl,
    systemPrompt: flags.system,
    toolExecution: flags.mode,
  }).then(
    (running) => {
      console.log(`Console ${consoleLink(running, undefined)}`);
      return running;
    },
    // The chat needs no console: run from sources that were never built, dev still chats.
    (error: unknown) => console.log(`No console: ${describeThrown(error)}`),
  );
  try {
    await runChat({
      client,
      address,
      namespace: config.namespace,
      uiUrl,
      systemPrompt: flags.system,
      toolExecution: flags.mode,
      ...(flags.id ? { id: flags.id } : {}),
    });
  } finally {
    await consoleServer?.close();
    await withdraw();
    await agent.shutdown();
    await running;
    await demo?.close();
    await server?.stop();
    // The client stays open: a call of the chat's event follower can still be in flight (the stream
    // library's poll ends on its own), and once the server is gone its retry, run on a closed client,
    // throws from a timer ("Channel has been shut down"). The CLI exits when the command is done.
  }
}

/** The worker's `mcpServers` option from `--mcp FILE`, read before anything starts so a bad file fails fast. */
async function mcpServersOption(
  file: string | undefined,
): Promise<{ mcpServers?: Record<string, McpServerConfig> }> {
  return file ? { mcpServers: await loadMcpConfig(file) } : {};
}

/** `yiem chat`: a REPL against a running worker. */
export async function chatCommand(flags: ChatFlags): Promise<void> {
  const config = await followingDevStack(connectionConfig(flags), flags);
  const client = await connectedClient(config);
  try {
    await runChat({
      client,
      address: config.address,
      namespace: config.namespace,
      uiUrl: defaultUiUrl(config.address),
      systemPrompt: flags.system,
      toolExecution: flags.mode,
      ...(flags.id ? { id: flags.id } : {}),
    });
  } finally {
    await client.close();
  }
}

/**
 * `yiem send`: one message, one reply; exits non-zero when the turn did not complete. With
 * `--detach`, returns once the message is accepted, printing the conversation and turn to collect.
 * `--delivery` says how it joins a turn that runs now (`MessageDelivery`), `--key` names it.
 */
export async function sendCommand(
  text: string,
  flags: ChatFlags & { detach?: boolean; delivery?: MessageDelivery; key?: string },
): Promise<void> {
  const delivery: DeliveryOptions = {
    ...(flags.delivery ? { delivery: flags.delivery } : {}),
    ...(flags.key ? { key: flags.key } : {}),
  };
  const config = await followingDevStack(connectionConfig(flags), flags);
  const client = await connectedClient(config);
  try {
    const { conversation, resumed } = await openConversation({
      client,
      ...(flags.id ? { id: flags.id } : {}),
      systemPrompt: flags.system,
      toolExecution: flags.mode,
    });
    if (!resumed) {
      console.error(
        flags.id
          ? `Started conversation ${conversation.id}`
          : `Started conversation ${conversation.id} (it ends after this reply; give --id to keep a conversation going)`,
      );
    }
    if (flags.detach) {
      const turn = await conversation.sendDetached(text, delivery);
      // A conversation of one message ends once its turn is done; collecting still reads its result.
      if (!flags.id) await conversation.handle.signal(endSignal);
      console.log(`conversation ${turn.conversationId} turn ${turn.turnId}`);
      console.error(
        `Sent. Later: yiem turns watch ${turn.conversationId} ${turn.turnId}   |   yiem turns collect ${turn.conversationId} ${turn.turnId}`,
      );
      return;
    }
    const result = await conversation.send(text, delivery);
    console.log(formatTurnResult(result));
    // On stderr: standard output keeps the reply alone, for scripts.
    const spent = formatTurnSpend(result);
    if (spent) console.error(spent);
    if (result.status !== 'completed' && result.status !== 'terminated') process.exitCode = 1;
    // A conversation of one message would otherwise wait, idle, for a message that never comes.
    if (!flags.id) await conversation.end();
  } finally {
    await client.close();
  }
}

/** The task queue named by `--task-queue` or `YIEM_TASK_QUEUE`, if any. */
function givenTaskQueue(
  flags: ConnectionFlags,
  env: NodeJS.ProcessEnv = cliEnvironment(),
): string | undefined {
  return flags.taskQueue ?? (env.YIEM_TASK_QUEUE || undefined);
}

/** With no task queue given, chat and send go to the `yiem dev` running here, on its queue. */
async function followingDevStack(
  config: ConnectionConfig,
  flags: ConnectionFlags,
): Promise<ConnectionConfig> {
  if (givenTaskQueue(flags)) return config;
  const stack = await runningDevStack(defaultDataDir(), config.address);
  if (!stack || stack.namespace !== config.namespace) return config;
  console.error(`Using task queue ${stack.taskQueue} of the yiem dev running here (process ${stack.pid}).`);
  return { ...config, taskQueue: stack.taskQueue };
}

/**
 * `yiem console`: the web console of the conversations, until Ctrl-C. The token comes from the
 * environment, so that it shows in no process list.
 */
export async function consoleCommand(
  flags: ChatFlags & { host: string; port: string; webUi?: string },
): Promise<void> {
  const config = await followingDevStack(connectionConfig(flags), flags);
  const client = await connectedClient(config);
  const env = cliEnvironment();
  const token = env.YIEM_CONSOLE_TOKEN || undefined;
  const running = await openConsole({
    client,
    host: flags.host,
    port: Number(flags.port),
    ...(token ? { token } : {}),
    webUiUrl: flags.webUi ?? defaultUiUrl(config.address),
    systemPrompt: flags.system,
    toolExecution: flags.mode,
  });
  const interrupted = untilInterrupted();
  console.log(
    `Console ${consoleLink(running, token)} (task queue ${client.taskQueue}). Press Ctrl-C to stop.`,
  );
  await interrupted;
  await running.close();
  await client.close();
}

/** `yiem history`: a conversation's transcript, readable or as JSON. */
export async function historyCommand(id: string, flags: ConnectionFlags & { json?: boolean }): Promise<void> {
  const config = connectionConfig(flags);
  const client = await connectedClient(config);
  try {
    const { messages, noWorker } = await client.getConversation(id).messagesOrHistory();
    if (noWorker) console.error(`Read from the server's history: ${noWorker}.`);
    console.log(flags.json ? JSON.stringify(messages, null, 2) : formatTranscript(messages));
    console.error(`Web UI: ${conversationUiUrl(defaultUiUrl(config.address), config.namespace, id)}`);
  } finally {
    await client.close();
  }
}

/** `yiem compact`: summarises a conversation's older turns now and prints what was summarised. */
export async function compactCommand(id: string, flags: ConnectionFlags & { json?: boolean }): Promise<void> {
  const client = await connectedClient(connectionConfig(flags));
  try {
    const compaction = await client.getConversation(id).compact();
    console.log(flags.json ? JSON.stringify(compaction, null, 2) : formatCompaction(compaction));
  } finally {
    await client.close();
  }
}

/**
 * `yiem status`: a conversation's state with its pending approvals and callbacks; without an id,
 * every conversation that waits for approval.
 */
export async function statusCommand(id: string | undefined, flags: ConnectionFlags): Promise<void> {
  const client = await connectedClient(connectionConfig(flags));
  try {
    const ids = id
      ? [id]
      : (await client.listConversations({ status: 'awaitingApproval' })).map((row) => row.id);
    if (ids.length === 0) console.log('No conversation waits for approval.');
    // Asked together: each that no worker answers for takes a second before its record is read.
    const reads = await Promise.all(ids.map((each) => client.getConversation(each).statusOrRecord()));
    reads.forEach((read, index) => {
      const each = ids[index] as string;
      console.log('status' in read ? formatStatus(each, read.status) : formatServerRecord(read.record));
    });
  } finally {
    await client.close();
  }
}

/** `yiem cancel`: stops a conversation's running turn; the conversation stays open. */
export async function cancelCommand(id: string, flags: ConnectionFlags): Promise<void> {
  const config = connectionConfig(flags);
  const client = await connectedClient(config);
  try {
    const cancelled = await client.getConversation(id).cancel();
    console.log(cancelled ? `Cancelled the running turn of ${id}` : `${id} had no running turn`);
  } finally {
    await client.close();
  }
}

/** The worker side, loaded only by the commands that run a worker: the others start faster. */
function loadWorker(): Promise<typeof import('../worker/worker.ts')> {
  return import('../worker/worker.ts');
}

export async function connectedClient(config: ConnectionConfig): Promise<AgentClient> {
  await probeServer(config);
  return new AgentClient(config);
}

/** A friendly error for the common mistake; TLS endpoints are left to the SDK's own errors. */
async function probeServer(config: ConnectionConfig): Promise<void> {
  if (config.tls) return;
  await waitForServer(config.address, 5_000).catch(() => {
    throw new Error(unreachable(config.address));
  });
}

function startServer(flags: ServerFlags): Promise<DevServer> {
  const port = Number(flags.port);
  return startDevServer({
    port,
    ...(flags.dataDir ? { dataDir: flags.dataDir } : {}),
    ...(flags.uiPort ? { uiPort: Number(flags.uiPort) } : {}),
    ...(flags.headless ? { headless: true } : {}),
  });
}

function unreachable(address: string): string {
  return `No Temporal server answers at ${address}. Start one with "yiem server" (or "yiem dev"), or set TEMPORAL_ADDRESS.`;
}

function withSelfWriting(flags: SelfWritingFlags): { selfWriting?: SelfWritingOptions } {
  const selfWriting = selfWritingConfig(flags);
  return selfWriting ? { selfWriting } : {};
}

function untilInterrupted(): Promise<void> {
  return new Promise((resolve) => {
    process.once('SIGINT', () => resolve());
    process.once('SIGTERM', () => resolve());
  });
}

/** `yiem approve`: lets a tool call that waits for approval run. */
export async function approveCommand(id: string, approvalId: string, flags: ConnectionFlags): Promise<void> {
  const client = await connectedClient(connectionConfig(flags));
  try {
    await client.getConversation(id).approve(approvalId, { decider: cliDecider('yiem approve') });
    console.log(`Approved ${approvalId}.`);
  } finally {
    await client.close();
  }
}

/** `yiem deny`: refuses a tool call that waits for approval; the model gets the reason. */
export async function denyCommand(
  id: string,
  approvalId: string,
  flags: ConnectionFlags & { reason?: string },
): Promise<void> {
  const client = await connectedClient(connectionConfig(flags));
  try {
    await client.getConversation(id).deny(approvalId, flags.reason, { decider: cliDecider('yiem deny') });
    console.log(`Denied ${approvalId}.`);
  } finally {
    await client.close();
  }
}

/** `yiem list`: conversations, newest first, optionally in one status. */
export async function listCommand(
  flags: ConnectionFlags & { status?: ConversationSearchStatus; limit: string },
): Promise<void> {
  const client = await connectedClient(connectionConfig(flags));
  try {
    const rows = await client.listConversations({
      ...(flags.status ? { status: flags.status } : {}),
      limit: Number(flags.limit),
    });
    console.log(formatListing(rows));
  } finally {
    await client.close();
  }
}

/**
 * `yiem payloads sweep`: deletes the S3 payloads of conversations Temporal no longer has (deleted,
 * or past the namespace's retention) and keeps those of running and retained ones.
 */
export async function sweepPayloadsCommand(
  flags: ConnectionFlags & { dryRun?: boolean; minAge: string },
): Promise<void> {
  if (!/^\d+$/.test(flags.minAge)) throw new Error(`--min-age ${flags.minAge}: expected a number of minutes`);
  const minAgeMinutes = Number(flags.minAge);
  const driver = payloadStorageFromEnv(cliEnvironment())?.drivers[0];
  if (!(driver instanceof S3StorageDriver || driver instanceof FileStorageDriver)) {
    throw new Error(
      'yiem payloads sweep sweeps the payload store, and YIEM_PAYLOAD_STORAGE=off configures none',
    );
  }
  const client = await connectedClient(connectionConfig(flags));
  try {
    const result = await sweepPayloads(driver, client.client, {
      dryRun: flags.dryRun === true,
      minAgeMs: minAgeMinutes * 60_000,
    });
    for (const group of result.deleted) {
      const what = flags.dryRun ? 'would delete' : `deleted ${group.objects} payload(s) of`;
      console.log(`${what} ${group.namespace}/${group.workflowId}`);
    }
    const verb = flags.dryRun ? 'would delete' : 'deleted';
    console.log(
      `${driver.location}: ${verb} the payloads of ${result.deleted.length} workflow(s) Temporal no longer has; kept ${result.kept}.`,
    );
  } finally {
    await client.close();
  }
}
