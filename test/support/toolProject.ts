import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const PACKAGE_ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** A user's project on disk: tool files in `tools/`, yiem-agent installed (a link to this package). */
export interface ToolProject {
  dir: string;
  toolsDir: string;
  remove(): Promise<void>;
}

/**
 * An ES module project (`"type": "module"`) whose `node_modules` holds `yiem-agent` (this package,
 * linked) and `shared-probe`, a package with state: `next()` counts calls across every tool that
 * shares its copy, `same(name, value)` tells whether `value` is the first one seen under `name`.
 */
export async function createToolProject(tools: Record<string, string>): Promise<ToolProject> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'yiem-tool-project-'));
  const toolsDir = path.join(dir, 'tools');
  const probe = path.join(dir, 'node_modules', 'shared-probe');
  await mkdir(toolsDir, { recursive: true });
  await mkdir(probe, { recursive: true });
  await symlink(PACKAGE_ROOT, path.join(dir, 'node_modules', 'yiem-agent'), 'dir');
  await writeFile(path.join(dir, 'package.json'), JSON.stringify({ name: 'tools-project', type: 'module' }));
  await writeFile(
    path.join(probe, 'package.json'),
    JSON.stringify({ name: 'shared-probe', type: 'module', exports: './index.js' }),
  );
  await writeFile(
    path.join(probe, 'index.js'),
    [
      'const first = new Map();',
      'let count = 0;',
      'export function same(name, value) {',
      '  if (!first.has(name)) first.set(name, value);',
      '  return first.get(name) === value;',
      '}',
      'export function next() {',
      '  count += 1;',
      '  return count;',
      '}',
    ].join('\n'),
  );
  for (const [name, text] of Object.entries(tools)) await writeFile(path.join(toolsDir, name), text);
  return { dir, toolsDir, remove: () => rm(dir, { recursive: true, force: true }) };
}
