/**
 * What every HTTP server of the platform (the REST facade, the gateway, each subgraph) holds a client to,
 * as Fastify options: how long it may take, and how a connection-level refusal reads. Node's
 * defaults let a client that stops sending hold a socket for five minutes, and answer an oversized
 * header block with a bare 431; here a slow client is let go with 408 within the request timeout
 * (plus the one-second check interval), and every such refusal is problem+json.
 */
import type { Socket } from 'node:net';
import type { IncomingMessage, Server } from 'node:http';
import type { FastifyHttpOptions, FastifyReply } from 'fastify';
import { REQUEST_TIMEOUT_MS } from '../config/runtime.js';
import { problem } from '../problem.js';
import { PROBLEM_MEDIA_TYPE } from './request-problem.js';

/** How long a client may take to send its headers (its whole request: REQUEST_TIMEOUT_MS, lib/config/runtime.ts). */
export const HEADERS_TIMEOUT_MS = 10_000;
const TIMEOUT_CHECK_INTERVAL_MS = 1_000;

/**
 * How much of a refused request's body (one over the limit, of the wrong media type) is still read
 * and thrown away, and for how long, so that its client, which writes the whole body before it
 * reads, gets to read the refusal: closed at once, the socket is reset under the client's writes
 * (EPIPE) and the answer is lost. Beyond either bound the client is sending forever, and is cut off.
 */
export const REFUSED_BODY_DRAIN_BYTES = 32 * 1024 * 1024;
export const REFUSED_BODY_DRAIN_MS = 10_000;

/** Sockets whose refusal is already answered while the rest of the body is thrown away. */
const draining = new WeakSet<Socket>();

/**
 * Reads and discards what is left of a refused request's body, within the bounds above, before the
 * connection is closed or used again (Fastify's `connection: close` is dropped: Node would reset the
 * socket with the body still arriving). A body already read, or declared larger than the bound, is
 * left as it is.
 */
export function drainRefusedBody(request: IncomingMessage, reply: FastifyReply): void {
  const declared = Number(request.headers['content-length']);
  if (request.complete || declared > REFUSED_BODY_DRAIN_BYTES) return;
  reply.removeHeader('connection');
  const { socket } = request;
  draining.add(socket);
  let received = 0;
  const cutOff = () => socket.destroy();
  const timer = setTimeout(cutOff, REFUSED_BODY_DRAIN_MS);
  const count = (chunk: Buffer) => {
    received += chunk.length;
    if (received > REFUSED_BODY_DRAIN_BYTES) cutOff();
  };
  request.on('data', count);
  // The body is the drain's alone: a decoder still piped from it (lib/server/compression.ts) would, once
  // torn down, unpipe it and so pause it, leaving the body unread and the socket cut off at the bound.
  request.unpipe();
  request.once('close', () => {
    clearTimeout(timer);
    request.off('data', count);
    draining.delete(socket);
  });
  request.resume();
}

/** Connection-level failures Node reports outside any route (headers too large, timeouts, bad HTTP). */
function answerClientError(error: Error & { code?: string }, socket: Socket, requestTimeoutMs: number): void {
  // A socket whose refusal is answered gets no second answer (the request timeout may fall while its body is thrown away).
  if (!socket.writable || draining.has(socket)) return void socket.destroy();
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

/**
 * Whether a Host header names a host as RFC 9110 §7.2 has it (a name, an IPv4 address or a bracketed
 * IPv6 one, and an optional port of at most 65535) and nothing more, as every URL a server writes
 * from it needs: `a b`, `x:99999`, `[::1`, `%` or an empty Host make `new URL` throw, and `x/y` or
 * `u@x` would make a URL that names something else.
 */
export function isWellFormedHost(host: string): boolean {
  // A client sends the same Host on every request of its connection (a peer server every request),
  // and one process serves a few ports (npm start: six servers, whose requests interleave): the
  // Hosts found well formed are not parsed again.
  if (wellFormedHosts.has(host)) return true;
  try {
    const url = new URL(`http://${host}/`);
    const wellFormed = url.host !== '' && url.username === '' && url.password === '' && url.pathname === '/' && url.search === '' && url.hash === '';
    if (wellFormed) {
      // Bounded: a client naming a new Host each time only empties it.
      if (wellFormedHosts.size >= MAX_KNOWN_HOSTS) wellFormedHosts.clear();
      wellFormedHosts.add(host);
    }
    return wellFormed;
  } catch {
    return false;
  }
}
const MAX_KNOWN_HOSTS = 64;
const wellFormedHosts = new Set<string>();

/** Fastify options for a public server: body limit, timeouts, keep-alive, connection-level refusals. */
export function publicServerOptions({ bodyLimit, requestTimeoutMs = REQUEST_TIMEOUT_MS }: ServerLimits) {
  return {
    bodyLimit,
    requestTimeout: requestTimeoutMs,
    // Longer than the usual 60 s of load balancers in front, so they never reuse a socket we closed.
    keepAliveTimeout: 65_000,
    http: { headersTimeout: Math.min(HEADERS_TIMEOUT_MS, requestTimeoutMs), connectionsCheckingInterval: TIMEOUT_CHECK_INTERVAL_MS },
    clientErrorHandler: (error: Error & { code?: string }, socket: Socket) => answerClientError(error, socket, requestTimeoutMs),
    // A request that comes while the server closes is refused by lib/server/shutdown.ts, in the server's own words.
    return503OnClosing: false,
  } satisfies FastifyHttpOptions<Server>;
}
