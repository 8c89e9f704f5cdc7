import type { ToolArguments } from '../src/contract/types.ts';

const SUMMARY_LIMIT = 120;

/** `getWeather(city: "Tokyo", units: "celsius")`, cut to one short line for the Temporal UI. */
export function summarizeToolCall(toolName: string, args: ToolArguments): string {
  const parts = Object.entries(args).map(([key, value]) => `${key}: ${JSON.stringify(value)}`);
  const line = `${toolName}(${parts.join(', ')})`.replace(/\s+/g, ' ');
  const characters = [...line];
  return characters.length <= SUMMARY_LIMIT ? line : `${characters.slice(0, SUMMARY_LIMIT - 1).join('')}…`;
}
