import {
  SANDBOX_CONSOLE_LINE_CHARS,
  SANDBOX_CONSOLE_LINES_PER_CALL,
  SANDBOX_CONSOLE_LINES_PER_SECOND,
} from '../../src/contract/limits.ts';

/**
 * The globals a written tool sees inside its isolate, as plain JavaScript run before its code. The
 * host functions (`__host*`) are isolated-vm References; every one of them checks its own limits
 * on the worker side, so reaching them directly gains nothing.
 */
export const SANDBOX_PRELUDE = `
// WebAssembly memory lives outside the isolate's heap limit: a tool could allocate gigabytes with it.
delete globalThis.WebAssembly;
class ToolError extends Error {
  constructor(message) { super(message); this.name = 'ToolError'; }
}
const textContent = (text) => ({ type: 'text', text: String(text) });
const textResult = (text, details = {}) => ({ content: [textContent(text)], details, usage: null, terminate: false });
const __hostCall = async (bridge, args) => {
  const outcome = JSON.parse(await bridge.apply(undefined, args, { result: { promise: true, copy: true } }));
  if (!outcome.ok) throw new Error(outcome.message);
  return outcome.value;
};
const readFile = (path) => __hostCall(__hostReadFile, [String(path)]);
const fetch = async (url, init = {}) => {
  const request = JSON.stringify({ method: init.method, headers: init.headers, body: init.body });
  const response = await __hostCall(__hostFetch, [String(url), request]);
  return { ...response, text: async () => response.body, json: async () => JSON.parse(response.body) };
};
const __format = (values) => values.map((value) => (typeof value === 'string' ? value : JSON.stringify(value))).join(' ');
// Capped and rate-limited here, before a line crosses to the worker's main thread; the rest is
// counted and told in one line when the call ends (__outcome).
const __console = { lines: 0, dropped: 0, second: 0, inSecond: 0 };
const __log = (values) => {
  const now = Date.now();
  if (now - __console.second >= 1000) {
    __console.second = now;
    __console.inSecond = 0;
  }
  if (__console.lines >= ${SANDBOX_CONSOLE_LINES_PER_CALL} || __console.inSecond >= ${SANDBOX_CONSOLE_LINES_PER_SECOND}) {
    __console.dropped++;
    return;
  }
  __console.lines++;
  __console.inSecond++;
  const line = __format(values);
  __hostLog.applyIgnored(undefined, [line.length > ${SANDBOX_CONSOLE_LINE_CHARS} ? line.slice(0, ${SANDBOX_CONSOLE_LINE_CHARS - 1}) + '…' : line]);
};
const __logSummary = () => {
  if (__console.dropped === 0) return;
  __hostLog.applyIgnored(undefined, [
    '… ' + __console.dropped + ' more console lines not shown (a call prints at most ${SANDBOX_CONSOLE_LINES_PER_CALL}, ${SANDBOX_CONSOLE_LINES_PER_SECOND} a second)',
  ]);
};
const console = { log: (...values) => __log(values), warn: (...values) => __log(values), error: (...values) => __log(values) };
const __json = (value) => {
  try {
    return JSON.stringify(value);
  } catch {
    return undefined;
  }
};
// describeThrown (src/contract/thrown.ts) in the isolate, which cannot import it.
const __failure = (error) =>
  JSON.stringify({
    ok: false,
    toolError: error?.name === 'ToolError',
    name: error?.name ?? 'Error',
    message: error instanceof Error ? error.message : typeof error === 'string' ? error : (__json(error) ?? String(error)),
  });
const __outcome = async (run) => {
  try {
    return JSON.stringify({ ok: true, value: await run() });
  } catch (error) {
    return __failure(error);
  } finally {
    __logSummary();
  }
};
const __outcomeSync = (run) => {
  try {
    return JSON.stringify({ ok: true, value: run() });
  } catch (error) {
    return __failure(error);
  }
};
`;

/**
 * TypeScript declarations of the same globals, for checking a tool's code before it is written. Kept
 * next to the prelude so the two cannot drift apart unnoticed.
 */
export const SANDBOX_DECLARATIONS = `
type ToolArguments = Record<string, any>;
interface TextContent { type: 'text'; text: string }
interface Usage { inputTokens: number; outputTokens: number; totalTokens: number }
interface AgentToolResult { content: TextContent[]; details: Record<string, unknown>; usage: Usage | null; terminate: boolean }
type OnPartialResult = (partial: Record<string, unknown>) => void;
/** Written tools are stopped by their time limit; the signal is always undefined inside the sandbox. */
type ToolSignal = { readonly aborted: boolean };
/** A failure the model should see as the tool result. */
declare class ToolError extends Error { constructor(message: string) }
declare function textContent(text: string): TextContent;
declare function textResult(text: string, details?: Record<string, unknown>): AgentToolResult;
/** Reads a UTF-8 file; only paths on the worker's allowlist. */
declare function readFile(path: string): Promise<string>;
interface SandboxResponse { ok: boolean; status: number; statusText: string; headers: Record<string, string>; body: string; text(): Promise<string>; json(): Promise<any> }
/** HTTP request; only on workers that allow written tools network access. */
declare function fetch(url: string, init?: { method?: string; headers?: Record<string, string>; body?: string }): Promise<SandboxResponse>;
declare const console: { log(...values: unknown[]): void; warn(...values: unknown[]): void; error(...values: unknown[]): void };
`;
