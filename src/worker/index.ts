/** `yiem-agent/worker`: what runs conversations (workers, the plugin, tools, MCP, self-writing). */
export { type AgentActivityDependencies, createAgentActivities } from '../../activities/index.ts';
export { type ModelTable, modelQueueName, resolveModelTable } from '../../activities/models/models.ts';
export { loadTools, ToolRegistry } from '../../activities/registry/registry.ts';
export { listToolFiles } from '../../activities/registry/toolFiles.ts';
export { ArgumentValidator } from '../../activities/registry/validation.ts';
export { enableSelfWriting } from '../../activities/selfWriting/writeTool.ts';
export type { WorkerDeploymentSettings } from './deployment.ts';
export { loadMcpConfig } from './mcp/config.ts';
export type {
  CompactionOptions,
  FlatWorkerOptions,
  GroupedWorkerOptions,
  HookOptions,
  TemporalWorkerOptions,
  ToolOptions,
  WorkerConnectionOptions,
} from './options.ts';
export { AGENT_WORKFLOWS_PATH, AgentPlugin, type AgentPluginOptions } from './plugin.ts';
export {
  formatReplayFailure,
  type ReplayCheckFailure,
  type ReplayCheckOptions,
  type ReplayCheckReport,
  replayCheck,
} from './replayCheck.ts';
export {
  type AgentWorker,
  type AgentWorkerOptions,
  BUILTIN_TOOLS_DIR,
  createAgentWorker,
  DEFAULT_TASK_QUEUE,
  loadModelsConfig,
} from './worker.ts';
