/**
 * CORS (the Fetch standard's CORS protocol), a server's edge feature: pages of the origins an
 * operator allows (CORS_ALLOWED_ORIGINS) may call the server from a browser, by @fastify/cors. A
 * route that takes requests a browser must ask for first (a JSON POST, an Authorization header)
 * declares its preflight with `preflightOf`: its path's methods and request headers, answered to an
 * allowed origin's OPTIONS; without origins the plugin is not registered at all (same-origin only).
 */
import cors from '@fastify/cors';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';

/**
 * What a page may read of an answer beyond the safelisted headers: validators and links (ETag,
 * Location, Link), when to try again (Retry-After, the rate limit's RateLimit and RateLimit-Policy),
 * why a credential was refused (WWW-Authenticate), and an archive package's digest and file name.
 */
export const EXPOSED_HEADERS = ['ETag', 'Location', 'Link', 'Retry-After', 'RateLimit', 'RateLimit-Policy', 'WWW-Authenticate', 'Content-Digest', 'Content-Disposition'];

/** How long a browser may keep a preflight's answer (Chromium caps it at 2 h). */
const PREFLIGHT_MAX_AGE_S = 600;

/** Request headers every route takes from a page: its credential and the trace context it may carry on. */
const COMMON_REQUEST_HEADERS = ['accept', 'authorization', 'traceparent', 'tracestate'];

/** The request headers a method takes beyond the common ones: a GET's validator, a POST's body description. */
const REQUEST_HEADERS_BY_METHOD: Record<string, readonly string[]> = {
  GET: ['if-none-match'],
  POST: ['content-type', 'content-encoding'],
};

/**
 * A path's preflight, as its OPTIONS route's Fastify config: the methods it takes and the request
 * headers they do. An allowed origin's preflight is answered with them (204); any other OPTIONS goes
 * to the route's handler.
 */
export function preflightOf(methods: readonly string[]) {
  const headers = new Set(COMMON_REQUEST_HEADERS);
  for (const method of methods) for (const header of REQUEST_HEADERS_BY_METHOD[method] ?? []) headers.add(header);
  return { cors: { preflight: true, methods: methods.join(', '), allowedHeaders: [...headers].join(', ') } };
}

/**
 * An OPTIONS route for `url` (RFC 9110 §9.3.7: 204 with the methods it takes in Allow) carrying the
 * path's preflight, for the servers that face browsers.
 */
export function answerOptions(app: FastifyInstance, url: string, allow: readonly string[]): void {
  app.route({
    method: 'OPTIONS',
    url,
    schema: { hide: true } as never,
    config: preflightOf(allow),
    handler: async (_request, reply) => reply.code(204).header('allow', allow.join(', ')).send(),
  });
}

/**
 * Registers @fastify/cors for the allowed origins. A listed origin is answered with itself and
 * credentials allowed (the Fetch standard forbids credentials with `*`); `*` lets any page read
 * answers, without credentials. A request from any other origin, or none, gets no CORS header at all
 * (only `Vary: Origin`, so that a cache keeps the answers apart). Preflights are answered only on the
 * paths that declare one (preflightOf); elsewhere an OPTIONS is the route's to answer.
 */
export const crossOrigin = fp(
  async (app, { origins }: { origins: readonly string[] }) => {
    if (origins.length === 0) return;
    const anyOrigin = origins.includes('*');
    const allowed = new Set(origins);
    await app.register(cors, {
      origin: anyOrigin ? '*' : (origin, callback) => callback(null, origin !== undefined && allowed.has(origin) ? origin : false),
      credentials: !anyOrigin,
      exposedHeaders: EXPOSED_HEADERS,
      preflight: false,
      strictPreflight: false,
      maxAge: PREFLIGHT_MAX_AGE_S,
    });
  },
  { name: 'passport-cross-origin', fastify: '5.x' },
);
