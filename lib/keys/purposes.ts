/**
 * Every service's key purposes: the algorithm each signs with and what it signs, which the keyring
 * tells verifiers (`purpose`, `signs`) and `npm run keys -- rotate` accepts. Each service has a
 * `service` key for its own signed status documents.
 */
import type { ServiceName } from '../config/services.js';
import type { KeyPurpose } from './key-store.js';

export const SERVICE_KEY_PURPOSE = 'service';

const serviceKey = (...signs: string[]): KeyPurpose => ({ purpose: SERVICE_KEY_PURPOSE, alg: 'Ed25519', signs: ['health', ...signs] });

export const KEY_PURPOSES: Record<ServiceName, readonly KeyPurpose[]> = {
  trust: [serviceKey('trust anchor bundles')],
  registry: [serviceKey()],
  issuer: [
    serviceKey(),
    // Each operator signs its own passports with keys of its own (docs/OPERATORS.md).
    { purpose: 'event', alg: 'Ed25519', signs: ['events', 'log heads'], perOperator: true },
    { purpose: 'carrier', alg: 'ES256', signs: ['Tier-A packs'], perOperator: true },
    // The operator's did:web names it in assertionMethod (docs/INTEROP.md).
    { purpose: 'credential', alg: 'Ed25519', signs: ['UNTP passport credentials (vc+jwt)', 'Bitstring Status List credentials (vc+jwt)'], perOperator: true },
  ],
  archive: [serviceKey(), { purpose: 'notary', alg: 'Ed25519', signs: ['notarizations of snapshots'] }],
};

/** The mutation `npm run keys -- rotate` sends the gateway: the running service rotates its key itself. */
export const rotateKeyOperation = (service: ServiceName) => `mutation Rotate($purpose: String!) { ${service}RotateKey(purpose: $purpose) }`;
