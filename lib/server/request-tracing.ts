/**
 * Request tracing, a server's edge feature (lib/ops/tracing.ts makes the tracers): a SERVER span per
 * request, so that everything a request makes (GraphQL phases, SQL, calls to other servers) is its child.
 */
import { context, propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Context, type Span, type Tracer } from '@opentelemetry/api';
import type { FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';

/** A request's server span and the context in which it is the active span. */
interface TraceScope {
  span: Span;
  context: Context;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by requestTracing's first hook; absent when the server does not trace. */
    traceScope?: TraceScope | null;
  }
}

/** The trace and span id of a request's server span, for its log lines; undefined when tracing is off. */
export function requestTraceIds(request: FastifyRequest): { trace_id: string; span_id: string } | undefined {
  const traced = request.traceScope;
  if (!traced) return undefined;
  const { traceId, spanId } = traced.span.spanContext();
  return { trace_id: traceId, span_id: spanId };
}

/**
 * A SERVER span per request, child of the caller's `traceparent` when there is one, named by the
 * route template once routing has found it. The span is made the active context from the first
 * hook on and again before the handler (body parsing runs in the socket's context, not the request's),
 * so that everything the handler calls (GraphQL, SQL, calls to other servers) is its child.
 * Attributes are the method, route, path and status only: no header, query string or body.
 * Without a tracer (tracing off) no hook is added.
 */
export const requestTracing = fp<{ tracer: Tracer | undefined }>(
  async (app, { tracer }) => {
    if (!tracer) return;
    // A field every request has from the start (Fastify's decorateRequest, so the request keeps its
    // shape) rather than a WeakMap keyed by the request: simpler; a profile showed no CPU either way.
    app.decorateRequest('traceScope', null);
    app.addHook('onRequest', (request, _reply, done) => {
      const parent = propagation.extract(ROOT_CONTEXT, request.headers);
      // The attributes are set once the span is known to record: most requests are not sampled, and
      // the SDK's samplers (all OTEL_TRACES_SAMPLER can name) decide without them.
      const span = tracer.startSpan(request.method, { kind: SpanKind.SERVER }, parent);
      if (span.isRecording()) span.setAttributes({ 'http.request.method': request.method, 'url.path': request.url.split('?')[0]!, 'url.scheme': 'http' });
      const active = trace.setSpan(parent, span);
      request.traceScope = { span, context: active };
      context.with(active, done);
    });
    app.addHook('preHandler', (request, _reply, done) => {
      const traced = request.traceScope;
      return traced ? context.with(traced.context, done) : done();
    });
    app.addHook('onResponse', (request, reply, done) => {
      const traced = request.traceScope;
      // An unsampled request's span records nothing: no route to look up (Fastify builds routeOptions afresh on every read).
      if (traced?.span.isRecording()) {
        const route = request.routeOptions.url;
        if (route) {
          traced.span.setAttribute('http.route', route);
          traced.span.updateName(`${request.method} ${route}`);
        }
        traced.span.setAttribute('http.response.status_code', reply.statusCode);
        if (reply.statusCode >= 500) traced.span.setStatus({ code: SpanStatusCode.ERROR });
        traced.span.end();
      }
      done();
    });
    app.addHook('onRequestAbort', (request, done) => {
      const traced = request.traceScope;
      traced?.span.setStatus({ code: SpanStatusCode.ERROR, message: 'the client closed the connection' });
      traced?.span.end();
      done();
    });
  },
  { name: 'passport-request-tracing', fastify: '5.x' },
);
