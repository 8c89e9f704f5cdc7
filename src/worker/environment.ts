import { type Environment, processEnvironment } from '../infrastructure/environment.ts';

/** The environment a worker reads its `YIEM_`, `OPENAI_` and `TEMPORAL_` variables from: its `env` option, else the process's. */
export function workerEnvironment(given: Environment | undefined): Environment {
  return given ?? processEnvironment();
}
