/**
 * Capability classes: how much a scanner can establish from the Tier-A pack alone, offline, with
 * only the issuer's pinned keys. Each class puts more claims into the pack; every class carries the
 * core claims (issuer, passport id, issue time, class, type ref, status, log size and root).
 *
 * - `identify`: the core plus the product identity. The scanner learns which product this is,
 *   under which model, in which status, and which log state the pack was minted against.
 * - `trace`: identify plus the manifest digest and the latest event, so a scanner can check a
 *   fetched manifest and tell whether the log has moved on since the pack was minted.
 * - `verify-offline`: trace plus the signed log head's timestamp and Ed25519 signature, so the log
 *   state itself verifies offline against the issuer's event key.
 *
 * Class names are lowercase tokens, as the registry's profile manifest spells `capability_class`
 * (pattern ^[a-z][a-z0-9-]{0,31}$).
 */
import { IssuerError } from './errors.js';

export const CAPABILITY_CLASSES = ['identify', 'trace', 'verify-offline'] as const;
export type CapabilityClass = (typeof CAPABILITY_CLASSES)[number];

/** The claims every pack carries. */
export const CORE_CLAIMS = ['iss', 'sub', 'iat', 'capability_class', 'type_ref', 'status', 'log'] as const;
/** The claims a class adds to the core. */
export const OPTIONAL_CLAIMS = ['identity', 'manifest_digest', 'last_event', 'log_head'] as const;
export type OptionalClaim = (typeof OPTIONAL_CLAIMS)[number];

export interface CapabilityClassDescriptor {
  capability_class: CapabilityClass;
  name: string;
  description: string;
  /** Claims beyond the core. */
  claims: readonly OptionalClaim[];
}

export const CAPABILITY_CLASS_CATALOGUE: readonly CapabilityClassDescriptor[] = Object.freeze([
  {
    capability_class: 'identify',
    name: 'identify',
    description: 'Which product, model, status and log state; verified by the carrier signature.',
    claims: ['identity'],
  },
  {
    capability_class: 'trace',
    name: 'trace',
    description: 'identify plus the manifest digest and the latest event, to check a fetched manifest and spot a newer log.',
    claims: ['identity', 'manifest_digest', 'last_event'],
  },
  {
    capability_class: 'verify-offline',
    name: 'verify offline',
    description: 'trace plus the signed log head, so the log state verifies offline under the issuer event key.',
    claims: ['identity', 'manifest_digest', 'last_event', 'log_head'],
  },
]);

export function isCapabilityClass(value: unknown): value is CapabilityClass {
  return typeof value === 'string' && (CAPABILITY_CLASSES as readonly string[]).includes(value);
}

export function capabilityClassClaims(capabilityClass: CapabilityClass): readonly OptionalClaim[] {
  return CAPABILITY_CLASS_CATALOGUE.find((descriptor) => descriptor.capability_class === capabilityClass)!.claims;
}

/** The class named in a request; throws UNKNOWN_CAPABILITY_CLASS otherwise. */
export function validateCapabilityClass(value: unknown): CapabilityClass {
  if (!isCapabilityClass(value)) {
    throw new IssuerError('UNKNOWN_CAPABILITY_CLASS', `capability class must be one of ${CAPABILITY_CLASSES.join(', ')}`, {
      capability_class: String(value),
    });
  }
  return value;
}
