/** The floor's activities: the model call over HTTP to the scripted model, and the bench's two tools. */
import { setTimeout as sleep } from 'node:timers/promises';
import OpenAI from 'openai';
import { SLOW_TOOL_MS } from '../tools.ts';

export interface FloorActivities {
  /** One chat completion for `text`; the names of the tools the reply asks for. */
  model(text: string): Promise<string[]>;
  /** `noop` returns at once, `sleep200` after 200 ms, as the bench's tools of ours do. */
  tool(name: string): Promise<string>;
  /** The tools of one reply in this one activity: together when `parallel`, else one after another. */
  tools(names: string[], parallel: boolean): Promise<string[]>;
}

async function tool(name: string): Promise<string> {
  if (name === 'sleep200') await sleep(SLOW_TOOL_MS);
  return 'ok';
}

export function createFloorActivities(modelBaseURL: string): FloorActivities {
  const openai = new OpenAI({ baseURL: modelBaseURL, apiKey: 'floor', maxRetries: 0 });
  return {
    async model(text) {
      const completion = await openai.chat.completions.create({
        model: 'floor',
        messages: [{ role: 'user', content: text }],
      });
      return (completion.choices[0]?.message.tool_calls ?? []).flatMap((call) =>
        call.type === 'function' ? [call.function.name] : [],
      );
    },
    tool,
    async tools(names, parallel) {
      if (parallel) return Promise.all(names.map(tool));
      const results: string[] = [];
      for (const name of names) results.push(await tool(name));
      return results;
    },
  };
}
