/** How the answers every service has are written: discovery documents, health, admin log pages. */
import type { ServiceName } from '../../../lib/config/services.js';
import { DATABASE_RETRY_AFTER_SECONDS } from '../../../lib/db/unavailable.js';
import type { RouteContext, RouteResult } from '../../route-table.js';

export const JWK_SET_MEDIA_TYPE = 'application/jwk-set+json';

/**
 * A subgraph does not know where clients reach it, so its discovery document writes its own links
 * as `{base_url}/…`, the specification's notation; the facade fills in the service's base URL.
 */
function withBaseUrl(value: unknown, baseUrl: string): unknown {
  if (typeof value === 'string') return value.replaceAll('{base_url}', baseUrl);
  if (Array.isArray(value)) return value.map((item) => withBaseUrl(item, baseUrl));
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(Object.entries(value).map(([key, member]) => [key, withBaseUrl(member, baseUrl)]));
}

/** The list of a service's endpoints that its discovery document carries. */
function endpointsOf(context: RouteContext) {
  return context.routes.map((route) => ({ method: route.method, path: route.path, href: `${context.baseUrl}${route.path}`, summary: route.summary, ...(route.role ? { role: route.role } : {}) }));
}

/** The service's discovery document, its links absolute, with its keys where it has no keyring path. */
export function discoveryDocument(service: ServiceName, keyring: boolean, data: Record<string, any>, context: RouteContext) {
  return {
    ...(withBaseUrl(data[service].discovery, context.baseUrl) as Record<string, unknown>),
    base_url: context.baseUrl,
    openapi: `${new URL(context.baseUrl).origin}/docs/${service}/openapi.json`,
    endpoints: endpointsOf(context),
    ...(keyring ? {} : { keyring: data[service].keyring }),
  };
}

/** Signed health, never cached; unavailable says when to ask again, as every other 503 does. */
export function healthAnswer(health: { status: string }): RouteResult {
  if (health.status !== 'ok') return { status: 503, headers: { 'cache-control': 'no-store', 'retry-after': String(DATABASE_RETRY_AFTER_SECONDS) }, body: health };
  return { headers: { 'cache-control': 'no-store' }, body: health };
}

/** A page of the admin log, and the link to the next one. */
export function adminLogAnswer({ entries, pageInfo }: { entries: unknown[]; pageInfo: { endCursor: string | null } }, context: RouteContext): RouteResult {
  const next = pageInfo.endCursor;
  return { body: { entries, next }, ...(next ? { headers: { link: `<${context.baseUrl}/admin/log?before=${next}>; rel="next"` } } : {}) };
}
