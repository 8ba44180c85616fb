/**
 * What an operator needs of every server, registered the same way on all six: liveness and readiness
 * probes (`/livez`, `/readyz`, beside the specification's signed `/healthz`), the HTTP request
 * duration of every route by its template, and a graceful close on SIGTERM. The metrics themselves
 * are served apart from the public port (metrics-listener.ts).
 */
import type { FastifyInstance } from 'fastify';
import { problem } from '../problem.js';
import { PROBLEM_MEDIA_TYPE, RequestProblem } from '../http/request-problem.js';
import { PlatformMetrics, type ServerMetrics, type ServerName } from './metrics.js';

/** A readiness condition: resolves when met, rejects with a NotReady (or anything) when not. */
export type ReadinessCheck = () => Promise<void>;

/** Why a check failed, in words safe to show anyone (never a driver's message, which may name hosts or users). */
export class NotReady extends Error {}

/** A check that has not answered within this long counts as failed, so a probe always answers in time. */
export const READINESS_CHECK_TIMEOUT_MS = 2_000;

/** The process's operational state, shared by every server it runs: one metrics registry, one shutdown. */
export class Operations {
  /** The process's metrics; with `metrics: false` (METRICS=off) a registry that keeps nothing (PlatformMetrics.enabled). */
  readonly metrics: PlatformMetrics;
  /** How long requests in flight are given to finish when a server closes (SHUTDOWN_TIMEOUT_MS). */
  readonly shutdownTimeoutMs: number;
  #draining = false;

  constructor(options: { shutdownTimeoutMs?: number; metrics?: boolean } = {}) {
    this.metrics = new PlatformMetrics({ enabled: options.metrics ?? true });
    this.shutdownTimeoutMs = options.shutdownTimeoutMs ?? 10_000;
  }

  /** Whether the process is shutting down: readiness fails from then on. */
  get draining(): boolean {
    return this.#draining;
  }

  startDraining(): void {
    this.#draining = true;
  }
}

function withinTimeout(check: ReadinessCheck): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new NotReady(`did not answer within ${READINESS_CHECK_TIMEOUT_MS / 1000} s`)), READINESS_CHECK_TIMEOUT_MS);
  });
  return Promise.race([check(), late]).finally(() => clearTimeout(timer));
}

/** Runs every check at once; the names of those that fail, each with its safe reason. */
export async function unmetReadiness(checks: Record<string, ReadinessCheck>): Promise<Record<string, string>> {
  const names = Object.keys(checks);
  const results = await Promise.allSettled(names.map((name) => withinTimeout(checks[name]!)));
  const unmet: Record<string, string> = {};
  results.forEach((result, index) => {
    if (result.status === 'rejected') unmet[names[index]!] = result.reason instanceof NotReady ? result.reason.message : 'failed';
  });
  return unmet;
}

/** A check that another server of the platform answers its own readiness probe with 200. */
export function peerReady(readyzUrl: string, what: string): ReadinessCheck {
  return async () => {
    let status: number;
    try {
      const response = await fetch(readyzUrl, { signal: AbortSignal.timeout(READINESS_CHECK_TIMEOUT_MS) });
      status = response.status;
      await response.body?.cancel();
    } catch {
      throw new NotReady(`${what} does not answer`);
    }
    if (status !== 200) throw new NotReady(`${what} is not ready`);
  };
}

const LIVE = Buffer.from('{"status":"live"}');

/**
 * Registers the probes and the request-duration hook on a server; call it right after creating the
 * Fastify instance, before its routes. Returns the server's metrics for the rest of its wiring.
 */
export function registerOperations(app: FastifyInstance, operations: Operations, server: ServerName, checks: Record<string, ReadinessCheck>): ServerMetrics {
  const metrics = operations.metrics.forServer(server);
  // With METRICS=off no hook at all: a request pays nothing for metrics.
  if (metrics.enabled) {
    app.addHook('onResponse', (request, reply, done) => {
      // The route's template (`/issuer/passports/:id`), never the path asked: ids make no series.
      metrics.httpRequestDone(request.routeOptions.url ?? '', request.method, reply.statusCode, reply.elapsedTime / 1000);
      done();
    });
  }
  // Once the server closes, a request that still comes on a kept-alive connection is answered 503 at
  // once with `connection: close`, as a refusal of the server's own (its error handler: problem+json,
  // or GraphQL's error shape) and logged with its route, rather than with Fastify's own body
  // (return503OnClosing, off in publicServerOptions).
  let closing = false;
  app.addHook('preClose', (done) => {
    closing = true;
    done();
  });
  const shuttingDown = () => new RequestProblem(problem(503, 'SHUTTING_DOWN', `The ${server} is shutting down; send the request again.`), { 'retry-after': '1', connection: 'close' });
  app.addHook('onRequest', (_request, _reply, done) => done(closing ? shuttingDown() : undefined));
  const probe = { schema: { hide: true } as never };
  app.get('/livez', probe, async (_request, reply) => reply.type('application/json').send(LIVE));
  app.get('/readyz', probe, async (_request, reply) => {
    const unmet = operations.draining ? { shutdown: 'the process is shutting down' } : await unmetReadiness(checks);
    const failed = Object.keys(unmet);
    metrics.readinessProbed(Object.keys(checks), unmet);
    // Buffers, so that Fastify adds no charset to the media types.
    if (failed.length === 0) return reply.type('application/json').send(Buffer.from(JSON.stringify({ status: 'ready', server, checks: Object.keys(checks) })));
    const details = problem(503, 'NOT_READY', `The ${server} is not ready: ${failed.map((name) => `${name} (${unmet[name]})`).join(', ')}.`, { server, unmet });
    return reply
      .code(503)
      .type(PROBLEM_MEDIA_TYPE)
      .header('cache-control', 'no-store')
      .send(Buffer.from(JSON.stringify(details)));
  });
  return metrics;
}

/**
 * Closes a server as a shutdown should: it stops accepting connections, idle kept-alive ones are
 * closed, requests in flight are answered, and whatever is still open after SHUTDOWN_TIMEOUT_MS is cut.
 */
export async function closeGracefully(app: FastifyInstance, operations: Operations): Promise<void> {
  const cut = setTimeout(() => app.server.closeAllConnections(), operations.shutdownTimeoutMs);
  try {
    await app.close();
  } finally {
    clearTimeout(cut);
  }
}
