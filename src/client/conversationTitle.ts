import { CONVERSATION_TITLE_CHARS } from '../contract/limits.ts';
import { truncate } from '../contract/truncate.ts';

/** The title the Web UI shows for a conversation given none: its agent and the system prompt's start. */
export function defaultTitle(agent: string, systemPrompt: string): string {
  const prompt = systemPrompt.replace(/\s+/g, ' ').trim();
  const title = `${agent} · ${prompt}`;
  return truncate(title, CONVERSATION_TITLE_CHARS);
}
