import { createRequire } from 'node:module';
import type * as OtelApi from '@opentelemetry/api';

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
 * `RunActivity:executeTool`) with what it is about; a no-op when tracing is off.
 */
export function annotateActivitySpan(attributes: OtelApi.Attributes): void {
  otel?.trace.getActiveSpan()?.setAttributes(attributes);
}
