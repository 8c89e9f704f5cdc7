/**
 * `yiem-agent`: what clients and tool files use. It loads no worker code (native bridge, sandbox,
 * validator, MCP client); the worker side is `yiem-agent/worker`.
 */
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
export { MCP_NAME_SEPARATOR, mcpToolName } from './mcp/tools.ts';
export type { ModelSettings } from './model/settings.ts';
export type { AgentActivities } from './protocol.ts';
export {
  CONVERSATION_STATUSES,
  type ConversationSearchStatus,
  YIEM_AGENT,
  YIEM_STATUS,
  YIEM_TURNS,
} from './searchAttributes.ts';
export { FileStorageDriver } from './storage/fileDriver.ts';
export {
  DEFAULT_PAYLOAD_THRESHOLD_BYTES,
  type PayloadStorageOptions,
  payloadStorage,
  payloadStorageFromEnv,
} from './storage/payloadStorage.ts';
export { DEFAULT_TASK_QUEUE } from './taskQueue.ts';
export { resultText, ToolError, textContent, textResult } from './toolResult.ts';
export { DEFAULT_MAX_TOOL_RESULT_BYTES } from './toolResultLimit.ts';
export { TRACING_PACKAGES, type TracingOptions, tracingPlugins } from './tracing.ts';
export type { StoredContent, TranscriptEntry, TranscriptPage } from './transcript.ts';
export type { TranscriptRange } from './transcriptReader.ts';
export type * from './types.ts';
