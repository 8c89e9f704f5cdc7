import { type Environment, processEnvironment } from '../infrastructure/environment.ts';

/** The environment a client reads its `YIEM_` and `TEMPORAL_` variables from: its `env` option, else the process's. */
export function clientEnvironment(given: Environment | undefined): Environment {
  return given ?? processEnvironment();
}
