import { type Environment, processEnvironment } from '../infrastructure/environment.ts';

/** The environment the `yiem` CLI was started with; each command reads it here and passes it down. */
export function cliEnvironment(): Environment {
  return processEnvironment();
}
