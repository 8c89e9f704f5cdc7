import { TOOL_CALL_SUMMARY_CHARS } from '../src/contract/limits.ts';
import { truncate } from '../src/contract/truncate.ts';
import type { ToolArguments } from '../src/contract/types/base.ts';

/** `getWeather(city: "Tokyo", units: "celsius")`, cut to one short line for the Temporal UI. */
export function summarizeToolCall(toolName: string, args: ToolArguments): string {
  const parts = Object.entries(args).map(([key, value]) => `${key}: ${JSON.stringify(value)}`);
  const line = `${toolName}(${parts.join(', ')})`.replace(/\s+/g, ' ');
  return truncate(line, TOOL_CALL_SUMMARY_CHARS);
}
