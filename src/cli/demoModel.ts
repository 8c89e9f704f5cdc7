import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import { type ScriptedModel, type ScriptedReply, startScriptedModel } from '../testing/index.ts';

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
