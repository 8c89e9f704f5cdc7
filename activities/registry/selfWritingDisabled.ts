/** What a model calling writeTool reads on a worker that has not turned it on. */
export const WRITE_TOOL_DISABLED =
  'This worker does not allow writing tools: writeTool is off. Use the existing tools (listTools shows them). ' +
  'An operator can enable it by starting the worker with `yiem worker --allow-write-tools DIR` ' +
  '(or createAgentWorker({ selfWriting: { toolsDir } })).';
