import { Runtime, type RuntimeOptions } from '@temporalio/worker';
import { WORKER_HEARTBEAT_INTERVAL_MS } from '../infrastructure/workerLiveness.ts';

/**
 * Installs the process's Temporal runtime with `options` and yiem's worker heartbeat interval, by
 * which clients and the other workers of a queue tell a stopped worker within seconds. A process
 * that installed a runtime of its own keeps it. Returns whether this one was installed.
 */
export function installWorkerRuntime(options: RuntimeOptions = {}): boolean {
  if (Runtime._instance !== undefined) return false;
  Runtime.install({ workerHeartbeatInterval: WORKER_HEARTBEAT_INTERVAL_MS, ...options });
  return true;
}
