import { createOpenAIClient } from '../../activities/model.ts';
import { formatMessages } from '../../activities/models/formatMessages.ts';
import { parseAssistantMessage } from '../../activities/models/parseReply.ts';
import { resolveModelSettings } from '../../activities/models/settings.ts';
import type { AssistantMessage, Message } from '../../src/contract/types/messages.ts';
import type { ModelSettings } from '../../src/contract/types/models.ts';

/** The baseline's model call: the whole context travels in the activity input, so into history. */
export interface BaselineActivities {
  callModelWithContext(input: { systemPrompt: string; messages: Message[] }): Promise<AssistantMessage>;
}

export function createBaselineActivities(model: ModelSettings): BaselineActivities {
  const settings = resolveModelSettings(model);
  const openai = createOpenAIClient(settings);
  return {
    async callModelWithContext({ systemPrompt, messages }) {
      const completion = await openai.chat.completions.create({
        model: settings.model,
        messages: formatMessages(systemPrompt, messages),
      });
      return parseAssistantMessage(completion, settings.model);
    },
  };
}
