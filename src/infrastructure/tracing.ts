import { fileURLToPath } from 'node:url';
import type * as OtelApi from '@opentelemetry/api';
import type { Tracer } from '@opentelemetry/api';
import type * as OtelContextAsyncHooks from '@opentelemetry/context-async-hooks';
import type * as OtelCore from '@opentelemetry/core';
import type * as OtelResources from '@opentelemetry/resources';
import type { Resource } from '@opentelemetry/resources';
import type * as OtelTraceBase from '@opentelemetry/sdk-trace-base';
import type { SpanProcessor } from '@opentelemetry/sdk-trace-base';
import type * as TemporalOtel from '@temporalio/interceptors-opentelemetry';
import { SimplePlugin } from '@temporalio/plugin';
import { requireOptional } from './optionalDependency.ts';

/**
 * OpenTelemetry tracing through Temporal's interceptors: the client traces starts, prompts and
 * signals; the worker traces each conversation (`RunWorkflow:conversationWorkflow`), each turn
 * (`invoke_agent`), each model call (`RunActivity:callModel` per attempt, around `chat <model>`) and
 * each tool call (`RunActivity:executeTool` per attempt, around `execute_tool <tool>`), linked into
 * one trace through Temporal headers and labelled with the OpenTelemetry GenAI conventions' names.
 */
export interface TracingOptions {
  /** Where finished spans go, e.g. a `BatchSpanProcessor` around an OTLP exporter. */
  spanProcessor: SpanProcessor;
  /** Resource attributes of every span. Default: `service.name` = `yiem-agent`. */
  resource?: Resource;
}

/** What tracing needs besides the SDK; the application installs them when it turns tracing on. */
export const TRACING_PACKAGES = [
  '@opentelemetry/api@1.9.0',
  '@opentelemetry/context-async-hooks@1.30.1',
  '@opentelemetry/core@1.30.1',
  '@opentelemetry/resources@1.30.1',
  '@opentelemetry/sdk-trace-base@1.30.1',
  '@temporalio/interceptors-opentelemetry@1.23.0',
];

function tracingPackage<T>(name: string): T {
  return requireOptional<T>(name, 'Tracing', TRACING_PACKAGES.join(' '));
}

/** The sandbox module that wraps each turn in its span (see tracingWorkflowInterceptors.ts). */
const TURN_SPANS_MODULE = fileURLToPath(
  new URL(`./tracingWorkflowInterceptors${import.meta.url.endsWith('.ts') ? '.ts' : '.js'}`, import.meta.url),
);

/** Tracing turned on: the Temporal plugins, and the tracer of the spans the activities open. */
export interface Tracing {
  plugins: SimplePlugin[];
  tracer: Tracer;
}

/**
 * The Temporal plugins that turn tracing on; none when `tracing` is not given. Spans go to
 * `spanProcessor` whatever global tracer provider the application has. Linking spans into one trace
 * needs OpenTelemetry's global context manager and propagator: when the application (e.g. its
 * `NodeSDK`) has registered none, an AsyncLocalStorage context manager and the W3C trace-context
 * propagator are registered. OpenTelemetry is loaded only here, so applications without tracing need
 * not install it.
 */
export function tracingPlugins(tracing: TracingOptions | undefined): SimplePlugin[] {
  return startTracing(tracing)?.plugins ?? [];
}

/** `tracingPlugins`, with the tracer the worker's activities open their GenAI spans with. */
export function startTracing(tracing: TracingOptions | undefined): Tracing | undefined {
  if (!tracing) return undefined;
  const { context, propagation } = tracingPackage<typeof OtelApi>('@opentelemetry/api');
  const { W3CTraceContextPropagator } = tracingPackage<typeof OtelCore>('@opentelemetry/core');
  const { AsyncLocalStorageContextManager } = tracingPackage<typeof OtelContextAsyncHooks>(
    '@opentelemetry/context-async-hooks',
  );
  const { Resource } = tracingPackage<typeof OtelResources>('@opentelemetry/resources');
  const { BasicTracerProvider } = tracingPackage<typeof OtelTraceBase>('@opentelemetry/sdk-trace-base');
  const { OpenTelemetryPlugin } = tracingPackage<typeof TemporalOtel>(
    '@temporalio/interceptors-opentelemetry',
  );
  if (propagation.fields().length === 0) propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  // Refused (returns false) when the application registered its own, which then stays in charge.
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  const resource = tracing.resource ?? new Resource({ 'service.name': 'yiem-agent' });
  const provider = new BasicTracerProvider({ resource, spanProcessors: [tracing.spanProcessor] });
  const tracer = provider.getTracer('yiem-agent');
  return {
    tracer,
    plugins: [
      new OpenTelemetryPlugin({ spanProcessor: tracing.spanProcessor, resource, tracer }),
      // After Temporal's workflow interceptors, inside them: their span is the active one.
      new SimplePlugin({
        name: 'yiem-agent-turn-spans',
        workerInterceptors: { workflowModules: [TURN_SPANS_MODULE] },
      }),
    ],
  };
}
