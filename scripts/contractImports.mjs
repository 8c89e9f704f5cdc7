// Points imports of the contract's barrel (src/contract/types.ts) at the subject files of
// src/contract/types/ that declare the names they import. Inside the project a module imports the
// subject it needs, so a reader sees which part of the contract it leans on and dependency-cruiser
// sees the layers; only the package's entry (src/index.ts) re-exports the barrel. The lint rule
// "contract-types-barrel-is-for-the-entry" refuses a barrel import; this fixes it:
//
//   node scripts/contractImports.mjs [file ...]   # default: every tracked .ts/.tsx file
//   npx biome check --write <the files it names>  # sorts the new imports
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '..');
const ts = createRequire(import.meta.url)('typescript');
const BARREL = path.join(root, 'src/contract/types.ts');
const ENTRY = path.join(root, 'src/index.ts');
const TYPES_DIR = path.join(root, 'src/contract/types');

/** The subject file (`tools.ts`) that declares each name of the contract. */
function subjectsByName() {
  const subjects = new Map();
  for (const file of readdirSync(TYPES_DIR)) {
    const text = readFileSync(path.join(TYPES_DIR, file), 'utf8');
    const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
    for (const statement of source.statements) {
      if (statement.name && !ts.isImportDeclaration(statement)) subjects.set(statement.name.text, file);
    }
  }
  return subjects;
}

/** The named imports or exports of a statement that reads the barrel; `undefined` for any other statement. */
function barrelBindings(statement, file) {
  const specifier = statement.moduleSpecifier?.text;
  if (!specifier?.startsWith('.') || path.resolve(path.dirname(file), specifier) !== BARREL) return undefined;
  if (ts.isImportDeclaration(statement)) {
    const bindings = statement.importClause?.namedBindings;
    if (!bindings || statement.importClause.name || !ts.isNamedImports(bindings)) {
      throw new Error(`${file}: only named imports of the barrel can be rewritten: ${statement.getText()}`);
    }
    return { keyword: 'import', elements: bindings.elements };
  }
  if (
    ts.isExportDeclaration(statement) &&
    statement.exportClause &&
    ts.isNamedExports(statement.exportClause)
  ) {
    return { keyword: 'export', elements: statement.exportClause.elements };
  }
  throw new Error(`${file}: only named exports of the barrel can be rewritten: ${statement.getText()}`);
}

/** Rewrites one file; true when it changed. Every name is a type (the contract declares no value). */
function rewrite(file, subjects) {
  const text = readFileSync(file, 'utf8');
  const kind = file.endsWith('.tsx') ? ts.ScriptKind.TSX : ts.ScriptKind.TS;
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, kind);
  let relative = path.relative(path.dirname(file), TYPES_DIR);
  if (!relative.startsWith('.')) relative = `./${relative}`;
  const edits = [];
  for (const statement of source.statements) {
    const found = barrelBindings(statement, file);
    if (!found) continue;
    const bySubject = new Map();
    for (const element of found.elements) {
      const name = (element.propertyName ?? element.name).text;
      const subject = subjects.get(name);
      if (!subject) throw new Error(`${file}: no file of src/contract/types/ declares ${name}`);
      const binding = element.propertyName ? `${name} as ${element.name.text}` : name;
      bySubject.set(subject, [...(bySubject.get(subject) ?? []), binding]);
    }
    const lines = [...bySubject].map(
      ([subject, names]) => `${found.keyword} type { ${names.join(', ')} } from '${relative}/${subject}';`,
    );
    edits.push({ start: statement.getStart(source), end: statement.end, text: lines.join('\n') });
  }
  if (edits.length === 0) return false;
  let result = text;
  for (const edit of edits.reverse())
    result = result.slice(0, edit.start) + edit.text + result.slice(edit.end);
  writeFileSync(file, result);
  return true;
}

const files =
  process.argv.length > 2
    ? process.argv.slice(2).map((file) => path.resolve(file))
    : execFileSync('git', ['ls-files', '*.ts', '*.tsx'], { cwd: root, encoding: 'utf8' })
        .split('\n')
        .filter(Boolean)
        .map((file) => path.join(root, file));
const subjects = subjectsByName();
for (const file of files) {
  if (file === BARREL || file === ENTRY || file.startsWith(`${TYPES_DIR}${path.sep}`)) continue;
  if (rewrite(file, subjects)) console.log(path.relative(process.cwd(), file));
}
