/** The routes every service has (spec §1): discovery, health, admin log, and the keyring. */
import type { ServiceName } from '../../lib/config/services.js';
import type { JsonSchema, Route, RouteContext } from '../route-table.js';

export const JWK_SET_MEDIA_TYPE = 'application/jwk-set+json';

const signedJsonSchema: JsonSchema = {
  type: 'object',
  required: ['signature'],
  properties: { signature: { type: 'string', description: 'Detached compact JWS (RFC 7515 appendix F) over the RFC 8785 form of the other members.' } },
};

const jwkSetSchema: JsonSchema = {
  type: 'object',
  required: ['keys'],
  properties: {
    keys: {
      type: 'array',
      items: {
        type: 'object',
        required: ['kty', 'kid', 'alg', 'use', 'purpose', 'signs', 'iat'],
        properties: {
          kty: { enum: ['OKP', 'EC'] },
          crv: { enum: ['Ed25519', 'P-256'] },
          kid: { type: 'string', description: 'RFC 7638 thumbprint.' },
          alg: { enum: ['Ed25519', 'ES256'] },
          use: { const: 'sig' },
          purpose: { enum: ['service', 'event', 'carrier', 'notary'], description: 'What the key is for (docs/KEYS.md): a service key signs health (and, at the trust service, anchor bundles); event signs events and log heads; carrier signs Tier-A packs; notary signs notarizations.' },
          signs: { type: 'array', items: { type: 'string' }, description: 'The artefacts the key signs, in words.' },
          iat: { type: 'integer' },
          exp: { type: 'integer', description: 'Set once the key is retired; it still verifies what it signed.' },
          revoked: { type: 'object', properties: { revoked_at: { type: 'integer' }, reason: { type: 'string' } } },
        },
      },
    },
  },
};

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
      responses: { 200: { description: 'The discovery document.' } },
    },
    {
      method: 'GET',
      path: '/healthz',
      summary: 'Liveness as signed JSON',
      operation: `query Health { ${service} { health } }`,
      result: (data) => {
        const health = data[service].health as { status: string };
        return { status: health.status === 'ok' ? 200 : 503, headers: { 'cache-control': 'no-store' }, body: health };
      },
      responses: { 200: { description: 'The service and its database answer.', schema: signedJsonSchema }, 503: { description: 'The database does not answer.', schema: signedJsonSchema } },
    },
    {
      method: 'GET',
      path: '/admin/log',
      summary: 'Admin log: every state-changing request, newest first',
      role: 'admin',
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
      responses: { 200: { description: 'A page of the admin log.' } },
    },
  ];
  if (options.keyring) {
    routes.push({
      method: 'GET',
      path: '/keyring',
      summary: 'The public keys a verifier pins (JWK Set)',
      operation: `query Keyring { ${service} { keyring } }`,
      result: (data) => ({ headers: { 'content-type': JWK_SET_MEDIA_TYPE }, body: data[service].keyring }),
      responses: { 200: { description: 'JWK Set with historical keys.', mediaType: JWK_SET_MEDIA_TYPE, schema: jwkSetSchema } },
    });
  }
  return routes;
}
