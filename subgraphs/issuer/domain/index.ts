export * from '../../../lib/formats/issuer/index.js';
export * from './identity.js';
export * from './verdict.js';
