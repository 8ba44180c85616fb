/**
 * Traces with OpenTelemetry, off unless the standard OTEL_* variables name an OTLP endpoint
 * (docs/OPERATIONS.md, "Traces"). Off, the SDK is never loaded: callers get no tracer and add no
 * hooks, and the only OpenTelemetry code that runs is @opentelemetry/api's no-op propagator.
 *
 * Spans are made by hand rather than by the auto-instrumentations (http, fastify, pg), because
 * `npm start` runs six servers in one process: a patched `http` or `pg` module cannot tell which
 * server a request or a statement belongs to, so every span would carry one `service.name`.
 * Instead each server has its own TracerProvider with its own Resource (`passport-facade`,
 * `passport-gateway`, `passport-trust`, …), and backends show six services whether they run in one
 * process or six. Hand-made spans also need no import-in-the-middle loader hook, so they work the
 * same under `node --import tsx`, under vitest, and in a compiled build.
 *
 * @apollo/gateway makes its own spans (gateway.request, .validate, .plan, .execute, .fetch,
 * .postprocessing) through the global tracer provider: the gateway's provider is the one made global.
 */
import { createHmac, randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';
import { context, propagation, SpanKind, SpanStatusCode, trace, type Tracer } from '@opentelemetry/api';
import type { ApolloServerPlugin, GraphQLRequestContext, GraphQLRequestListener } from '@apollo/server';
import type pg from 'pg';
import type { BasicTracerProvider, Sampler, SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { ConfigurationError } from '../config/runtime.js';
import type { ServerName } from '../config/services.js';
import { SETTLED } from './graphql-metrics.js';
import { SampledOnlyTracer, SampledOnlyTracerProvider, unsampledLocalParent, type UnsampledCallers } from './sampled-tracer.js';

/** Tracing is on when an OTLP endpoint is configured, and neither the SDK nor the trace exporter is turned off. */
export function tracingEnabled(env: NodeJS.ProcessEnv = process.env): boolean {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return false;
  if (env.OTEL_TRACES_EXPORTER?.trim().toLowerCase() === 'none') return false;
  return Boolean(env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim() || env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim());
}

const providers = new Map<ServerName, BasicTracerProvider>();
let spanProcessor: SpanProcessor | undefined;
let serversShareProcess = false;

/**
 * Says that this process runs several servers (`npm start`): each then keeps its own `passport-…`
 * service name, and OTEL_SERVICE_NAME, which can name only one service, is not applied.
 */
export function serversShareThisProcess(): void {
  serversShareProcess = true;
}

/** The `service.name` of a server's spans and log lines: `passport-<server>`, or OTEL_SERVICE_NAME for a process that runs one server. */
export function serverServiceName(server: ServerName, env: NodeJS.ProcessEnv = process.env): string {
  return (!serversShareProcess && env.OTEL_SERVICE_NAME?.trim()) || `passport-${server}`;
}

// The SDK is loaded on first use only, so that a process with tracing off never loads it.
// The SDK's packages are the 1.x line (exporters 0.57) that @apollo/gateway already installs, so
// npm keeps one copy of each: the 2.x line would add about 90 MB to `npm ci --omit=dev`.
const requireModule = createRequire(import.meta.url);

/** Global parts, once per process: the async context that carries the active span, and W3C trace context. */
let globalsInstalled = false;

/**
 * Whether OpenTelemetry's context manager (an AsyncLocalStorage) is installed in this process, as it
 * is once a server traces. Other code that needs an async context of its own (the admin log's pending
 * entry) then keeps its value in OpenTelemetry's context rather than in a second AsyncLocalStorage:
 * on Node 20 every enabled storage adds a step to every promise the process makes, and a second one
 * cost a promise-heavy loop 55 % more CPU (docs/OPS-COST.md).
 */
export function tracingContextInstalled(): boolean {
  return globalsInstalled;
}
function installGlobals(): void {
  if (globalsInstalled) return;
  globalsInstalled = true;
  const { AsyncLocalStorageContextManager } = requireModule('@opentelemetry/context-async-hooks') as typeof import('@opentelemetry/context-async-hooks');
  const { W3CTraceContextPropagator } = requireModule('@opentelemetry/core') as typeof import('@opentelemetry/core');
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  // Only `traceparent`/`tracestate`: baggage is a client's free text, which has no business in our spans.
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
}

/** OTEL_EXPORTER_OTLP_TRACES_PROTOCOL or OTEL_EXPORTER_OTLP_PROTOCOL: http/protobuf (the default) or http/json; gRPC is not bundled. */
export function tracesProtocol(env: NodeJS.ProcessEnv = process.env): 'http/protobuf' | 'http/json' {
  const protocol = (env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ?? env.OTEL_EXPORTER_OTLP_PROTOCOL ?? 'http/protobuf').trim();
  if (protocol === 'http/protobuf' || protocol === 'http/json') return protocol;
  throw new ConfigurationError(`OTEL_EXPORTER_OTLP_PROTOCOL ${protocol} is not supported; use http/protobuf or http/json.`);
}

/** The OTLP/HTTP exporter of the configured protocol; the exporter reads the endpoint, headers and timeout itself. */
function exporter(env: NodeJS.ProcessEnv) {
  if (tracesProtocol(env) === 'http/json') {
    const { OTLPTraceExporter } = requireModule('@opentelemetry/exporter-trace-otlp-http') as typeof import('@opentelemetry/exporter-trace-otlp-http');
    return new OTLPTraceExporter();
  }
  const { OTLPTraceExporter } = requireModule('@opentelemetry/exporter-trace-otlp-proto') as typeof import('@opentelemetry/exporter-trace-otlp-proto');
  return new OTLPTraceExporter();
}

/**
 * The tracer of one server, or undefined when tracing is off. Replicas of a subgraph in one process
 * share their service's provider. The sampler comes from OTEL_TRACES_SAMPLER(_ARG), which the SDK
 * reads itself for a subgraph (default: parentbased_always_on, so its caller's sampling decision is
 * kept); the public ports take only its ratio (publicPortSampler). Spans under an unsampled span of
 * this process are not made at all (lib/ops/sampled-tracer.ts).
 */
export function serverTracer(server: ServerName, env: NodeJS.ProcessEnv = process.env): Tracer | undefined {
  if (!tracingEnabled(env)) return undefined;
  let provider = providers.get(server);
  if (!provider) {
    const { BasicTracerProvider, BatchSpanProcessor } = requireModule('@opentelemetry/sdk-trace-base') as typeof import('@opentelemetry/sdk-trace-base');
    const { detectResourcesSync, envDetectorSync, Resource } = requireModule('@opentelemetry/resources') as typeof import('@opentelemetry/resources');
    installGlobals();
    // OTEL_RESOURCE_ATTRIBUTES apply to every server; the service name is the server's own.
    const resource = detectResourcesSync({ detectors: [envDetectorSync] }).merge(new Resource({ 'service.name': serverServiceName(server, env), 'service.namespace': 'passport' }));
    // One batch processor and exporter for every server of the process: the OTLP request groups spans
    // by resource, so each server stays its own service, and a process sends one export where it sent
    // one per server, each with a fixed cost of its own (docs/OPS-COST.md).
    spanProcessor ??= new BatchSpanProcessor(exporter(env));
    provider = new BasicTracerProvider({ resource, spanProcessors: [spanProcessor], ...(PUBLIC_SERVERS.has(server) ? { sampler: publicPortSampler(env) } : {}) });
    providers.set(server, provider);
    if (server === 'gateway') trace.setGlobalTracerProvider(new SampledOnlyTracerProvider(provider, FOLDED_GATEWAY_SPANS));
  }
  const callersDecide = !PUBLIC_SERVERS.has(server) && neverRecordsUnderUnsampledCaller(env);
  return new SampledOnlyTracer(provider.getTracer('passport-services'), callersDecide ? unsampledCallers() : undefined);
}

/** The servers anyone may call: the sampling flag of a caller's `traceparent` decides nothing there. */
const PUBLIC_SERVERS: ReadonlySet<ServerName> = new Set(['facade', 'gateway']);

/** The share of requests a public port samples: OTEL_TRACES_SAMPLER's, read as the SDK reads it (1 for a sampler it does not know). */
export function publicSampleRatio(env: NodeJS.ProcessEnv = process.env): number {
  const sampler = env.OTEL_TRACES_SAMPLER?.trim() || 'parentbased_always_on';
  if (sampler === 'always_off' || sampler === 'parentbased_always_off') return 0;
  if (sampler !== 'traceidratio' && sampler !== 'parentbased_traceidratio') return 1;
  const ratio = Number(env.OTEL_TRACES_SAMPLER_ARG);
  return env.OTEL_TRACES_SAMPLER_ARG?.trim() && ratio >= 0 && ratio <= 1 ? ratio : 1;
}

let samplingKey: Buffer | undefined;

/**
 * The sampler of a public port (the facade, the gateway). A caller's `traceparent` keeps its trace
 * id, and the server span is its child, but its sampling flag is not followed: `-01` on every request
 * would have every one sampled, `-00` would keep a caller's requests out of every trace. The request
 * is sampled at our own ratio, by a keyed hash of its trace id: a caller cannot choose ids that are
 * sampled, and the facade and the gateway, which share the key, decide alike for one trace, so a call
 * from one to the other is sampled as its caller was (the key is SUBGRAPH_SECRET's when set, the
 * platform's shared secret, so processes run apart share it; else one made at random per process).
 * Spans under a local parent follow it, as everywhere.
 */
function publicPortSampler(env: NodeJS.ProcessEnv): Sampler {
  const { ParentBasedSampler, SamplingDecision } = requireModule('@opentelemetry/sdk-trace-base') as typeof import('@opentelemetry/sdk-trace-base');
  const ratio = publicSampleRatio(env);
  const secret = env.SUBGRAPH_SECRET;
  const key = (samplingKey ??= secret ? createHmac('sha256', 'passport trace sampling').update(secret).digest() : randomBytes(32));
  const ours: Sampler = {
    shouldSample: (_context, traceId) => {
      const sampled = ratio >= 1 || (ratio > 0 && createHmac('sha256', key).update(traceId).digest().readUInt32BE(0) < ratio * 2 ** 32);
      return { decision: sampled ? SamplingDecision.RECORD_AND_SAMPLED : SamplingDecision.NOT_RECORD };
    },
    toString: () => `PublicPortSampler{${ratio}}`,
  };
  return new ParentBasedSampler({ root: ours, remoteParentSampled: ours, remoteParentNotSampled: ours });
}

/**
 * @apollo/gateway's spans that are not made: gateway.request spans the same work as the gateway's
 * graphql.execute (same operation name and type), gateway.validate (the variables against the
 * schema) and gateway.postprocessing (shaping the result) are short steps inside it with no
 * attribute. gateway.plan, gateway.execute and gateway.fetch stay.
 */
const FOLDED_GATEWAY_SPANS: ReadonlySet<string> = new Set(['gateway.request', 'gateway.validate', 'gateway.postprocessing']);

/**
 * Whether OTEL_TRACES_SAMPLER names a sampler that never records under a caller's unsampled context:
 * the parent-based ones (the SDK's default when unset) and always_off (which records nothing at all).
 */
function neverRecordsUnderUnsampledCaller(env: NodeJS.ProcessEnv): boolean {
  const sampler = env.OTEL_TRACES_SAMPLER;
  return sampler === undefined || ['parentbased_always_on', 'parentbased_always_off', 'parentbased_traceidratio', 'always_off'].includes(sampler);
}

let idGenerator: { generateSpanId(): string } | undefined;
function unsampledCallers(): UnsampledCallers {
  const { RandomIdGenerator } = requireModule('@opentelemetry/sdk-trace-base') as typeof import('@opentelemetry/sdk-trace-base');
  const ids = (idGenerator ??= new RandomIdGenerator());
  return { spanId: () => ids.generateSpanId() };
}

/**
 * Sends the spans still buffered and stops every provider, as the process ends. It is final:
 * @apollo/gateway keeps the global tracer it was first given, so spans of a gateway started again in
 * this process would be lost.
 */
export async function shutDownTracing(): Promise<void> {
  await Promise.all([...providers.values()].map((provider) => provider.shutdown()));
  providers.clear();
  spanProcessor = undefined;
}

/** Spans still buffered are sent now (a server that stops while the process goes on, as in the tests). */
export async function flushTraces(): Promise<void> {
  await Promise.all([...providers.values()].map((provider) => provider.forceFlush()));
}

/**
 * The active span's W3C `traceparent`, for work that goes on elsewhere after a message rather than a
 * request (a change notice, lib/db/change-feed.ts); undefined with tracing off (the no-op propagator
 * writes none) or outside a span.
 */
export function activeTraceparent(): string | undefined {
  const carrier: { traceparent?: string } = {};
  propagation.inject(context.active(), carrier);
  return carrier.traceparent;
}

/**
 * The caller's trace context as headers for a request to another server (`traceparent`), under a
 * CLIENT span when the caller has a tracer. Without tracing the propagator is @opentelemetry/api's no-op.
 * Not an async function: the call's own promise is returned as it is, rather than wrapped in one
 * more promise on every request (each a few more promise-hook calls with tracing's context on).
 */
export function tracedCall<T extends { status: number }>(tracer: Tracer | undefined, url: string, call: (traceHeaders: Record<string, string>) => Promise<T>): Promise<T> {
  // Under an unsampled request no CLIENT span is made (lib/ops/sampled-tracer.ts): its context is passed on as it is.
  if (!tracer || unsampledLocalParent(context.active())) {
    const headers: Record<string, string> = {};
    propagation.inject(context.active(), headers);
    return call(headers);
  }
  return clientSpanCall(tracer, url, call);
}

/** A sampled call under its CLIENT span (async, so that a malformed URL is a rejection, as the call's own errors are). */
async function clientSpanCall<T extends { status: number }>(tracer: Tracer, url: string, call: (traceHeaders: Record<string, string>) => Promise<T>): Promise<T> {
  const target = new URL(url);
  return tracer.startActiveSpan(
    'POST',
    {
      kind: SpanKind.CLIENT,
      attributes: { 'http.request.method': 'POST', 'server.address': target.hostname, 'server.port': Number(target.port) || 80, 'url.full': `${target.origin}${target.pathname}` },
    },
    async (span) => {
      const headers: Record<string, string> = {};
      propagation.inject(context.active(), headers);
      try {
        const answer = await call(headers);
        span.setAttribute('http.response.status_code', answer.status);
        if (answer.status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
        return answer;
      } catch (error) {
        span.setStatus({ code: SpanStatusCode.ERROR, message: (error as Error).message });
        throw error;
      } finally {
        span.end();
      }
    },
  );
}

/**
 * Spans of one GraphQL phase: ended with an error status when the phase reports errors. The end
 * is a plain function returning a settled promise, not an async one: no promise of its own per phase.
 */
function phase(tracer: Tracer, name: string, request: GraphQLRequestContext<object>) {
  const span = tracer.startSpan(name, { attributes: operationAttributes(request) });
  return (error?: unknown): Promise<undefined> => {
    const errors = Array.isArray(error) ? error : error ? [error] : [];
    if (errors.length) span.setStatus({ code: SpanStatusCode.ERROR, message: String((errors[0] as Error).message ?? errors[0]) });
    span.end();
    return SETTLED;
  };
}

/** The operation's name and type, never its document or variables (which may carry anything a client sent). */
function operationAttributes(request: GraphQLRequestContext<object>): Record<string, string> {
  const attributes: Record<string, string> = {};
  if (request.operationName) attributes['graphql.operation.name'] = request.operationName;
  if (request.operation) attributes['graphql.operation.type'] = request.operation.operation;
  return attributes;
}

/** graphql.parse, graphql.validate and graphql.execute spans of every operation a GraphQL server runs. */
export function graphqlTracingPlugin<T extends object>(tracer: Tracer): ApolloServerPlugin<T> {
  return {
    requestDidStart() {
      // A request that is not sampled makes no phase spans (lib/ops/sampled-tracer.ts): it needs no hooks, nor a promise of its own.
      if (!trace.getSpan(context.active())?.isRecording()) return SETTLED;
      return Promise.resolve<GraphQLRequestListener<T>>({
        parsingDidStart: (request) => Promise.resolve(phase(tracer, 'graphql.parse', request)),
        validationDidStart: (request) => Promise.resolve(phase(tracer, 'graphql.validate', request)),
        executionDidStart: (request) => Promise.resolve({ executionDidEnd: phase(tracer, 'graphql.execute', request) }),
      });
    },
  };
}

/**
 * A CLIENT span for every SQL statement a pool sends, child of the request that sent it. The
 * statement's text is recorded as Prisma sends it, with `$n` placeholders: values are never recorded.
 * Prisma sends a statement outside a transaction with the pool's own `query` (which runs it on a
 * client of its choosing with a callback, possibly in the async context of whoever freed that
 * client) and one inside a transaction with its client's `query`: both are wrapped where Prisma
 * calls them, in the request's context.
 */
export function traceStatements(pool: pg.Pool, tracer: Tracer, database: string): void {
  type Query = (...args: unknown[]) => unknown;
  const traced = (query: Query): Query => {
    return (...args: unknown[]) => {
      const text = typeof args[0] === 'string' ? args[0] : (args[0] as { text?: unknown } | undefined)?.text;
      // Callback-style calls (the pool's own, on the client it picked) and cursors are traced where
      // the caller made them, if at all; a statement of an unsampled request is sent as it is,
      // without the span's promise chain.
      if (typeof text !== 'string' || typeof args.at(-1) === 'function' || unsampledLocalParent(context.active())) return query(...args);
      const operation = /^\s*(\w+)/.exec(text)?.[1]?.toUpperCase() ?? 'SQL';
      const span = tracer.startSpan(operation, {
        kind: SpanKind.CLIENT,
        attributes: { 'db.system.name': 'postgresql', 'db.namespace': database, 'db.operation.name': operation, 'db.query.text': text },
      });
      const result = query(...args);
      if (!(result instanceof Promise)) {
        span.end();
        return result;
      }
      return result.then(
        (value) => {
          span.end();
          return value;
        },
        (error: unknown) => {
          span.setStatus({ code: SpanStatusCode.ERROR, message: (error as { code?: string }).code ?? 'error' });
          span.end();
          throw error;
        },
      );
    };
  };
  const withQuery = (target: pg.Pool | pg.PoolClient) => target as unknown as { query: Query };
  withQuery(pool).query = traced(pool.query.bind(pool) as Query);
  pool.on('connect', (client) => {
    withQuery(client).query = traced(client.query.bind(client) as Query);
  });
}
