/**
 * The tracer every server uses skips spans under an unsampled local parent and changes nothing else:
 * the spans exported, their parents and what is propagated are those the SDK's own tracer gives.
 * (An integration file although it needs no database: it loads the tracing SDK, which the unit
 * layer's tracing-off check must not find loaded in its worker.)
 */
import { context, propagation, ROOT_CONTEXT, trace, type Span, type Tracer } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BasicTracerProvider,
  InMemorySpanExporter,
  ParentBasedSampler,
  SimpleSpanProcessor,
  TraceIdRatioBasedSampler,
  type Sampler,
} from '@opentelemetry/sdk-trace-base';
import { beforeAll, describe, expect, it } from 'vitest';
import { RandomIdGenerator } from '@opentelemetry/sdk-trace-base';
import { SampledOnlyTracer, SampledOnlyTracerProvider } from '../../lib/ops/sampled-tracer.js';

beforeAll(() => {
  // The servers install the same two globals (lib/ops/tracing.ts); a worker keeps the first it was given.
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
});

function tracing(sampler: Sampler) {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ sampler, spanProcessors: [new SimpleSpanProcessor(exporter)] });
  return { exporter, sdk: provider.getTracer('test'), wrapped: new SampledOnlyTracer(provider.getTracer('test')), provider };
}

/** A request's shape: a root, an active child with a nested statement, a phase, a call's headers. */
function request(tracer: Tracer): { root: Span; headers: Record<string, string> } {
  const root = tracer.startSpan('GET /passports/{id}');
  const headers: Record<string, string> = {};
  context.with(trace.setSpan(ROOT_CONTEXT, root), () => {
    tracer.startActiveSpan('graphql.execute', (execute) => {
      tracer.startSpan('SELECT').end();
      tracer.startActiveSpan('POST', { attributes: { 'http.request.method': 'POST' } }, (call) => {
        propagation.inject(context.active(), headers);
        call.end();
      });
      execute.end();
    });
  });
  root.end();
  return { root, headers };
}

/** Exported spans as name → parent's name. */
function shape(exporter: InMemorySpanExporter): string[] {
  const spans = exporter.getFinishedSpans();
  const nameOf = new Map(spans.map((span) => [span.spanContext().spanId, span.name]));
  return spans.map((span) => `${span.name} ← ${span.parentSpanId ? nameOf.get(span.parentSpanId) : 'root'}`).sort();
}

describe('spans under an unsampled parent are not made', () => {
  it('an unsampled request exports nothing and propagates its trace id with the not-sampled flag, as the SDK does', () => {
    const { exporter, wrapped } = tracing(new AlwaysOffSampler());
    const { root, headers } = request(wrapped);
    expect(exporter.getFinishedSpans()).toEqual([]);
    expect(headers.traceparent).toBe(`00-${root.spanContext().traceId}-${root.spanContext().spanId}-00`);
  });

  it('a sampled request exports the same spans under the same parents as the SDK tracer', () => {
    const plain = tracing(new AlwaysOnSampler());
    request(plain.sdk);
    const ours = tracing(new AlwaysOnSampler());
    const { root, headers } = request(ours.wrapped);
    expect(shape(ours.exporter)).toEqual(shape(plain.exporter));
    expect(shape(ours.exporter)).toEqual(['GET /passports/{id} ← root', 'POST ← graphql.execute', 'SELECT ← graphql.execute', 'graphql.execute ← GET /passports/{id}']);
    const call = ours.exporter.getFinishedSpans().find((span) => span.name === 'POST')!;
    expect(headers.traceparent).toBe(`00-${root.spanContext().traceId}-${call.spanContext().spanId}-01`);
  });

  it('at a ratio, a request is exported whole or not at all, and about the ratio of them are', () => {
    const { exporter, wrapped } = tracing(new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(0.25) }));
    let sampled = 0;
    for (let i = 0; i < 400; i++) {
      const before = exporter.getFinishedSpans().length;
      request(wrapped);
      const made = exporter.getFinishedSpans().length - before;
      expect([0, 4]).toContain(made);
      if (made) sampled += 1;
    }
    expect(sampled).toBeGreaterThan(50);
    expect(sampled).toBeLessThan(150);
  });

  it("a caller's sampled traceparent is honoured: the server's span is recorded under it", () => {
    const { exporter, wrapped } = tracing(new ParentBasedSampler({ root: new AlwaysOffSampler() }));
    const caller = propagation.extract(ROOT_CONTEXT, { traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01' });
    wrapped.startSpan('POST /passports/{id}/events', {}, caller).end();
    const [span] = exporter.getFinishedSpans();
    expect(span?.spanContext().traceId).toBe('4bf92f3577b34da6a3ce929d0e0e4736');
    expect(span?.parentSpanId).toBe('00f067aa0ba902b7');
  });

  it('the provider made global hands out tracers that follow the rule (those @apollo/gateway gets)', () => {
    const { exporter, provider } = tracing(new AlwaysOffSampler());
    const tracer = new SampledOnlyTracerProvider(provider).getTracer('@apollo/gateway');
    const { root } = request(tracer);
    expect(exporter.getFinishedSpans()).toEqual([]);
    const child = context.with(trace.setSpan(ROOT_CONTEXT, root), () => tracer.startSpan('gateway.plan'));
    expect(child).toBe(root);
  });

  it("@apollo/gateway's folded spans are not made: their children are their parent's, and what they set is lost harmlessly", () => {
    const { exporter, provider } = tracing(new AlwaysOnSampler());
    const tracer = new SampledOnlyTracerProvider(provider, new Set(['gateway.request', 'gateway.postprocessing'])).getTracer('@apollo/gateway');
    const root = tracer.startSpan('POST /graphql');
    const headers: Record<string, string> = {};
    // The shape of @apollo/gateway's executor: request ⊃ plan, execute ⊃ fetch, postprocessing.
    context.with(trace.setSpan(ROOT_CONTEXT, root), () =>
      tracer.startActiveSpan('gateway.request', { attributes: { 'graphql.operation.name': 'Q' } }, (request) => {
        request.setAttributes({ 'graphql.operation.type': 'query' });
        tracer.startActiveSpan('gateway.plan', (plan) => plan.end());
        tracer.startActiveSpan('gateway.execute', (execute) => {
          tracer.startActiveSpan('gateway.fetch', (fetch) => {
            propagation.inject(context.active(), headers);
            fetch.end();
          });
          tracer.startActiveSpan('gateway.postprocessing', (post) => post.end());
          execute.end();
        });
        request.setStatus({ code: 2 });
        request.end();
      }),
    );
    root.end();
    expect(shape(exporter)).toEqual(['POST /graphql ← root', 'gateway.execute ← POST /graphql', 'gateway.fetch ← gateway.execute', 'gateway.plan ← POST /graphql']);
    // The root was neither ended early nor changed by the folded span's calls.
    expect(exporter.getFinishedSpans().find((span) => span.name === 'POST /graphql')).toMatchObject({ status: { code: 0 }, attributes: {} });
    const fetch = exporter.getFinishedSpans().find((span) => span.name === 'gateway.fetch')!;
    expect(headers.traceparent).toBe(`00-${root.spanContext().traceId}-${fetch.spanContext().spanId}-01`);
  });

  it("under a caller's unsampled traceparent, the server span made without the SDK is the one the SDK would make", () => {
    const callerHeaders = { traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00', tracestate: 'vendor=x' };
    const made = (wrapped: Tracer) => {
      const caller = propagation.extract(ROOT_CONTEXT, callerHeaders);
      const server = wrapped.startSpan('POST *', {}, caller);
      const headers: Record<string, string> = {};
      context.with(trace.setSpan(caller, server), () => {
        // Our tracer makes no child under it (the SDK's would make a non-recording one).
        if (wrapped instanceof SampledOnlyTracer) expect(wrapped.startSpan('SELECT')).toBe(server);
        propagation.inject(context.active(), headers);
      });
      server.end();
      return { server, headers };
    };
    const sdk = tracing(new ParentBasedSampler({ root: new AlwaysOnSampler() }));
    const ours = tracing(new ParentBasedSampler({ root: new AlwaysOnSampler() }));
    const ids = new RandomIdGenerator();
    const bySdk = made(sdk.sdk);
    const byOurs = made(new SampledOnlyTracer(ours.provider.getTracer('test'), { spanId: () => ids.generateSpanId() }));
    // always_off (which lib/ops/tracing.ts also hands unsampledCallers) makes the same span through the SDK.
    const byAlwaysOff = made(tracing(new AlwaysOffSampler()).sdk);
    for (const { server, headers } of [bySdk, byOurs, byAlwaysOff]) {
      expect(server.isRecording()).toBe(false);
      expect(server.spanContext()).toMatchObject({ traceId: '4bf92f3577b34da6a3ce929d0e0e4736', traceFlags: 0 });
      expect(server.spanContext().spanId).toMatch(/^[\da-f]{16}$/);
      expect(server.spanContext().spanId).not.toBe('00f067aa0ba902b7');
      expect(server.spanContext().isRemote).toBeFalsy();
      expect(headers).toEqual({ traceparent: `00-4bf92f3577b34da6a3ce929d0e0e4736-${server.spanContext().spanId}-00`, tracestate: 'vendor=x' });
    }
    expect([...sdk.exporter.getFinishedSpans(), ...ours.exporter.getFinishedSpans()]).toEqual([]);
    // A sampled caller still goes to the SDK, and is recorded.
    const sampled = new SampledOnlyTracer(ours.provider.getTracer('test'), { spanId: () => ids.generateSpanId() });
    sampled.startSpan('POST *', {}, propagation.extract(ROOT_CONTEXT, { traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01' })).end();
    expect(ours.exporter.getFinishedSpans().map((span) => span.parentSpanId)).toEqual(['00f067aa0ba902b7']);
  });
});
