/**
 * A JSON POST over node:http with a keep-alive agent, for a server that asks another on every
 * request (the REST facade asking the gateway, the gateway asking the subgraphs). Node's fetch costs noticeably more per call (WHATWG
 * Request, Headers and body streams, each built and torn down every time); on a loopback hop of a
 * millisecond or two that cost is the larger part of the facade's overhead.
 */
import { Agent, request, type IncomingHttpHeaders } from 'node:http';
import type { Tracer } from '@opentelemetry/api';
import { tracedCall } from '../ops/tracing.js';

export interface JsonAnswer {
  status: number;
  statusText: string;
  headers: IncomingHttpHeaders;
  /** The body as received, to be parsed by the caller. */
  text: string;
}

/** A request given up on at its deadline: no whole answer within `timeoutMs` of being sent. */
export class DeadlineExceeded extends Error {
  readonly code = 'DEADLINE_EXCEEDED';
  constructor(readonly timeoutMs: number) {
    super(`no answer within ${timeoutMs} ms`);
  }
}

/**
 * One pool of kept-alive sockets per caller; `maxSockets` bounds connections per origin. An idle
 * socket is closed after 30 s, before the servers here close theirs (65 s), so that a request never
 * goes out on a socket the server is closing. No Accept header: the gateway and the subgraphs (Apollo
 * Server) then answer application/json without running content negotiation on every request, the
 * same type an `accept: application/json` got them. Every request carries the caller's trace context
 * (`traceparent`), under a CLIENT span of `tracer` when tracing is on (lib/ops/tracing.ts). With
 * `timeoutMs`, a request whose whole answer has not come by then fails with DeadlineExceeded and its
 * socket is destroyed (the agent's `timeout` closes only idle sockets).
 */
export function jsonPoster(
  options: { maxSockets?: number; tracer?: Tracer | undefined; timeoutMs?: number } = {},
): (url: string, body: string, headers?: Record<string, string>) => Promise<JsonAnswer> {
  const { timeoutMs } = options;
  const agent = new Agent({ keepAlive: true, maxSockets: options.maxSockets ?? 256, scheduling: 'lifo', timeout: 30_000 });
  return (url, body, headers = {}) =>
    tracedCall(
      options.tracer,
      url,
      (traceHeaders) =>
        new Promise<JsonAnswer>((resolve, reject) => {
          let deadline: NodeJS.Timeout | undefined;
          const fail = (error: Error) => {
            clearTimeout(deadline);
            reject(error);
          };
          const outgoing = request(
            url,
            { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...headers, ...traceHeaders } },
            (incoming) => {
              const chunks: Buffer[] = [];
              incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
              incoming.once('error', fail);
              incoming.once('end', () => {
                clearTimeout(deadline);
                resolve({ status: incoming.statusCode ?? 0, statusText: incoming.statusMessage ?? '', headers: incoming.headers, text: Buffer.concat(chunks).toString('utf8') });
              });
            },
          );
          if (timeoutMs) {
            deadline = setTimeout(() => {
              // Rejected first: the destroyed socket's own error comes after and is then ignored.
              reject(new DeadlineExceeded(timeoutMs));
              outgoing.destroy();
            }, timeoutMs);
          }
          outgoing.once('error', fail);
          outgoing.end(body);
        }),
    );
}
