/**
 * What a snapshot's bag holds: the payload layout, and the payload built from the data the
 * archive gathered about a passport.
 *
 * JSON files are written in their RFC 8785 canonical form, without a trailing newline, so equal
 * content gives equal bytes and a file's bytes are exactly what a signature over it covers.
 */
import { canonicalize, type Json } from '../../crypto/index.js';
import type { BagInfo, BagRequest, PayloadFile } from './bagit.js';
import { ArchiveError } from './errors.js';

/** The data gathered from the other services for one snapshot, as plain JSON values. */
export interface SnapshotContent {
  readonly passportId: string;
  /** The passport's core record (id, identity, type reference, capability class, status). */
  readonly core: Json;
  /** The passport's manifest (its config vector). */
  readonly manifest: Json;
  /** Every event of the passport's log in log order, each as signed by the issuer. */
  readonly events: readonly Json[];
  /** The signed log head (checkpoint: size and Merkle root). */
  readonly logHead: Json;
  /** The Tier-A pack text (prefix and Base45), when one has been minted. */
  readonly pack?: string | null;
  /** The issuer's full-pipeline verdict with its coverage. */
  readonly verdict: Json;
  /** The keys a verifier needs, as the services published them at snapshot time. */
  readonly keys: {
    readonly issuerKeyring: Json;
    readonly trustAnchorBundle: Json;
    readonly trustKeyring: Json;
  };
}

export type SnapshotFileRole = 'core' | 'manifest' | 'events' | 'logHead' | 'pack' | 'verdict' | 'issuerKeyring' | 'trustAnchorBundle' | 'trustKeyring' | 'representationInformation';

export interface SnapshotFileDescription {
  readonly role: SnapshotFileRole;
  /** Bag-relative path. */
  readonly path: string;
  readonly mediaType: string;
  readonly description: string;
  /** The specifications needed to read the file, outermost first. */
  readonly specifications: readonly string[];
  /** Whether every snapshot has the file (the pack exists only once minted). */
  readonly required: boolean;
}

const JCS = 'RFC 8785 JSON Canonicalization Scheme (UTF-8, no trailing newline)';
const SIGNED_JSON = 'Signed JSON: plain members plus "signature", a detached compact JWS (RFC 7515 appendix F, alg Ed25519 per RFC 9864 / RFC 8037) over the RFC 8785 form of the other members';
const JWK_SET = 'RFC 7517 JWK Set; Ed25519 keys as OKP (RFC 8037), P-256 keys as EC (RFC 7518); kid is the RFC 7638 SHA-256 thumbprint';

/** The payload layout of every snapshot bag, in manifest order. */
export const SNAPSHOT_FILES: readonly SnapshotFileDescription[] = [
  {
    role: 'issuerKeyring',
    path: 'data/keys/issuer-keyring.json',
    mediaType: 'application/jwk-set+json',
    description: "The issuer's keyring: the keys that signed the events and the log head, and the ES256 carrier key of the pack",
    specifications: [JWK_SET, JCS],
    required: true,
  },
  {
    role: 'trustAnchorBundle',
    path: 'data/keys/trust-anchor-bundle.json',
    mediaType: 'application/json',
    description: "The trust service's signed anchor bundle (roots, witness set, trust list heads) the verdict relied on",
    specifications: [SIGNED_JSON, JCS],
    required: true,
  },
  {
    role: 'trustKeyring',
    path: 'data/keys/trust-keyring.json',
    mediaType: 'application/jwk-set+json',
    description: "The trust service's keyring, which verifies the anchor bundle",
    specifications: [JWK_SET, JCS],
    required: true,
  },
  {
    role: 'core',
    path: 'data/passport/core.json',
    mediaType: 'application/json',
    description: "The passport's core record: id, identity (GS1 Digital Link URI or equivalent), type reference, capability class, status",
    specifications: [JCS],
    required: true,
  },
  {
    role: 'events',
    path: 'data/passport/events.jsonl',
    mediaType: 'application/jsonl',
    description: "The passport's event log in log order, one event per line as the issuer signed it",
    specifications: [
      'JSON Lines: one RFC 8785 canonical JSON value per line, each line ending with LF',
      'Events: EPCIS 2.0 / UNTP traceability and lifecycle events, each signed with Ed25519 over its RFC 8785 form',
    ],
    required: true,
  },
  {
    role: 'logHead',
    path: 'data/passport/log-head.json',
    mediaType: 'application/json',
    description: 'The signed head of the log: its size and RFC 6962 Merkle tree root over the events',
    specifications: ['RFC 6962 §2.1 Merkle tree hash', SIGNED_JSON, JCS],
    required: true,
  },
  {
    role: 'manifest',
    path: 'data/passport/manifest.json',
    mediaType: 'application/json',
    description: "The passport's manifest (config vector)",
    specifications: [JCS],
    required: true,
  },
  {
    role: 'pack',
    path: 'data/passport/pack.txt',
    mediaType: 'text/plain; charset=utf-8',
    description: 'The Tier-A pack exactly as minted: a short prefix, then Base45 text, no trailing newline',
    specifications: ['RFC 9285 Base45', 'RFC 1950 zlib', 'RFC 9052 COSE_Sign1 with ES256 (P-256)', 'RFC 8949 CBOR claims'],
    required: false,
  },
  {
    role: 'verdict',
    path: 'data/passport/verdict.json',
    mediaType: 'application/json',
    description: "The issuer's full-pipeline verdict at snapshot time with its coverage (log, pack, event signatures, key standing)",
    specifications: [JCS],
    required: true,
  },
  {
    role: 'representationInformation',
    path: 'data/representation-information.json',
    mediaType: 'application/json',
    description: 'This table: the path, media type and specifications of every payload file',
    specifications: [JCS],
    required: true,
  },
];

export function snapshotFile(role: SnapshotFileRole): SnapshotFileDescription {
  return SNAPSHOT_FILES.find((file) => file.role === role)!;
}

/** Events are written to the event log file in chunks of about this size. */
const EVENT_CHUNK_BYTES = 64 * 1024;
const encoder = new TextEncoder();

/**
 * The payload files of a snapshot. Every JSON part is canonicalized once here; the event log is
 * kept as one encoded line per event and handed to the bag in chunks of about 64 KiB, so it is
 * never concatenated into one buffer before the bag itself.
 */
export function snapshotPayload(content: SnapshotContent): PayloadFile[] {
  if (typeof content.passportId !== 'string' || content.passportId === '') {
    throw new ArchiveError('INVALID_SNAPSHOT_CONTENT', 'passportId must be a non-empty string');
  }
  if (!Array.isArray(content.events)) throw new ArchiveError('INVALID_SNAPSHOT_CONTENT', 'events must be an array');
  const json = (role: SnapshotFileRole, value: unknown): PayloadFile => ({ path: snapshotFile(role).path, bytes: encoder.encode(canonicalObject(role, value)) });

  const lines = content.events.map((event, index) => encoder.encode(`${canonicalObject(`events[${index}]`, event)}\n`));
  const events: PayloadFile = {
    path: snapshotFile('events').path,
    size: lines.reduce((sum, line) => sum + line.length, 0),
    open: () => batches(lines),
  };

  const files: PayloadFile[] = [
    json('core', content.core),
    json('manifest', content.manifest),
    events,
    json('logHead', content.logHead),
    json('verdict', content.verdict),
    json('issuerKeyring', content.keys?.issuerKeyring),
    json('trustAnchorBundle', content.keys?.trustAnchorBundle),
    json('trustKeyring', content.keys?.trustKeyring),
  ];
  if (content.pack !== undefined && content.pack !== null) {
    if (typeof content.pack !== 'string' || content.pack === '') throw new ArchiveError('INVALID_SNAPSHOT_CONTENT', 'pack must be a non-empty string');
    files.push({ path: snapshotFile('pack').path, bytes: encoder.encode(content.pack) });
  }
  const present = new Set(files.map((file) => file.path));
  const table = SNAPSHOT_FILES.filter((file) => file.role === 'representationInformation' || present.has(file.path)).map((file) => ({
    path: file.path,
    media_type: file.mediaType,
    description: file.description,
    specifications: file.specifications,
  }));
  files.push(json('representationInformation', { files: table }));
  return files;
}

export interface SnapshotBagOptions {
  readonly snapshotId: string;
  /** RFC 3339 UTC instant of the snapshot. */
  readonly baggedAt: string;
  readonly content: SnapshotContent;
  /** Source-Organization of bag-info.txt: who runs the archive. */
  readonly sourceOrganization: string;
  /** Bag-Software-Agent of bag-info.txt, e.g. `passport-archive/0.1.0`. */
  readonly softwareAgent: string;
  readonly contactEmail?: string;
}

/** The bag request of a snapshot: top-level directory and Internal-Sender-Identifier are the snapshot id. */
export function snapshotBag(options: SnapshotBagOptions): BagRequest {
  const info: BagInfo = {
    sourceOrganization: options.sourceOrganization,
    ...(options.contactEmail === undefined ? {} : { contactEmail: options.contactEmail }),
    externalDescription: 'Archival information package (OAIS AIP) of a digital product passport: core, manifest, signed event log and log head, Tier-A pack, verdict, and the keys that verify them',
    externalIdentifier: options.content.passportId,
    internalSenderIdentifier: options.snapshotId,
    bagSoftwareAgent: options.softwareAgent,
  };
  return { name: options.snapshotId, baggedAt: options.baggedAt, info, payload: snapshotPayload(options.content) };
}

function canonicalObject(part: string, value: unknown): string {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new ArchiveError('INVALID_SNAPSHOT_CONTENT', `${part} must be a JSON object`);
  }
  try {
    return canonicalize(value);
  } catch (error) {
    throw new ArchiveError('INVALID_SNAPSHOT_CONTENT', `${part} is not JSON: ${(error as Error).message}`);
  }
}

/** Groups encoded lines into chunks of about EVENT_CHUNK_BYTES, copying each line once. */
function* batches(lines: readonly Uint8Array[]): Generator<Uint8Array> {
  let start = 0;
  while (start < lines.length) {
    let end = start;
    let size = 0;
    while (end < lines.length && (end === start || size + lines[end]!.length <= EVENT_CHUNK_BYTES)) size += lines[end++]!.length;
    const chunk = new Uint8Array(size);
    let offset = 0;
    for (let index = start; index < end; index += 1) {
      chunk.set(lines[index]!, offset);
      offset += lines[index]!.length;
    }
    yield chunk;
    start = end;
  }
}
