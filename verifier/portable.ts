/**
 * The verifier library as a browser runs it too: every kind of material but archive snapshots and
 * QR images (node:crypto digests, PNG decoding), which the command line checks (index.ts). The
 * verification page loads it bundled, as /verify/verifier.js, with the browser's primitives
 * (lib/platform/primitives.browser.ts).
 */
export * from './report.js';
export * from './pins.js';
export * from './pack.js';
export * from './log.js';
export * from './path.js';
export * from './trust-material.js';
export * from './material.js';
export * from './manifest.js';
export { PACK_PREFIX, type PackClaims } from '../lib/formats/issuer/pack.js';
