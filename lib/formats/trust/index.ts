export * from './delegation.js';
export * from './errors.js';
export * from './jurisdiction.js';
export * from './keys.js';
export * from './nodes.js';
export * from './revocations.js';
export * from './scope.js';
export * from './time.js';
