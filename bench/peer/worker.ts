/**
 * The peer's worker (in a process of its own) and clients: `OpenAIAgentsPlugin` with a Chat
 * Completions model pointed at the benchmarks' scripted model server, as `@temporalio/openai-agents`'s
 * README sets it up, in both of its model-call configurations.
 */
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { OpenAIProvider } from '@openai/agents-openai';
import { Client, Connection, type WorkflowHandle } from '@temporalio/client';
import { OpenAIAgentsPlugin } from '@temporalio/openai-agents';
import OpenAI from 'openai';
import { forkWorkerProcess, type WorkerHandle } from '../workerHandle.ts';
import { peerChatWorkflow, peerEndSignal, peerPromptUpdate } from './workflows.ts';

export interface PeerChat {
  handle: WorkflowHandle<typeof peerChatWorkflow>;
  /** Sends one user message and waits for the turn's final output. */
  send(text: string): Promise<string>;
  end(): Promise<void>;
}

/**
 * How the peer schedules its model call: a regular activity (the plugin's default) or a local one
 * (`useLocalActivity: true` in the plugin's `modelParams`, as its README's feature table says).
 */
export type PeerModelCall = 'activity' | 'localActivity';

export interface Peer {
  taskQueue: string;
  /** The peer's worker process: its pid for CPU readings, its memory. */
  worker: WorkerHandle;
  startChat(options?: { parallelToolCalls?: boolean; modelCall?: PeerModelCall }): Promise<PeerChat>;
  close(): Promise<void>;
}

export function peerPlugin(modelBaseURL: string, modelCall: PeerModelCall): OpenAIAgentsPlugin {
  const openAIClient = new OpenAI({ baseURL: modelBaseURL, apiKey: 'bench', maxRetries: 0 });
  return new OpenAIAgentsPlugin({
    modelProvider: new OpenAIProvider({ openAIClient, useResponses: false }),
    modelParams: { startToCloseTimeout: '30s', useLocalActivity: modelCall === 'localActivity' },
  });
}

/** The one JSON argument of the peer's worker process (peer/workerProcess.ts). */
export interface PeerWorkerConfig {
  address: string;
  taskQueue: string;
  modelBaseURL: string;
}

const PEER_WORKER_SCRIPT = fileURLToPath(new URL('./workerProcess.ts', import.meta.url));

export async function startPeer(options: { address: string; modelBaseURL: string }): Promise<Peer> {
  // The agents SDK exports a trace of every run to OpenAI's platform (printing each span, with no
  // key): ours keeps no traces in this benchmark either. The worker process inherits the setting.
  process.env.OPENAI_AGENTS_DISABLE_TRACING ??= '1';
  const taskQueue = `peer-${randomUUID()}`;
  const config: PeerWorkerConfig = { ...options, taskQueue };
  const worker = await forkWorkerProcess(PEER_WORKER_SCRIPT, config);
  const connection = await Connection.connect({ address: options.address });
  const clients: Record<PeerModelCall, Client> = {
    activity: new Client({ connection, plugins: [peerPlugin(options.modelBaseURL, 'activity')] }),
    localActivity: new Client({ connection, plugins: [peerPlugin(options.modelBaseURL, 'localActivity')] }),
  };
  return {
    taskQueue,
    worker,
    async startChat(chat = {}) {
      const handle = await clients[chat.modelCall ?? 'activity'].workflow.start(peerChatWorkflow, {
        taskQueue,
        workflowId: `peer-chat-${randomUUID()}`,
        args: [{ parallelToolCalls: chat.parallelToolCalls ?? true }],
      });
      return {
        handle,
        send: (text) => handle.executeUpdate(peerPromptUpdate, { args: [text] }),
        end: async () => {
          await handle.signal(peerEndSignal);
          await handle.result();
        },
      };
    },
    async close() {
      await worker.stop();
      await connection.close();
    },
  };
}
