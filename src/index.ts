export { type AgentActivityDependencies, createAgentActivities } from '../activities/index.ts';
export { currentToolCall } from '../activities/toolCallContext.ts';
export { conversationWorkflow } from '../workflows/conversation.ts';
export {
  callbackResultUpdate,
  cancelUpdate,
  decideToolCallUpdate,
  endSignal,
  modelContextQuery,
  postSignal,
  promptUpdate,
  statusQuery,
  transcriptQuery,
} from '../workflows/definitions.ts';
export {
  agentTool,
  type CallbackToolSpec,
  callbackTool,
  DEFAULT_CALLBACK_TIMEOUT,
  handoffTool,
  handoffToolName,
} from './agents.ts';
export type { ServeCallbacksOptions } from './callbackClient.ts';
export {
  AgentClient,
  type AgentClientOptions,
  Conversation,
  type ConversationLimits,
  type ConversationListing,
  type StartConversationOptions,
} from './client.ts';
export {
  type AesGcmCodecOptions,
  AesGcmPayloadCodec,
  type CodecKey,
  type CodecServerOptions,
  codecFromEnv,
  codecKeysFromEnv,
  dataConverterFromEnv,
  encryptedDataConverter,
  parseCodecKeys,
  type RunningCodecServer,
  startCodecServer,
  UNENCRYPTED_REFUSED,
} from './codec/index.ts';
export {
  DEFAULT_TEMPORAL_ADDRESS,
  DEFAULT_TEMPORAL_NAMESPACE,
  type ResolvedTemporalConnection,
  resolveTemporalConnection,
  type TemporalConnectionSettings,
} from './connection.ts';
export type { FollowEventsOptions } from './conversationEvents.ts';
export { loadMcpConfig, MCP_NAME_SEPARATOR, mcpToolName } from './mcp/index.ts';
export type { ModelSettings } from './model/settings.ts';
export { AGENT_WORKFLOWS_PATH, AgentPlugin, type AgentPluginOptions } from './plugin.ts';
export type { AgentActivities } from './protocol.ts';
export { listToolFiles, loadTools, ToolRegistry } from './registry.ts';
export {
  CONVERSATION_STATUSES,
  type ConversationSearchStatus,
  YIEM_AGENT,
  YIEM_STATUS,
  YIEM_TURNS,
} from './searchAttributes.ts';
export { enableSelfWriting } from './selfWriting/writeTool.ts';
export { FileStorageDriver } from './storage/fileDriver.ts';
export {
  DEFAULT_PAYLOAD_THRESHOLD_BYTES,
  type PayloadStorageOptions,
  payloadStorage,
  payloadStorageFromEnv,
} from './storage/payloadStorage.ts';
export { resultText, ToolError, textContent, textResult } from './toolResult.ts';
export { DEFAULT_MAX_TOOL_RESULT_BYTES } from './toolResultLimit.ts';
export { type TracingOptions, tracingPlugins } from './tracing.ts';
export type { StoredContent, TranscriptEntry, TranscriptPage } from './transcript.ts';
export type { TranscriptRange } from './transcriptReader.ts';
export type * from './types.ts';
export { ArgumentValidator } from './validation.ts';
export {
  type AgentWorker,
  type AgentWorkerOptions,
  BUILTIN_TOOLS_DIR,
  createAgentWorker,
  DEFAULT_TASK_QUEUE,
} from './worker.ts';
