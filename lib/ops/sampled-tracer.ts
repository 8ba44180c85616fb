/**
 * A tracer that starts no span under an unsampled local parent: there, the child is the parent
 * itself, a span that records nothing and on which every call is a no-op. Propagation is unchanged
 * (a call to another server still carries the trace id and the "not sampled" flag), and no recorded
 * span is lost: each sampler OTEL_TRACES_SAMPLER can name gives a local child its parent's decision
 * (the parent-based ones by rule, `traceidratio` through the trace id they share, `always_*` alike).
 *
 * What it saves is most of tracing's cost at a low sampling ratio: for the requests that are not
 * sampled, each SQL statement, GraphQL phase, subgraph fetch and @apollo/gateway span would
 * otherwise still get an id, a copy of its attributes, a sampler call and, for active spans, a
 * switch of the async context (docs/benchmarks/ops-cost.md).
 */
import { context, trace, TraceFlags, type Context, type Span, type SpanOptions, type Tracer, type TracerOptions, type TracerProvider } from '@opentelemetry/api';

/** The context's span when it is local and records nothing: the span its children are. */
export function unsampledLocalParent(parentContext: Context): Span | undefined {
  const parent = trace.getSpan(parentContext);
  if (!parent || parent.isRecording()) return undefined;
  const { isRemote, traceFlags } = parent.spanContext();
  // A caller's context (remote) goes to the sampler, which decides for this server's root span.
  return isRemote || traceFlags & TraceFlags.SAMPLED ? undefined : parent;
}

/** How a SampledOnlyTracer may answer for a caller's unsampled context without asking the SDK. */
export interface UnsampledCallers {
  /** A new span id (the SDK's id generator). */
  spanId(): string;
}

export class SampledOnlyTracer implements Tracer {
  /**
   * Given `unsampledCallers` (the sampler never records under a remote parent that is not sampled:
   * a parent-based one with its default for such a parent, or always_off), a server span under a caller's unsampled `traceparent` is
   * made here as the SDK would make it (the caller's trace id, a new span id, not sampled, the
   * caller's tracestate) without the SDK's sampling, attribute copying and span machinery.
   */
  constructor(
    private readonly tracer: Tracer,
    private readonly unsampledCallers?: UnsampledCallers,
    private readonly folded?: ReadonlySet<string>,
  ) {}

  startSpan(name: string, options?: SpanOptions, parentContext: Context = context.active()): Span {
    const parent = trace.getSpan(parentContext);
    if (parent && !parent.isRecording()) {
      const parentSpanContext = parent.spanContext();
      if (!(parentSpanContext.traceFlags & TraceFlags.SAMPLED)) {
        if (!parentSpanContext.isRemote) return parent;
        if (this.unsampledCallers && trace.isSpanContextValid(parentSpanContext)) {
          return trace.wrapSpanContext({
            traceId: parentSpanContext.traceId,
            spanId: this.unsampledCallers.spanId(),
            traceFlags: TraceFlags.NONE,
            ...(parentSpanContext.traceState ? { traceState: parentSpanContext.traceState } : {}),
          });
        }
      }
    }
    return this.tracer.startSpan(name, options, parentContext);
  }

  startActiveSpan<F extends (span: Span) => unknown>(name: string, fn: F): ReturnType<F>;
  startActiveSpan<F extends (span: Span) => unknown>(name: string, options: SpanOptions, fn: F): ReturnType<F>;
  startActiveSpan<F extends (span: Span) => unknown>(name: string, options: SpanOptions, parentContext: Context, fn: F): ReturnType<F>;
  startActiveSpan<F extends (span: Span) => unknown>(name: string, a: F | SpanOptions, b?: F | Context, c?: F): ReturnType<F> {
    // Read by position rather than through a rest array: @apollo/gateway calls this several times a request.
    const fn = (c ?? b ?? a) as (span: Span) => ReturnType<F>;
    const options = b === undefined ? undefined : (a as SpanOptions);
    const named = c !== undefined;
    const parentContext = (named ? (b as Context | undefined) : undefined) ?? context.active();
    const parent = unsampledLocalParent(parentContext);
    // The parent's context is already the active one unless the caller named another.
    if (parent) return named ? context.with(parentContext, fn, undefined, parent) : fn(parent);
    // A folded span is not made: the caller gets a stand-in that records nothing, and its children
    // are the parent's, in the parent's context.
    if (this.folded?.has(name)) {
      const recording = trace.getSpan(parentContext);
      if (recording) {
        const standIn = trace.wrapSpanContext(recording.spanContext());
        return named ? context.with(parentContext, fn, undefined, standIn) : fn(standIn);
      }
    }
    const span = this.tracer.startSpan(name, options, parentContext);
    return context.with(trace.setSpan(parentContext, span), fn, undefined, span);
  }
}

/**
 * A provider whose tracers are SampledOnlyTracers: made global, @apollo/gateway's own spans follow
 * the same rule. Spans named in `folded` are not made (their time is their parent's): @apollo/gateway's
 * spans that repeat one of ours or carry nothing an operator uses.
 */
export class SampledOnlyTracerProvider implements TracerProvider {
  constructor(
    private readonly provider: TracerProvider,
    private readonly folded?: ReadonlySet<string>,
  ) {}

  getTracer(name: string, version?: string, options?: TracerOptions): Tracer {
    return new SampledOnlyTracer(this.provider.getTracer(name, version, options), undefined, this.folded);
  }
}
