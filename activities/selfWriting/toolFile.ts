import type { WrittenToolSpec } from '../../src/contract/types/sandbox.ts';

/** Marks where a written file's generated header ends and its tool starts. */
const HEADER_END = '// ---\n';

/**
 * The file writeTool writes: a `getTool()` like any hand-written tool's, whose code is string data
 * handed to the worker's sandbox. Every value is written with JSON.stringify, so nothing the model
 * sends can end a string early and become code the worker would run on import.
 */
export function renderToolFile(spec: WrittenToolSpec, writtenAt: Date): string {
  const header = [
    `// Written by writeTool on ${writtenAt.toISOString()}.`,
    '// The code is data: workers run it only inside their sandbox (no require, process or child processes;',
    '// files and network only as each worker allows). Do not edit; write a new tool instead.',
  ].join('\n');
  return `${header}\n${HEADER_END}${renderBody(spec)}`;
}

/** Whether an existing file holds exactly this tool (a retried writeTool call finds its own file). */
export function holdsSameTool(content: string, spec: WrittenToolSpec): boolean {
  const start = content.indexOf(HEADER_END);
  return start >= 0 && content.slice(start + HEADER_END.length) === renderBody(spec);
}

function renderBody(spec: WrittenToolSpec): string {
  const schema = JSON.stringify(spec.inputSchema, null, 2).replace(/\n/g, '\n    ');
  return [
    'export function getTool(context: { sandboxedTool(spec: object): unknown }) {',
    '  return context.sandboxedTool({',
    `    name: ${JSON.stringify(spec.name)},`,
    `    label: ${JSON.stringify(spec.label)},`,
    `    description: ${JSON.stringify(spec.description)},`,
    `    inputSchema: ${schema},`,
    `    parallelToolExecute: ${spec.parallelToolExecute},`,
    `    executeSource: ${sourceLiteral(spec.executeSource)},`,
    `    validateSource: ${spec.validateSource === null ? 'null' : sourceLiteral(spec.validateSource)},`,
    `    prepareSource: ${spec.prepareSource === null ? 'null' : sourceLiteral(spec.prepareSource)},`,
    '  });',
    '}',
    '',
  ].join('\n');
}

/** Source as one string literal per line, so the file reads like the code it holds. */
function sourceLiteral(source: string): string {
  const lines = source.split('\n').map((line) => `      ${JSON.stringify(line)},`);
  return ['[', ...lines, "    ].join('\\n')"].join('\n');
}
