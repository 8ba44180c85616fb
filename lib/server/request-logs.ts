/**
 * Request logs, a server's edge feature (lib/ops/logging.ts makes the loggers): one line per answered
 * request, with its id, trace and span id, method, route template, path, status and duration.
 */
import fp from 'fastify-plugin';
import { bindTraceIds, infoLogged } from '../ops/logging.js';
import { requestTraceIds } from './request-tracing.js';

/** W3C traceparent: version-traceid-parentid-flags. */
const TRACEPARENT = /^[\da-f]{2}-([\da-f]{32})-([\da-f]{16})-[\da-f]{2}$/;

/**
 * One line per answered request. Its trace and span id are the request's server span's (so it is
 * registered after request tracing); with tracing off, the caller's trace id from `traceparent`, so
 * lines still join a caller's trace.
 */
export const requestLogs = fp(
  async (app) => {
    app.addHook('onRequest', (request, _reply, done) => {
      const traced = requestTraceIds(request);
      const incoming = traced ? undefined : TRACEPARENT.exec(String(request.headers.traceparent ?? ''));
      const ids = traced ?? (incoming ? { trace_id: incoming[1] } : undefined);
      if (ids) bindTraceIds(request.log, ids);
      done();
    });
    app.addHook('onResponse', (request, reply, done) => {
      const status = reply.statusCode;
      if (status < 500 && !infoLogged()) return done();
      const line = { method: request.method, route: request.routeOptions.url ?? null, path: request.url.split('?')[0], status, duration_ms: Math.round(reply.elapsedTime * 100) / 100 };
      if (status >= 500) request.log.error(line, 'request failed');
      else request.log.info(line, 'request');
      done();
    });
  },
  { name: 'passport-request-logs', fastify: '5.x', dependencies: ['passport-request-tracing'] },
);
