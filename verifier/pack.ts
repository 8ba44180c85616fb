/**
 * A Tier-A pack, offline: the COSE_Sign1 ES256 carrier signature, and for class verify-offline the
 * embedded log head's Ed25519 signature, each under a pinned key in force when it signed.
 * Decoding and signature checks are the issuer's own (decodePack, verifyPack).
 */
import type { PublicJwk } from '../lib/crypto/index.js';
import { decodePack, verifyPack, type PackClaims } from '../lib/formats/issuer/pack.js';
import { failed, info, makeReport, notChecked, ok, type Finding, type Report } from './report.js';
import { hasPinnedKeys, jwsKid, keyLifetimeProblem, pinnedKey, pinnedResolver, unresolvedReason, type PinSet } from './pins.js';

export interface PackVerification {
  readonly report: Report;
  /** The claims, when the pack decodes. */
  readonly claims?: PackClaims;
}

/** Verifies a pack's text; `material` is key material at hand (e.g. the issuer keyring in a snapshot). */
export function verifyPackText(text: string, pins: PinSet, material: readonly PublicJwk[] = [], check = 'pack'): PackVerification {
  const findings: Finding[] = [];
  const trimmed = text.trim();
  let claims: PackClaims | undefined;
  let kid: string | undefined;
  try {
    ({ claims, kid } = decodePack(trimmed));
  } catch (error) {
    findings.push(failed(`${check}.decode`, 'MALFORMED_PACK', (error as Error).message));
    return { report: makeReport('pack', '(undecodable pack)', findings) };
  }
  findings.push(ok(`${check}.decode`, `DPP1 pack of passport ${claims.sub}, class ${claims.capability_class}, status ${claims.status}, log size ${claims.log.size}, issued ${iso(claims.iat)}`));
  if (!hasPinnedKeys(pins)) {
    findings.push(notChecked(`${check}.signature`, 'NO_PINNED_KEY', 'no key is pinned: give the issuer keyring (or its kids) with --pin'));
    return { report: makeReport('pack', claims.sub, findings), claims };
  }
  const resolver = pinnedResolver(pins, material);
  const result = verifyPack(trimmed, resolver.resolve);
  if (result.ok) {
    findings.push(ok(`${check}.signature`, `ES256 carrier signature verifies under pinned key ${kid}`));
    findings.push(lifetimeFinding(`${check}.carrier_key`, pins, kid, material, iso(claims.iat)));
    if (result.log_head_signature === 'verified') {
      const headKid = jwsKid(claims.log_head!.signature);
      findings.push(ok(`${check}.log_head`, `the embedded log head (size ${claims.log.size}) verifies under pinned key ${headKid}`));
      findings.push(lifetimeFinding(`${check}.log_head_key`, pins, headKid, material, claims.log_head!.timestamp));
    } else {
      findings.push(info(`${check}.log_head`, `class ${claims.capability_class} packs carry no signed log head`));
    }
  } else if (result.reason === 'UNKNOWN_KEY' || (result.reason === 'BAD_LOG_HEAD_SIGNATURE' && result.log_head_reason === 'UNKNOWN_KEY')) {
    const missing = result.reason === 'UNKNOWN_KEY' ? kid! : jwsKid(claims.log_head!.signature);
    const why = unresolvedReason(pins, missing);
    const where = result.reason === 'UNKNOWN_KEY' ? `${check}.signature` : `${check}.log_head`;
    findings.push(why.code === 'KEY_NOT_PINNED' ? failed(where, why.code, why.message) : notChecked(where, why.code, why.message));
  } else if (result.reason === 'BAD_SIGNATURE') {
    findings.push(failed(`${check}.signature`, 'BAD_SIGNATURE', `the ES256 carrier signature does not verify under key ${kid}: the pack was altered after signing`));
  } else if (result.reason === 'BAD_LOG_HEAD_SIGNATURE') {
    findings.push(ok(`${check}.signature`, `ES256 carrier signature verifies under pinned key ${kid}`));
    findings.push(failed(`${check}.log_head`, 'BAD_LOG_HEAD_SIGNATURE', result.message));
  } else {
    findings.push(failed(`${check}.decode`, 'MALFORMED_PACK', result.message));
  }
  return { report: makeReport('pack', claims.sub, findings), claims };
}

function lifetimeFinding(check: string, pins: PinSet, kid: string, material: readonly PublicJwk[], at: string): Finding {
  const key = pinnedKey(pins, kid, material)!;
  const problem = keyLifetimeProblem(key, at);
  return problem ? failed(check, 'KEY_NOT_IN_FORCE', problem) : ok(check, `key ${kid} was in force at ${at}`);
}

const iso = (seconds: number) => new Date(seconds * 1000).toISOString();
