import { ed25519PublicJwk, generateSecretKey, jwkThumbprint, keySetResolver, p256PublicJwk, publicKeyOf, rawKeySigner, type PublicJwk, type Signer } from '../../../lib/crypto/index.js';
import { appendEvent, emptyLogState, type EventRecord, type LogState } from '../../../lib/formats/issuer/event-log.js';

export interface TestKey {
  signer: Signer;
  jwk: PublicJwk & { kid: string };
  secretKey: Uint8Array;
  publicKey: Uint8Array;
}

export function ed25519Key(): TestKey {
  const secretKey = generateSecretKey('Ed25519');
  const publicKey = publicKeyOf('Ed25519', secretKey);
  const jwk = ed25519PublicJwk(publicKey);
  const kid = jwkThumbprint(jwk);
  return { signer: rawKeySigner('Ed25519', kid, secretKey), jwk: { ...jwk, kid }, secretKey, publicKey };
}

export function p256Key(): TestKey {
  const secretKey = generateSecretKey('ES256');
  const publicKey = publicKeyOf('ES256', secretKey);
  const jwk = p256PublicJwk(publicKey);
  const kid = jwkThumbprint(jwk);
  return { signer: rawKeySigner('ES256', kid, secretKey), jwk: { ...jwk, kid }, secretKey, publicKey };
}

export const resolverOf = (...keys: TestKey[]) => keySetResolver(keys.map((key) => key.jwk));

export const T0 = Date.parse('2025-03-01T09:00:00Z');
export const at = (seconds: number) => new Date(T0 + seconds * 1000);

export function objectEvent(bizStep: string, seconds: number) {
  return {
    type: 'ObjectEvent',
    payload: {
      eventTime: at(seconds).toISOString(),
      eventTimeZoneOffset: '+01:00',
      action: bizStep === 'commissioning' ? 'ADD' : 'OBSERVE',
      bizStep,
      epcList: ['https://id.gs1.org/01/09520123456788/21/SN-42'],
    },
  };
}

/** A log: commissioning in draft, activation, then `extra` shipping/receiving events. */
export function buildLog(passportId: string, key: TestKey, extra = 3): { events: EventRecord[]; state: LogState } {
  let state = emptyLogState(passportId);
  const events: EventRecord[] = [];
  const inputs = [
    objectEvent('commissioning', 0),
    { type: 'activated', payload: { placed_on_market_at: at(1).toISOString() } },
    ...Array.from({ length: extra }, (_, i) => objectEvent(i % 2 === 0 ? 'shipping' : 'receiving', 2 + i)),
  ];
  inputs.forEach((input, i) => {
    const appended = appendEvent(state, input, key.signer, at(i));
    state = appended.state;
    events.push(appended.event);
  });
  return { events, state };
}
