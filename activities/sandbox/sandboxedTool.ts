import { ToolError } from '../../src/contract/toolResult.ts';
import type { ToolArguments } from '../../src/contract/types/base.ts';
import type { WrittenToolSpec } from '../../src/contract/types/sandbox.ts';
import type { ActivityTool, AgentToolResult } from '../../src/contract/types/tools.ts';
import { runCheckInSandbox, runInSandbox } from './isolate.ts';
import { assertSandboxLoads } from './isolatedVm.ts';
import { unsafePatternProblem } from './schemaPatterns.ts';
import type { SandboxSettings } from './settings.ts';
import { SANDBOX_CALLS } from './templates.ts';
import { transpile } from './typescript.ts';

/**
 * A written tool as an `ActivityTool` whose functions run only in the sandbox. Its sources stay data in
 * the worker: they are transpiled, copied into a fresh isolate per call, and run there.
 */
export function sandboxedTool(spec: WrittenToolSpec, settings: SandboxSettings): ActivityTool {
  assertSpec(spec);
  // Refused at load, naming the package, rather than failing each call on a worker without a sandbox.
  assertSandboxLoads();
  const log = (line: string): void => console.log(`[${spec.name}] ${line}`);
  const compiled = new Map<string, string>();
  const javascript = (source: string): string => {
    let code = compiled.get(source);
    if (code === undefined) {
      code = transpile(source);
      compiled.set(source, code);
    }
    return code;
  };
  const { validateSource, prepareSource } = spec;
  return {
    name: spec.name,
    label: spec.label,
    description: spec.description,
    inputSchema: spec.inputSchema,
    parallelToolExecute: spec.parallelToolExecute,
    async execute(toolCallId, args, signal, onPartialResult) {
      const result = await runInSandbox(settings, {
        code: javascript(spec.executeSource),
        call: SANDBOX_CALLS.executeCode,
        input: { toolCallId, args },
        ...(signal ? { signal } : {}),
        onPartialResult,
        log,
      });
      return asToolResult(spec.name, result);
    },
    ...(validateSource
      ? {
          validateRequiredArgs: async (args: ToolArguments) => {
            const problem = await runCheckInSandbox(
              settings,
              javascript(validateSource),
              SANDBOX_CALLS.validateCode,
              args,
            );
            return problem === null || problem === undefined ? null : String(problem);
          },
        }
      : {}),
    ...(prepareSource
      ? {
          prepareArguments: async (args: ToolArguments) => {
            const prepared = await runCheckInSandbox(
              settings,
              javascript(prepareSource),
              SANDBOX_CALLS.prepareCode,
              args,
            );
            if (typeof prepared !== 'object' || prepared === null || Array.isArray(prepared)) {
              throw new ToolError('prepare must return the arguments object');
            }
            return prepared as ToolArguments;
          },
        }
      : {}),
  };
}

function asToolResult(name: string, value: unknown): AgentToolResult {
  const result = value as Partial<AgentToolResult> | null | undefined;
  if (!result || !Array.isArray(result.content)) {
    throw new ToolError(
      `Tool "${name}" returned no result: its code must return textResult(text) or an AgentToolResult`,
    );
  }
  return {
    content: result.content,
    details: result.details ?? {},
    usage: result.usage ?? null,
    terminate: result.terminate === true,
  };
}

function assertSpec(spec: WrittenToolSpec): void {
  for (const field of ['name', 'label', 'description', 'executeSource'] as const) {
    if (typeof spec?.[field] !== 'string' || spec[field] === '') {
      throw new Error(`A written tool's spec lacks ${field}`);
    }
  }
  // A file written by hand or before patterns were checked: ajv would run them on the worker.
  const unsafe = unsafePatternProblem(spec.inputSchema);
  if (unsafe) throw new Error(`Written tool "${spec.name}" cannot be loaded: ${unsafe}`);
}
