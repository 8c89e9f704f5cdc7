/**
 * The process environment, read here and nowhere else below the edge of a process: a worker, a
 * client and the CLI each read it once (`src/worker/environment.ts`, `src/client/environment.ts`,
 * `src/cli/environment.ts`) and pass it down as a value, so a test or an embedding application can
 * give each its own. `test/unit/environmentReads.test.ts` fails when product code reads
 * `process.env` anywhere else.
 */

/** Environment variables by name; empty values count as unset where a reader says so. */
export type Environment = Readonly<Record<string, string | undefined>>;

/** This process's environment: the default of the public functions that take an `env`. */
export function processEnvironment(): Environment {
  return process.env;
}

/**
 * Sets a variable of this process that is still unset: for a library that reads its own settings
 * from the environment (the AWS SDK), not for yiem's.
 */
export function defaultProcessVariable(name: string, value: string): void {
  process.env[name] ??= value;
}
