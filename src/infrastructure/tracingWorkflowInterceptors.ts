import * as otel from '@opentelemetry/api';
import { type WorkflowInterceptors, workflowInfo } from '@temporalio/workflow';
import { observeTurns } from '../contract/turnObservers.ts';
import { GEN_AI, genAiSpanName, YIEM } from './genAiConventions.ts';

// Runs in the workflow sandbox, bundled (only when tracing is on) after Temporal's OpenTelemetry
// workflow interceptors, whose tracer provider it uses: their spans leave the sandbox through a sink
// that is not called on replay, so a replayed turn exports no second span.

const CONVERSATION_WORKFLOW = 'conversationWorkflow';

/** Each turn is an `invoke_agent` span, the parent of its model and tool calls' activities. */
observeTurns((turn, run) =>
  otel.trace.getTracer('yiem-agent').startActiveSpan(
    genAiSpanName('invoke_agent', turn.agentName),
    {
      attributes: {
        [GEN_AI.operationName]: 'invoke_agent',
        [GEN_AI.conversationId]: turn.conversationId,
        ...(turn.agentName ? { [GEN_AI.agentName]: turn.agentName } : {}),
        [YIEM.conversationId]: turn.conversationId,
        [YIEM.turn]: turn.turn,
      },
    },
    async (span) => {
      try {
        const result = await run();
        span.setAttribute(YIEM.turnStatus, result.status);
        const spent = turn.spent?.();
        if (spent) {
          span.setAttributes({
            [YIEM.turnActions]: spent.actions,
            [GEN_AI.inputTokens]: spent.inputTokens,
            [GEN_AI.outputTokens]: spent.outputTokens,
            [YIEM.cost]: spent.cost,
          });
        }
        if (result.error) span.setStatus({ code: otel.SpanStatusCode.ERROR, message: result.error });
        return result;
      } finally {
        span.end();
      }
    },
  ),
);

/** Labels the conversation's `RunWorkflow:conversationWorkflow` span with its conversation id. */
export const interceptors = (): WorkflowInterceptors => ({
  inbound: [
    {
      execute: (input, next) => {
        const { workflowType, workflowId } = workflowInfo();
        if (workflowType === CONVERSATION_WORKFLOW) {
          otel.trace.getActiveSpan()?.setAttributes({
            [GEN_AI.conversationId]: workflowId,
            [YIEM.conversationId]: workflowId,
          });
        }
        return next(input);
      },
    },
  ],
});
