/**
 * Logs: Fastify's own pino logger, one JSON line per event on stdout (docs/OPERATIONS.md, "Logs").
 * Every request ends in one line with its id, trace and span id, method, route template, path,
 * status and duration. Headers, query strings and bodies are never logged; the authorization and
 * cookie headers are redacted besides, should any code ever log a request's headers.
 */
import { randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';
import type { IncomingMessage } from 'node:http';
import { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import pino, { type Logger } from 'pino';
import { requestTraceIds, serverServiceName, type ServerName } from './tracing.js';

/** Wherever a request's or an answer's headers could appear in a logged object. */
const REDACTED_PATHS = ['req.headers.authorization', 'req.headers.cookie', 'headers.authorization', 'headers.cookie', 'authorization', 'cookie', '*.authorization', '*.cookie'];

/** LOG_FORMAT=pretty, or LOG_FORMAT unset and stdout a terminal: pino-pretty's readable lines; else JSON. */
function prettyOutput(env: NodeJS.ProcessEnv): boolean {
  const format = env.LOG_FORMAT?.trim().toLowerCase();
  return format ? format === 'pretty' : process.stdout.isTTY === true;
}

const requireModule = createRequire(import.meta.url);
let processLogger: Logger | undefined;

/** One logger, and so one output stream, per process: the six servers of `npm start` are its children. */
function rootLogger(env: NodeJS.ProcessEnv = process.env): Logger {
  if (processLogger) return processLogger;
  const options: pino.LoggerOptions = {
    level: env.LOG_LEVEL?.trim() || 'info',
    timestamp: pino.stdTimeFunctions.isoTime,
    redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
  };
  if (prettyOutput(env)) {
    // Loaded only for a terminal; written in the process (no worker thread), so lines keep their order.
    const pretty = requireModule('pino-pretty') as typeof import('pino-pretty');
    processLogger = pino(options, pretty({ colorize: process.stdout.isTTY === true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname' }));
  } else {
    // The level's name rather than pino's number, for people and log pipelines that read the lines.
    // Written through process.stdout (synchronous for files and pipes), which a test in the same process can read.
    processLogger = pino({ ...options, formatters: { level: (label) => ({ level: label }) } }, process.stdout);
  }
  return processLogger;
}

/** The logger of one server: every line carries its `service` (passport-facade, passport-gateway, …). */
export function serverLogger(server: ServerName): Logger {
  return rootLogger().child({ service: serverServiceName(server) });
}

/** A caller's `x-request-id` when it is a plain token (so one id follows a request through proxies), else a new UUID. */
function requestId(request: IncomingMessage): string {
  const given = request.headers['x-request-id'];
  return typeof given === 'string' && /^[\w.:-]{1,128}$/.test(given) ? given : randomUUID();
}

/** Fastify options that give a server its logger and request ids, and leave the request lines to logRequests. */
export function loggingOptions(server: ServerName) {
  return {
    loggerInstance: serverLogger(server) as FastifyBaseLogger,
    logController: new LogController({ disableRequestLogging: true, requestIdLogLabel: 'request_id' }),
    genReqId: requestId,
  };
}

/** W3C traceparent: version-traceid-parentid-flags. */
const TRACEPARENT = /^[\da-f]{2}-([\da-f]{32})-([\da-f]{16})-[\da-f]{2}$/;

/**
 * One line per answered request. Its trace and span id are the request's server span's; with
 * tracing off, the caller's trace id from `traceparent`, so lines still join a caller's trace.
 */
export function logRequests(app: FastifyInstance): void {
  app.addHook('onRequest', (request, reply, done) => {
    const traced = requestTraceIds(request);
    const incoming = traced ? undefined : TRACEPARENT.exec(String(request.headers.traceparent ?? ''));
    const ids = traced ?? (incoming ? { trace_id: incoming[1] } : undefined);
    if (ids) {
      // Fastify logs a handler's failure through reply.log: both carry the ids. The child logger is
      // made when a line is first written: below info most requests write none, and a child per
      // request was most of what logging cost a traced request (docs/benchmarks/ops-cost.md).
      const server = request.log;
      let bound: FastifyBaseLogger | undefined;
      // Assignable still, as Fastify's own property is: a logger set later is the one both use.
      const accessor = { get: () => (bound ??= server.child(ids)), set: (logger: FastifyBaseLogger) => void (bound = logger), configurable: true };
      Object.defineProperty(request, 'log', accessor);
      Object.defineProperty(reply, 'log', accessor);
    }
    done();
  });
  app.addHook('onResponse', (request, reply, done) => {
    const status = reply.statusCode;
    if (status < 500 && !rootLogger().isLevelEnabled('info')) return done();
    const line = { method: request.method, route: request.routeOptions.url ?? null, path: request.url.split('?')[0], status, duration_ms: Math.round(reply.elapsedTime * 100) / 100 };
    if (status >= 500) request.log.error(line, 'request failed');
    else request.log.info(line, 'request');
    done();
  });
}
