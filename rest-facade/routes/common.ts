/** The routes every service has (spec §1): discovery, health, admin log, and the keyring. */
import type { ServiceName } from '../../lib/config/services.js';
import { DATABASE_RETRY_AFTER_SECONDS } from '../../lib/db/unavailable.js';
import type { JsonSchema, Route, RouteContext, RouteResult } from '../route-table.js';
import { answer, closed, dateTime, EXAMPLE_ED25519_JWK, EXAMPLE_SIGNATURE, EXAMPLE_TIME, keyRevocation, page, publicJwk, signed, thumbprint, uri } from '../schemas.js';

export const JWK_SET_MEDIA_TYPE = 'application/jwk-set+json';

const health = (status: 'ok' | 'unavailable') =>
  answer(
    signed(
      {
        service: { enum: ['trust', 'registry', 'issuer', 'archive'] },
        status: { const: status },
        database: { const: status === 'ok' ? 'ok' : 'unreachable' },
        version: { type: 'string' },
        checked_at: dateTime,
      },
      {},
      'Signed JSON by the service key (GET /keyring, or the discovery document where there is no keyring path).',
    ),
    { service: 'trust', status, database: status === 'ok' ? 'ok' : 'unreachable', version: '0.1.0', checked_at: EXAMPLE_TIME, signature: EXAMPLE_SIGNATURE },
  );

const keyringKey: JsonSchema = {
  ...publicJwk,
  required: ['kty', 'crv', 'x', 'kid', 'alg', 'use', 'purpose', 'signs', 'iat'],
  properties: {
    ...(publicJwk.properties as Record<string, JsonSchema>),
    kid: thumbprint,
    alg: { enum: ['Ed25519', 'ES256'] },
    use: { const: 'sig' },
    purpose: {
      enum: ['service', 'event', 'carrier', 'credential', 'notary'],
      description:
        'What the key is for (docs/KEYS.md): a service key signs health (and, at the trust service, anchor bundles); event signs events and log heads; carrier signs Tier-A packs; credential signs the issuer’s verifiable credentials (UNTP passports, status lists); notary signs notarizations.',
    },
    signs: { type: 'array', items: { type: 'string' }, description: 'The artefacts the key signs, in words.' },
    iat: { type: 'integer', description: 'NumericDate the key was made.' },
    exp: { type: 'integer', description: 'NumericDate, set once the key is retired; it still verifies what it signed.' },
    revoked: keyRevocation,
  },
  additionalProperties: false,
};

const jwkSet = answer(closed({ keys: { type: 'array', items: keyringKey } }), {
  keys: [{ ...EXAMPLE_ED25519_JWK, alg: 'Ed25519', use: 'sig', purpose: 'service', signs: ['health'], iat: 1795587590 }],
});

const endpoint = closed(
  { method: { enum: ['GET', 'POST'] }, path: { type: 'string' }, href: { type: 'string', description: 'The path under this base URL; may hold {name} parameters.' }, summary: { type: 'string' } },
  { role: { enum: ['writer', 'admin'] } },
);

/** The members every discovery document has; each service adds its own (see docs/<service>.md). */
const discovery = (service: ServiceName, keyring: boolean) =>
  answer(
    {
      type: 'object',
      required: ['service', 'description', 'base_url', 'openapi', 'endpoints', ...(keyring ? [] : ['keyring'])],
      properties: {
        service: { const: service },
        description: { type: 'string' },
        base_url: uri,
        openapi: { ...uri, description: "This service's OpenAPI document." },
        endpoints: { type: 'array', items: endpoint },
        ...(keyring ? {} : { keyring: jwkSet.schema }),
      },
      additionalProperties: true,
    },
    {
      service,
      description: `The ${service} service.`,
      base_url: `http://127.0.0.1:8080/${service}`,
      openapi: `http://127.0.0.1:8080/docs/${service}/openapi.json`,
      endpoints: [{ method: 'GET', path: '/healthz', href: `http://127.0.0.1:8080/${service}/healthz`, summary: 'Liveness as signed JSON' }],
      ...(keyring ? {} : { keyring: jwkSet.example }),
    },
  );

const adminLogPage = answer(
  page(
    'entries',
    closed({
      id: { type: 'string' },
      at: dateTime,
      actor: { type: 'string', description: 'Name of the token that made the request.' },
      role: { type: 'string' },
      action: { type: 'string', description: 'The operation, e.g. appendPassportEvent.' },
      target: { type: ['string', 'null'], description: 'The record the request named.' },
      outcome: { type: 'string', description: '`ok`, or the problem code the request ended with.' },
      detail: { type: ['object', 'null'], additionalProperties: true, description: "What the operation said, e.g. a refusal's status and detail; null when there is nothing to add." },
    }),
  ),
  {
    entries: [
      {
        id: '6',
        at: EXAMPLE_TIME,
        actor: 'ops',
        role: 'writer',
        action: 'upsertTrustNode',
        target: 'acme',
        outcome: 'NODE_CONFLICT',
        detail: { status: 409, detail: 'node acme is a issuer; its kind does not change' },
      },
    ],
    next: '6',
  },
);

/**
 * A subgraph does not know where clients reach it, so its discovery document writes its own links
 * as `{base_url}/…`, the specification's notation; the facade fills in the base URL of the request.
 */
function withBaseUrl(value: unknown, baseUrl: string): unknown {
  if (typeof value === 'string') return value.replaceAll('{base_url}', baseUrl);
  if (Array.isArray(value)) return value.map((item) => withBaseUrl(item, baseUrl));
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(Object.entries(value).map(([key, member]) => [key, withBaseUrl(member, baseUrl)]));
}

/** The list of a service's endpoints that its discovery document carries. */
export function endpointsOf(context: RouteContext) {
  return context.routes.map((route) => ({ method: route.method, path: route.path, href: `${context.baseUrl}${route.path}`, summary: route.summary, ...(route.role ? { role: route.role } : {}) }));
}

export function commonRoutes(service: ServiceName, options: { keyring: boolean; discoverySummary?: string }): Route[] {
  const routes: Route[] = [
    {
      method: 'GET',
      path: '/',
      summary: options.discoverySummary ?? 'Discovery document',
      // A service without a keyring path publishes its keys here, so its signed health can be checked.
      operation: `query Discovery { ${service} { discovery${options.keyring ? '' : ' keyring'} } }`,
      result: (data, context) => ({
        body: {
          ...(withBaseUrl(data[service].discovery, context.baseUrl) as Record<string, unknown>),
          base_url: context.baseUrl,
          openapi: `${new URL(context.baseUrl).origin}/docs/${service}/openapi.json`,
          endpoints: endpointsOf(context),
          ...(options.keyring ? {} : { keyring: data[service].keyring }),
        },
      }),
      responses: { 200: { description: 'The discovery document.', ...discovery(service, options.keyring) } },
    },
    {
      method: 'GET',
      path: '/healthz',
      summary: 'Liveness as signed JSON',
      operation: `query Health { ${service} { health } }`,
      result: (data): RouteResult => {
        const health = data[service].health as { status: string };
        // Unavailable says when to ask again, as every other 503 does.
        if (health.status !== 'ok') return { status: 503, headers: { 'cache-control': 'no-store', 'retry-after': String(DATABASE_RETRY_AFTER_SECONDS) }, body: health };
        return { headers: { 'cache-control': 'no-store' }, body: health };
      },
      responses: { 200: { description: 'The service and its database answer.', ...health('ok') }, 503: { description: 'The database does not answer.', ...health('unavailable') } },
    },
    {
      method: 'GET',
      path: '/admin/log',
      summary: 'Admin log: every state-changing request, newest first',
      role: 'admin',
      readsAdminLog: true,
      query: {
        limit: { type: 'integer', description: 'Entries per page (1–500, default 50).', minimum: 1, maximum: 500 },
        before: { type: 'string', description: 'Cursor from the `next` member of a previous page.' },
      },
      operation: `query AdminLog($limit: Int, $before: String) {
  ${service} { adminLog(first: $limit, after: $before) { entries: nodes { id at actor role action target outcome detail } pageInfo { endCursor } } }
}`,
      variables: ({ query }) => ({ limit: query.limit ?? 50, before: query.before ?? null }),
      result: (data, context) => {
        const { entries, pageInfo } = data[service].adminLog as { entries: unknown[]; pageInfo: { endCursor: string | null } };
        const next = pageInfo.endCursor;
        return { body: { entries, next }, ...(next ? { headers: { link: `<${context.baseUrl}/admin/log?before=${next}>; rel="next"` } } : {}) };
      },
      responses: { 200: { description: 'A page of the admin log.', ...adminLogPage } },
    },
  ];
  if (options.keyring) {
    routes.push({
      method: 'GET',
      path: '/keyring',
      summary: 'The public keys a verifier pins (JWK Set)',
      operation: `query Keyring { ${service} { keyring } }`,
      result: (data) => ({ headers: { 'content-type': JWK_SET_MEDIA_TYPE }, body: data[service].keyring }),
      responses: { 200: { description: 'JWK Set with historical keys.', mediaType: JWK_SET_MEDIA_TYPE, ...jwkSet } },
    });
  }
  return routes;
}
