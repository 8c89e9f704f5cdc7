import type { PreparedToolCall } from '../src/contract/protocol.ts';
import type { ToolExecutionMode } from '../src/contract/types.ts';

/**
 * Which prepared calls start together. Each group is a list of indices into the batch; groups run one
 * after another. Sequential mode runs every call alone; parallel mode starts consecutive parallel
 * tools together, and a tool with `parallelToolExecute: false` runs alone in its place.
 * Calls answered in PREPARE need no execution and belong to no group.
 */
export function planExecutionGroups(
  prepared: readonly PreparedToolCall[],
  mode: ToolExecutionMode,
): number[][] {
  const groups: number[][] = [];
  let concurrent: number[] = [];
  const closeConcurrent = (): void => {
    if (concurrent.length > 0) groups.push(concurrent);
    concurrent = [];
  };
  prepared.forEach((call, index) => {
    if (call.kind !== 'ready') return;
    if (mode === 'parallel' && call.parallel) {
      concurrent.push(index);
      return;
    }
    closeConcurrent();
    groups.push([index]);
  });
  closeConcurrent();
  return groups;
}
