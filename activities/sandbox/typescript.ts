import type TypeScript from 'typescript';
import { requireOptional } from '../../src/infrastructure/optionalDependency.ts';

let loaded: typeof TypeScript | undefined;

/**
 * The TypeScript compiler, loaded on first use: it takes a noticeable fraction of a second to load,
 * and only workers that write or run written tools need it.
 */
export function typescript(): typeof TypeScript {
  loaded ??= requireOptional<typeof TypeScript>('typescript', 'Writing and running written tools');
  return loaded;
}

/** A written tool's TypeScript as JavaScript for the isolate (types stripped, nothing checked). */
export function transpile(source: string): string {
  const ts = typescript();
  return ts.transpileModule(source, {
    compilerOptions: { target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.ESNext },
  }).outputText;
}
