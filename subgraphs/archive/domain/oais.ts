/**
 * The discovery document's two parts: how a snapshot bag maps onto an OAIS Archival Information
 * Package (ISO 14721:2012 §2.2.2 and §4.2.1.4), and the steps a verifier follows with public
 * tools to check a snapshot and its notarization. Both are data in the REST document's
 * snake_case, pointing at the actual files of the bag layout.
 */
import { PAYLOAD_MANIFEST, TAG_MANIFEST } from '../../../lib/formats/archive/bagit.js';
import { snapshotFile, type SnapshotFileRole } from '../../../lib/formats/archive/snapshot.js';

/** A place in the bag: a path relative to the bag's base directory, optionally one bag-info element. */
export interface BagLocation {
  readonly path: string;
  readonly element?: string;
}

export interface OaisPart {
  readonly description: string;
  readonly in_bag: readonly BagLocation[];
  /** Information kept beside the bag rather than in it. */
  readonly outside_bag?: readonly string[];
}

export interface OaisMapping {
  readonly reference_model: string;
  readonly information_package: string;
  readonly packaging: OaisPart;
  readonly content_information: {
    readonly content_data_object: OaisPart;
    readonly representation_information: OaisPart;
  };
  readonly preservation_description_information: {
    readonly reference: OaisPart;
    readonly provenance: OaisPart;
    readonly context: OaisPart;
    readonly fixity: OaisPart;
    readonly access_rights: OaisPart;
  };
  readonly descriptive_information: OaisPart;
}

const files = (...roles: SnapshotFileRole[]): BagLocation[] => roles.map((role) => ({ path: snapshotFile(role).path }));
const bagInfo = (...elements: string[]): BagLocation[] => elements.map((element) => ({ path: 'bag-info.txt', element }));

/** The OAIS view of every snapshot bag. */
export function oaisMapping(): OaisMapping {
  return {
    reference_model: 'ISO 14721:2012 Open Archival Information System (OAIS), CCSDS 650.0-M-2',
    information_package:
      'Each snapshot is one Archival Information Package: a BagIt 1.0 bag (RFC 8493) with SHA-512 manifests, serialized as one POSIX ustar archive whose single top-level directory is the snapshot id. The bytes are stored once and re-served unchanged by GET /snapshots/{id}.',
    packaging: {
      description: 'Packaging Information: the BagIt structure that binds the parts together, and the deterministic ustar serialization.',
      in_bag: [{ path: 'bagit.txt' }, { path: 'bag-info.txt' }],
    },
    content_information: {
      content_data_object: {
        description: "The passport as the issuer held it at snapshot time: core record, manifest, the signed event log and its signed head, the Tier-A pack (once minted) and the issuer's verdict.",
        in_bag: files('core', 'manifest', 'events', 'logHead', 'pack', 'verdict'),
      },
      representation_information: {
        description:
          'Structure and semantics of every payload file: media type and the specifications needed to read it (RFC 8785 JSON, JSON Lines, RFC 7515 JWS, RFC 6962 Merkle trees, COSE/CBOR/Base45, RFC 7517 JWK Sets).',
        in_bag: files('representationInformation'),
      },
    },
    preservation_description_information: {
      reference: {
        description:
          'Identifiers: the passport id (External-Identifier), the snapshot id (Internal-Sender-Identifier and top-level directory), and the identity (GS1 Digital Link URI or equivalent) in the core record.',
        in_bag: [...bagInfo('External-Identifier', 'Internal-Sender-Identifier'), ...files('core')],
      },
      provenance: {
        description:
          "Where the content came from and what happened to it: the issuer-signed, hash-chained event log with its signed Merkle head, the issuer's verdict over it, and who bagged it when and with what software; the notarization records when the archive took custody of these exact bytes.",
        in_bag: [...files('events', 'logHead', 'verdict'), ...bagInfo('Source-Organization', 'Bagging-Date', 'Bag-Software-Agent')],
        outside_bag: ['notarization: signed JSON by the archive notary key (GET /keyring) over snapshot_id, passport_id, bag_sha512, bag_size, notarized_at, tagmanifest_sha512'],
      },
      context: {
        description:
          "How the content relates to information outside it: the registry type model it instantiates (type reference in core and manifest), and the trust framework the issuer's key stood in (trust anchor bundle and the trust service keyring that signs it).",
        in_bag: files('manifest', 'core', 'trustAnchorBundle', 'trustKeyring'),
      },
      fixity: {
        description:
          'Integrity and authenticity: SHA-512 manifests of every payload and tag file and the Payload-Oxum; the Ed25519 signatures on events and log head with the issuer keyring that verifies them; the ES256 carrier signature of the pack; the notarization over the digest of the whole archive.',
        in_bag: [{ path: PAYLOAD_MANIFEST }, { path: TAG_MANIFEST }, ...bagInfo('Payload-Oxum'), ...files('issuerKeyring')],
        outside_bag: ['notarization (bag_sha512, bag_size, tagmanifest_sha512)', 'Content-Digest (RFC 9530, sha-512) and ETag on GET /snapshots/{id}'],
      },
      access_rights: {
        description:
          'Snapshots are public: GET /snapshots and GET /snapshots/{id} need no credentials. Creating a snapshot needs a bearer token with the writer role and is recorded in GET /admin/log. A snapshot is never changed or deleted once stored.',
        in_bag: [],
        outside_bag: ['the archive service API (GET /, POST /snapshots, GET /admin/log)'],
      },
    },
    descriptive_information: {
      description: 'What the package is, for finding it: the bag description and the passport it is about; GET /snapshots filters by passport_id and at.',
      in_bag: bagInfo('External-Description', 'External-Identifier', 'Bagging-Date'),
    },
  };
}

/** Where a verifier fetches each part; `{id}` stands for the snapshot id. */
export interface RecipeEndpoints {
  /** The archive bytes, e.g. `https://archive.example/snapshots/{id}`. */
  readonly snapshot: string;
  /** The notarization document itself (the signed JSON, not a wrapper around it). */
  readonly notarization: string;
  /** The archive's keyring (JWK Set) holding the notary key. */
  readonly keyring: string;
}

export interface RecipeStep {
  readonly step: number;
  readonly title: string;
  /** Files to create in the working directory before running the commands. */
  readonly files?: readonly { readonly name: string; readonly content: string }[];
  /** POSIX shell commands, each run on its own from the working directory; each exits non-zero when the check fails. */
  readonly run: readonly string[];
  readonly expect: string;
}

export interface NotarizationRecipe {
  readonly tools: readonly string[];
  readonly placeholders: Readonly<Record<string, string>>;
  readonly steps: readonly RecipeStep[];
}

/** A verifier's check of the notarization with jose, against the pinned notary key. */
const VERIFY_SCRIPT = `// Usage: node verify-notarization.mjs <pinned notary key thumbprint>
import { readFileSync } from 'node:fs';
import { calculateJwkThumbprint, flattenedVerify, importJWK } from 'jose';

const pinned = process.argv[2];
const notarization = JSON.parse(readFileSync('notarization.json', 'utf8'));
const keyring = JSON.parse(readFileSync('keyring.json', 'utf8'));
const { signature, ...claims } = notarization;
const [encodedHeader, detachedPayload, encodedSignature] = String(signature).split('.');
if (detachedPayload !== '') throw new Error('the signature is not a detached compact JWS');
const header = JSON.parse(Buffer.from(encodedHeader, 'base64url').toString('utf8'));
if (header.kid !== pinned) throw new Error(\`signed by key \${header.kid}, not by the pinned notary key\`);
const jwk = keyring.keys.find((key) => key.kid === pinned);
if (!jwk) throw new Error('the keyring does not hold the pinned notary key');
if ((await calculateJwkThumbprint(jwk, 'sha256')) !== pinned) throw new Error('the keyring key does not have the pinned thumbprint');
const at = Date.parse(claims.notarized_at) / 1000;
if ((jwk.iat !== undefined && at < jwk.iat) || (jwk.exp !== undefined && at >= jwk.exp) || (jwk.revoked && !(at < jwk.revoked.revoked_at))) {
  throw new Error('the notary key was not in force at notarized_at');
}
// The signed bytes are the RFC 8785 (JCS) form of the members other than "signature". For this
// flat object of strings and integers that is JSON.stringify with the members sorted by name;
// a general RFC 8785 library (e.g. npm "canonicalize") gives the same bytes.
if (Object.values(claims).some((value) => typeof value === 'object')) throw new Error('unexpected nested member');
const canonical = JSON.stringify(Object.fromEntries(Object.entries(claims).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))));
await flattenedVerify(
  { protected: encodedHeader, payload: Buffer.from(canonical, 'utf8').toString('base64url'), signature: encodedSignature },
  await importJWK(jwk, header.alg),
  { algorithms: ['Ed25519', 'EdDSA'] },
);
console.log(\`verified: snapshot \${claims.snapshot_id} of passport \${claims.passport_id}, notarized at \${claims.notarized_at} by \${pinned}\`);
`;

/**
 * The notarization recipe for the given endpoints. Every command is literal POSIX shell; the
 * verifier substitutes `{id}` and `{notary_kid}` and runs them in an empty directory.
 */
export function notarizationRecipe(endpoints: RecipeEndpoints): NotarizationRecipe {
  const bag = "cd '{id}' &&";
  return {
    tools: ['curl', 'jq', 'GNU coreutils (sha512sum, cut, wc, cmp, sort)', 'findutils (find)', 'tar (GNU tar or bsdtar)', 'Node.js 20+ with jose 6 (npm install jose@6)'],
    placeholders: {
      '{id}': 'the snapshot id',
      '{notary_kid}': "the RFC 7638 thumbprint of the archive's notary key, pinned from a copy of GET /keyring you trust (obtained out of band, or when you first pinned the archive)",
    },
    steps: [
      {
        step: 1,
        title: 'Fetch the snapshot, its notarization and the archive keyring',
        run: [`curl -fsS -o snapshot.tar '${endpoints.snapshot}'`, `curl -fsS -o notarization.json '${endpoints.notarization}'`, `curl -fsS -o keyring.json '${endpoints.keyring}'`],
        expect: 'three files: snapshot.tar, notarization.json, keyring.json',
      },
      {
        step: 2,
        title: 'Check that the notarization is about these exact bytes',
        run: [
          `test "$(jq -r .snapshot_id notarization.json)" = '{id}'`,
          'test "$(wc -c < snapshot.tar)" -eq "$(jq -r .bag_size notarization.json)"',
          'echo "$(jq -r .bag_sha512 notarization.json)  snapshot.tar" | sha512sum -c --strict -',
        ],
        expect: 'snapshot.tar: OK — the SHA-512 of the downloaded archive is the notarized bag_sha512',
      },
      {
        step: 3,
        title: 'Verify the notarization signature against the pinned notary key with a JOSE library',
        files: [{ name: 'verify-notarization.mjs', content: VERIFY_SCRIPT }],
        run: ["node verify-notarization.mjs '{notary_kid}'"],
        expect: 'verified: … — the detached JWS (RFC 7515 appendix F) in "signature" verifies over the RFC 8785 form of the other members',
      },
      {
        step: 4,
        title: 'Unpack the bag',
        run: [`test -z "$(tar -tf snapshot.tar | grep -v '^{id}/')"`, 'tar -xf snapshot.tar'],
        expect: 'one directory named after the snapshot id, holding the bag',
      },
      {
        step: 5,
        title: 'Check the BagIt declaration',
        run: [`${bag} printf 'BagIt-Version: 1.0\\nTag-File-Character-Encoding: UTF-8\\n' | cmp - bagit.txt`],
        expect: 'no output: bagit.txt is the BagIt 1.0 declaration',
      },
      {
        step: 6,
        title: 'Check the tag files and tie them to the notarization',
        run: [`${bag} sha512sum -c --strict ${TAG_MANIFEST}`, `${bag} echo "$(jq -r .tagmanifest_sha512 ../notarization.json)  ${TAG_MANIFEST}" | sha512sum -c --strict -`],
        expect: `every line OK: bagit.txt, bag-info.txt and ${PAYLOAD_MANIFEST} match ${TAG_MANIFEST}, whose digest is the notarized tagmanifest_sha512`,
      },
      {
        step: 7,
        title: 'Check every payload file',
        run: [`${bag} sha512sum -c --strict ${PAYLOAD_MANIFEST}`],
        expect: `every line OK. BagIt manifest lines are "<sha512>  <path>" relative to the bag directory, which sha512sum -c reads as is (no payload path of this layout needs RFC 8493 percent-encoding).`,
      },
      {
        step: 8,
        title: 'Check that the payload holds nothing unlisted and matches Payload-Oxum',
        run: [
          `${bag} test "$(find data -type f | LC_ALL=C sort)" = "$(cut -c 131- ${PAYLOAD_MANIFEST} | LC_ALL=C sort)"`,
          `${bag} test "$(sed -n 's/^Payload-Oxum: //p' bag-info.txt)" = "$(find data -type f -exec cat {} + | wc -c).$(find data -type f | wc -l)"`,
        ],
        expect: 'both tests pass: the files under data/ are exactly those in the manifest, and their total size and count are the Payload-Oxum',
      },
    ],
  };
}
