/** The routes every service has (spec §1): discovery, health, admin log, and the keyring. */
import type { ServiceName } from '../../../lib/config/services.js';
import type { Route } from '../../route-table.js';
import { adminLogAnswer, discoveryDocument, healthAnswer, JWK_SET_MEDIA_TYPE } from './mappers.js';
import * as operations from './operations.js';
import * as schemas from './schemas.js';

export function commonRoutes(service: ServiceName, options: { keyring: boolean; discoverySummary?: string }): Route[] {
  const routes: Route[] = [
    {
      method: 'GET',
      path: '/',
      summary: options.discoverySummary ?? 'Discovery document',
      operation: operations.discovery(service, options.keyring),
      result: (data, context) => ({ body: discoveryDocument(service, options.keyring, data, context) }),
      responses: { 200: { description: 'The discovery document.', ...schemas.discovery(service, options.keyring) } },
    },
    {
      method: 'GET',
      path: '/healthz',
      summary: 'Liveness as signed JSON',
      operation: operations.health(service),
      result: (data) => healthAnswer(data[service].health),
      responses: { 200: { description: 'The service and its database answer.', ...schemas.health('ok') }, 503: { description: 'The database does not answer.', ...schemas.health('unavailable') } },
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
      operation: operations.adminLog(service),
      variables: ({ query }) => ({ limit: query.limit ?? 50, before: query.before ?? null }),
      result: (data, context) => adminLogAnswer(data[service].adminLog, context),
      responses: { 200: { description: 'A page of the admin log.', ...schemas.adminLogPage } },
    },
  ];
  if (options.keyring) {
    routes.push({
      method: 'GET',
      path: '/keyring',
      summary: 'The public keys a verifier pins (JWK Set)',
      operation: operations.keyring(service),
      result: (data) => ({ headers: { 'content-type': JWK_SET_MEDIA_TYPE }, body: data[service].keyring }),
      responses: { 200: { description: 'JWK Set with historical keys.', mediaType: JWK_SET_MEDIA_TYPE, ...schemas.jwkSet } },
    });
  }
  return routes;
}
