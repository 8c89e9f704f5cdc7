/**
 * The seed's templates: writeTool takes function bodies and wraps each in its function, the way the
 * seed wraps `executeCode` in `function executeTool(...) ... end`.
 */

/** The fields of writeTool's input that hold code, and what each becomes. */
export type CodeField = 'executeCode' | 'validateCode' | 'prepareCode';

const SIGNATURES: Record<CodeField, string> = {
  executeCode:
    'async function execute(toolCallId: string, args: ToolArguments, signal: ToolSignal | undefined, onPartialResult: OnPartialResult): Promise<AgentToolResult> {',
  validateCode: 'function validate(args: ToolArguments): string | null | undefined {',
  prepareCode: 'function prepare(args: ToolArguments): ToolArguments {',
};

/** How the sandbox calls each function; `__input` is what the worker copied in. */
export const SANDBOX_CALLS: Record<CodeField, string> = {
  executeCode:
    'execute(__input.toolCallId, __input.args, undefined, (partial) => __hostPartial.applyIgnored(undefined, [JSON.stringify(partial)]))',
  validateCode: 'validate(__input)',
  prepareCode: 'prepare(__input)',
};

const INDENT = '    ';

/**
 * `body` inside its function, indented by four spaces as in the seed. A body with a template literal
 * is left unindented: indenting would change the text of a multi-line literal.
 */
export function wrapCode(field: CodeField, body: string): string {
  const lines = body.replace(/\r\n?/g, '\n').replace(/\n+$/, '').split('\n');
  const indent = body.includes('`') ? '' : INDENT;
  return [SIGNATURES[field], ...lines.map((line) => (line === '' ? '' : indent + line)), '}'].join('\n');
}

/** The 1-based line and column in the model's body of a 0-based position in the wrapped source. */
export function bodyPosition(
  wrapped: string,
  line: number,
  character: number,
): { line: number; column: number } {
  const indented = wrapped.split('\n')[line]?.startsWith(INDENT) ?? false;
  return { line, column: Math.max(1, character + 1 - (indented ? INDENT.length : 0)) };
}
