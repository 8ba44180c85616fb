/**
 * What every public HTTP server of the platform (the REST facade and the gateway) holds a client to,
 * as Fastify options: how long it may take, and how a connection-level refusal reads. Node's
 * defaults let a client that stops sending hold a socket for five minutes, and answer an oversized
 * header block with a bare 431; here a slow client is let go with 408 within the request timeout
 * (plus the one-second check interval), and every such refusal is problem+json.
 */
import type { Socket } from 'node:net';
import type { Server } from 'node:http';
import type { FastifyHttpOptions } from 'fastify';
import { problem } from '../problem.js';
import { PROBLEM_MEDIA_TYPE } from './request-problem.js';

/** How long a client may take to send its headers, and its whole request. */
export const HEADERS_TIMEOUT_MS = 10_000;
export const REQUEST_TIMEOUT_MS = 20_000;
const TIMEOUT_CHECK_INTERVAL_MS = 1_000;

/** Connection-level failures Node reports outside any route (headers too large, timeouts, bad HTTP). */
function answerClientError(error: Error & { code?: string }, socket: Socket, requestTimeoutMs: number): void {
  if (!socket.writable) return void socket.destroy();
  const [status, code, detail] =
    error.code === 'HPE_HEADER_OVERFLOW'
      ? [431, 'HEADERS_TOO_LARGE', 'The request headers are too large.']
      : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? [408, 'REQUEST_TIMEOUT', `The request was not complete within ${requestTimeoutMs / 1000} s.`]
        : [400, 'MALFORMED_REQUEST', 'The request is not valid HTTP/1.1.'];
  const details = problem(status, code, detail);
  const body = JSON.stringify(details);
  socket.end(`HTTP/1.1 ${status} ${details.title}\r\ncontent-type: ${PROBLEM_MEDIA_TYPE}\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`);
}

export interface ServerLimits {
  bodyLimit: number;
  /** How long a client may take to send a whole request (default REQUEST_TIMEOUT_MS). */
  requestTimeoutMs?: number;
}

/** Fastify options for a public server: body limit, timeouts, keep-alive, connection-level refusals. */
export function publicServerOptions({ bodyLimit, requestTimeoutMs = REQUEST_TIMEOUT_MS }: ServerLimits) {
  return {
    bodyLimit,
    requestTimeout: requestTimeoutMs,
    // Longer than the usual 60 s of load balancers in front, so they never reuse a socket we closed.
    keepAliveTimeout: 65_000,
    http: { headersTimeout: Math.min(HEADERS_TIMEOUT_MS, requestTimeoutMs), connectionsCheckingInterval: TIMEOUT_CHECK_INTERVAL_MS },
    clientErrorHandler: (error: Error & { code?: string }, socket: Socket) => answerClientError(error, socket, requestTimeoutMs),
  } satisfies FastifyHttpOptions<Server>;
}
