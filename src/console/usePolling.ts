import { useEffect, useState } from 'react';

/** How often the console reads the list and the open conversation's state again. */
export const POLL_MS = 1_500;

/**
 * `load`'s latest answer, read now and every {@link POLL_MS} (and from the start again when `key`,
 * what `load` reads, changes), with the latest failure's message; a slow answer never overwrites a
 * newer one.
 */
export function usePolling<T>(load: () => Promise<T>, key: string): { data: T | null; error: string | null } {
  const [data, setData] = useState<T | null>(null);
  const [error, setError] = useState<string | null>(null);
  // biome-ignore lint/correctness/useExhaustiveDependencies: `load` is new on each render; `key` says when it reads something else.
  useEffect(() => {
    let latest = 0;
    let stopped = false;
    const read = (): void => {
      const asked = ++latest;
      load().then(
        (answer) => {
          if (stopped || asked !== latest) return;
          setData(answer);
          setError(null);
        },
        (failure: Error) => {
          if (!stopped && asked === latest) setError(failure.message);
        },
      );
    };
    read();
    const timer = setInterval(read, POLL_MS);
    return () => {
      stopped = true;
      clearInterval(timer);
    };
  }, [key]);
  return { data, error };
}
