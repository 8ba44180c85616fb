/**
 * Trust material a verifier fetches rather than keeps: the trust service's signed anchor bundle
 * with its keyring (the page's /verify/anchors.json), and the signed trust path material of one
 * key (GET /trust/keys/{kid}/path, the page's /verify/keys/{kid}.json): the nodes listing the key,
 * their ancestry, the delegations into them and their revocations. Both are signed by the trust
 * service's key, which the verifier pins (on the device when first seen, or with --pin), and
 * neither vouches for anything once older than TRUST_MATERIAL_MAX_AGE_DAYS: the revocations since
 * are unknown.
 */
import { jwkThumbprint, JwsError, keySetResolver, verifyJson, type PublicJwk } from '../lib/crypto/index.js';
import type { TrustGraph } from '../lib/formats/trust/delegation.js';
import { anchorBundleCheck, InputError, pinsFrom, type PinSet } from './pins.js';
import { trustGraphFrom } from './path.js';
import { failed, notChecked, ok, type Finding } from './report.js';

/** Older anchors or trust path material no longer vouch for anything: revocations since then are unknown. */
export const TRUST_MATERIAL_MAX_AGE_DAYS = 7;
const DAY_MS = 86_400_000;

/** The anchor bundle's roots, and the trust service's key that signed it. */
export interface TrustAnchors {
  /** The bundle pinned: its roots and quorums, and the trust key. */
  readonly pins: PinSet;
  /** The pinned key that signed the bundle, which signs trust path material too; absent when the bundle is trusted as saved. */
  readonly trustKey?: PublicJwk;
  readonly issuedAt: string;
  /** Days since `issuedAt`, as of the verification. */
  readonly ageDays: number;
  readonly expired: boolean;
}

export type FetchedAnchors = { readonly ok: true; readonly anchors: TrustAnchors } | { readonly ok: false; readonly code: 'ANCHOR_BUNDLE_INVALID' | 'ANCHOR_KEY_NOT_PINNED'; readonly message: string };

/** Days from `issued_at` to `now`: NaN when it is no date. */
const daysSince = (issuedAt: string, now: Date) => (now.getTime() - Date.parse(issuedAt)) / DAY_MS;
/** Too old to vouch for anything, or of no date at all. */
const tooOld = (days: number) => !(days <= TRUST_MATERIAL_MAX_AGE_DAYS);

function age(bundle: Record<string, unknown>, now: Date): Pick<TrustAnchors, 'issuedAt' | 'ageDays' | 'expired'> {
  const issuedAt = String(bundle.issued_at);
  const ageDays = daysSince(issuedAt, now);
  return { issuedAt, ageDays, expired: tooOld(ageDays) };
}

/**
 * Anchors as the page fetches them, `{anchor_bundle, trust_keyring}`: the bundle must verify under
 * a key of the keyring whose kid is its thumbprint (a fetched keyring cannot bring in another key),
 * and, once the device has pinned trust keys (`pinnedKids`, the first key seen), under one of those.
 */
export function fetchedAnchors(material: unknown, pinnedKids: readonly string[], now: Date): FetchedAnchors {
  const { anchor_bundle: bundle, trust_keyring: keyring } = (material ?? {}) as { anchor_bundle?: unknown; trust_keyring?: { keys?: unknown } };
  const keys = (Array.isArray(keyring?.keys) ? (keyring.keys as PublicJwk[]) : []).filter((key) => {
    try {
      return key.kid === jwkThumbprint(key);
    } catch {
      return false;
    }
  });
  const refused = { ok: false, code: 'ANCHOR_BUNDLE_INVALID', message: "the trust anchor bundle does not verify under the trust service's keys: it was altered or is not the platform's" } as const;
  // Trust path material is signed by the same key: a bundle has roots and no type.
  if (typeof bundle !== 'object' || bundle === null || !Array.isArray((bundle as Record<string, unknown>).roots) || 'type' in bundle) return refused;
  let signer: PublicJwk;
  try {
    signer = verifyJson(bundle, keySetResolver(keys)).key;
  } catch (error) {
    if (error instanceof JwsError) return refused;
    throw error;
  }
  if (pinnedKids.length > 0 && !pinnedKids.includes(signer.kid!)) {
    return { ok: false, code: 'ANCHOR_KEY_NOT_PINNED', message: `the trust anchor bundle is signed by key ${signer.kid}, which is not the pinned trust key` };
  }
  let pins: PinSet;
  try {
    pins = pinsFrom({ anchorBundle: bundle, keySets: [signer] });
  } catch (error) {
    if (error instanceof InputError) return { ...refused, message: `the trust anchor bundle cannot be used (${error.message})` };
    throw error;
  }
  return { ok: true, anchors: { pins, trustKey: signer, ...age(bundle as Record<string, unknown>, now) } };
}

/** Anchors pinned as saved (--anchors, with the trust keyring or its kids pinned to check its signature); undefined without a bundle. */
export function pinnedAnchors(pins: PinSet, now: Date): TrustAnchors | undefined {
  const check = anchorBundleCheck(pins, pins.material);
  if (!check) return undefined;
  return { pins, ...(check.signer && { trustKey: check.signer }), ...age(pins.anchorBundle!, now) };
}

/** The anchors' age as a finding: failed ANCHORS_EXPIRED past TRUST_MATERIAL_MAX_AGE_DAYS. */
export function anchorsAgeFinding(anchors: TrustAnchors): Finding {
  return anchors.expired
    ? failed(
        'anchors.age',
        'ANCHORS_EXPIRED',
        `the anchor bundle was issued at ${anchors.issuedAt}, ${days(anchors.ageDays)} ago, more than ${TRUST_MATERIAL_MAX_AGE_DAYS} days: revocations since then are unknown`,
      )
    : ok('anchors.age', `the anchor bundle was issued at ${anchors.issuedAt}, ${days(anchors.ageDays)} ago`);
}

const days = (value: number) => (Number.isNaN(value) ? 'an unknown time' : `${Math.floor(value)} days`);

/**
 * Trust path material as a graph to judge paths in: signed by the key that signed the anchor bundle,
 * trust path material (`type: key-path`), about `kid` when one is given, and no older than
 * TRUST_MATERIAL_MAX_AGE_DAYS. Its node keys and revocations are then the trust service's signed
 * word, as the roots are; the delegation credentials inside are validated on their own.
 */
export function keyPathGraph(document: unknown, anchors: TrustAnchors, now: Date, kid?: string): { findings: Finding[]; graph?: TrustGraph } {
  const check = 'trust_path';
  if (!anchors.trustKey) {
    return {
      findings: [
        notChecked(check, 'TRUST_KEY_NOT_PINNED', "trust path material is signed by the trust service's key, which signs the anchor bundle; that key is not pinned: pin the trust keyring with --pin"),
      ],
    };
  }
  const altered = (why: string) => ({ findings: [failed(check, 'TRUST_PATH_INVALID', `the trust path material ${why}: it was altered or is not the platform's`)] });
  let claims: Record<string, unknown>;
  try {
    claims = verifyJson(document, keySetResolver([anchors.trustKey])).payload;
  } catch (error) {
    if (error instanceof JwsError) return altered(`does not verify under the trust service's key ${anchors.trustKey.kid} (${error.message})`);
    throw error;
  }
  if (claims.type !== 'key-path') return altered('is not trust path material (type key-path)');
  if (kid !== undefined && claims.kid !== kid) return altered(`is about key ${String(claims.kid)}, not ${kid}`);
  let graph: TrustGraph;
  try {
    graph = trustGraphFrom(claims);
  } catch (error) {
    if (error instanceof InputError) return altered(`cannot be read (${error.message})`);
    throw error;
  }
  const ageDays = daysSince(String(claims.issued_at), now);
  if (tooOld(ageDays)) {
    return {
      findings: [
        failed(
          check,
          'TRUST_PATH_EXPIRED',
          `the trust path material of key ${String(claims.kid)} was issued at ${String(claims.issued_at)}, ${days(ageDays)} ago, more than ${TRUST_MATERIAL_MAX_AGE_DAYS} days: revocations since then are unknown`,
        ),
      ],
    };
  }
  const message = `the trust path material of key ${String(claims.kid)} verifies under the trust service's key ${anchors.trustKey.kid}: ${graph.nodes.length} nodes, ${graph.edges.length} delegations, ${graph.revocations?.length ?? 0} revocations, issued at ${String(claims.issued_at)}`;
  return { findings: [ok(check, message)], graph };
}
