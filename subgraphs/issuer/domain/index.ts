export * from '../../../lib/formats/issuer/index.js';
export * from '../../../lib/formats/vc/index.js';
export * from './identity.js';
export * from './verdict.js';
export * from './untp-credential.js';
export * from './audiences.js';
