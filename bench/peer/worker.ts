/**
 * The peer's worker and clients: `OpenAIAgentsPlugin` with a Chat Completions model pointed at the
 * benchmarks' scripted model server, as `@temporalio/openai-agents`'s README sets it up, in both of
 * its model-call configurations.
 */
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { OpenAIProvider } from '@openai/agents-openai';
import { Client, Connection, type WorkflowHandle } from '@temporalio/client';
import { OpenAIAgentsPlugin } from '@temporalio/openai-agents';
import { NativeConnection, Worker } from '@temporalio/worker';
import OpenAI from 'openai';
import * as activities from './activities.ts';
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
  startChat(options?: { parallelToolCalls?: boolean; modelCall?: PeerModelCall }): Promise<PeerChat>;
  close(): Promise<void>;
}

function plugin(modelBaseURL: string, modelCall: PeerModelCall): OpenAIAgentsPlugin {
  const openAIClient = new OpenAI({ baseURL: modelBaseURL, apiKey: 'bench', maxRetries: 0 });
  return new OpenAIAgentsPlugin({
    modelProvider: new OpenAIProvider({ openAIClient, useResponses: false }),
    modelParams: { startToCloseTimeout: '30s', useLocalActivity: modelCall === 'localActivity' },
  });
}

export async function startPeer(options: { address: string; modelBaseURL: string }): Promise<Peer> {
  // The agents SDK exports a trace of every run to OpenAI's platform (printing each span here, with
  // no key): ours keeps no traces in this benchmark either.
  process.env.OPENAI_AGENTS_DISABLE_TRACING ??= '1';
  const taskQueue = `peer-${randomUUID()}`;
  const workerConnection = await NativeConnection.connect({ address: options.address });
  const worker = await Worker.create({
    connection: workerConnection,
    taskQueue,
    workflowsPath: fileURLToPath(new URL('./workflows.ts', import.meta.url)),
    activities,
    // The workflow takes its model params from the header of the client that started it, so one
    // worker serves both configurations; the worker's own only registers the model activity.
    plugins: [plugin(options.modelBaseURL, 'activity')],
    // The agents SDK's ESM build has dynamic imports, which webpack would split into chunks that a
    // workflow sandbox cannot load ("Automatic publicPath", "self is not defined"): bundle them eagerly.
    bundlerOptions: {
      webpackConfigHook: (config) => ({
        ...config,
        module: {
          ...config.module,
          parser: { ...config.module?.parser, javascript: { dynamicImportMode: 'eager' } },
        },
      }),
    },
  });
  const running = worker.run();
  const connection = await Connection.connect({ address: options.address });
  const clients: Record<PeerModelCall, Client> = {
    activity: new Client({ connection, plugins: [plugin(options.modelBaseURL, 'activity')] }),
    localActivity: new Client({ connection, plugins: [plugin(options.modelBaseURL, 'localActivity')] }),
  };
  return {
    taskQueue,
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
      worker.shutdown();
      await running;
      await connection.close();
      await workerConnection.close();
    },
  };
}
