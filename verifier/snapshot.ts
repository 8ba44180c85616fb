/**
 * An archive snapshot, offline: the BagIt bag and its fixity (bagit.ts), the notarization over the
 * exact archive bytes under a pinned notary key (the archive's verifyNotarization), and everything
 * inside: the trust anchor bundle under a pinned trust key, the event log and head (verifyLog) and
 * the pack (verifyPack) under pinned issuer keys, with the keyrings inside the bag supplying key
 * material only for pinned thumbprints.
 */
import { createHash } from 'node:crypto';
import { JwsError, keySetResolver, verifyJson, type PublicJwk } from '../lib/crypto/index.js';
import { ArchiveError } from '../lib/formats/archive/errors.js';
import { verifyNotarization } from '../lib/formats/archive/notarization.js';
import { SNAPSHOT_FILES, snapshotFile } from '../lib/formats/archive/snapshot.js';
import { validateBag } from './bagit.js';
import { eventsFromJsonLines, verifyLogExport } from './log.js';
import { verifyPackText } from './pack.js';
import { anchorBundleFinding, hasPinnedKeys, InputError, jwsKid, keysOf, pinnedKey, unresolvedReason, type PinSet } from './pins.js';
import { failed, info, makeReport, notChecked, ok, type Finding, type Report } from './report.js';

const decoder = new TextDecoder('utf-8', { fatal: true });

/** Verifies a snapshot's archive bytes; `notarization` is the signed JSON served beside it, when at hand. */
export async function verifySnapshot(archive: Uint8Array, notarization: unknown, pins: PinSet): Promise<Report> {
  const bag = validateBag(archive, { requirePayloadOxum: true, requireCompleteTagManifests: true });
  const findings: Finding[] = [...bag.findings];
  const subject = bag.name ?? '(unreadable archive)';
  const passportId = bag.info.get('External-Identifier')?.[0];

  // The notarization: over these bytes, by a pinned notary key in force then.
  const bagSha512 = createHash('sha512').update(archive).digest('hex');
  if (notarization === undefined) {
    findings.push(notChecked('notarization', 'NOTARIZATION_MISSING', 'no notarization given (GET /archive/snapshots/{id}/notarization, with --notarization)'));
  } else if (!hasPinnedKeys(pins)) {
    findings.push(notChecked('notarization', 'NO_PINNED_KEY', 'no key is pinned: give the archive keyring (or its notary kid) with --pin'));
  } else {
    findings.push(...notarizationFindings(notarization, bagSha512, archive.length, pins, bag.name, passportId, bag.files.get('tagmanifest-sha512.txt')));
  }
  if (bag.name === undefined) return makeReport('snapshot', subject, findings);

  // What the bag holds.
  const text = (role: Parameters<typeof snapshotFile>[0]): string | undefined => {
    const bytes = bag.files.get(snapshotFile(role).path);
    if (bytes === undefined) return undefined;
    try {
      return decoder.decode(bytes);
    } catch {
      findings.push(failed('snapshot.content', 'NOT_UTF8', `${snapshotFile(role).path} is not UTF-8`));
      return undefined;
    }
  };
  const json = (role: Parameters<typeof snapshotFile>[0]): unknown => {
    const content = text(role);
    if (content === undefined) return undefined;
    try {
      return JSON.parse(content) as unknown;
    } catch {
      findings.push(failed('snapshot.content', 'MALFORMED_JSON', `${snapshotFile(role).path} is not JSON`));
      return undefined;
    }
  };
  const missing = SNAPSHOT_FILES.filter((file) => file.required && !bag.files.has(file.path)).map((file) => file.path);
  if (missing.length > 0) findings.push(failed('snapshot.content', 'SNAPSHOT_FILE_MISSING', `the bag lacks ${missing.join(', ')}`));
  else findings.push(ok('snapshot.content', `every snapshot file is present${bag.files.has(snapshotFile('pack').path) ? ', with a pack' : ' (no pack was minted)'}`));
  if (passportId === undefined) findings.push(failed('snapshot.content', 'PASSPORT_ID_MISSING', 'bag-info.txt has no External-Identifier (the passport id)'));

  const material: PublicJwk[] = [];
  for (const role of ['issuerKeyring', 'trustKeyring'] as const) {
    const keyring = json(role);
    if (keyring === undefined) continue;
    try {
      material.push(...keysOf(keyring, snapshotFile(role).path));
    } catch (error) {
      findings.push(failed('snapshot.keys', 'MALFORMED_KEYS', (error as InputError).message));
    }
  }

  const pinnedBundle = anchorBundleFinding(pins, material);
  if (pinnedBundle) findings.push(pinnedBundle);
  const bundle = json('trustAnchorBundle');
  if (bundle !== undefined) findings.push(anchorBundleInBag(bundle, pins, material));

  const core = json('core') as { passport_id?: unknown } | undefined;
  if (core && passportId !== undefined && core.passport_id !== passportId) {
    findings.push(failed('snapshot.content', 'PASSPORT_MISMATCH', `core.json is of passport ${String(core.passport_id)}, the bag of ${passportId}`));
  }

  const events = text('events');
  const head = json('logHead');
  let headSize: number | undefined;
  let headRoot: string | undefined;
  if (events !== undefined && passportId !== undefined) {
    try {
      const lines = eventsFromJsonLines(events);
      const log = await verifyLogExport({ passportId, events: lines.events, texts: lines.texts, ...(head !== undefined && { head }) }, pins, material, 'log');
      findings.push(...log.findings);
      const signed = head as { size?: unknown; root_hash?: unknown } | undefined;
      if (typeof signed?.size === 'number' && typeof signed.root_hash === 'string') [headSize, headRoot] = [signed.size, signed.root_hash];
    } catch (error) {
      if (!(error instanceof InputError)) throw error;
      findings.push(failed('log.chain', 'MALFORMED_EVENT', error.message));
    }
  }

  const pack = text('pack');
  if (pack !== undefined) {
    const checked = verifyPackText(pack, pins, material, 'pack');
    findings.push(...checked.report.findings);
    const claims = checked.claims;
    if (claims && passportId !== undefined && claims.sub !== passportId) {
      findings.push(failed('pack.passport', 'PACK_PASSPORT_MISMATCH', `the pack is of passport ${claims.sub}, the bag of ${passportId}`));
    }
    if (claims && headSize !== undefined) {
      if (claims.log.size > headSize || (claims.log.size === headSize && claims.log.root_hash !== headRoot)) {
        findings.push(
          failed(
            'pack.log',
            'PACK_LOG_MISMATCH',
            `the pack commits to a log of ${claims.log.size} events with root ${claims.log.root_hash}, which the bag's log head (size ${headSize}) does not contain`,
          ),
        );
      } else findings.push(ok('pack.log', `the pack's log state (size ${claims.log.size}) is ${claims.log.size === headSize ? "the bag's log head" : "an earlier state of the bag's log"}`));
    }
  }
  return makeReport('snapshot', subject, findings);
}

function notarizationFindings(
  document: unknown,
  bagSha512: string,
  size: number,
  pins: PinSet,
  name: string | undefined,
  passportId: string | undefined,
  tagManifest: Uint8Array | undefined,
): Finding[] {
  const keys = [...pins.kids].map((kid) => pinnedKey(pins, kid)).filter((key): key is PublicJwk => key !== undefined);
  let claims: ReturnType<typeof verifyNotarization>['claims'];
  try {
    claims = verifyNotarization(document, bagSha512, keys).claims;
  } catch (error) {
    if (!(error instanceof ArchiveError)) throw error;
    if (error.code === 'NOTARY_KEY_UNKNOWN') {
      const why = unresolvedReason(pins, jwsKid((document as { signature?: unknown }).signature));
      return [why.code === 'KEY_NOT_PINNED' ? failed('notarization', why.code, `notary ${why.message}`) : notChecked('notarization', why.code, why.message)];
    }
    return [failed('notarization', error.code, error.message)];
  }
  const findings = [ok('notarization', `notarized at ${claims.notarized_at} by pinned notary key ${jwsKid((document as { signature: string }).signature)} over these exact ${size} bytes (SHA-512)`)];
  const mismatch = (code: string, message: string) => findings.push(failed('notarization', code, message));
  if (claims.bag_size !== size) mismatch('NOTARIZATION_SIZE_MISMATCH', `the notarization is over ${claims.bag_size} bytes, the archive has ${size}`);
  if (name !== undefined && claims.snapshot_id !== name) mismatch('NOTARIZATION_SNAPSHOT_MISMATCH', `the notarization is of snapshot ${claims.snapshot_id}, the bag is ${name}`);
  if (passportId !== undefined && claims.passport_id !== passportId) mismatch('NOTARIZATION_PASSPORT_MISMATCH', `the notarization is of passport ${claims.passport_id}, the bag of ${passportId}`);
  if (claims.tagmanifest_sha512 !== undefined && tagManifest !== undefined) {
    const digest = createHash('sha512').update(tagManifest).digest('hex');
    if (digest !== claims.tagmanifest_sha512) mismatch('NOTARIZATION_TAGMANIFEST_MISMATCH', `tagmanifest-sha512.txt has SHA-512 ${digest}, the notarization says ${claims.tagmanifest_sha512}`);
  }
  return findings;
}

/** The anchor bundle the archive gathered: signed by a pinned trust key, its roots those pinned. */
function anchorBundleInBag(bundle: unknown, pins: PinSet, material: readonly PublicJwk[]): Finding {
  const kid = jwsKid((bundle as { signature?: unknown } | null)?.signature);
  const key = pinnedKey(pins, kid, material);
  if (!key) {
    const why = unresolvedReason(pins, kid);
    return why.code === 'KEY_NOT_PINNED' ? failed('snapshot.anchors', why.code, `trust anchor bundle: ${why.message}`) : notChecked('snapshot.anchors', why.code, why.message);
  }
  try {
    verifyJson(bundle, keySetResolver([key]));
  } catch (error) {
    if (!(error instanceof JwsError)) throw error;
    return failed('snapshot.anchors', `ANCHOR_BUNDLE_${error.reason}`, `the trust anchor bundle in the bag does not verify: ${error.message}`);
  }
  const roots = (bundle as { roots?: { id?: unknown }[] }).roots;
  const unpinned = pins.roots && Array.isArray(roots) ? roots.filter((root) => !pins.roots!.some((pinned) => pinned.id === root.id)).map((root) => String(root.id)) : [];
  if (unpinned.length > 0) return info('snapshot.anchors', `the bag's anchor bundle verifies under pinned key ${kid}; it names roots the pinned anchors do not: ${unpinned.join(', ')}`);
  return ok('snapshot.anchors', `the bag's trust anchor bundle verifies under pinned trust key ${kid}`);
}
