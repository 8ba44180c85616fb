import type { ServiceName } from '../../lib/config/services.js';
import type { ServiceRoutes } from '../route-table.js';
import { archiveRoutes } from './archive.js';
import { commonRoutes } from './common.js';
import { issuerRoutes } from './issuer.js';
import { registryRoutes } from './registry.js';
import { trustRoutes } from './trust.js';

/** Every service's route table. */
export const ROUTE_TABLES: Record<ServiceName, ServiceRoutes> = {
  trust: { service: 'trust', title: 'Trust service', routes: [...commonRoutes('trust', { keyring: true }), ...trustRoutes] },
  registry: { service: 'registry', title: 'Registry service', routes: [...commonRoutes('registry', { keyring: false }), ...registryRoutes] },
  issuer: { service: 'issuer', title: 'Issuer service', routes: [...commonRoutes('issuer', { keyring: true }), ...issuerRoutes] },
  archive: { service: 'archive', title: 'Archive service', routes: [...commonRoutes('archive', { keyring: true }), ...archiveRoutes] },
};
