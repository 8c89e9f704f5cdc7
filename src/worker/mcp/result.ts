import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { ToolError, textContent } from '../../contract/toolResult.ts';
import type { TextContent } from '../../contract/types/base.ts';
import type { AgentToolResult } from '../../contract/types/tools.ts';

type ContentBlock = CallToolResult['content'][number];

/** Which server and tool answered; `sessionQueue` where the session of a stateful server lives. */
export interface McpResultOrigin {
  server: string;
  tool: string;
  sessionQueue?: string;
}

/**
 * An MCP tool result in the tool result contract. Text blocks and text resources become the text the
 * model reads; images, audio and binary resources become a line naming them, with the data itself in
 * `details.mcp.content` for the application. `structuredContent` goes to `details.mcp` too, and becomes
 * the text when the server sent no content. A result with `isError` throws a `ToolError` with its
 * text, so the model gets an error result at once; `details` still carries what the server sent.
 */
export function mcpToolResult(result: CallToolResult, origin: McpResultOrigin): AgentToolResult {
  const content = (result.content ?? []).map(blockText);
  if (content.length === 0 && result.structuredContent !== undefined) {
    content.push(textContent(JSON.stringify(result.structuredContent)));
  }
  const nonText = (result.content ?? []).filter((block) => block.type !== 'text');
  const details: Record<string, unknown> = {
    mcp: {
      ...origin,
      ...(nonText.length > 0 ? { content: nonText } : {}),
      ...(result.structuredContent !== undefined ? { structuredContent: result.structuredContent } : {}),
    },
  };
  if (result.isError) {
    const text = content.map((block) => block.text).join('\n') || 'no message';
    throw new ToolError(`MCP tool "${origin.tool}" of server "${origin.server}" failed: ${text}`, {
      details,
    });
  }
  return { content, details, usage: null, terminate: false };
}

function blockText(block: ContentBlock): TextContent {
  switch (block.type) {
    case 'text':
      return textContent(block.text);
    case 'image':
      return textContent(`[image ${block.mimeType}, ${base64Bytes(block.data)} bytes]`);
    case 'audio':
      return textContent(`[audio ${block.mimeType}, ${base64Bytes(block.data)} bytes]`);
    case 'resource': {
      const { resource } = block;
      if ('text' in resource && typeof resource.text === 'string') {
        return textContent(`[resource ${resource.uri}]\n${resource.text}`);
      }
      const blob = 'blob' in resource && typeof resource.blob === 'string' ? resource.blob : '';
      return textContent(
        `[resource ${resource.uri}, ${resource.mimeType ?? 'binary'}, ${base64Bytes(blob)} bytes]`,
      );
    }
    case 'resource_link':
      return textContent(`[resource link ${block.uri}${block.name ? ` (${block.name})` : ''}]`);
    default:
      return textContent(JSON.stringify(block));
  }
}

function base64Bytes(data: string): number {
  return Buffer.byteLength(data, 'base64');
}
