import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describeThrown } from '../../src/contract/thrown.ts';
import type { SandboxOptions } from '../../src/contract/types/sandbox.ts';
import type {
  AgentTool,
  ToolInfo,
  ToolLoadContext,
  ToolModule,
  ToolRunner,
} from '../../src/contract/types/tools.ts';
import { sandboxedTool } from '../sandbox/sandboxedTool.ts';
import { resolveSandboxSettings } from '../sandbox/settings.ts';
import { WRITE_TOOL_DISABLED } from './selfWritingDisabled.ts';
import { listToolFiles } from './toolFiles.ts';
import { importTypeScriptTool } from './typeScriptTools.ts';
import { ArgumentValidator } from './validation.ts';
import { WatchedToolDirectory } from './watchedDirectory.ts';

/** What a tool name may be: what model APIs accept as a function name. */
export const TOOL_NAME_PATTERN = /^[A-Za-z_][A-Za-z0-9_-]{0,63}$/;

/** The kinds of `WorkflowTool.runner`: where the workflow runs the call. */
const RUNNER_KINDS: readonly string[] = [
  'subAgent',
  'handoff',
  'callback',
  'nexus',
] satisfies ToolRunner['kind'][];

/** Where a registered tool came from, for error messages about duplicates. */
interface RegisteredTool {
  tool: AgentTool;
  source: string;
}

/** Something that registers tools of its own and brings them up to date when asked. */
export interface ToolSource {
  refresh(): Promise<void>;
}

/** The tools one worker can run, by name, in registration order. */
export class ToolRegistry {
  readonly #tools = new Map<string, RegisteredTool>();
  readonly #unavailable = new Map<string, string>();
  readonly #watched: WatchedToolDirectory[] = [];
  readonly #sources: ToolSource[] = [];
  #refreshing: Promise<void> = Promise.resolve();

  /** What tool files' `getTool(context)` receive. */
  readonly context: ToolLoadContext;

  /**
   * `sandbox`: the limits written tools loaded into this registry run under. writeTool is refused
   * with a clear reason until it is registered (see `enableSelfWriting`).
   */
  constructor(options: { sandbox?: SandboxOptions } = {}) {
    const sandbox = resolveSandboxSettings(options.sandbox);
    this.context = {
      listTools: () => this.list(),
      sandboxedTool: (spec) => sandboxedTool(spec, sandbox),
    };
    this.markUnavailable('writeTool', WRITE_TOOL_DISABLED);
  }

  /**
   * Adds one tool. A name that is already registered is an error naming both sources, so two tools
   * can never shadow each other silently.
   */
  registerTool(tool: AgentTool, source = 'registerTool()'): void {
    assertToolShape(tool, source);
    const existing = this.#tools.get(tool.name);
    if (existing) {
      throw new Error(
        `Duplicate tool name "${tool.name}": registered by ${existing.source} and again by ${source}`,
      );
    }
    this.#tools.set(tool.name, { tool, source });
  }

  /** Loads every tool file in `dir` in alphabetical order and registers each; returns the new tools. */
  async loadTools(dir: string): Promise<AgentTool[]> {
    const loaded: AgentTool[] = [];
    for (const file of await listToolFiles(dir)) {
      const tool = await importTool(file, this.context);
      this.registerTool(tool, file);
      loaded.push(tool);
    }
    return loaded;
  }

  /**
   * Loads the tools of `dir` now and again whenever it changes: `refresh()` re-reads it, so tools that
   * appear there (written by any worker sharing it) join and tools removed from it leave, without a
   * restart. A file that fails to load is logged and skipped until it changes.
   */
  async watchTools(dir: string): Promise<void> {
    this.#watched.push(new WatchedToolDirectory(resolve(dir), this));
    await this.refresh();
  }

  /**
   * Brings watched directories up to date. Cheap when nothing changed (one directory listing and a
   * stat per file); passes run one after another, so a caller always sees changes made before it called.
   */
  refresh(): Promise<void> {
    if (this.#watched.length === 0 && this.#sources.length === 0) return Promise.resolve();
    this.#refreshing = this.#refreshing.then(async () => {
      for (const directory of this.#watched) await directory.refresh();
      for (const source of this.#sources) await source.refresh();
    });
    return this.#refreshing;
  }

  /** Adds tools kept up to date from elsewhere (MCP servers): `refresh()` refreshes them too. */
  addSource(source: ToolSource): void {
    this.#sources.push(source);
  }

  /** Imports one tool file and calls its `getTool(context)`. */
  importTool(file: string): Promise<AgentTool> {
    return importTool(file, this.context);
  }

  /** Removes a tool, e.g. one whose file was deleted from a watched directory. */
  unregisterTool(name: string): void {
    this.#tools.delete(name);
  }

  /**
   * Marks a tool name that this worker knows but does not offer, with the reason a model calling it
   * should read instead of "not found" (e.g. writeTool on a worker that does not allow it).
   */
  markUnavailable(name: string, reason: string): void {
    this.#unavailable.set(name, reason);
  }

  /** Why a tool this worker does not offer is unavailable, if it was marked so. */
  unavailableReason(name: string): string | undefined {
    return this.#tools.has(name) ? undefined : this.#unavailable.get(name);
  }

  /** The tool of that name, if registered. */
  get(name: string): AgentTool | undefined {
    return this.#tools.get(name)?.tool;
  }

  /** Whether a tool of that name is registered. */
  has(name: string): boolean {
    return this.#tools.has(name);
  }

  /** Every registered tool, in registration order. */
  tools(): AgentTool[] {
    return [...this.#tools.values()].map((entry) => entry.tool);
  }

  /** Name, label and description of every registered tool. */
  list(): ToolInfo[] {
    return this.tools().map(({ name, label, description }) => ({ name, label, description }));
  }

  /** The names of the registered tools. */
  names(): string[] {
    return [...this.#tools.keys()];
  }
}

/** Loads the tool files of `dir` (the seed's `loadTools("src/tools")`) into a fresh registry. */
export async function loadTools(dir: string): Promise<AgentTool[]> {
  return new ToolRegistry().loadTools(dir);
}

async function importTool(file: string, context: ToolLoadContext): Promise<AgentTool> {
  let module: Partial<ToolModule>;
  try {
    module = (await importModule(file)) as Partial<ToolModule>;
  } catch (error) {
    throw new Error(`Tool file ${file} could not be imported: ${describeThrown(error)}`, { cause: error });
  }
  if (typeof module.getTool !== 'function') {
    throw new Error(
      `Tool file ${file} does not export a getTool() function (a helper module's name starts with _)`,
    );
  }
  try {
    return await module.getTool(context);
  } catch (error) {
    throw new Error(`getTool() of tool file ${file} threw: ${describeThrown(error)}`, { cause: error });
  }
}

/** Compiles each tool's schema at registration, so an invalid one is reported at load, not at its first call. */
const schemaCompiler = new ArgumentValidator();

/**
 * TypeScript tool files go through tsx so that a worker started from plain JavaScript can still load
 * them; every call yields a fresh module, which is what reloading a changed tool needs, while the
 * packages it imports are the worker's (`importTypeScriptTool`).
 */
async function importModule(file: string): Promise<unknown> {
  if (file.endsWith('.ts') || file.endsWith('.mts')) return importTypeScriptTool(file);
  return import(pathToFileURL(file).href);
}

function assertToolShape(tool: AgentTool, source: string): void {
  const missing = (['name', 'label', 'description'] as const).filter(
    (field) => typeof tool?.[field] !== 'string' || tool[field] === '',
  );
  if (missing.length > 0) throw new Error(`Tool from ${source} lacks ${missing.join(', ')}`);
  assertRunsSomewhere(tool, source);
  if (typeof tool.inputSchema !== 'object' || tool.inputSchema === null) {
    throw new Error(`Tool "${tool.name}" from ${source} has no inputSchema object`);
  }
  try {
    schemaCompiler.compile(tool.inputSchema);
  } catch (error) {
    throw new Error(
      `Tool "${tool.name}" from ${source} has an invalid inputSchema: ${describeThrown(error)}`,
    );
  }
  if (!TOOL_NAME_PATTERN.test(tool.name)) {
    throw new Error(`Tool name "${tool.name}" from ${source} must be 1-64 letters, digits, _ or -`);
  }
  if (tool.taskQueue !== undefined && (typeof tool.taskQueue !== 'string' || tool.taskQueue.trim() === '')) {
    throw new Error(`Tool "${tool.name}" from ${source} has a taskQueue that is not a non-empty string`);
  }
  assertAtMostOnceShape(tool, source);
  assertLocalActivityShape(tool, source);
  assertBatchedShape(tool, source);
}

/** A `batched` tool's calls share an activity: not a tool the workflow runs, nor one that needs an activity per call. */
function assertBatchedShape(tool: AgentTool, source: string): void {
  const { name, runner, atMostOnce, localActivity, batched } = tool as {
    name: string;
    runner?: unknown;
    atMostOnce?: unknown;
    localActivity?: unknown;
    batched?: unknown;
  };
  if (batched === undefined || batched === false) return;
  const problem =
    batched !== true
      ? 'has a batched that is not true or false'
      : runner !== undefined
        ? 'runs in the workflow, not in an activity: leave batched out'
        : atMostOnce === true
          ? 'is atMostOnce and batched: an at-most-once call needs an activity of its own, whose attempts tell whether it may have taken effect; drop one of the two'
          : localActivity === true
            ? 'is a localActivity and batched: a local call runs inside the workflow task, not in a shared activity; drop one of the two'
            : undefined;
  if (problem) throw new Error(`Tool "${name}" from ${source} ${problem}`);
}

/** `atMostOnce` and `reconcile` belong to tools run in an activity, and `reconcile` to `atMostOnce` ones. */
function assertAtMostOnceShape(tool: AgentTool, source: string): void {
  const { name, runner, atMostOnce, reconcile } = tool as {
    name: string;
    runner?: unknown;
    atMostOnce?: unknown;
    reconcile?: unknown;
  };
  const problem =
    atMostOnce !== undefined && typeof atMostOnce !== 'boolean'
      ? 'has an atMostOnce that is not true or false'
      : runner !== undefined && (atMostOnce === true || reconcile !== undefined)
        ? 'runs in the workflow, where each call runs once by nature: leave atMostOnce and reconcile out'
        : reconcile !== undefined && typeof reconcile !== 'function'
          ? 'has a reconcile that is not a function'
          : reconcile !== undefined && atMostOnce !== true
            ? 'has a reconcile() but is not atMostOnce: reconcile is asked only about at-most-once calls, so set atMostOnce: true'
            : undefined;
  if (problem) throw new Error(`Tool "${name}" from ${source} ${problem}`);
}

/** A `localActivity` tool runs in the workflow's own task: none of what needs an activity of its own. */
function assertLocalActivityShape(tool: AgentTool, source: string): void {
  const { name, runner, atMostOnce, localActivity, taskQueue, taskQueueFor, policy } = tool as {
    name: string;
    runner?: unknown;
    atMostOnce?: unknown;
    localActivity?: unknown;
    taskQueue?: unknown;
    taskQueueFor?: unknown;
    policy?: { heartbeatTimeout?: unknown; scheduleToStartTimeout?: unknown };
  };
  if (localActivity === undefined || localActivity === false) return;
  const problem =
    localActivity !== true
      ? 'has a localActivity that is not true or false'
      : runner !== undefined
        ? 'runs in the workflow, not in an activity: leave localActivity out'
        : atMostOnce === true
          ? 'is atMostOnce and a localActivity: a local activity lost with its worker starts again from its first attempt, so an interrupted call cannot be told from a new one; drop one of the two'
          : taskQueue !== undefined || taskQueueFor !== undefined
            ? "has a taskQueue and is a localActivity: a local activity runs on the conversation's own worker; drop one of the two"
            : policy?.heartbeatTimeout !== undefined || policy?.scheduleToStartTimeout !== undefined
              ? 'is a localActivity with a heartbeatTimeout or scheduleToStartTimeout in its policy: a local activity sends no heartbeats and waits on no task queue (only startToCloseTimeout and retry apply)'
              : undefined;
  if (problem) throw new Error(`Tool "${name}" from ${source} ${problem}`);
}

/**
 * Where the tool's calls run: in a tool activity (`execute`) or in the workflow (`runner`), not
 * both. Checked by shape, since a tool file's object is not typed.
 */
function assertRunsSomewhere(tool: AgentTool, source: string): void {
  const { name, runner, execute } = tool as { name: string; runner?: { kind?: unknown }; execute?: unknown };
  if (runner === undefined) {
    if (typeof execute !== 'function') throw new Error(`Tool "${name}" from ${source} has no execute()`);
    return;
  }
  if (!RUNNER_KINDS.includes(runner?.kind as string)) {
    throw new Error(
      `Tool "${name}" from ${source} has a runner of unknown kind (make it with agentTool, handoffTool, callbackTool or nexusTool)`,
    );
  }
  if (execute !== undefined) {
    throw new Error(
      `Tool "${name}" from ${source} has both a runner and an execute(): its calls run in the workflow, so leave execute out`,
    );
  }
}
