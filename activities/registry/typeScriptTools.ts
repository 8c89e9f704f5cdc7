import { randomUUID } from 'node:crypto';
import module, { type ModuleHooks, type ResolveFnOutput, type ResolveHookContext } from 'node:module';
import { pathToFileURL } from 'node:url';
import { processEnvironment } from '../../src/infrastructure/environment.ts';

/** The query tsx adds to every module it loads in a namespace, which makes each a fresh copy. */
const TSX_NAMESPACE_PARAM = 'tsx-namespace';
/** Where tsx's require() puts it: in the file's path, after an escaped `?`. */
const CJS_NAMESPACE_IN_PATH = /%3Fnamespace=/i;
/** A TypeScript file in an installed package (Node loads none without a loader). */
const SHIPPED_TYPESCRIPT = /\/node_modules\/.*\.[cm]?tsx?(\?|$)/;
/**
 * Whether this process loads TypeScript itself (tsx given to `--import`, as a worker run from sources
 * is): only then can a TypeScript file the worker uses (yiem-agent's sources, in this repository's
 * tests) be shared as it is. Elsewhere Node would strip its types alone, and refuse what it cannot strip.
 */
const PROCESS_LOADS_TYPESCRIPT = /(--import|--loader|--experimental-loader)[= ]\S*tsx/.test(
  [...process.execArgv, processEnvironment().NODE_OPTIONS ?? ''].join(' '),
);
/** Whether a tool's packages can be the worker's: its yiem-agent is JavaScript, or TypeScript this process loads. */
const SHARES_THE_WORKERS_COPY = !import.meta.url.endsWith('.ts') || PROCESS_LOADS_TYPESCRIPT;

/** The hook that sends a tool's package imports to the worker's copies; kept last, so it runs first. */
let sharedPackages: ModuleHooks | undefined;

/**
 * Imports a TypeScript tool file through tsx, in a namespace of its own so a changed file loads
 * afresh. tsx would load every package the tool imports afresh too: `yiem-agent` (and with it
 * `currentToolCall`'s context and `ToolError`) would be another copy than the worker's. A resolve
 * hook that runs before tsx's resolves bare specifiers from the tool's file without the namespace, so
 * they reach the copies the worker loaded; the tool's own files (relative imports) stay fresh.
 */
export async function importTypeScriptTool(file: string): Promise<unknown> {
  const { register, tsImport } = await import('tsx/esm/api');
  const url = pathToFileURL(file).href;
  // Node 22 before 22.15 has no synchronous hooks: tools there get their own copies, as before. So do
  // tools of a worker whose own yiem-agent is TypeScript that this process does not load itself (this
  // repository's test runner): Node would strip those sources alone, and refuse what it cannot strip.
  if (typeof module.registerHooks !== 'function' || !SHARES_THE_WORKERS_COPY)
    return tsImport(url, import.meta.url);
  // What tsImport does, in two steps: a namespace for require() (a CommonJS tool file), one for import.
  const namespace = randomUUID();
  const { register: registerRequire } = await import('tsx/cjs/api');
  registerRequire({ namespace });
  const scoped = register({ namespace });
  // Hooks run last-registered first: registered again after tsx's, so it still runs before them.
  sharedPackages?.deregister();
  sharedPackages = module.registerHooks({ resolve: resolveSharedPackage });
  return scoped.import(url, import.meta.url);
}

function resolveSharedPackage(
  specifier: string,
  context: ResolveHookContext,
  nextResolve: (specifier: string, context?: Partial<ResolveHookContext>) => ResolveFnOutput,
): ResolveFnOutput {
  const parent = context.parentURL && withoutNamespace(context.parentURL);
  if (!parent || parent === context.parentURL || !isBareSpecifier(specifier)) {
    return nextResolve(specifier, context);
  }
  const resolved = nextResolve(specifier, { ...context, parentURL: parent });
  // A package shipped as TypeScript needs tsx's namespace to load at all: it keeps its own copy.
  if (SHIPPED_TYPESCRIPT.test(new URL(resolved.url).pathname.replace(CJS_NAMESPACE_IN_PATH, '?')))
    return resolved;
  // tsx's require() puts the namespace back on the resolved file: taken off again.
  return { ...resolved, url: withoutNamespace(resolved.url) };
}

/**
 * A module's URL without tsx's namespace: a query on an ES module's, and in the path of a CommonJS
 * one (`probe.ts%3Fnamespace=…`), which tsx's require() keeps apart that way.
 */
function withoutNamespace(moduleUrl: string): string {
  if (!moduleUrl.startsWith('file:')) return moduleUrl;
  const url = new URL(moduleUrl);
  url.searchParams.delete(TSX_NAMESPACE_PARAM);
  const bridged = url.pathname.search(CJS_NAMESPACE_IN_PATH);
  if (bridged !== -1) url.pathname = url.pathname.slice(0, bridged);
  return url.href === moduleUrl ? moduleUrl : url.href;
}

/** A package name (`yiem-agent`, `@scope/pkg/sub`): not a path, a URL, a builtin or a `#import`. */
function isBareSpecifier(specifier: string): boolean {
  return !/^(\.|\/|#|[a-zA-Z][a-zA-Z\d+.-]*:)/.test(specifier);
}
