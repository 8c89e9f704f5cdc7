import type { TextContent } from './types/base.ts';
import type { AgentToolResult } from './types/tools.ts';
import { utf8Bytes, utf8Prefix } from './utf8.ts';

/**
 * Cuts a result whose text or details exceed `maxBytes`, so a runaway tool cannot exhaust the worker's
 * memory. The model reads a note saying how much was cut, so it can ask for less.
 */
export function limitToolResult(result: AgentToolResult, maxBytes: number): AgentToolResult {
  const textBytes = result.content.reduce((sum, block) => sum + utf8Bytes(block.text), 0);
  const detailsBytes = utf8Bytes(JSON.stringify(result.details));
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
    const text = utf8Prefix(block.text, budget);
    kept.push({ ...block, text });
    budget -= utf8Bytes(text);
  }
  kept.push({
    type: 'text',
    text: `[Tool result truncated: it had ${totalBytes} bytes and only the first ${maxBytes} are shown. Ask for a narrower result if you need the rest.]`,
  });
  return kept;
}
