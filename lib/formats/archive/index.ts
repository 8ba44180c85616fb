export * from './errors.js';
export * from './tar.js';
export * from './bagit.js';
export * from './snapshot.js';
export * from './notarization.js';
