import { Resource } from '@opentelemetry/resources';
import type { SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { OpenTelemetryPlugin } from '@temporalio/interceptors-opentelemetry';

/**
 * OpenTelemetry tracing through Temporal's interceptors: the client traces starts, updates and
 * signals; the worker traces each conversation (`RunWorkflow:conversationWorkflow`), each prompted
 * turn (`HandleUpdate:prompt`), each model call (`RunActivity:callModel`) and each tool call
 * (`RunActivity:executeTool`), all in one trace per request.
 */
export interface TracingOptions {
  /** Where finished spans go, e.g. a `BatchSpanProcessor` around an OTLP exporter. */
  spanProcessor: SpanProcessor;
  /** Resource attributes of every span. Default: `service.name` = `yiem-agent`. */
  resource?: Resource;
}

/** The Temporal plugins that turn tracing on; none when `tracing` is not given. */
export function tracingPlugins(tracing: TracingOptions | undefined): OpenTelemetryPlugin[] {
  if (!tracing) return [];
  return [
    new OpenTelemetryPlugin({
      spanProcessor: tracing.spanProcessor,
      resource: tracing.resource ?? new Resource({ 'service.name': 'yiem-agent' }),
    }),
  ];
}
