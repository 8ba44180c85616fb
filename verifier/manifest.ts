/**
 * A passport's manifest as a reader was shown it (GET /passports/{id}: `manifest` and `disclosures`),
 * against the pack that signs it: the manifest is the committed one when its SHA-256 (RFC 8785 form)
 * is the pack's manifest_digest, and each disclosure is one of its restricted members when its
 * digest is in the manifest's `_sd` (RFC 9901, lib/formats/issuer/disclosure.ts). The public view,
 * without disclosures, verifies as well as a restricted one. `claims` must be those of a pack that
 * verified (verifyPackText, verifyPackByTrustPath).
 */
import { applyDisclosures, manifestDigest, SD_MEMBER } from '../lib/formats/issuer/disclosure.js';
import { isIssuerError } from '../lib/formats/issuer/errors.js';
import type { PackClaims } from '../lib/formats/issuer/pack.js';
import { failed, info, makeReport, notChecked, ok, type Finding, type Report } from './report.js';

export function verifyManifest(claims: PackClaims, manifest: Record<string, unknown>, disclosures: readonly string[] = []): { report: Report; disclosed?: Record<string, unknown> } {
  const findings: Finding[] = [];
  if (claims.manifest_digest === undefined) {
    findings.push(notChecked('manifest.digest', 'NO_MANIFEST_DIGEST', `class ${claims.capability_class} packs carry no manifest digest`));
  } else if (manifestDigest(manifest) === claims.manifest_digest) {
    findings.push(ok('manifest.digest', `the manifest's SHA-256 is the pack's manifest_digest ${claims.manifest_digest}`));
  } else {
    findings.push(failed('manifest.digest', 'MANIFEST_DIGEST_MISMATCH', `the manifest's SHA-256 is ${manifestDigest(manifest)}, the pack's manifest_digest ${claims.manifest_digest}`));
  }
  const hidden = Array.isArray(manifest[SD_MEMBER]) ? (manifest[SD_MEMBER] as unknown[]).length : 0;
  let disclosed: Record<string, unknown> | undefined;
  try {
    const applied = applyDisclosures(manifest, disclosures);
    disclosed = applied.processed;
    const names = applied.disclosed.map((disclosure) => disclosure.name);
    if (names.length > 0) findings.push(ok('manifest.disclosures', `${names.length} restricted member(s) disclosed, each committed to by the manifest: ${names.join(', ')}`));
    if (hidden > names.length) findings.push(info('manifest.restricted', `${hidden - names.length} restricted member(s) not disclosed to this reader`));
  } catch (error) {
    if (!isIssuerError(error)) throw error;
    findings.push(failed('manifest.disclosures', error.code, error.message));
  }
  return { report: makeReport('manifest', claims.sub, findings), ...(disclosed ? { disclosed } : {}) };
}
