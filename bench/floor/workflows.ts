/**
 * The platform's floor: a bare Temporal conversation with none of yiem-agent in it. A turn is an
 * Update that calls the model in an activity, runs the tools the model asked for (activities, local
 * activities or one activity that runs them all, in parallel or one after another), calls the model
 * again and returns: the fewest steps any durable agent on Temporal takes. Benchmark only; not part
 * of the product.
 */
import {
  condition,
  defineSignal,
  defineUpdate,
  proxyActivities,
  proxyLocalActivities,
  setHandler,
} from '@temporalio/workflow';
import type { FloorActivities } from './activities.ts';

/** How a turn runs its tools: an activity each, a local activity each, or one activity for all. */
export type FloorToolKind = 'activity' | 'local' | 'batched';

export interface FloorTurn {
  text: string;
  parallel: boolean;
  tools: FloorToolKind;
}

export const floorTurnUpdate = defineUpdate<string, [FloorTurn]>('turn');
export const floorEndSignal = defineSignal('end');

const activities = proxyActivities<FloorActivities>({ startToCloseTimeout: '1 minute' });
const localActivities = proxyLocalActivities<FloorActivities>({ startToCloseTimeout: '1 minute' });

export async function floorConversation(): Promise<void> {
  let busy = false;
  let ended = false;
  setHandler(floorEndSignal, () => {
    ended = true;
  });
  setHandler(floorTurnUpdate, async ({ text, parallel, tools }) => {
    await condition(() => !busy);
    busy = true;
    try {
      const asked = await activities.model(text);
      if (asked.length === 0) return 'done';
      const run = (tool: string) => (tools === 'local' ? localActivities : activities).tool(tool);
      if (tools === 'batched') await activities.tools(asked, parallel);
      else if (parallel) await Promise.all(asked.map(run));
      else for (const tool of asked) await run(tool);
      await activities.model('done');
      return 'done';
    } finally {
      busy = false;
    }
  });
  await condition(() => ended && !busy);
}
