/** How long the first look waits for a worker's answer: a running worker answers a query in milliseconds. */
const FIRST_LOOK_MS = 1_000;
/**
 * How long the second look waits: a worker in a long workflow task (a model call run as a local
 * activity) answers a query only when it extends that task, within the task's 10 s timeout.
 */
const SECOND_LOOK_MS = 10_000;
/** How often a wait looks whether the conversation's worker still answers. */
const LOOK_EVERY_MS = 2_000;

/** Whether `pending` settles (answered or refused: either way a worker had it) within `ms`. */
async function settlesWithin(pending: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  try {
    return await Promise.race([
      pending.then(
        () => true,
        () => true,
      ),
      late,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Resolves once the conversation's worker no longer answers: `ask(ms)` (a query called off after
 * `ms`) unanswered for a second, then again for longer. Never while `signal` is not aborted and a
 * worker answers. Unlike a look at the queue's pollers, which the server lists for a minute after
 * their process died, this tells a SIGKILLed worker within seconds.
 */
export async function untilUnanswered(
  ask: (ms: number) => Promise<unknown>,
  signal: AbortSignal,
): Promise<void> {
  while (!signal.aborted) {
    if (!(await settlesWithin(ask(FIRST_LOOK_MS), FIRST_LOOK_MS))) {
      if (signal.aborted || !(await settlesWithin(ask(SECOND_LOOK_MS), SECOND_LOOK_MS))) return;
    }
    await new Promise((resolve) => {
      const timer = setTimeout(resolve, LOOK_EVERY_MS);
      signal.addEventListener('abort', () => clearTimeout(timer), { once: true });
      signal.addEventListener('abort', resolve, { once: true });
    });
  }
}
