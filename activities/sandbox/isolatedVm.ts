import type IsolatedVm from 'isolated-vm';
import { requireOptional } from '../../src/infrastructure/optionalDependency.ts';
import { typescript } from './typescript.ts';

/** The version the README installs: prebuilt for Node 22 and 24, so no compiler is needed. */
export const ISOLATED_VM_INSTALL = 'isolated-vm@6.2.0';

/** The sandbox's native addon, which only applications running written tools install. */
export function isolatedVm(): typeof IsolatedVm {
  return requireOptional('isolated-vm', 'Running written tools', ISOLATED_VM_INSTALL);
}

/**
 * Loads what written tools need (the sandbox and the compiler) at a worker's start, so that a worker
 * that cannot run them refuses to start with the reason instead of failing its first written tool.
 */
export function assertSandboxLoads(): void {
  isolatedVm();
  typescript();
}
