import { isSafePattern } from 'redos-detector';

/** How long the checker may spend on one pattern; a pattern it cannot clear in time is refused. */
const CHECK_TIMEOUT_MS = 200;

/**
 * Why a schema's regular expressions (`pattern`, `patternProperties`) are unsafe to validate with,
 * or undefined when they are safe. ajv runs them on the worker's event loop, so one that can
 * backtrack catastrophically (`^(a+)+$`) would stall the worker on a crafted argument.
 */
export function unsafePatternProblem(schema: unknown): string | undefined {
  const unsafe = schemaPatterns(schema).filter((pattern) => !isSafe(pattern));
  if (unsafe.length === 0) return undefined;
  return `inputSchema has ${unsafe.length === 1 ? 'a regular expression' : 'regular expressions'} that can backtrack for a very long time on some inputs, stalling the worker: ${unsafe.map((pattern) => JSON.stringify(pattern)).join(', ')}. Use patterns without nested or overlapping repetition (e.g. "^a+$", not "^(a+)+$"), or check the value in validateCode`;
}

function isSafe(pattern: string): boolean {
  try {
    return isSafePattern(pattern, { unicode: true, timeout: CHECK_TIMEOUT_MS }).safe;
  } catch {
    // A pattern the checker cannot parse is one ajv cannot compile either; that check reports it.
    return true;
  }
}

/** Every `pattern` string and `patternProperties` key anywhere in the schema, iteratively. */
function schemaPatterns(schema: unknown): string[] {
  const patterns: string[] = [];
  const stack: unknown[] = [schema];
  while (stack.length > 0) {
    const node = stack.pop();
    if (typeof node !== 'object' || node === null) continue;
    if (Array.isArray(node)) {
      stack.push(...node);
      continue;
    }
    for (const [key, value] of Object.entries(node)) {
      if (key === 'pattern' && typeof value === 'string') patterns.push(value);
      if (key === 'patternProperties' && typeof value === 'object' && value !== null) {
        patterns.push(...Object.keys(value));
      }
      stack.push(value);
    }
  }
  return patterns;
}
