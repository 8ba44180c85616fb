/** The offline verifier as a library: one module per kind of material. See docs/VERIFIER.md. */
export * from './portable.js';
export * from './bagit.js';
export * from './qr.js';
export * from './snapshot.js';
