/**
 * Test helpers shipped as `yiem-agent/testing`: a scripted OpenAI-compatible model server to test agents
 * against over real HTTP.
 */
export type {
  ContentBlocksReply,
  DropReply,
  ErrorReply,
  FinishReason,
  HangReply,
  RecordedRequest,
  ReplyHandler,
  ScriptedModel,
  ScriptedModelOptions,
  ScriptedReply,
  ScriptedReplyTiming,
  ScriptedToolCall,
  ScriptedUsage,
  TextReply,
  ToolCallsReply,
} from './scriptedModel.ts';
export { startScriptedModel } from './scriptedModel.ts';
