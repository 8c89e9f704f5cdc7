import { type Attributes, trace } from '@opentelemetry/api';

/**
 * Labels the span the tracing interceptor opened for this activity (`RunActivity:callModel`,
 * `RunActivity:executeTool`) with what it is about; a no-op when tracing is off.
 */
export function annotateActivitySpan(attributes: Attributes): void {
  trace.getActiveSpan()?.setAttributes(attributes);
}
