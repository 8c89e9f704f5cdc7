import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsPlugin from 'ajv-formats';
import type { JsonSchema, ToolArguments } from '../../src/contract/types/base.ts';

// ajv-formats ships CommonJS; under ESM its plugin sits on `default`.
const addFormats = addFormatsPlugin as unknown as (ajv: Ajv) => Ajv;

/** Validates tool arguments against their full JSON Schema, filling in defaults. */
export class ArgumentValidator {
  readonly #ajv: Ajv;
  readonly #compiled = new WeakMap<JsonSchema, ValidateFunction>();

  constructor() {
    this.#ajv = addFormats(new Ajv({ allErrors: true, useDefaults: true, strict: false }));
  }

  /** Throws with ajv's own message when the schema itself is not valid JSON Schema. */
  compile(schema: JsonSchema): ValidateFunction {
    let validate = this.#compiled.get(schema);
    if (!validate) {
      validate = this.#ajv.compile(schema);
      this.#compiled.set(schema, validate);
    }
    return validate;
  }

  /**
   * Checks `args` in place (defaults are written into it) and returns `null` when they pass, or an
   * error text for the model: each failing path, the rule it broke, and the arguments received.
   */
  validate(toolName: string, schema: JsonSchema, args: ToolArguments): string | null {
    const received = JSON.stringify(args);
    const validate = this.compile(schema);
    if (validate(args)) return null;
    const problems = (validate.errors ?? []).map(describeError).join('\n');
    return `Invalid arguments for tool "${toolName}":\n${problems}\nReceived arguments: ${received}`;
  }

  /** Whether `schema` is a valid JSON Schema by ajv's meta-schema; returns the errors when not. */
  checkSchema(schema: unknown): string | null {
    // ajv reads `$schema` off its argument before validating it.
    if (schema === null || schema === undefined) return 'A schema must be a JSON object, not null';
    if (this.#ajv.validateSchema(schema as JsonSchema)) return null;
    return (this.#ajv.errors ?? []).map(describeError).join('\n');
  }
}

function describeError(error: ErrorObject): string {
  const path = error.instancePath === '' ? '(arguments)' : error.instancePath;
  const allowed = error.keyword === 'enum' ? ` (allowed: ${JSON.stringify(error.params.allowedValues)})` : '';
  return `- ${path} ${error.message ?? 'is invalid'} [rule: ${error.keyword}]${allowed}`;
}
