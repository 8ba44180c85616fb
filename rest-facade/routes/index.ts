/**
 * Every service's route table. Each group of routes has a folder of the same four modules:
 * `routes.ts` (the table: paths, parameters, roles, which operation, which mapper, which schema),
 * `schemas.ts` (JSON Schemas of bodies and answers, with the examples the OpenAPI documents show),
 * `operations.ts` (the GraphQL documents sent to the gateway) and `mappers.ts` (request to
 * variables, data to answer: bodies, headers, streams, problems). `common/` is what every service
 * has; the issuer's table adds `credentials/` (its W3C surface), `operators/` (the operators it signs for) and
 * `digital-link/` (the GS1 resolver).
 */
import type { ServiceName } from '../../lib/config/services.js';
import type { ServiceRoutes } from '../route-table.js';
import { archiveRoutes } from './archive/routes.js';
import { commonRoutes } from './common/routes.js';
import { issuerRoutes } from './issuer/routes.js';
import { registryRoutes } from './registry/routes.js';
import { trustRoutes } from './trust/routes.js';

export const ROUTE_TABLES: Record<ServiceName, ServiceRoutes> = {
  trust: { service: 'trust', title: 'Trust service', routes: [...commonRoutes('trust', { keyring: true }), ...trustRoutes] },
  registry: { service: 'registry', title: 'Registry service', routes: [...commonRoutes('registry', { keyring: false }), ...registryRoutes] },
  issuer: { service: 'issuer', title: 'Issuer service', routes: [...commonRoutes('issuer', { keyring: true }), ...issuerRoutes] },
  archive: { service: 'archive', title: 'Archive service', routes: [...commonRoutes('archive', { keyring: true }), ...archiveRoutes] },
};
