/** Median, min and max of a sample. */
export interface Summary {
  median: number;
  min: number;
  max: number;
  n: number;
}

export function summarize(values: readonly number[]): Summary {
  if (values.length === 0) return { median: Number.NaN, min: Number.NaN, max: Number.NaN, n: 0 };
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  const median =
    sorted.length % 2 === 1
      ? (sorted[middle] as number)
      : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
  return { median, min: sorted[0] as number, max: sorted.at(-1) as number, n: values.length };
}

/** `median (min–max)` with a fixed number of decimals. */
export function formatSummary(summary: Summary, decimals = 1, unit = ''): string {
  const f = (value: number) => value.toFixed(decimals);
  return `${f(summary.median)}${unit} (${f(summary.min)}–${f(summary.max)})`;
}

export async function timed<T>(run: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const start = performance.now();
  const value = await run();
  return { ms: performance.now() - start, value };
}

export const MB = 1024 * 1024;
