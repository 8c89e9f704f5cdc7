/**
 * `yiem-agent`: what clients and tool files use. It loads no worker code (native bridge, sandbox,
 * validator); the worker side is `yiem-agent/worker`.
 */
export { currentToolCall } from '../activities/toolCallContext.ts';
export { conversationWorkflow } from '../workflows/conversation.ts';
export {
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
  AgentClient,
  type AgentClientOptions,
  Conversation,
  type ConversationListing,
  type StartConversationOptions,
} from './client.ts';
export {
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
} from './codec/index.ts';
export {
  DEFAULT_TEMPORAL_ADDRESS,
  DEFAULT_TEMPORAL_NAMESPACE,
  type ResolvedTemporalConnection,
  resolveTemporalConnection,
  type TemporalConnectionSettings,
} from './connection.ts';
export type { FollowEventsOptions } from './conversationEvents.ts';
export type { ModelSettings } from './model/settings.ts';
export type { AgentActivities } from './protocol.ts';
export {
  CONVERSATION_STATUSES,
  type ConversationSearchStatus,
  YIEM_AGENT,
  YIEM_STATUS,
  YIEM_TURNS,
} from './searchAttributes.ts';
export { DEFAULT_TASK_QUEUE } from './taskQueue.ts';
export { resultText, ToolError, textContent, textResult } from './toolResult.ts';
export { DEFAULT_MAX_TOOL_RESULT_BYTES } from './toolResultLimit.ts';
export { TRACING_PACKAGES, type TracingOptions, tracingPlugins } from './tracing.ts';
export type * from './types.ts';
