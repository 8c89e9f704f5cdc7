import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import { textResult } from '../contract/toolResult.ts';
import type { ToolArguments } from '../contract/types/base.ts';
import type { AgentToolResult } from '../contract/types/tools.ts';
import { type ScriptedModel, type ScriptedReply, startScriptedModel } from '../testing/index.ts';
import type { ToolRegistry } from '../worker/index.ts';
import { cliEnvironment } from './environment.ts';

/** The variables that name a model; with none of them set, `yiem dev` and `yiem worker` use the demo model. */
export const MODEL_VARIABLES = 'OPENAI_BASE_URL, OPENAI_API_KEY, YIEM_MODEL';

/** What `yiem dev` and `yiem worker` print when they use the demo model. */
export const DEMO_MODEL_BANNER = `No model endpoint set (${MODEL_VARIABLES}): using the offline demo model, a rule-based stand-in that only shows the loop. Set OPENAI_BASE_URL (and OPENAI_API_KEY, YIEM_MODEL) for a real model.`;

/** Whether nothing names a model endpoint, so that the demo model is used. */
export function wantsDemoModel(env: NodeJS.ProcessEnv = cliEnvironment()): boolean {
  return !env.OPENAI_BASE_URL && !env.OPENAI_API_KEY;
}

/**
 * A rule-based stand-in for a model, so `yiem dev` shows the whole loop on a machine with no model
 * endpoint: a question about weather or time calls getWeather and getTime together, then their
 * results are summarised; "read <file>" has the chat read a file on this machine (readUserFile). It is a demo, not a model: anything else gets a hint to set one up.
 */
export function startDemoModel(): Promise<ScriptedModel> {
  return startScriptedModel({
    modelId: 'yiem-demo',
    chunkSize: 8,
    respond: (request) => demoReply(request.body.messages),
  });
}

function demoReply(messages: ChatCompletionMessageParam[]): ScriptedReply {
  const last = messages.at(-1);
  // Streamed in small, paced pieces so the chat shows the text arriving.
  if (last?.role === 'tool') return { kind: 'text', text: summariseToolResults(messages), deltaDelayMs: 30 };
  const question = typeof last?.content === 'string' ? last.content : '';
  const city = cityIn(question);
  if (/weather|time|clock/i.test(question) && city) {
    return {
      kind: 'toolCalls',
      toolCalls: [
        { name: 'getWeather', arguments: { city } },
        { name: 'getTime', arguments: { city } },
      ],
    };
  }
  const file = /\bread (?:the file )?(\S+\.\w+)/i.exec(question)?.[1];
  if (file) return { kind: 'toolCalls', toolCalls: [{ name: 'readUserFile', arguments: { path: file } }] };
  if (/tools?\b/i.test(question))
    return { kind: 'toolCalls', toolCalls: [{ name: 'listTools', arguments: {} }] };
  return {
    kind: 'text',
    text:
      'I am the offline demo model. Ask "What is the weather and time in Tokyo?", "Read package.json" or "Which tools do you have?". ' +
      'Set OPENAI_BASE_URL (and OPENAI_API_KEY, YIEM_MODEL) to talk to a real model.',
  };
}

function cityIn(question: string): string | undefined {
  return /\bin ([A-Z][\p{L}]+(?: [A-Z][\p{L}]+)*)/u.exec(question)?.[1];
}

function summariseToolResults(messages: ChatCompletionMessageParam[]): string {
  const lastAssistant = messages.findLastIndex((message) => message.role === 'assistant');
  return messages
    .slice(lastAssistant + 1)
    .map((message) => (typeof message.content === 'string' ? message.content : ''))
    .join('\n');
}

/**
 * The demo's getWeather: the built-in one, which asks Open-Meteo, except that when Open-Meteo cannot
 * be reached it answers with sample weather labelled as such, so the demo chats on a machine with no
 * network. Anything else (a city not found, an HTTP error) fails as the built-in tool fails.
 */
export function installOfflineDemoWeather(registry: ToolRegistry): void {
  const weather = registry.get('getWeather');
  if (!weather?.execute) return;
  const { execute } = weather;
  registry.unregisterTool('getWeather');
  registry.registerTool(
    {
      ...weather,
      async execute(toolCallId, args, signal, onPartialResult) {
        try {
          return await execute(toolCallId, args, signal, onPartialResult);
        } catch (error) {
          if (!isUnreachable(error)) throw error;
          return offlineSampleWeather(args, error.message);
        }
      },
    },
    "yiem dev's demo (getWeather with an offline sample)",
  );
}

/** The built-in getWeather's failure to reach a host: its cause is a system error with a `code` (ENOTFOUND, ECONNREFUSED…). */
function isUnreachable(error: unknown): error is Error {
  const { cause } = error instanceof Error ? error : {};
  return cause instanceof Error && 'code' in cause && typeof cause.code === 'string';
}

function offlineSampleWeather(args: ToolArguments, why: string): AgentToolResult {
  const fahrenheit = args.units === 'fahrenheit';
  const temperature = fahrenheit ? '64°F' : '18°C';
  const text =
    `Offline demo, sample weather, not a forecast (${why}): ` +
    `${String(args.city)}: Partly cloudy, ${temperature}, humidity 60%, wind 10 km/h`;
  return textResult(text, { offlineSample: true, unreachable: why });
}
