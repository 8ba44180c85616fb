/**
 * Logs: Fastify's own pino logger, one JSON line per event on stdout (docs/OPERATIONS.md, "Logs").
 * Every request ends in one line with its id, trace and span id, method, route template, path,
 * status and duration. Headers, query strings and bodies are never logged; the authorization and
 * cookie headers are redacted besides, should any code ever log a request's headers.
 */
import { randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';
import type { IncomingMessage } from 'node:http';
import { LogController, type FastifyBaseLogger } from 'fastify';
import pino, { type Logger } from 'pino';
import type { ServerName } from '../config/services.js';
import { serverServiceName } from './tracing.js';

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

type Level = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace';

/**
 * A request's logger (`request.log`, `reply.log`): its pino child, bound to the request id and the
 * trace ids the request-logs plugin finds (lib/server/request-logs.ts), is made when a line is first written at an enabled level. At `warn`
 * most requests write none; a child per request (Fastify's default) and, with trace ids, one made
 * when they are known were much of what logging cost a request (docs/OPS-COST.md). Its
 * shape is the same for every request (nothing is redefined on the request or reply), which keeps
 * Fastify's own code on them fast.
 */
class RequestLogger {
  /** The request's trace ids, set through bindTraceIds. */
  traceIds: pino.Bindings | undefined = undefined;
  #bound: Logger | undefined = undefined;

  constructor(
    private readonly server: Logger,
    private readonly bindings: pino.Bindings,
    private readonly options: pino.ChildLoggerOptions,
  ) {}

  get #logger(): Logger {
    return (this.#bound ??= this.server.child(this.traceIds ? { ...this.bindings, ...this.traceIds } : this.bindings, this.options));
  }

  #write(level: Level, args: unknown[]): void {
    // A route's own log level (options.level) needs the child to answer; otherwise the server's level does.
    if (!this.#bound && this.options.level === undefined && !this.server.isLevelEnabled(level)) return;
    const logger = this.#logger;
    (logger[level] as (...line: unknown[]) => void).apply(logger, args);
  }

  fatal(...args: unknown[]): void {
    this.#write('fatal', args);
  }
  error(...args: unknown[]): void {
    this.#write('error', args);
  }
  warn(...args: unknown[]): void {
    this.#write('warn', args);
  }
  info(...args: unknown[]): void {
    this.#write('info', args);
  }
  debug(...args: unknown[]): void {
    this.#write('debug', args);
  }
  trace(...args: unknown[]): void {
    this.#write('trace', args);
  }
  silent(): void {}
  child(bindings: pino.Bindings, options?: pino.ChildLoggerOptions): Logger {
    return this.#logger.child(bindings, options);
  }
  isLevelEnabled(level: string): boolean {
    return this.#bound || this.options.level !== undefined ? this.#logger.isLevelEnabled(level) : this.server.isLevelEnabled(level);
  }
  get level(): string {
    return this.#bound || this.options.level !== undefined ? this.#logger.level : this.server.level;
  }
  set level(level: string) {
    this.#logger.level = level;
  }
}

/** Fastify options that give a server its logger and request ids, and leave the request lines to lib/server/request-logs.ts. */
export function loggingOptions(server: ServerName) {
  return {
    loggerInstance: serverLogger(server) as FastifyBaseLogger,
    logController: new LogController({ disableRequestLogging: true, requestIdLogLabel: 'request_id' }),
    genReqId: requestId,
    childLoggerFactory: (logger: FastifyBaseLogger, bindings: pino.Bindings, options: pino.ChildLoggerOptions) =>
      new RequestLogger(logger as unknown as Logger, bindings, options) as unknown as FastifyBaseLogger,
  };
}

/**
 * Has a request's logger (loggingOptions) carry the request's trace ids on every line it writes from
 * now on: Fastify logs a handler's failure through reply.log, the same logger, so both carry them.
 */
export function bindTraceIds(log: FastifyBaseLogger, ids: pino.Bindings): void {
  if (log instanceof RequestLogger) log.traceIds = ids;
}

/** Whether lines at `info` are written (LOG_LEVEL): at `warn`, a request that succeeds writes none. */
export function infoLogged(): boolean {
  return rootLogger().isLevelEnabled('info');
}
