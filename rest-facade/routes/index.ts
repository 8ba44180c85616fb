import type { ServiceName } from '../../lib/config/services.js';
import type { ServiceRoutes } from '../route-table.js';
import { archiveRoutes } from './archive.js';
import { commonRoutes } from './common.js';

/** Every service's route table. */
export const ROUTE_TABLES: Record<ServiceName, ServiceRoutes> = {
  trust: { service: 'trust', title: 'Trust service', routes: [...commonRoutes('trust', { keyring: true })] },
  registry: { service: 'registry', title: 'Registry service', routes: [...commonRoutes('registry', { keyring: false })] },
  issuer: { service: 'issuer', title: 'Issuer service', routes: [...commonRoutes('issuer', { keyring: true })] },
  archive: { service: 'archive', title: 'Archive service', routes: [...commonRoutes('archive', { keyring: true }), ...archiveRoutes] },
};
