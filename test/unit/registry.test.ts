import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadTools, ToolRegistry } from '../../activities/registry/registry.ts';
import { listToolFiles } from '../../activities/registry/toolFiles.ts';
import { handoffTool } from '../../src/contract/agents.ts';
import { textResult } from '../../src/contract/toolResult.ts';
import type { ActivityTool, AgentTool } from '../../src/contract/types/tools.ts';

let dir: string;

beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'yiem-registry-'));
});

afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function write(name: string, source: string): Promise<string> {
  const file = path.join(dir, name);
  await writeFile(file, source);
  return file;
}

/** A plain-JavaScript tool file; the execute result carries `text`. */
function jsTool(name: string, text = name): string {
  return `export function getTool() {
  return {
    name: ${JSON.stringify(name)},
    label: ${JSON.stringify(`Label ${name}`)},
    description: ${JSON.stringify(`Description of ${name}`)},
    inputSchema: { type: 'object', properties: {} },
    parallelToolExecute: true,
    execute: () => ({ content: [{ type: 'text', text: ${JSON.stringify(text)} }], details: {}, usage: null, terminate: false }),
  };
}
`;
}

/** A TypeScript tool file with type-only syntax; execute returns `text` and the tools seen at load. */
function tsTool(name: string, text = name): string {
  return `interface ToolInfo { name: string; label: string; description: string }
interface Context { listTools(): ToolInfo[] }
type Args = Record<string, unknown>;
const TEXT: string = ${JSON.stringify(text)};

export function getTool(context: Context) {
  const seenAtLoad: string[] = context.listTools().map((tool: ToolInfo) => tool.name);
  return {
    name: ${JSON.stringify(name)} as const,
    label: ${JSON.stringify(`Label ${name}`)},
    description: ${JSON.stringify(`Description of ${name}`)},
    inputSchema: { type: 'object', properties: {} } satisfies Args,
    parallelToolExecute: false,
    execute: (_id: string, _args: Args) => ({
      content: [{ type: 'text' as const, text: TEXT }],
      details: { seenAtLoad, seenNow: context.listTools().map((tool) => tool.name) },
      usage: null,
      terminate: false,
    }),
  };
}
`;
}

async function run(tool: AgentTool | undefined) {
  if (!tool?.execute) throw new Error('tool not loaded');
  return tool.execute('call_1', {}, undefined, () => {});
}

function tool(name: string, overrides: Partial<ActivityTool> = {}): ActivityTool {
  return {
    name,
    label: `Label ${name}`,
    description: `Description of ${name}`,
    inputSchema: { type: 'object' },
    execute: () => textResult(name),
    parallelToolExecute: true,
    ...overrides,
  };
}

describe('loadTools', () => {
  it('loads .ts, .js and .mjs tool files in alphabetical order, skipping other files', async () => {
    await write('b.ts', tsTool('bTool'));
    await write('a.js', jsTool('aTool'));
    await write('c.mjs', jsTool('cTool'));
    await write('notes.txt', 'not a tool');
    await write('x.d.ts', 'export declare function getTool(): unknown;\n');
    await write('y.test.ts', 'throw new Error("a test file must never be loaded as a tool");\n');

    expect((await listToolFiles(dir)).map((file) => path.basename(file))).toEqual(['a.js', 'b.ts', 'c.mjs']);

    const registry = new ToolRegistry();
    const loaded = await registry.loadTools(dir);
    expect(loaded.map((t) => t.name)).toEqual(['aTool', 'bTool', 'cTool']);
    expect(registry.names()).toEqual(['aTool', 'bTool', 'cTool']);
    expect(registry.get('bTool')?.parallelToolExecute).toBe(false);
    expect((await run(registry.get('bTool'))).content).toEqual([{ type: 'text', text: 'bTool' }]);
    expect((await run(registry.get('cTool'))).content).toEqual([{ type: 'text', text: 'cTool' }]);
  });

  it('the module-level loadTools returns the tools of a directory', async () => {
    await write('one.ts', tsTool('one'));
    await write('two.mjs', jsTool('two'));
    expect((await loadTools(dir)).map((t) => t.name)).toEqual(['one', 'two']);
  });

  it('returns nothing for a directory without tool files', async () => {
    await write('README.md', '# tools');
    expect(await new ToolRegistry().loadTools(dir)).toEqual([]);
  });

  it('gives getTool a context whose listTools() lists the registered tools', async () => {
    await write('b.ts', tsTool('bTool'));
    const registry = new ToolRegistry();
    registry.registerTool(tool('early'));
    await registry.loadTools(dir);
    registry.registerTool(tool('late'));

    const result = await run(registry.get('bTool'));
    // At load time the registry held only what was registered before; later calls see every tool.
    expect(result.details.seenAtLoad).toEqual(['early']);
    expect(result.details.seenNow).toEqual(['early', 'bTool', 'late']);
    expect(registry.list()).toEqual([
      { name: 'early', label: 'Label early', description: 'Description of early' },
      { name: 'bTool', label: 'Label bTool', description: 'Description of bTool' },
      { name: 'late', label: 'Label late', description: 'Description of late' },
    ]);
  });

  it('refuses the same tool name in two files, naming both files', async () => {
    const first = await write('a.js', jsTool('same'));
    const second = await write('b.ts', tsTool('same'));
    const registry = new ToolRegistry();
    const error = await registry.loadTools(dir).then(
      () => null,
      (thrown: unknown) => thrown as Error,
    );
    expect(error).toBeInstanceOf(Error);
    expect(error?.message).toContain('Duplicate tool name "same"');
    expect(error?.message).toContain(first);
    expect(error?.message).toContain(second);
  });

  it('refuses a file tool whose name registerTool() already took, naming registerTool() and the file', async () => {
    const file = await write('a.js', jsTool('taken'));
    const registry = new ToolRegistry();
    registry.registerTool(tool('taken'));
    await expect(registry.loadTools(dir)).rejects.toThrow(
      `Duplicate tool name "taken": registered by registerTool() and again by ${file}`,
    );
  });

  it('refuses registerTool() of a name a file already registered, naming the file', async () => {
    const file = await write('a.js', jsTool('fromFile'));
    const registry = new ToolRegistry();
    await registry.loadTools(dir);
    expect(() => registry.registerTool(tool('fromFile'))).toThrow(
      `Duplicate tool name "fromFile": registered by ${file} and again by registerTool()`,
    );
    expect(registry.tools()).toHaveLength(1);
  });

  it('loads tools that import a helper module named _*, and not the helper itself', async () => {
    await write('_format.mjs', 'export const shout = (text) => text.toUpperCase();\n');
    await write(
      'shout.mjs',
      `import { shout } from './_format.mjs';\n${jsTool('shout').replace('"Label shout"', 'shout("Loud")')}`,
    );
    const registry = new ToolRegistry();
    await registry.loadTools(dir);
    expect(registry.list()).toEqual([{ name: 'shout', label: 'LOUD', description: 'Description of shout' }]);
  });

  it('refuses a file without getTool(), naming the file and the naming rule of helpers', async () => {
    const file = await write('broken.mjs', 'export const tool = {};\n');
    await expect(new ToolRegistry().loadTools(dir)).rejects.toThrow(
      `Tool file ${file} does not export a getTool() function (a helper module's name starts with _)`,
    );
  });

  it('refuses a file whose tool lacks a label, naming the file and the field', async () => {
    const file = await write(
      'nolabel.mjs',
      `export const getTool = () => ({ name: 'x', description: 'd', inputSchema: {}, execute() {} });\n`,
    );
    await expect(new ToolRegistry().loadTools(dir)).rejects.toThrow(`Tool from ${file} lacks label`);
  });

  it('refuses a file whose tool has no execute(), naming the file', async () => {
    const file = await write(
      'noexec.mjs',
      `export const getTool = () => ({ name: 'x', label: 'X', description: 'd', inputSchema: {} });\n`,
    );
    await expect(new ToolRegistry().loadTools(dir)).rejects.toThrow(`Tool "x" from ${file} has no execute()`);
  });

  it('reports a getTool() that throws, naming the file and the error', async () => {
    const file = await write(
      'throws.mjs',
      `export function getTool() { throw new Error('API_KEY is not set'); }\n`,
    );
    await expect(new ToolRegistry().loadTools(dir)).rejects.toThrow(
      `getTool() of tool file ${file} threw: API_KEY is not set`,
    );
  });

  it('reports a tool file that does not import, naming the file', async () => {
    const file = await write('syntax.mjs', 'export function getTool( {\n');
    await expect(new ToolRegistry().loadTools(dir)).rejects.toThrow(
      `Tool file ${file} could not be imported:`,
    );
  });

  it('refuses an invalid inputSchema at load, naming the file and what is wrong', async () => {
    const file = await write(
      'badschema.mjs',
      jsTool('badSchema').replace(
        "inputSchema: { type: 'object', properties: {} }",
        "inputSchema: { type: 'objekt' }",
      ),
    );
    const loading = new ToolRegistry().loadTools(dir);
    await expect(loading).rejects.toThrow(`Tool "badSchema" from ${file} has an invalid inputSchema:`);
    await expect(loading).rejects.toThrow('must be equal to one of the allowed values');
  });

  it('loads a new version of an edited .ts tool into a new registry', async () => {
    const file = await write('versioned.ts', tsTool('versioned', 'version 1'));
    const first = new ToolRegistry();
    await first.loadTools(dir);
    expect((await run(first.get('versioned'))).content[0]?.text).toBe('version 1');

    await writeFile(file, tsTool('versioned', 'version 2'));
    const second = new ToolRegistry();
    await second.loadTools(dir);
    expect((await run(second.get('versioned'))).content[0]?.text).toBe('version 2');
    // The first registry keeps the tool it loaded.
    expect((await run(first.get('versioned'))).content[0]?.text).toBe('version 1');
  });
});

describe('registerTool', () => {
  it('registers tools in order and finds them by name', () => {
    const registry = new ToolRegistry();
    registry.registerTool(tool('first'));
    registry.registerTool(tool('second'));
    expect(registry.names()).toEqual(['first', 'second']);
    expect(registry.has('first')).toBe(true);
    expect(registry.has('third')).toBe(false);
    expect(registry.get('second')?.name).toBe('second');
    expect(registry.get('third')).toBeUndefined();
  });

  it('refuses a duplicate, naming registerTool() as both sources', () => {
    const registry = new ToolRegistry();
    registry.registerTool(tool('dup'));
    expect(() => registry.registerTool(tool('dup'))).toThrow(
      'Duplicate tool name "dup": registered by registerTool() and again by registerTool()',
    );
  });

  it.each(['label', 'description', 'name'] as const)('refuses a tool without a %s', (field) => {
    const registry = new ToolRegistry();
    expect(() => registry.registerTool(tool('t', { [field]: '' }))).toThrow(
      `Tool from registerTool() lacks ${field}`,
    );
    expect(registry.names()).toEqual([]);
  });

  it('lists every missing field at once', () => {
    const incomplete = { name: 'x', execute: () => textResult('') } as unknown as AgentTool;
    expect(() => new ToolRegistry().registerTool(incomplete)).toThrow('lacks label, description');
  });

  it('refuses a tool whose execute is not a function', () => {
    const broken = tool('t', { execute: 'nope' as unknown as ActivityTool['execute'] });
    expect(() => new ToolRegistry().registerTool(broken)).toThrow(
      'Tool "t" from registerTool() has no execute()',
    );
  });

  it('registers a tool the workflow runs, which has a runner and no execute()', () => {
    const registry = new ToolRegistry();
    registry.registerTool(handoffTool({ name: 'billing', description: 'Bills', systemPrompt: 'Bill.' }));
    expect(registry.names()).toEqual(['transfer_to_billing']);
  });

  it('refuses a tool with both a runner and an execute(), or a runner of unknown kind', () => {
    const both = { ...tool('t'), runner: { kind: 'handoff' } } as unknown as AgentTool;
    expect(() => new ToolRegistry().registerTool(both)).toThrow(
      'Tool "t" from registerTool() has both a runner and an execute(): its calls run in the workflow, so leave execute out',
    );
    const { execute: _execute, ...described } = tool('u');
    const unknown = { ...described, runner: { kind: 'elsewhere' } } as unknown as AgentTool;
    expect(() => new ToolRegistry().registerTool(unknown)).toThrow(
      'Tool "u" from registerTool() has a runner of unknown kind (make it with agentTool, handoffTool, callbackTool or nexusTool)',
    );
  });

  it('registers an at-most-once tool with a reconcile(), and refuses the flag or reconcile where they cannot apply', () => {
    const registry = new ToolRegistry();
    registry.registerTool(tool('pay', { atMostOnce: true, reconcile: () => 'unknown' }));
    registry.registerTool(tool('push', { atMostOnce: true }));
    expect(registry.get('pay')?.atMostOnce).toBe(true);
    expect(() => registry.registerTool(tool('t', { reconcile: () => 'notDone' }))).toThrow(
      'Tool "t" from registerTool() has a reconcile() but is not atMostOnce: reconcile is asked only about at-most-once calls, so set atMostOnce: true',
    );
    const notFlag = tool('u', { atMostOnce: 'yes' as unknown as boolean });
    expect(() => registry.registerTool(notFlag)).toThrow(
      'Tool "u" from registerTool() has an atMostOnce that is not true or false',
    );
    const notFunction = tool('v', {
      atMostOnce: true,
      reconcile: 'later' as unknown as ActivityTool['reconcile'],
    });
    expect(() => registry.registerTool(notFunction)).toThrow(
      'Tool "v" from registerTool() has a reconcile that is not a function',
    );
    const inWorkflow = {
      ...handoffTool({ name: 'billing', description: 'Bills', systemPrompt: 'Bill.' }),
      atMostOnce: true,
    } as unknown as AgentTool;
    expect(() => registry.registerTool(inWorkflow)).toThrow(
      'Tool "transfer_to_billing" from registerTool() runs in the workflow, where each call runs once by nature: leave atMostOnce and reconcile out',
    );
  });

  it('registers a batched tool, and refuses the flag on tools whose calls need a run of their own', () => {
    const registry = new ToolRegistry();
    registry.registerTool(tool('many', { batched: true }));
    expect(registry.get('many')?.batched).toBe(true);
    const refusals: Array<[Partial<ActivityTool>, string]> = [
      [{ batched: 'yes' as unknown as boolean }, 'has a batched that is not true or false'],
      [{ batched: true, atMostOnce: true }, 'is atMostOnce and batched'],
      [{ batched: true, localActivity: true }, 'is a localActivity and batched'],
    ];
    for (const [overrides, problem] of refusals) {
      expect(() => registry.registerTool(tool('t', overrides))).toThrow(
        `Tool "t" from registerTool() ${problem}`,
      );
    }
    const inWorkflow = {
      ...handoffTool({ name: 'billing', description: 'Bills', systemPrompt: 'Bill.' }),
      batched: true,
    } as unknown as AgentTool;
    expect(() => registry.registerTool(inWorkflow)).toThrow(
      'Tool "transfer_to_billing" from registerTool() runs in the workflow, not in an activity: leave batched out',
    );
  });

  it('registers a localActivity tool, and refuses the flag beside what needs an activity of its own', () => {
    const registry = new ToolRegistry();
    registry.registerTool(
      tool('quick', { localActivity: true, policy: { startToCloseTimeout: '5 seconds' } }),
    );
    expect(registry.get('quick')?.localActivity).toBe(true);
    const refusals: Array<[Partial<ActivityTool>, string]> = [
      [{ localActivity: 'yes' as unknown as boolean }, 'has a localActivity that is not true or false'],
      [{ localActivity: true, atMostOnce: true }, 'is atMostOnce and a localActivity'],
      [{ localActivity: true, taskQueue: 'gpu' }, 'has a taskQueue and is a localActivity'],
      [
        { localActivity: true, policy: { heartbeatTimeout: '5 seconds' } },
        'is a localActivity with a heartbeatTimeout or scheduleToStartTimeout in its policy',
      ],
    ];
    for (const [overrides, problem] of refusals) {
      expect(() => registry.registerTool(tool('t', overrides))).toThrow(
        `Tool "t" from registerTool() ${problem}`,
      );
    }
    const inWorkflow = {
      ...handoffTool({ name: 'billing', description: 'Bills', systemPrompt: 'Bill.' }),
      localActivity: true,
    } as unknown as AgentTool;
    expect(() => registry.registerTool(inWorkflow)).toThrow(
      'Tool "transfer_to_billing" from registerTool() runs in the workflow, not in an activity: leave localActivity out',
    );
  });

  it('refuses a tool without an inputSchema object', () => {
    const broken = tool('t', { inputSchema: null as unknown as AgentTool['inputSchema'] });
    expect(() => new ToolRegistry().registerTool(broken)).toThrow('has no inputSchema object');
  });

  it.each(['get weather', '1tool', 'a.b', 'x'.repeat(65), 'wetter/heute'])(
    'refuses the invalid name %j',
    (name) => {
      expect(() => new ToolRegistry().registerTool(tool(name))).toThrow(
        `Tool name "${name}" from registerTool() must be 1-64 letters, digits, _ or -`,
      );
    },
  );

  it.each(['getWeather', '_private', 'get-time', 'x'.repeat(64)])('accepts the valid name %j', (name) => {
    const registry = new ToolRegistry();
    registry.registerTool(tool(name));
    expect(registry.has(name)).toBe(true);
  });
});
