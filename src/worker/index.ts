/** `yiem-agent/worker`: what runs conversations (workers, the plugin, tools, MCP, self-writing). */
export { type AgentActivityDependencies, createAgentActivities } from '../../activities/index.ts';
export type { WorkerDeploymentSettings } from './deployment.ts';
export { loadMcpConfig } from './mcp/config.ts';
export { type ModelTable, modelQueueName, resolveModelTable } from './model/models.ts';
export { AGENT_WORKFLOWS_PATH, AgentPlugin, type AgentPluginOptions } from './plugin.ts';
export { loadTools, ToolRegistry } from './registry.ts';
export {
  formatReplayFailure,
  type ReplayCheckFailure,
  type ReplayCheckOptions,
  type ReplayCheckReport,
  replayCheck,
} from './replayCheck.ts';
export { enableSelfWriting } from './selfWriting/writeTool.ts';
export { listToolFiles } from './toolFiles.ts';
export { ArgumentValidator } from './validation.ts';
export {
  type AgentWorker,
  type AgentWorkerOptions,
  BUILTIN_TOOLS_DIR,
  createAgentWorker,
  DEFAULT_TASK_QUEUE,
  loadModelsConfig,
} from './worker.ts';
