import { readdir } from 'node:fs/promises';
import { extname, join, resolve } from 'node:path';

const TOOL_FILE_EXTENSIONS = new Set(['.ts', '.js', '.mts', '.mjs']);

/** The tool files of a directory, sorted by name so registration order is deterministic. */
export async function listToolFiles(dir: string): Promise<string[]> {
  const absolute = resolve(dir);
  const entries = await readdir(absolute, { withFileTypes: true });
  return entries
    .filter((entry) => entry.isFile() && isToolFileName(entry.name))
    .map((entry) => entry.name)
    .sort()
    .map((name) => join(absolute, name));
}

/** Files named `_*` are the tools' helper modules: tools import them, the registry does not. */
function isToolFileName(name: string): boolean {
  return (
    TOOL_FILE_EXTENSIONS.has(extname(name)) &&
    !name.startsWith('_') &&
    !name.endsWith('.d.ts') &&
    !name.includes('.test.')
  );
}
