/**
 * The one way a server of the platform is built, for all six (the REST facade, the gateway, each
 * subgraph): Fastify with the platform's logger and request ids, its body and header limits and
 * connection-level refusals (lib/http/server-options.ts), then each edge feature as a plugin,
 * registered in this one order: request tracing, request logs, CORS (before any refusal, so that a
 * page of an allowed origin can read it), content codings (compressed answers, decoded bodies), the
 * malformed-Host refusal, request durations, the shutdown-time refusal, the rate limits (the
 * facade's and the gateway's), the probes. A feature added here is every server's; one an
 * operator sets is one key of EdgeOptions, made from the configuration in edgeOptions.
 */
import type { AddressInfo } from 'node:net';
import type { Tracer } from '@opentelemetry/api';
import Fastify, { type FastifyError, type FastifyInstance, type FastifyReply, type FastifyRequest, type FastifyServerOptions } from 'fastify';
import type { ServerName } from '../config/services.js';
import { ConfigurationError } from '../config/runtime.js';
import { publicServerOptions } from '../http/server-options.js';
import { loggingOptions } from '../ops/logging.js';
import type { ServerMetrics } from '../ops/metrics.js';
import { Operations, type ReadinessCheck } from '../ops/operations.js';
import { serverTracer } from '../ops/tracing.js';
import { compression } from './compression.js';
import { crossOrigin } from './cross-origin.js';
import { malformedHostRefusal } from './malformed-host.js';
import { probes } from './probes.js';
import { rateLimits } from './rate-limits.js';
import { requestLogs } from './request-logs.js';
import { requestMetrics } from './request-metrics.js';
import { requestTracing } from './request-tracing.js';
import type { EdgeOptions } from './edge-options.js';
import { closeGracefully, shutdownRefusal } from './shutdown.js';

/** What one server brings of its own. */
export interface ServerOwnOptions {
  /** The conditions of its readiness probe, by the names the probe reports. */
  readiness: Record<string, ReadinessCheck>;
  /** More its readiness probe reports, ready or not (the gateway: each subgraph instance's circuit). */
  readinessDetail?: () => Record<string, unknown>;
  /**
   * How it answers a refusal (problem+json, or GraphQL's error shape). Set before the edge's plugins,
   * so that every route answers in it, theirs too (the probes' shutdown-time 503).
   */
  errorHandler?: (error: FastifyError, request: FastifyRequest, reply: FastifyReply) => unknown;
  /** Fastify options of its own: routing, framework errors, HEAD routes. */
  fastify?: FastifyServerOptions;
}

/** A server as its own code and its tests reach it: an address and a stop. */
export interface ListeningServer {
  url: string;
  stop(): Promise<void>;
}

export interface PlatformServer {
  /** The Fastify instance, for the server's own routes. */
  readonly app: FastifyInstance;
  /** The server's tracer (lib/ops/tracing.ts), for the spans of what it calls; undefined with tracing off. */
  readonly tracer: Tracer | undefined;
  readonly metrics: ServerMetrics;
  /** Listens; the address bound (port 0 takes a free one). */
  listen(at: { host: string; port: number }): Promise<AddressInfo>;
  /**
   * The one shutdown path: closes to new connections, answers the requests in flight, cuts what is
   * still open after SHUTDOWN_TIMEOUT_MS (lib/server/shutdown.ts), then runs the server's `onClose` hooks.
   */
  stop(): Promise<void>;
}

export async function buildPlatformServer(name: ServerName, edge: EdgeOptions, own: ServerOwnOptions): Promise<PlatformServer> {
  const operations = edge.operations ?? new Operations();
  const metrics = operations.metrics.forServer(name);
  const tracer = serverTracer(name);
  const app = Fastify({ ...publicServerOptions(edge), ...loggingOptions(name), ...own.fastify });
  if (own.errorHandler) app.setErrorHandler(own.errorHandler);
  await app.register(requestTracing, { tracer });
  await app.register(requestLogs);
  await app.register(crossOrigin, { origins: edge.corsOrigins ?? [] });
  await app.register(compression, { bodyLimit: edge.bodyLimit, minBytes: edge.compressionMinBytes });
  await app.register(malformedHostRefusal);
  await app.register(requestMetrics, { metrics });
  await app.register(shutdownRefusal, { server: name });
  // The clients' faces; a subgraph's requests come from the gateway, which counted them.
  if (edge.rateLimiting && (name === 'facade' || name === 'gateway'))
    await app.register(rateLimits, { rateLimiting: edge.rateLimiting, tokens: edge.tokens, authenticator: edge.authenticator, metrics });
  await app.register(probes, { server: name, operations, metrics, checks: own.readiness, ...(own.readinessDetail ? { detail: own.readinessDetail } : {}) });
  return {
    app,
    tracer,
    metrics,
    async listen(at) {
      await app.listen(at).catch((error: unknown) => {
        throw listenFailure(name, at, error);
      });
      return app.server.address() as AddressInfo;
    },
    stop: () => closeGracefully(app, operations.shutdownTimeoutMs),
  };
}

/**
 * A port that is taken or not ours to bind, as the one sentence a start ends with (bin/lifecycle.ts)
 * rather than Node's stack trace; other failures go on as they are.
 */
function listenFailure(name: ServerName, at: { port?: number; host?: string }, error: unknown): unknown {
  const code = (error as NodeJS.ErrnoException).code;
  const where = `${at.host ?? 'localhost'}:${at.port ?? 0}`;
  if (code === 'EADDRINUSE') return new ConfigurationError(`the ${name} server cannot listen on ${where}: another process listens there; stop it, or set ${PORT_SETTING[name]} to another port.`);
  if (code === 'EACCES') return new ConfigurationError(`the ${name} server may not listen on ${where}: ports below 1024 need privileges; set ${PORT_SETTING[name]} to another port.`);
  return error;
}

/** The setting that moves each server's port (lib/config/runtime.ts). */
const PORT_SETTING: Record<ServerName, string> = {
  facade: 'FACADE_PORT (or <SERVICE>_REST_PORT)',
  gateway: 'GATEWAY_PORT',
  trust: 'TRUST_SUBGRAPH_PORT',
  registry: 'REGISTRY_SUBGRAPH_PORT',
  issuer: 'ISSUER_SUBGRAPH_PORT',
  archive: 'ARCHIVE_SUBGRAPH_PORT',
};
