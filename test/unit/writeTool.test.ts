import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ToolRegistry } from '../../activities/registry/registry.ts';
import { ArgumentValidator } from '../../activities/registry/validation.ts';
import { sandboxedTool } from '../../activities/sandbox/sandboxedTool.ts';
import { resolveSandboxSettings } from '../../activities/sandbox/settings.ts';
import { wrapCode } from '../../activities/sandbox/templates.ts';
import { writeFileOnce } from '../../activities/selfWriting/writeFileOnce.ts';
import { createWriteTool } from '../../activities/selfWriting/writeTool.ts';
import type { ToolArguments } from '../../src/contract/types/base.ts';
import type { ActivityTool } from '../../src/contract/types/tools.ts';

const noPartials = (): void => {};

describe('writeTool', () => {
  let root: string;
  let toolsDir: string;
  let registry: ToolRegistry;
  let writeTool: ActivityTool;
  const write = (args: ToolArguments) => writeTool.execute('call_1', args, undefined, noPartials);
  const spec = (name: string, extra: ToolArguments = {}): ToolArguments => ({
    name,
    label: 'Shout',
    description: 'Shouts a word',
    inputSchema: { type: 'object', properties: { word: { type: 'string' } }, required: ['word'] },
    executeCode: 'return textResult(String(args.word).toUpperCase() + "!");',
    ...extra,
  });

  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), 'yiem-write-'));
    toolsDir = join(root, 'tools');
    registry = new ToolRegistry();
    await registry.watchTools(toolsDir);
    writeTool = createWriteTool({ registry, validator: new ArgumentValidator(), toolsDir });
  });
  afterEach(async () => rm(root, { recursive: true, force: true }));

  it('writes <name>.ts with the body in the execute template, and the tool works at once', async () => {
    const result = await write(spec('shout'));

    expect(result.content[0]?.text).toBe(
      `Created tool "shout" (${join(toolsDir, 'shout.ts')}). It is available now: call shout from your next step.`,
    );
    const file = await readFile(join(toolsDir, 'shout.ts'), 'utf8');
    expect(file).toContain('export function getTool(context: { sandboxedTool(spec: object): unknown }) {');
    expect(file).toContain(
      '      "async function execute(toolCallId: string, args: ToolArguments, signal: ToolSignal | undefined, onPartialResult: OnPartialResult): Promise<AgentToolResult> {",\n' +
        '      "    return textResult(String(args.word).toUpperCase() + \\"!\\");",\n' +
        '      "}",',
    );
    const shout = registry.get('shout');
    expect(shout?.label).toBe('Shout');
    expect((await shout?.execute?.('call_2', { word: 'wine' }, undefined, noPartials))?.content).toEqual([
      { type: 'text', text: 'WINE!' },
    ]);
  });

  it('runs validateCode and prepareCode in the sandbox too', async () => {
    await write(
      spec('shout', {
        prepareCode: 'return { ...args, word: String(args.word ?? args.text ?? "") };',
        validateCode: 'return args.word === "" ? "word must not be empty" : null;',
      }),
    );
    const shout = registry.get('shout');
    expect(await shout?.prepareArguments?.({ text: 'legacy' })).toEqual({ text: 'legacy', word: 'legacy' });
    expect(await shout?.validateRequiredArgs?.({ word: '' })).toBe('word must not be empty');
    expect(await shout?.validateRequiredArgs?.({ word: 'ok' })).toBeNull();
  });

  it('never overwrites: a taken name is refused and the existing file is left as it was', async () => {
    await writeFile(join(toolsDir, 'notes.json'), '{"mine": true}');
    await expect(write(spec('notes'))).rejects.toThrow(
      'the tools directory already has a file "notes.json"; pick another name',
    );
    await write(spec('shout'));
    const before = await readFile(join(toolsDir, 'shout.ts'), 'utf8');
    await expect(write(spec('Shout', { executeCode: 'return textResult("other");' }))).rejects.toThrow(
      'a tool named "shout" already exists',
    );
    expect(await readFile(join(toolsDir, 'shout.ts'), 'utf8')).toBe(before);
    expect(await readFile(join(toolsDir, 'notes.json'), 'utf8')).toBe('{"mine": true}');
  });

  it('answers a repeated identical call (a retry after a lost worker) without writing again', async () => {
    await write(spec('shout'));
    const { mtimeMs } = await stat(join(toolsDir, 'shout.ts'));
    const again = await write(spec('shout'));
    expect(again.content[0]?.text).toContain('Created tool "shout"');
    expect((await stat(join(toolsDir, 'shout.ts'))).mtimeMs).toBe(mtimeMs);
  });

  it('never writes outside the tools directory', async () => {
    await expect(write(spec('../escaped'))).rejects.toThrow('name "../escaped" is not an identifier');
    await expect(writeFileOnce(toolsDir, '../escaped.ts', 'x')).rejects.toThrow(
      `Refusing to write ../escaped.ts: it is not a file name inside ${toolsDir}`,
    );
    expect(await readdir(root)).toEqual(['tools']);
    expect(await readdir(toolsDir)).toEqual([]);
  });

  it('keeps the file that won a race and reports it instead of replacing it', async () => {
    await writeFile(join(toolsDir, 'raced.ts'), 'the winner');
    const outcome = await writeFileOnce(toolsDir, 'raced.ts', 'the loser');
    expect(outcome).toEqual({ written: false, file: join(toolsDir, 'raced.ts'), existing: 'the winner' });
    expect(await readdir(toolsDir)).toEqual(['raced.ts']);
  });

  it('rejects a body that closes the template function early', async () => {
    await expect(
      write(spec('escape', { executeCode: 'return textResult("a");\n}\nfunction outside() {' })),
    ).rejects.toThrow(
      'executeCode line 3: the code must be only the body of the function; here it continues after the function has been closed',
    );
  });
});

describe('the watched tools directory', () => {
  let toolsDir: string;
  beforeEach(async () => {
    toolsDir = await mkdtemp(join(tmpdir(), 'yiem-watch-'));
  });
  afterEach(async () => rm(toolsDir, { recursive: true, force: true }));

  const toolFile = (name: string): string =>
    `export function getTool() { return { name: '${name}', label: '${name}', description: 'd', inputSchema: { type: 'object' }, parallelToolExecute: true, execute: () => ({ content: [] }) }; }\n`;

  it('picks up added files, drops removed ones, and skips a broken file until it changes', async () => {
    const registry = new ToolRegistry();
    await registry.watchTools(toolsDir);
    await writeFile(join(toolsDir, 'alpha.ts'), toolFile('alpha'));
    await writeFile(join(toolsDir, 'broken.ts'), 'export function getTool( {');
    await registry.refresh();
    expect(registry.names()).toEqual(['alpha']);

    await writeFile(join(toolsDir, 'broken.ts'), toolFile('mended'));
    await rm(join(toolsDir, 'alpha.ts'));
    await registry.refresh();
    expect(registry.names()).toEqual(['mended']);
  });
});

describe('sandbox network access', () => {
  let server: Server;
  let url: string;
  beforeEach(async () => {
    server = createServer((_request, response) => response.end('{"wines": 3}'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/wines`;
  });
  afterEach(async () => new Promise<void>((resolve) => server.close(() => resolve())));

  const fetchingTool = (allowNetwork: boolean): ActivityTool =>
    sandboxedTool(
      {
        name: 'countWines',
        label: 'Count Wines',
        description: 'd',
        inputSchema: { type: 'object' },
        parallelToolExecute: true,
        executeSource: wrapCode(
          'executeCode',
          `const response = await fetch(${JSON.stringify(url)});\nreturn textResult(response.status + " " + (await response.json()).wines);`,
        ),
        validateSource: null,
        prepareSource: null,
      },
      resolveSandboxSettings({ allowNetwork }),
    );

  it('fetches only on a worker that allows network', async () => {
    const allowed = await fetchingTool(true).execute('c', {}, undefined, noPartials);
    expect(allowed.content).toEqual([{ type: 'text', text: '200 3' }]);
    await expect(fetchingTool(false).execute('c', {}, undefined, noPartials)).rejects.toThrow(
      `Network access is not allowed: this worker runs written tools without network (fetch of ${url} refused)`,
    );
  });
});
