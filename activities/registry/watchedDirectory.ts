import { mkdir, stat } from 'node:fs/promises';
import { describeThrown } from '../../src/contract/thrown.ts';
import type { AgentTool } from '../../src/contract/types/tools.ts';
import { listToolFiles } from './toolFiles.ts';

/** What a watched directory needs from the registry it feeds. */
interface ToolSink {
  importTool(file: string): Promise<AgentTool>;
  registerTool(tool: AgentTool, source: string): void;
  unregisterTool(name: string): void;
}

/** A file as last seen: its stamp, and the tool it registered (none when it failed to load). */
interface SeenFile {
  stamp: string;
  toolName?: string;
}

/**
 * A tools directory that may change while the worker runs. Each refresh compares the directory's
 * files and their modification times with the last pass and loads only what changed.
 */
export class WatchedToolDirectory {
  readonly #seen = new Map<string, SeenFile>();
  readonly dir: string;
  readonly sink: ToolSink;

  constructor(dir: string, sink: ToolSink) {
    this.dir = dir;
    this.sink = sink;
  }

  async refresh(): Promise<void> {
    await mkdir(this.dir, { recursive: true });
    const files = await listToolFiles(this.dir);
    const present = new Set(files);
    for (const [file, seen] of this.#seen) {
      if (present.has(file)) continue;
      if (seen.toolName) this.sink.unregisterTool(seen.toolName);
      this.#seen.delete(file);
    }
    for (const file of files) {
      const stamp = await stampOf(file);
      const seen = this.#seen.get(file);
      if (stamp === undefined || seen?.stamp === stamp) continue;
      if (seen?.toolName) this.sink.unregisterTool(seen.toolName);
      this.#seen.set(file, { stamp, ...(await this.#load(file)) });
    }
  }

  async #load(file: string): Promise<{ toolName?: string }> {
    try {
      const tool = await this.sink.importTool(file);
      this.sink.registerTool(tool, file);
      return { toolName: tool.name };
    } catch (error) {
      console.warn(`Skipping tool file ${file}: ${describeThrown(error)}`);
      return {};
    }
  }
}

/** Modification time and size; undefined when the file vanished between listing and stat. */
async function stampOf(file: string): Promise<string | undefined> {
  try {
    const info = await stat(file);
    return `${info.mtimeMs}:${info.size}`;
  } catch {
    return undefined;
  }
}
