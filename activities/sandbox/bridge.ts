import type ivm from 'isolated-vm';
import pLimit from 'p-limit';
import { describeThrown } from '../../src/contract/thrown.ts';
import { isolatedVm } from './isolatedVm.ts';

/** File reads and fetches one sandboxed call may have running at once; the rest wait their turn. */
const MAX_RUNNING_HOST_CALLS = 8;
/** Host calls one sandboxed call may have waiting; past this they fail at once instead of queueing. */
const MAX_WAITING_HOST_CALLS = 1_000;

/** The JSON every bridge settles with; the prelude turns it back into a value or a thrown Error. */
export type BridgeOutcome = { ok: true; value: unknown } | { ok: false; message: string };

/**
 * Makes host functions for one sandboxed call. Each returns a promise that never rejects: it settles
 * with a {@link BridgeOutcome} as JSON, whatever the isolate passed and however it called it. A
 * rejected promise handed to isolated-vm could otherwise surface as an unhandled rejection and kill
 * the worker. Calls share one concurrency limit, so a tool cannot open thousands of files at once.
 */
export function bridgeFactory(): (run: (...args: unknown[]) => Promise<unknown>) => ivm.Reference {
  const limit = pLimit(MAX_RUNNING_HOST_CALLS);
  const { Reference } = isolatedVm();
  return (run) =>
    new Reference((...args: unknown[]): Promise<string> => {
      if (limit.pendingCount >= MAX_WAITING_HOST_CALLS) {
        return Promise.resolve(
          failed(
            `Too many readFile/fetch calls at once: at most ${MAX_RUNNING_HOST_CALLS} run and ${MAX_WAITING_HOST_CALLS} wait; await some before starting more`,
          ),
        );
      }
      return limit(() => run(...args)).then(
        (value) => JSON.stringify({ ok: true, value } satisfies BridgeOutcome),
        (error: unknown) => failed(describeThrown(error)),
      );
    });
}

/** A host function the isolate calls without waiting (logs, progress): whatever it throws is dropped. */
export function fireAndForget(run: (value: unknown) => void): ivm.Reference {
  const { Reference } = isolatedVm();
  return new Reference((value: unknown) => {
    try {
      run(value);
    } catch {
      // A malformed log line or progress report is the tool's loss, never the worker's.
    }
  });
}

function failed(message: string): string {
  return JSON.stringify({ ok: false, message } satisfies BridgeOutcome);
}
