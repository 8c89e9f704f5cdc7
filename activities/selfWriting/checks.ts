import { readdir } from 'node:fs/promises';
import { parse } from 'node:path';
import { describeThrown } from '../../src/contract/thrown.ts';
import type { JsonSchema } from '../../src/contract/types/base.ts';
import type { ToolRegistry } from '../registry/registry.ts';
import type { ArgumentValidator } from '../registry/validation.ts';
import { unsafePatternProblem } from '../sandbox/schemaPatterns.ts';

/** Letters, digits and underscores, not starting with a digit: a name that is also an identifier. */
const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;

export function isIdentifier(name: string): boolean {
  return IDENTIFIER.test(name);
}

/** Why `name` cannot be a new tool's name, or undefined when it can. */
export async function nameProblem(
  registry: ToolRegistry,
  toolsDir: string,
  name: string,
): Promise<string | undefined> {
  if (!IDENTIFIER.test(name)) {
    return `name ${JSON.stringify(name)} is not an identifier: use 1-64 letters, digits and _, not starting with a digit (e.g. searchWine)`;
  }
  // Case-insensitively, so that two tools never share a file on a case-insensitive file system.
  const lower = name.toLowerCase();
  await registry.refresh();
  const registered = registry.names().find((taken) => taken.toLowerCase() === lower);
  if (registered) {
    return `a tool named "${registered}" already exists; pick another name (listTools shows the names in use)`;
  }
  const file = (await readdir(toolsDir)).find((entry) => parse(entry).name.toLowerCase() === lower);
  if (file) return `the tools directory already has a file "${file}"; pick another name`;
  return undefined;
}

/** What is wrong with a new tool's input schema, or undefined when ajv accepts it. */
export function schemaProblem(validator: ArgumentValidator, schema: unknown): string | undefined {
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) {
    return 'inputSchema must be a JSON Schema object such as {"type":"object","properties":{...},"required":[...]}';
  }
  const invalid = validator.checkSchema(schema);
  if (invalid) return `inputSchema is not valid JSON Schema:\n${invalid}`;
  if ((schema as JsonSchema).type !== 'object') {
    return 'inputSchema must describe an object: its "type" must be "object" (the arguments are named)';
  }
  const unsafe = unsafePatternProblem(schema);
  if (unsafe) return unsafe;
  try {
    validator.compile(schema as JsonSchema);
  } catch (error) {
    return `inputSchema cannot be used: ${describeThrown(error)}`;
  }
  return undefined;
}
