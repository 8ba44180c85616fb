export * from './base64url.js';
export * from './jcs.js';
export * from './jwk.js';
export * from './jws.js';
export * from './signature.js';
