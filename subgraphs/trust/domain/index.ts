export * from './anchor-bundle.js';
export * from '../../../lib/formats/trust/index.js';
export * from './key-standing.js';
export * from './master-list.js';
export * from './trust-lists.js';
export * from './platform-keys.js';
export * from './key-path.js';
