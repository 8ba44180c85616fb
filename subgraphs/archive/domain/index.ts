export * from '../../../lib/formats/archive/index.js';
export * from './oais.js';
