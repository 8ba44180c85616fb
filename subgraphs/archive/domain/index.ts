export * from './errors.js';
export * from './tar.js';
export * from './bagit.js';
