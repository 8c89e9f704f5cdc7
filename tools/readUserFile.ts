import type { AgentTool } from 'yiem-agent';
import { callbackTool } from 'yiem-agent';

/**
 * The built-in callback tool: it has no body on the worker. `yiem chat` (or any client that serves
 * it with `Conversation.serveCallbacks`) reads the file on the user's own machine, asking first when
 * the file looks sensitive.
 */
export function getTool(): AgentTool {
  return callbackTool({
    name: 'readUserFile',
    label: "Read a file on the user's machine",
    description:
      "Reads a text file on the user's own machine (where their chat runs), by a path relative to the folder the chat started in. Returns at most 64 KB.",
    inputSchema: {
      type: 'object',
      properties: { path: { type: 'string', minLength: 1, description: 'The file, e.g. notes/todo.txt' } },
      required: ['path'],
      additionalProperties: false,
    },
    outputSchema: {
      type: 'object',
      properties: {
        path: { type: 'string' },
        bytes: { type: 'integer', minimum: 0 },
        truncated: { type: 'boolean' },
      },
      required: ['path', 'bytes', 'truncated'],
    },
    timeout: '2 minutes',
  });
}
