/** The registry service's domain: pure rules over plain record data. */
export * from './applicability.js';
export * from './errors.js';
export * from './identifiers.js';
export * from './kinds.js';
export * from './listing.js';
export * from './model-schema.js';
export * from './profile-manifest.js';
export * from './record.js';
export * from './record-body.js';
export * from './scope.js';
export * from './seed/index.js';
export * from './supersession.js';
export * from './time.js';
