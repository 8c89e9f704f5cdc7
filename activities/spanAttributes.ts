import { createRequire } from 'node:module';
import type * as OtelApi from '@opentelemetry/api';
import { Context } from '@temporalio/activity';
import { describeThrown } from '../src/contract/thrown.ts';
import { GEN_AI, YIEM } from '../src/infrastructure/genAiConventions.ts';

/** Present exactly when tracing can be on: tracing needs the application to install it. */
const otel = loadOtelApi();

function loadOtelApi(): typeof OtelApi | undefined {
  try {
    return createRequire(import.meta.url)('@opentelemetry/api') as typeof OtelApi;
  } catch {
    return undefined;
  }
}

/**
 * Labels the span the tracing interceptor opened for this activity (`RunActivity:callModel`,
 * `RunActivity:executeTool`) with its conversation, what it is about and its attempt (each attempt
 * has its own span); a no-op when tracing is off.
 */
export function annotateActivitySpan(conversationId: string, attributes: OtelApi.Attributes): void {
  otel?.trace.getActiveSpan()?.setAttributes({
    [GEN_AI.conversationId]: conversationId,
    [YIEM.conversationId]: conversationId,
    ...attributes,
    [YIEM.attempt]: Context.current().info.attempt,
  });
}

/** A GenAI span to open inside the activity's span. */
export interface GenAiSpan {
  /** The worker's tracer; absent when tracing is off, and `work` just runs. */
  tracer: OtelApi.Tracer | undefined;
  /** Under the conventions, e.g. `chat gpt-4o-mini`, `execute_tool lookup` (`genAiSpanName`). */
  name: string;
  /** `client` for a call to the model endpoint; default `internal`. */
  kind?: 'client' | 'internal';
  /** What is known before the call. */
  attributes: OtelApi.Attributes;
}

/**
 * Runs `work` in a span that is a child of the activity's span; `work` labels it with what the call
 * returned. A throw marks the span failed (and the activity retries or fails, as without tracing).
 */
export async function inGenAiSpan<T>(
  span: GenAiSpan,
  work: (opened: OtelApi.Span | undefined) => Promise<T>,
): Promise<T> {
  const api = otel;
  if (!span.tracer || !api) return work(undefined);
  const kind = span.kind === 'client' ? api.SpanKind.CLIENT : api.SpanKind.INTERNAL;
  return span.tracer.startActiveSpan(span.name, { kind, attributes: span.attributes }, async (opened) => {
    try {
      return await work(opened);
    } catch (error) {
      opened.setStatus({ code: api.SpanStatusCode.ERROR, message: describeThrown(error) });
      throw error;
    } finally {
      opened.end();
    }
  });
}

/** Marks a span failed with what went wrong (a tool's error result, say), when there is a span. */
export function markSpanFailed(span: OtelApi.Span | undefined, message: string): void {
  if (span && otel) span.setStatus({ code: otel.SpanStatusCode.ERROR, message });
}
