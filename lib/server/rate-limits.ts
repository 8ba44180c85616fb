/**
 * Rate limits, an edge feature of the REST facade and the gateway (the subgraphs take their requests
 * from the gateway, where they were counted): each client may make its role's quota of requests per
 * window (RATE_LIMITS), for the platform as a whole, whichever replica it reaches (shared-allowance.ts).
 * A client is who its bearer token stands for when the server already knows the token (a configured
 * token, or one the server authenticated a moment ago: an issued token's id, an access token's
 * subject; authenticators' `recognise`), else its address (the socket's: the platform has no trusted-proxy setting, so
 * behind a proxy every client is the proxy; an IPv6 address's /64). Counted first, before any other work for the request: a
 * client over its quota is answered 429 before its credentials are judged, its body read or anything
 * reported, with Retry-After and the RateLimit and RateLimit-Policy fields of the IETF httpapi draft
 * (draft-ietf-httpapi-ratelimit-headers-11/-12), which every counted answer carries.
 *
 * Requests the platform's own parts send on a counted request's behalf (the facade's to the gateway,
 * a subgraph's through the gateway) carry COUNTED_HEADER, a credential derived from the platform's
 * key (SUBGRAPH_SECRET or the configured tokens), and are not counted again.
 */
import { timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { readCredentials, type AccessTokens, type Authenticator, type Role } from '../auth/tokens.js';
import type { RateLimitPolicy, RateLimitRole, RateLimits } from '../config/runtime.js';
import { RequestProblem } from '../http/request-problem.js';
import type { ServerMetrics } from '../ops/metrics.js';
import { problem } from '../problem.js';
import type { Admission, SharedAllowance } from './shared-allowance.js';

/** What the rate limits of a process are made of: made once per process (edge-options.ts), shared by its servers. */
export interface RateLimiting {
  limits: RateLimits;
  allowance: SharedAllowance;
}

export const COUNTED_HEADER = 'passport-counted';

/** Reservations one request waits for at most (each grants its waiters a lease); past them it is admitted, as without the database. */
const MAX_RESERVATIONS = 100;

/** The credential of requests already counted (AccessTokens.platformKey); undefined without a platform key. */
export const countedCredential = (tokens: AccessTokens | undefined): string | undefined => tokens?.platformKey('rate limits')?.toString('base64url');

/** The headers a part of the platform sends with a request made for one already counted. */
export function countedHeaders(tokens: AccessTokens | undefined): Record<string, string> {
  const credential = countedCredential(tokens);
  return credential ? { [COUNTED_HEADER]: credential } : {};
}

interface Client {
  key: string;
  role: RateLimitRole;
}

/**
 * The client an address stands for: an IPv4 address itself, an IPv6 address its /64 (one subscriber's
 * network, which hands its hosts any of 2^64 addresses: keyed by address, each would be a new quota).
 */
export function addressClient(address: string): string {
  const bare = address.split('%')[0]!;
  if (!bare.includes(':') || /^::ffff:\d+\.\d+\.\d+\.\d+$/i.test(bare)) return bare.replace(/^::ffff:/i, '');
  const [head = '', tail] = bare.split('::');
  const before = head ? head.split(':') : [];
  const after = tail ? tail.split(':') : [];
  const groups = tail === undefined ? before : [...before, ...Array<string>(Math.max(0, 8 - before.length - after.length)).fill('0'), ...after];
  return `${groups
    .slice(0, 4)
    .map((group) => Number.parseInt(group || '0', 16).toString(16))
    .join(':')}::/64`;
}

const isLoopbackAddress = (address: string | undefined) => address !== undefined && (address.startsWith('127.') || address === '::1' || address.startsWith('::ffff:127.'));

export interface RateLimitOptions {
  rateLimiting: RateLimiting;
  tokens: AccessTokens | undefined;
  /** Who knows the clients' tokens at once (Authenticator.recognise); absent: the configured tokens. */
  authenticator: Authenticator | undefined;
  metrics: ServerMetrics;
}

export const rateLimits = fp<RateLimitOptions>(
  async (app, { rateLimiting: { limits, allowance }, tokens, authenticator = tokens, metrics }) => {
    const counted = countedCredential(tokens);
    const countedBytes = counted === undefined ? undefined : Buffer.from(counted);
    const policyFields = Object.fromEntries(Object.entries(limits.policies).map(([role, { quota, windowSeconds }]) => [role, `"${role}";q=${quota};w=${windowSeconds}`]));

    const clientOf = (request: FastifyRequest): Client | undefined => {
      if (limits.loopback === 'exempt' && isLoopbackAddress(request.socket.remoteAddress)) return undefined;
      const sent = request.headers[COUNTED_HEADER];
      if (countedBytes && typeof sent === 'string' && sent.length === countedBytes.length && timingSafeEqual(Buffer.from(sent), countedBytes)) return undefined;
      const credentials = readCredentials(request.headers.authorization);
      const principal = credentials.kind === 'bearer' ? authenticator?.recognise?.(credentials.token) : undefined;
      // An unknown or malformed credential is anonymous: keyed by it, a client could take a new quota with every made-up token.
      // A known one is its holder, so an access token's renewals share their subject's quota.
      if (principal) return { key: `principal:${JSON.stringify([principal.operator, principal.credential])}`, role: rateLimitRole(principal.roles) };
      return { key: `address:${addressClient(request.socket.remoteAddress ?? '')}`, role: 'anonymous' };
    };

    /** Answers the admission: its fields on the answer, or the 429 (the server's error handler words it). */
    const answer = (client: Client, policy: RateLimitPolicy, admission: Admission, reply: FastifyReply, done: (error?: Error) => void) => {
      const fields = { ratelimit: `"${client.role}";r=${admission.remaining};t=${admission.resetSeconds}`, 'ratelimit-policy': policyFields[client.role]! };
      if (admission.admitted) {
        reply.headers(fields);
        return done();
      }
      metrics.rateLimited(client.role);
      const detail = `This client has made its ${policy.quota} requests of this ${policy.windowSeconds}-second window (role ${client.role}); send more in ${admission.resetSeconds} s.`;
      done(new RequestProblem(problem(429, 'RATE_LIMITED', detail, { 'violated-policies': [client.role] }), { 'retry-after': String(admission.resetSeconds), ...fields }));
    };

    app.addHook('onRequest', (request, reply, done) => {
      const route = request.routeOptions.url;
      if (route === '/livez' || route === '/readyz') return done();
      const client = clientOf(request);
      if (!client) return done();
      const policy = limits.policies[client.role];
      // The client's first request of the window here, or its lease is spent: a reservation, then the same question. A
      // reservation leaves a lease, an exhausted quota or the database unavailable, and admitNow answers; requests that
      // waited for the same one may find its lease spent by the first of them, and ask for the next.
      const decide = (reservations: number): void => {
        const admission = allowance.admitNow(client.key, policy) ?? (reservations === MAX_RESERVATIONS ? { admitted: true, remaining: 0, resetSeconds: 1 } : undefined);
        if (admission) {
          answer(client, policy, admission, reply, done);
          return;
        }
        void allowance.reserve(client.key, policy).then((failure) => {
          if (failure) request.log.warn({ err: failure }, 'the rate limits cannot reach the database: each process counts on its own until it answers (docs/OPERATIONS.md, "Rate limits")');
          decide(reservations + 1);
        });
      };
      decide(0);
    });
  },
  { name: 'passport-rate-limits', fastify: '5.x' },
);

/** The quota a token holder is counted under: its most powerful role's; a token that may only read (audiences too) is a reader. */
function rateLimitRole(roles: readonly Role[]): RateLimitRole {
  if (roles.includes('admin')) return 'admin';
  return roles.includes('writer') ? 'writer' : 'reader';
}
