/**
 * A Tier-A pack, offline: the COSE_Sign1 ES256 carrier signature, and for class verify-offline the
 * embedded log head's Ed25519 signature, each under a key in force when it signed: a pinned key
 * (verifyPackText), or a key the trust graph vouches for (verifyPackByTrustPath, as the
 * verification page judges). Decoding and signature checks are the issuer's own (decodePack,
 * verifyPack and its parts).
 */
import { keySetResolver, type PublicJwk } from '../lib/crypto/index.js';
import { verifyLogHead } from '../lib/formats/issuer/checkpoint.js';
import { verifyCoseSign1 } from '../lib/formats/issuer/cose.js';
import { decodePack, packLogHead, verifyPack, type DecodedPack, type PackClaims } from '../lib/formats/issuer/pack.js';
import type { TrustNode } from '../lib/formats/trust/nodes.js';
import { operatorOfNode } from '../lib/formats/trust/operators.js';
import type { Revocation } from '../lib/formats/trust/revocations.js';
import { parseInstant } from '../lib/formats/trust/time.js';
import { delegationPath, firstRevocation, keyStandingFinding, noPinnedAnchors } from './path.js';
import { anchorBundleFinding, hasPinnedKeys, isKid, jwsKid, keyLifetimeProblem, pinnedKey, pinnedResolver, safeThumbprint, unresolvedReason, type PinSet } from './pins.js';
import { failed, info, makeReport, notChecked, ok, verdictOf, type Finding, type Report } from './report.js';
import { anchorsAgeFinding, keyPathGraph, type TrustAnchors } from './trust-material.js';

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

/** What verifyPackByTrustPath found besides the report: the key, and when the pack verifies, who signed it and how they are trusted. */
export interface TrustPathPackVerification extends PackVerification {
  /** The carrier key's kid, when the pack decodes. */
  readonly kid?: string;
  /** The node that holds the carrier key, reached by a delegation path from a pinned root. */
  readonly issuer?: TrustNode;
  /** That path's nodes, from the root to the issuer. */
  readonly path?: readonly string[];
  /** The operator that signed, when the issuer is an operator's node (`operator:<id>`, docs/OPERATORS.md). */
  readonly operator?: string;
  /** The embedded log head: verified under a key of the issuer, absent (class identify or trace), or signed by a key the issuer does not list. */
  readonly logHead?: 'verified' | 'absent' | 'not_checked';
  /** The first revocation of a node that lists the carrier key, or of the key, taking effect after the pack was signed. */
  readonly revokedLater?: Revocation;
}

/** The carrier kid a pack names, read without checking anything; undefined when the pack does not decode. */
export function packKid(text: string): string | undefined {
  try {
    return decodePack(text.trim()).kid;
  } catch {
    return undefined;
  }
}

/**
 * A pack whose issuer is judged by the trust graph rather than by pinned issuer keys, as the
 * verification page judges it: the carrier key's trust path material (`keyPath`, GET
 * /trust/keys/{kid}/path) is read under the anchors' trust key (keyPathGraph), a node in it lists
 * the carrier key, the ES256 signature verifies under that key, a delegation path from a pinned
 * root reaches the node at the pack's `iat` (delegationPath) and the key was current and unrevoked
 * then (keyStandingFinding: by that node, nor revoked by another that lists it), and the embedded
 * log head verifies under an Ed25519 key of the same node, current and unrevoked at its timestamp.
 * The anchors and the material must both be fresh as of `now` (TRUST_MATERIAL_MAX_AGE_DAYS).
 * Checks stop at the first that fails.
 */
export function verifyPackByTrustPath(text: string, anchors: TrustAnchors | undefined, keyPath: unknown, now: Date): TrustPathPackVerification {
  const findings: Finding[] = [];
  const trimmed = text.trim();
  let decoded: DecodedPack;
  try {
    decoded = decodePack(trimmed);
  } catch (error) {
    findings.push(failed('pack.decode', 'MALFORMED_PACK', (error as Error).message));
    return { report: makeReport('pack', '(undecodable pack)', findings) };
  }
  const { claims, kid } = decoded;
  const done = (more: Partial<TrustPathPackVerification> = {}): TrustPathPackVerification => ({ report: makeReport('pack', claims.sub, findings), claims, kid, ...more });
  const signedAt = claims.iat * 1_000_000;
  findings.push(ok('pack.decode', `DPP1 pack of passport ${claims.sub}, class ${claims.capability_class}, status ${claims.status}, log size ${claims.log.size}, issued ${iso(claims.iat)}`));
  if (!anchors) {
    findings.push(noPinnedAnchors('anchors'));
    return done();
  }
  const bundle = anchorBundleFinding(anchors.pins, anchors.pins.material);
  if (bundle) findings.push(bundle);
  findings.push(anchorsAgeFinding(anchors));
  if (!isKid(kid)) findings.push(failed('pack.issuer', 'KEY_NOT_LISTED', `the pack is signed by key ${kid}, which is not a key thumbprint: no node lists such a key`));
  if (verdictOf(findings) !== 'valid') return done();

  const material = keyPathGraph(keyPath, anchors, now, kid);
  findings.push(...material.findings);
  if (!material.graph) return done();
  const holders = material.graph.nodes.filter((node) => node.keys.some((key) => key.kid === kid && key.kty === 'EC' && safeThumbprint(key) === kid));
  if (holders.length === 0) {
    findings.push(failed('pack.issuer', 'KEY_NOT_LISTED', `the pack is signed by key ${kid}, which no node the trust service vouches for lists`));
    return done();
  }
  const carrierKey = holders[0]!.keys.find((key) => key.kid === kid)!;
  const carrier = verifyCoseSign1({ ...decoded.cose, kid }, () => carrierKey);
  if (!carrier.ok) {
    findings.push(failed('pack.signature', 'BAD_SIGNATURE', `the ES256 carrier signature does not verify under key ${kid}: the pack was altered after signing`));
    return done();
  }
  findings.push(ok('pack.signature', `ES256 carrier signature verifies under key ${kid} of ${holders.map((node) => node.id).join(', ')}`));

  // The issuer is the holder a delegation path stands to, the most specific first (the operator's
  // node before the platform root that also holds the default operator's keys); else the first
  // holder's findings say why none does.
  const paths = holders.map((node) => ({ node, ...delegationPath(material.graph!, node.id, signedAt, anchors.pins) }));
  const standing = paths.filter((path) => verdictOf(path.findings) === 'valid').sort((a, b) => (b.nodes?.length ?? 0) - (a.nodes?.length ?? 0))[0] ?? paths[0]!;
  findings.push(...standing.findings);
  if (verdictOf(findings) !== 'valid') return done();
  const issuer = standing.graph.nodes.find((node) => node.id === standing.node.id)!;
  findings.push(keyStandingFinding(standing.graph, issuer.id, kid, signedAt, 'pack.carrier_key'));
  if (verdictOf(findings) !== 'valid') return done();
  const operator = operatorOfNode(issuer.id);
  if (operator !== undefined) findings.push(ok('pack.operator', `signed by operator ${operator}: its node ${issuer.id} is delegated along ${standing.nodes!.join(' → ')}`));

  const head = packLogHead(claims);
  let logHead: TrustPathPackVerification['logHead'] = 'absent';
  if (head) {
    const checked = verifyLogHead(head, keySetResolver(issuer.keys.filter((key) => key.kty === 'OKP')));
    if (checked.ok) {
      logHead = 'verified';
      findings.push(ok('pack.log_head', `the embedded log head (size ${claims.log.size}) verifies under key ${checked.kid} of ${issuer.id}`));
      const signedHeadAt = parseInstant(head.timestamp);
      findings.push(
        signedHeadAt === undefined
          ? failed('pack.log_head_key', 'KEY_NOT_CURRENT', `the log head's timestamp ${head.timestamp} is not an RFC 3339 date-time`)
          : keyStandingFinding(standing.graph, issuer.id, checked.kid, signedHeadAt, 'pack.log_head_key'),
      );
    } else if (checked.reason === 'UNKNOWN_KEY') {
      logHead = 'not_checked';
      findings.push(info('pack.log_head', `the embedded log head is signed by key ${jwsKid(head.signature)}, which ${issuer.id} does not list: not checked`));
    } else findings.push(failed('pack.log_head', 'BAD_LOG_HEAD_SIGNATURE', `the embedded log head does not verify: ${checked.message}`));
  } else findings.push(info('pack.log_head', `class ${claims.capability_class} packs carry no signed log head`));

  const revokedLater = holders
    .map((node) => firstRevocation(standing.graph.revocations ?? [], node.id, kid))
    .filter((revocation) => revocation !== undefined)
    .sort((a, b) => Date.parse(a.effective_at) - Date.parse(b.effective_at))[0];
  if (revokedLater) findings.push(info('pack.revocations', `${revokedLater.subject} is revoked from ${revokedLater.effective_at} (${revokedLater.reason}), after the pack was signed`));
  return done({ issuer, path: standing.nodes!, logHead, ...(operator !== undefined && { operator }), ...(revokedLater && { revokedLater }) });
}
