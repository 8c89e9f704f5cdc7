import type TypeScript from 'typescript';
import type { WrittenToolSpec } from '../../src/contract/types/sandbox.ts';
import { SANDBOX_DECLARATIONS } from '../sandbox/prelude.ts';
import { bodyPosition, type CodeField } from '../sandbox/templates.ts';
import { typescript } from '../sandbox/typescript.ts';

const DECLARATIONS_FILE = '/yiem-sandbox/globals.d.ts';
const LIB_FILE = 'lib.es2022.d.ts';

/** Library files parsed once per worker: parsing them is most of a check's cost. */
const libraries = new Map<string, TypeScript.SourceFile | undefined>();

/**
 * Type-checks a written tool's functions (bodies already wrapped in their templates) against the
 * sandbox's globals (ES2022, no DOM, no Node). Returns one line per problem, naming the field and
 * the line and column in the model's own code; an empty list means the code compiles.
 */
export function checkToolCode(
  spec: Pick<WrittenToolSpec, 'executeSource' | 'validateSource' | 'prepareSource'>,
): string[] {
  const ts = typescript();
  const wrapped: [CodeField, string | null][] = [
    ['executeCode', spec.executeSource],
    ['validateCode', spec.validateSource],
    ['prepareCode', spec.prepareSource],
  ];
  const sources = new Map<string, { field: CodeField; text: string }>();
  for (const [field, text] of wrapped) {
    if (text !== null) sources.set(`/yiem-sandbox/${field}.ts`, { field, text });
  }
  const options: TypeScript.CompilerOptions = {
    target: ts.ScriptTarget.ES2022,
    lib: [LIB_FILE],
    strict: true,
    // Model-written catch blocks read `error.message`; `unknown` there would only add noise.
    useUnknownInCatchVariables: false,
    types: [],
    noEmit: true,
  };
  const host = ts.createCompilerHost(options, true);
  const readLibrary = host.getSourceFile.bind(host);
  host.getSourceFile = (fileName, languageVersion) => {
    const source =
      sources.get(fileName)?.text ?? (fileName === DECLARATIONS_FILE ? SANDBOX_DECLARATIONS : undefined);
    if (source !== undefined) return ts.createSourceFile(fileName, source, languageVersion, true);
    if (!libraries.has(fileName)) libraries.set(fileName, readLibrary(fileName, languageVersion));
    return libraries.get(fileName);
  };
  const fileExists = host.fileExists.bind(host);
  host.fileExists = (fileName) =>
    sources.has(fileName) || fileName === DECLARATIONS_FILE || fileExists(fileName);
  host.writeFile = () => {};

  const program = ts.createProgram([DECLARATIONS_FILE, ...sources.keys()], options, host);
  const problems: string[] = [];
  for (const [fileName, { field, text }] of sources) {
    const file = program.getSourceFile(fileName);
    if (!file) continue;
    const escaped = escapedStatement(file);
    if (escaped) {
      problems.push(
        `${field} line ${escaped.line}: the code must be only the body of the function; here it continues after the function has been closed (an extra "}"?)`,
      );
      continue;
    }
    const diagnostics = [...program.getSyntacticDiagnostics(file), ...program.getSemanticDiagnostics(file)];
    for (const diagnostic of diagnostics) problems.push(describe(ts, field, text, diagnostic));
  }
  return problems;
}

/** A statement after the template's function means the body closed the function itself. */
function escapedStatement(file: TypeScript.SourceFile): { line: number } | undefined {
  const extra = file.statements[1];
  if (!extra) return undefined;
  return { line: file.getLineAndCharacterOfPosition(extra.getStart(file)).line };
}

function describe(
  ts: typeof TypeScript,
  field: CodeField,
  wrapped: string,
  diagnostic: TypeScript.Diagnostic,
): string {
  const message = ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n  ');
  if (!diagnostic.file || diagnostic.start === undefined) return `${field}: ${message}`;
  const position = diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start);
  const lastLine = wrapped.split('\n').length - 1;
  if (position.line === 0) return `${field} (the function as a whole): ${message}`;
  if (position.line === lastLine) return `${field} line ${lastLine - 1} (end of the code): ${message}`;
  const { line, column } = bodyPosition(wrapped, position.line, position.character);
  return `${field} line ${line}, column ${column}: ${message}`;
}
