import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { ToolError, textResult } from '../../src/contract/toolResult.ts';
import type { JsonSchema, ToolArguments } from '../../src/contract/types/base.ts';
import type { WrittenToolSpec } from '../../src/contract/types/sandbox.ts';
import type { ActivityTool, AgentToolResult } from '../../src/contract/types/tools.ts';
import type { ToolRegistry } from '../registry/registry.ts';
import { ArgumentValidator } from '../registry/validation.ts';
import { assertSandboxLoads } from '../sandbox/isolatedVm.ts';
import { wrapCode } from '../sandbox/templates.ts';
import { checkToolCode } from './checkCode.ts';
import { isIdentifier, nameProblem, schemaProblem } from './checks.ts';
import { holdsSameTool, renderToolFile } from './toolFile.ts';
import { writeFileOnce } from './writeFileOnce.ts';

export interface WriteToolDependencies {
  registry: ToolRegistry;
  validator: ArgumentValidator;
  /** The directory the registry watches, where new tools are written. */
  toolsDir: string;
}

const DESCRIPTION = `Create a new tool that you can call from your next step on. Give the body of its execute function as TypeScript (executeCode); writeTool wraps it in
async function execute(toolCallId: string, args: ToolArguments, signal, onPartialResult): Promise<AgentToolResult> { ... }
checks that the name is a free identifier, that inputSchema is valid JSON Schema and that the code compiles, and writes the tool. Errors come back with line numbers.
The tool runs in a sandbox with a time and memory limit. Its globals: textResult(text, details?) (return this), textContent(text), ToolError (throw for a failure), readFile(path) (only files the worker allows), fetch(url, init?) (only if the worker allows network), console.log. There is no require, import, process, file system or child process.
validateCode (optional) is the body of function validate(args): string | null, returning an error message or null; prepareCode (optional) is the body of function prepare(args): ToolArguments. Use listTools first to pick an unused name.`;

const INPUT_SCHEMA: JsonSchema = {
  type: 'object',
  properties: {
    name: { type: 'string', description: 'Identifier the tool is called by, e.g. searchWine' },
    label: { type: 'string', description: 'Human-readable name, e.g. Wine Search' },
    description: { type: 'string', description: 'What the tool does, shown to the model' },
    inputSchema: { type: 'object', description: 'JSON Schema of the arguments, with type "object"' },
    executeCode: { type: 'string', description: 'Body of the execute function (TypeScript)' },
    validateCode: { type: 'string', description: 'Body of validate(args): string | null' },
    prepareCode: { type: 'string', description: 'Body of prepare(args): ToolArguments' },
    parallel: { type: 'boolean', default: false, description: 'May run alongside other tools' },
  },
  required: ['name', 'label', 'description', 'inputSchema', 'executeCode'],
  additionalProperties: false,
};

/**
 * Turns on writeTool for a registry: registers it and watches `toolsDir`, so that tools written there
 * by any worker sharing the directory are offered and run without a restart. `createAgentWorker`
 * does this for its `selfWriting` option; call it yourself for a worker built with `AgentPlugin`.
 * Throws, naming the package, when the sandbox or the compiler cannot load on this Node.
 */
export async function enableSelfWriting(registry: ToolRegistry, toolsDir: string): Promise<void> {
  // A worker that could write tools but not run them would fail every written tool's first call.
  assertSandboxLoads();
  registry.registerTool(
    createWriteTool({ registry, validator: new ArgumentValidator(), toolsDir }),
    'selfWriting',
  );
  await registry.watchTools(toolsDir);
}

/** The seed's writeTool: checks a new tool, writes `<toolsDir>/<name>.ts`, and loads it. */
export function createWriteTool(deps: WriteToolDependencies): ActivityTool {
  return {
    name: 'writeTool',
    label: 'Create Tool',
    description: DESCRIPTION,
    inputSchema: INPUT_SCHEMA,
    parallelToolExecute: false,
    async execute(_toolCallId, args) {
      const spec = specOf(args);
      // A retried call (its worker died after writing) finds its own file and succeeds again.
      if (await alreadyWritten(deps.toolsDir, spec)) {
        await deps.registry.refresh();
        return created(spec, join(deps.toolsDir, `${spec.name}.ts`));
      }
      await checkSpec(deps, spec, args.inputSchema);
      const outcome = await writeFileOnce(deps.toolsDir, `${spec.name}.ts`, renderToolFile(spec, new Date()));
      if (!outcome.written && !holdsSameTool(outcome.existing, spec)) {
        throw new ToolError(`writeTool did not write "${spec.name}": another tool took the name just now`);
      }
      await deps.registry.refresh();
      if (!deps.registry.has(spec.name)) {
        if (outcome.written) await rm(outcome.file, { force: true });
        throw new ToolError(
          `writeTool wrote "${spec.name}" but the worker could not load it; it was removed`,
        );
      }
      return created(spec, outcome.file);
    },
  };
}

function created(spec: WrittenToolSpec, file: string): AgentToolResult {
  return textResult(
    `Created tool "${spec.name}" (${file}). It is available now: call ${spec.name} from your next step.`,
    { name: spec.name, file },
  );
}

async function alreadyWritten(toolsDir: string, spec: WrittenToolSpec): Promise<boolean> {
  if (!isIdentifier(spec.name)) return false;
  const existing = await readFile(join(toolsDir, `${spec.name}.ts`), 'utf8').catch(() => undefined);
  return existing !== undefined && holdsSameTool(existing, spec);
}

function specOf(args: ToolArguments): WrittenToolSpec {
  const optional = (field: 'validateCode' | 'prepareCode'): string | null => {
    const body = args[field];
    return typeof body === 'string' ? wrapCode(field, body) : null;
  };
  return {
    name: String(args.name),
    label: String(args.label),
    description: String(args.description),
    inputSchema: args.inputSchema as JsonSchema,
    parallelToolExecute: args.parallel === true,
    executeSource: wrapCode('executeCode', String(args.executeCode)),
    validateSource: optional('validateCode'),
    prepareSource: optional('prepareCode'),
  };
}

/** Throws a ToolError listing every problem, so the model can fix them all in one go. */
async function checkSpec(deps: WriteToolDependencies, spec: WrittenToolSpec, schema: unknown): Promise<void> {
  const problems = [
    await nameProblem(deps.registry, deps.toolsDir, spec.name),
    schemaProblem(deps.validator, schema),
    ...checkToolCode(spec),
  ].filter((problem): problem is string => problem !== undefined);
  if (problems.length > 0) {
    throw new ToolError(
      `writeTool did not write "${spec.name}":\n${problems.map((p) => `- ${p.replace(/\n/g, '\n  ')}`).join('\n')}`,
    );
  }
}
