/**
 * Written tools and their sandbox (layer 1): what `writeTool` hands a worker's registry
 * (`ToolLoadContext.sandboxedTool`), and the limits those tools run under.
 */

import type { JsonSchema } from './base.ts';

/**
 * A tool written by `writeTool`, as its file hands it to `ToolLoadContext.sandboxedTool`. The sources
 * are TypeScript functions built from the seed's templates; they run in the sandbox, never in the worker.
 */
export interface WrittenToolSpec {
  /** The name the model calls it by. */
  name: string;
  /** Its human-readable name. */
  label: string;
  /** What it does; shown to the model. */
  description: string;
  /** JSON Schema of the arguments. */
  inputSchema: JsonSchema;
  /** Whether it may run alongside other calls in parallel mode. */
  parallelToolExecute: boolean;
  /** `async function execute(toolCallId, args, signal, onPartialResult) { …executeCode… }` */
  executeSource: string;
  /** `function validate(args) { …validateCode… }`, or null for the JSON Schema validation. */
  validateSource: string | null;
  /** `function prepare(args) { …prepareCode… }`, or null. */
  prepareSource: string | null;
}

/**
 * The limits written tools run under. Each call gets a fresh V8 isolate (isolated-vm): no `require`,
 * no `process`, no child processes, no file system or network beyond what these options grant.
 */
export interface SandboxOptions {
  /** Longest one call may run; a call still running is killed. Default 10 000 ms. */
  timeoutMs?: number;
  /** Heap limit of one call, in MB (at least 8); a call that needs more is killed. Default 64. */
  memoryMb?: number;
  /** Files and directories the tools' `readFile(path)` may read. Default: none. */
  fsAllowlist?: string[];
  /** Whether the tools' `fetch(url)` may reach the network. Default false. */
  allowNetwork?: boolean;
}

/** Turns on `writeTool` for a worker (it is off by default). */
export interface SelfWritingOptions extends SandboxOptions {
  /**
   * Where `writeTool` writes `<name>.ts`. The worker re-reads it before every model call and tool call,
   * so tools written here, by this worker or any other sharing the directory, work without a restart.
   */
  toolsDir: string;
}
