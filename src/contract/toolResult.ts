import { TOOL_END_TEXT_CHARS } from './limits.ts';
import { firstLine } from './truncate.ts';
import type { TextContent } from './types/base.ts';
import type { AgentToolResult } from './types/tools.ts';

/** A text block. */
export function textContent(text: string): TextContent {
  return { type: 'text', text };
}

/** A plain text result with no details, usage or termination: the common case. */
export function textResult(text: string, details: Record<string, unknown> = {}): AgentToolResult {
  return { content: [textContent(text)], details, usage: null, terminate: false };
}

/**
 * A failure the model should see at once, without retries: bad input the schema could not catch, a
 * missing record, a refused request. Any other error a tool throws is retried per its policy first.
 */
export class ToolError extends Error {
  /** The class's name, so that the worker tells a deliberate error from a crash after serialisation. */
  override name = 'ToolError';
  /** Kept in the error result's `details` (for the application; the model reads only the message). */
  readonly details: Record<string, unknown> | undefined;

  constructor(message: string, options: { details?: Record<string, unknown> } = {}) {
    super(message);
    this.details = options.details;
  }
}

/** The text of a result's content blocks, joined by newlines. */
export function resultText(content: readonly TextContent[]): string {
  return content.map((block) => block.text).join('\n');
}

/** A result as a `toolEnd` event (and a progress line) shows it: its first line, cut short. */
export function toolEndText(content: readonly TextContent[]): string {
  return firstLine(resultText(content), TOOL_END_TEXT_CHARS);
}
