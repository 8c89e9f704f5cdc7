import type { AgentTool, ToolInfo, ToolLoadContext } from 'yiem-agent';
import { textResult } from 'yiem-agent';

/** One line per tool, so a multi-line description is folded onto its line. */
function toolLine(tool: ToolInfo): string {
  const description = tool.description.replace(/\s+/g, ' ').trim();
  return `- ${tool.name}: ${tool.label} — ${description}`;
}

export function getTool(context: ToolLoadContext): AgentTool {
  return {
    name: 'listTools',
    label: 'List Tools',
    description:
      'List every tool currently available to you, with its name, label and description. Use it to see ' +
      'what you can do, or to check that a name is free before creating a new tool. Takes no arguments.',
    inputSchema: { type: 'object', properties: {}, additionalProperties: false },
    // The registry is read at each call, not at load time, so tools registered later are listed too.
    execute: () => {
      const tools = context.listTools().map(({ name, label, description }) => ({ name, label, description }));
      return textResult(['Available tools:', ...tools.map(toolLine)].join('\n'), { tools });
    },
    parallelToolExecute: true,
    // Reads the worker's registry, under a millisecond, nothing to heartbeat: a local activity (docs/tools.md).
    localActivity: true,
  };
}
