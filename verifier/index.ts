/** The offline verifier as a library: one module per kind of material. See docs/VERIFIER.md. */
export * from './report.js';
export * from './pins.js';
export * from './bagit.js';
export * from './qr.js';
export * from './pack.js';
export * from './log.js';
export * from './snapshot.js';
export * from './path.js';
