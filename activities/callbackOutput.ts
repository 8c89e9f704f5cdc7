import type { JsonSchema } from '../src/contract/types/base.ts';
import type { ArgumentValidator } from './registry/validation.ts';

/** `null` when a client's callback output matches the tool's output schema, else what is wrong with it. */
export function checkCallbackOutput(
  validator: ArgumentValidator,
  input: { toolName: string; schema: JsonSchema; output: unknown },
): string | null {
  const validate = validator.compile(input.schema);
  if (validate(input.output)) return null;
  const problems = (validate.errors ?? [])
    .map((error) => `- ${error.instancePath || '(output)'} ${error.message ?? 'is invalid'}`)
    .join('\n');
  return `The client's result for tool "${input.toolName}" does not match its output schema:\n${problems}`;
}
