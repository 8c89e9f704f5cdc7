/**
 * Agent definitions (layer 4): an agent a conversation calls as a tool or hands over to. Plain data,
 * below tools, because a tool's runner names the agent it runs.
 */

import type { GuardrailNames } from './guardrails.ts';
import type { SpendLimits } from './spend.ts';

/**
 * An agent a conversation can call as a tool (`agentTool`) or hand the conversation to
 * (`handoffTool`). Plain data: it travels in history to the child conversation or the next model call.
 */
export interface AgentDefinition {
  /** 1-64 letters, digits, `_` or `-`: the agent tool's name, e.g. `researcher`. */
  name: string;
  /** What the agent is good for; the calling model reads it as the tool's description. */
  description: string;
  /** The instructions its model calls start with. */
  systemPrompt: string;
  /** Names of tools registered on the worker that this agent's model is offered. Default: none. */
  tools?: string[];
  /** The model this agent's calls go to. Default: the calling conversation's model. */
  model?: string;
  /** Model calls a sub-agent may make for one task. Default: the calling conversation's limit. */
  maxModelCallsPerTurn?: number;
  /**
   * What one task of this agent may spend. The calling conversation's remaining budget bounds it
   * too, and what it spends is added to the caller's.
   */
  budget?: SpendLimits;
  /**
   * The guardrails that check this agent's messages instead of the conversation's: a sub-agent's
   * child conversation runs them, and after a handoff to it they replace the conversation's.
   * Default: a sub-agent runs none; a handoff keeps the conversation's.
   */
  guardrails?: GuardrailNames;
}
