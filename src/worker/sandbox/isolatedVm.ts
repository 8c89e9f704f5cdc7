import type IsolatedVm from 'isolated-vm';
import { requireOptional } from '../../infrastructure/optionalDependency.ts';

/** isolated-vm compiles a native addon on install, so only applications running written tools install it. */
export function isolatedVm(): typeof IsolatedVm {
  return requireOptional('isolated-vm', 'Running written tools', 'isolated-vm@5.0.4');
}
