import { context, propagation } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { Resource } from '@opentelemetry/resources';
import { BasicTracerProvider, type SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { OpenTelemetryPlugin } from '@temporalio/interceptors-opentelemetry';

/**
 * OpenTelemetry tracing through Temporal's interceptors: the client traces starts, prompts and
 * signals; the worker traces each conversation (`RunWorkflow:conversationWorkflow`), each prompted
 * turn (`HandleUpdate:prompt`), each model call (`RunActivity:callModel`) and each tool call
 * (`RunActivity:executeTool`), linked into one trace through Temporal headers.
 */
export interface TracingOptions {
  /** Where finished spans go, e.g. a `BatchSpanProcessor` around an OTLP exporter. */
  spanProcessor: SpanProcessor;
  /** Resource attributes of every span. Default: `service.name` = `yiem-agent`. */
  resource?: Resource;
}

/**
 * The Temporal plugins that turn tracing on; none when `tracing` is not given. Spans go to
 * `spanProcessor` whatever global tracer provider the application has. Linking spans into one trace
 * needs OpenTelemetry's global context manager and propagator: when the application (e.g. its
 * `NodeSDK`) has registered none, an AsyncLocalStorage context manager and the W3C trace-context
 * propagator are registered.
 */
export function tracingPlugins(tracing: TracingOptions | undefined): OpenTelemetryPlugin[] {
  if (!tracing) return [];
  if (propagation.fields().length === 0) propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  // Refused (returns false) when the application registered its own, which then stays in charge.
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  const resource = tracing.resource ?? new Resource({ 'service.name': 'yiem-agent' });
  const provider = new BasicTracerProvider({ resource, spanProcessors: [tracing.spanProcessor] });
  return [
    new OpenTelemetryPlugin({
      spanProcessor: tracing.spanProcessor,
      resource,
      tracer: provider.getTracer('yiem-agent'),
    }),
  ];
}
