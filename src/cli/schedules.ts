import type { PromptScheduleListing } from '../client/schedules.ts';
import type { ToolExecutionMode } from '../contract/types/conversation.ts';
import { connectedClient } from './commands.ts';
import { type ConnectionFlags, connectionConfig } from './config.ts';

export interface ScheduleCreateFlags extends ConnectionFlags {
  every?: string;
  cron?: string;
  /** The existing conversation each run posts to. */
  conversation?: string;
  system: string;
  mode: ToolExecutionMode;
}

/** `yiem schedule create`: a prompt on a timetable, to a conversation or a new one per run. */
export async function scheduleCreateCommand(
  scheduleId: string,
  text: string,
  flags: ScheduleCreateFlags,
): Promise<void> {
  if (Boolean(flags.every) === Boolean(flags.cron)) {
    throw new Error('Give the timetable as --every <interval> (e.g. 2s, 15m, 1h) or --cron "<expression>"');
  }
  const client = await connectedClient(connectionConfig(flags));
  try {
    await client.schedules.create({
      id: scheduleId,
      text,
      ...(flags.every ? { every: flags.every } : { cron: flags.cron as string }),
      ...(flags.conversation
        ? { conversationId: flags.conversation }
        : { newConversation: { systemPrompt: flags.system, toolExecution: flags.mode } }),
    });
    const target = flags.conversation ? `conversation ${flags.conversation}` : 'a new conversation each run';
    const timetable = flags.every ? `every ${flags.every}` : `cron ${flags.cron}`;
    console.log(`Created schedule ${scheduleId}: ${timetable}, to ${target}.`);
  } finally {
    await client.close();
  }
}

/** `yiem schedule list`: the prompt schedules, with their timetable, target and next run. */
export async function scheduleListCommand(flags: ConnectionFlags): Promise<void> {
  const client = await connectedClient(connectionConfig(flags));
  try {
    const schedules = await client.schedules.list();
    console.log(schedules.length === 0 ? 'No prompt schedules.' : schedules.map(formatSchedule).join('\n'));
  } finally {
    await client.close();
  }
}

/** `yiem schedule delete`: no run starts after this. */
export async function scheduleDeleteCommand(scheduleId: string, flags: ConnectionFlags): Promise<void> {
  const client = await connectedClient(connectionConfig(flags));
  try {
    await client.schedules.delete(scheduleId);
    console.log(`Deleted schedule ${scheduleId}.`);
  } finally {
    await client.close();
  }
}

function formatSchedule(schedule: PromptScheduleListing): string {
  const next = schedule.paused ? 'paused' : `next ${schedule.nextRunAt?.toISOString() ?? '-'}`;
  const last = schedule.recentRuns.at(-1);
  return [
    schedule.id,
    schedule.timetable,
    `to ${schedule.target}`,
    next,
    `${schedule.recentRuns.length} recent run(s)${last ? `, last ${last}` : ''}`,
    JSON.stringify(schedule.text),
  ].join('  ');
}
