/**
 * `yiem-agent`: what clients and tool files use. It loads no worker code (native bridge, sandbox,
 * validator, MCP client); the worker side is `yiem-agent/worker`.
 */

export { conversationWorkflow } from '../workflows/conversation.ts';
export { scheduledPromptWorkflow } from '../workflows/scheduledPrompt.ts';
export type { ServeCallbacksOptions } from './client/callbackClient.ts';
export { type ChatEndpoint, type ChatEndpointOptions, createChatEndpoint } from './client/chatEndpoint.ts';
export {
  type RunningChatEndpoint,
  type ServeChatEndpointOptions,
  serveChatEndpoint,
} from './client/chatServer.ts';
export {
  AgentClient,
  type AgentClientOptions,
  Conversation,
  type ConversationLimits,
  type ConversationListing,
  type SendOptions,
  type StartConversationOptions,
} from './client/client.ts';
export type {
  ConsoleConversation,
  ConsoleInfo,
  ConsoleListing,
  ConsoleMessages,
} from './client/consoleApi.ts';
export { type RunningConsole, type ServeConsoleOptions, serveConsole } from './client/consoleServer.ts';
export type { FollowEventsOptions, ReconnectOptions } from './client/conversationEvents.ts';
export type { DetachedTurn, PromptTurn } from './client/detachedTurns.ts';
export {
  ConversationQueryError,
  ConversationRefusedError,
  NoWorkerError,
  WorkerStoppedError,
} from './client/errors.ts';
export { htmlReport } from './client/evals/htmlReport.ts';
export type { EvalToolCall, EvalTurn } from './client/evals/keptCases.ts';
export {
  type EvalCaseReport,
  type EvalFigures,
  type EvalReport,
  type EvalTurnReport,
  terminalSummary,
} from './client/evals/report.ts';
export { type EvalCandidate, type RunEvalOptions, runEval } from './client/evals/runEval.ts';
export type {
  EvalExpectation,
  EvalExpectations,
  EvalJudge,
  ExpectedToolCall,
  JudgeVerdict,
} from './client/evals/scores.ts';
export {
  type ExportedHistory,
  type ExportHistoriesOptions,
  exportHistories,
} from './client/exportHistories.ts';
export {
  type PromptScheduleListing,
  type PromptScheduleOptions,
  PromptSchedules,
  type ScheduledConversationOptions,
} from './client/schedules.ts';
export type { TranscriptRange } from './client/transcriptReader.ts';
export {
  type ChatFinishReason,
  type ChatMessageDelivered,
  type ChatMessageMetadata,
  type ChatMessageQueued,
  type ChatToolOutput,
  UI_MESSAGE_STREAM_PROTOCOL,
  type UiMessageChunk,
} from './client/uiMessageChunks.ts';
export type { WorkerPresence } from './client/workerPresence.ts';
export {
  agentTool,
  type CallbackToolSpec,
  callbackTool,
  DEFAULT_CALLBACK_TIMEOUT,
  handoffTool,
  handoffToolName,
} from './contract/agents.ts';
export {
  DEFAULT_COMPACTION_PROMPT,
  DEFAULT_KEEP_RECENT_TURNS,
  type KeptCompaction,
} from './contract/compaction.ts';
export {
  callbackResultUpdate,
  cancelUpdate,
  compactionsQuery,
  compactUpdate,
  decideToolCallUpdate,
  endSignal,
  modelContextQuery,
  pauseUpdate,
  postSignal,
  promptUpdate,
  raiseBudgetUpdate,
  resumeUpdate,
  type ScheduledPromptWorkflow,
  statusQuery,
  transcriptQuery,
} from './contract/definitions.ts';
export {
  DEFAULT_MAX_TOOL_RESULT_BYTES,
  DEFAULT_PAYLOAD_THRESHOLD_BYTES,
  MAX_CHAT_REQUEST_BYTES,
} from './contract/limits.ts';
export { MCP_NAME_SEPARATOR, mcpToolName } from './contract/mcpToolName.ts';
export { type NexusToolSpec, nexusTool } from './contract/nexusTools.ts';
export type { AgentActivities } from './contract/protocol.ts';
export {
  CONVERSATION_STATUSES,
  type ConversationSearchStatus,
  YIEM_AGENT,
  YIEM_COST,
  YIEM_STATUS,
  YIEM_TURNS,
} from './contract/searchAttributes.ts';
export { DEFAULT_TASK_QUEUE } from './contract/taskQueue.ts';
export { resultText, ToolError, textContent, textResult } from './contract/toolResult.ts';
export type { StoredContent, TranscriptEntry, TranscriptPage } from './contract/transcript.ts';
export type * from './contract/types.ts';
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
} from './infrastructure/codec/index.ts';
export {
  DEFAULT_TEMPORAL_ADDRESS,
  DEFAULT_TEMPORAL_NAMESPACE,
  type ResolvedTemporalConnection,
  resolveTemporalConnection,
  type TemporalConnectionSettings,
} from './infrastructure/connection.ts';
export { isLoopbackHost } from './infrastructure/httpAccess.ts';
export { FileStorageDriver } from './infrastructure/storage/fileDriver.ts';
export {
  type PayloadStorageOptions,
  payloadStorage,
  payloadStorageFromEnv,
} from './infrastructure/storage/payloadStorage.ts';
export {
  S3StorageDriver,
  type S3StorageDriverOptions,
  s3DriverFromEnv,
} from './infrastructure/storage/s3Driver.ts';
export {
  type PayloadGroup,
  type SweepableStore,
  type SweepResult,
  sweepPayloads,
} from './infrastructure/storage/sweep.ts';
export { currentToolCall } from './infrastructure/toolCallContext.ts';
export { TRACING_PACKAGES, type TracingOptions, tracingPlugins } from './infrastructure/tracing.ts';
