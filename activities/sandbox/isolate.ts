import { describeThrown } from '../../src/contract/thrown.ts';
import { ToolError } from '../../src/contract/toolResult.ts';
import { bridgeFactory, fireAndForget } from './bridge.ts';
import { CHECK_BUDGET_MS, remainingCheckBudgetMs } from './checkBudget.ts';
import { fetchIfAllowed, readAllowedFile } from './hostBridges.ts';
import { isolatedVm } from './isolatedVm.ts';
import { SANDBOX_PRELUDE } from './prelude.ts';
import type { SandboxSettings } from './settings.ts';

/** Validation and preparation hold up PREPARE of their whole batch, so each gets a short leash. */
const CHECK_TIMEOUT_CAP_MS = 1_000;

export interface AsyncSandboxCall {
  /** JavaScript defining the tool's functions (its TypeScript already transpiled). */
  code: string;
  /** An expression over `__input` that evaluates to the call's promise, e.g. `execute(__input.args)`. */
  call: string;
  /** Copied into the isolate as `__input`. */
  input: unknown;
  /** Aborting kills the isolate (the activity was cancelled or timed out). */
  signal?: AbortSignal;
  onPartialResult?: (partial: Record<string, unknown>) => void;
  log: (line: string) => void;
}

/**
 * Runs a call in a fresh isolate that has nothing but the prelude's globals, and kills it at the time
 * or memory limit. Every failure becomes a `ToolError`: the model wrote the code and should see at
 * once what went wrong; retrying the same code would fail the same way.
 */
export async function runInSandbox(settings: SandboxSettings, run: AsyncSandboxCall): Promise<unknown> {
  const ivm = isolatedVm();
  const isolate = new ivm.Isolate({ memoryLimit: settings.memoryMb });
  let stoppedBy: 'time' | 'abort' | undefined;
  const stop = (reason: 'time' | 'abort'): void => {
    stoppedBy ??= reason;
    if (!isolate.isDisposed) isolate.dispose();
  };
  // The isolate's own timeout counts only time spent running JavaScript; this one also counts waiting.
  const deadline = setTimeout(() => stop('time'), settings.timeoutMs);
  const onAbort = (): void => stop('abort');
  run.signal?.addEventListener('abort', onAbort, { once: true });
  try {
    const context = await isolate.createContext();
    const jail = context.global;
    const bridge = bridgeFactory();
    await jail.set(
      '__hostReadFile',
      bridge((path) => readAllowedFile(settings, path)),
    );
    const fetchSignal = AbortSignal.any([
      AbortSignal.timeout(settings.timeoutMs),
      run.signal ?? new AbortController().signal,
    ]);
    await jail.set(
      '__hostFetch',
      bridge((url, init) => fetchIfAllowed(settings, url, init, fetchSignal)),
    );
    await jail.set(
      '__hostLog',
      fireAndForget((line) => run.log(String(line))),
    );
    await jail.set(
      '__hostPartial',
      fireAndForget((json) => {
        const partial: unknown = JSON.parse(String(json));
        if (typeof partial === 'object' && partial !== null && !Array.isArray(partial)) {
          run.onPartialResult?.(partial as Record<string, unknown>);
        }
      }),
    );
    await jail.set('__input', new ivm.ExternalCopy(run.input).copyInto());
    const script = await isolate.compileScript(
      `${SANDBOX_PRELUDE}\n${run.code}\n;__outcome(() => ${run.call});`,
    );
    const outcome: unknown = await script.run(context, {
      timeout: settings.timeoutMs,
      promise: true,
      copy: true,
    });
    return unwrapOutcome(outcome);
  } catch (error) {
    if (error instanceof ToolError) throw error;
    if (stoppedBy === 'abort') throw run.signal?.reason ?? error;
    throw limitError(settings, settings.timeoutMs, error, stoppedBy === 'time');
  } finally {
    clearTimeout(deadline);
    run.signal?.removeEventListener('abort', onAbort);
    if (!isolate.isDisposed) isolate.dispose();
  }
}

/**
 * Runs a check (validation, preparation) in a fresh isolate with no host access. It runs on the
 * isolate's own thread, so the worker's event loop stays free, and within both its own cap and what
 * is left of its batch's budget ({@link withCheckBudget}).
 */
export async function runCheckInSandbox(
  settings: SandboxSettings,
  code: string,
  call: string,
  input: unknown,
): Promise<unknown> {
  const capMs = Math.min(settings.timeoutMs, CHECK_TIMEOUT_CAP_MS);
  const left = remainingCheckBudgetMs();
  const budgetError = new ToolError(
    `Not checked: the written tools' checks of this reply used up their ${CHECK_BUDGET_MS} ms together; call fewer tools at once or make their checks faster`,
  );
  if (left <= 0) throw budgetError;
  const timeoutMs = Math.max(1, Math.min(capMs, left));
  const ivm = isolatedVm();
  const isolate = new ivm.Isolate({ memoryLimit: settings.memoryMb });
  try {
    const context = await isolate.createContext();
    await context.global.set('__input', new ivm.ExternalCopy(input).copyInto());
    const script = await isolate.compileScript(`${SANDBOX_PRELUDE}\n${code}\n;__outcomeSync(() => ${call});`);
    return unwrapOutcome(await script.run(context, { timeout: timeoutMs, copy: true }));
  } catch (error) {
    if (error instanceof ToolError) throw error;
    const limited = limitError(settings, timeoutMs, error, false);
    throw timeoutMs < capMs && limited.message.includes('time limit') ? budgetError : limited;
  } finally {
    if (!isolate.isDisposed) isolate.dispose();
  }
}

function unwrapOutcome(outcome: unknown): unknown {
  const parsed = JSON.parse(String(outcome)) as
    | { ok: true; value?: unknown }
    | { ok: false; toolError: boolean; name: string; message: string };
  if (parsed.ok) return parsed.value;
  throw new ToolError(
    parsed.toolError || parsed.name === 'Error' ? parsed.message : `${parsed.name}: ${parsed.message}`,
  );
}

function limitError(
  settings: SandboxSettings,
  timeoutMs: number,
  error: unknown,
  timedOut: boolean,
): ToolError {
  const message = describeThrown(error);
  if (/memory limit/i.test(message)) {
    return new ToolError(`Killed by the sandbox: it used more than its ${settings.memoryMb} MB memory limit`);
  }
  if (timedOut || /timed out/i.test(message)) {
    return new ToolError(`Killed by the sandbox: it ran longer than its ${timeoutMs} ms time limit`);
  }
  return new ToolError(`The sandbox could not run the tool: ${message}`);
}
