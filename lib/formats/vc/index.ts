export * from './bitstring-status-list.js';
export * from './did-web.js';
export * from './vc-jose.js';
export * from './passport-context.js';
