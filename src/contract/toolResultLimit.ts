import type { AgentToolResult, TextContent } from './types.ts';

/**
 * The default cap on a tool result's size. Results no longer travel in history (large ones go to the
 * payload store), so the cap only guards the worker's memory and the model's context window against
 * a runaway tool: a 4 MB result is read whole, a 1 GB one is not.
 */
export const DEFAULT_MAX_TOOL_RESULT_BYTES = 4 * 1024 * 1024;

const encoder = new TextEncoder();
const byteLength = (text: string): number => encoder.encode(text).length;

/**
 * Cuts a result whose text or details exceed `maxBytes`, so a runaway tool cannot exhaust the worker's
 * memory. The model reads a note saying how much was cut, so it can ask for less.
 */
export function limitToolResult(result: AgentToolResult, maxBytes: number): AgentToolResult {
  const textBytes = result.content.reduce((sum, block) => sum + byteLength(block.text), 0);
  const detailsBytes = byteLength(JSON.stringify(result.details));
  if (textBytes <= maxBytes && detailsBytes <= maxBytes) return result;
  return {
    ...result,
    content: textBytes <= maxBytes ? result.content : cutContent(result.content, textBytes, maxBytes),
    details: detailsBytes <= maxBytes ? result.details : { truncated: true, originalBytes: detailsBytes },
  };
}

function cutContent(content: readonly TextContent[], totalBytes: number, maxBytes: number): TextContent[] {
  const kept: TextContent[] = [];
  let budget = maxBytes;
  for (const block of content) {
    if (budget <= 0) break;
    const text = cutText(block.text, budget);
    kept.push({ ...block, text });
    budget -= byteLength(text);
  }
  kept.push({
    type: 'text',
    text: `[Tool result truncated: it had ${totalBytes} bytes and only the first ${maxBytes} are shown. Ask for a narrower result if you need the rest.]`,
  });
  return kept;
}

/** The longest prefix of `text` within `maxBytes` UTF-8 bytes, never splitting a character. */
function cutText(text: string, maxBytes: number): string {
  if (byteLength(text) <= maxBytes) return text;
  let end = 0;
  let bytes = 0;
  for (const char of text) {
    const size = byteLength(char);
    if (bytes + size > maxBytes) break;
    bytes += size;
    end += char.length;
  }
  return text.slice(0, end);
}
