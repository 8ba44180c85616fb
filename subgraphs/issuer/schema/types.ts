/** The issuer's GraphQL types: passports, appended events, packs, profiles, applicability and restores. */
import { GraphQLJSON, GraphQLJSONObject } from 'graphql-scalars';
import { Directive, Field, ID, InputType, Int, ObjectType } from 'type-graphql';
import { PageInfo } from '../../../lib/graphql/common-types.js';
import { Cost, ListSize } from '../../../lib/graphql/cost.js';
import type { PassportRow, PassportSummaryRow, StoredEventRow } from '../data/passport-repository.js';
import { eventCursor, hasRestrictedMembers, readDisclosure } from '../domain/index.js';
import type { ApplicabilityRecord, ProfileRecord } from '../data/profile-repository.js';
import { ANY_VERSION } from '../data/profile-repository.js';
import type { RestoreRecord } from '../data/restore-repository.js';
import { IssuerService, type MintedPackView, type PassportAsOf as PassportAsOfView } from '../service/issuer-service.js';

@ObjectType('PassportTypeRef', { description: 'The registry model and version a passport is typed by.' })
export class PassportTypeRef {
  @Field(() => ID)
  id!: string;

  @Field(() => Int)
  version!: number;
}

/** A registry record, owned by the registry subgraph: the issuer only names it by id and version. */
@Directive('@key(fields: "id version", resolvable: false)')
@ObjectType('RegistryRecord')
export class RegistryRecordReference {
  @Field(() => ID)
  id!: string;

  @Field(() => Int)
  version!: number;
}

/** The standing of a key at an instant, owned by the trust subgraph: the issuer only names the key and the instant. */
@Directive('@key(fields: "kid at", resolvable: false)')
@ObjectType('TrustKeyStanding')
export class TrustKeyStandingReference {
  @Field(() => String)
  kid!: string;

  @Field(() => Date)
  at!: Date;

  static of(kid: string, at: string): TrustKeyStandingReference {
    return Object.assign(new TrustKeyStandingReference(), { kid, at: new Date(at) });
  }
}

/** What the standing of a key that signed a passport costs (lib/graphql/cost.ts). */
const KEY_USE_STANDING_WEIGHT = 20;

@ObjectType('PassportKeyUse', { description: 'A key that signed for a passport in one role, from its first to its last signature, with its standing in trust at both ends.' })
export class PassportKeyUse {
  @Field(() => String, { description: 'event (signed events), log_head (signed the current log head) or pack (signed the latest Tier-A pack).' })
  role!: string;

  @Field(() => String, { description: 'kid of the key (RFC 7638 thumbprint), as the issuer keyring lists it.' })
  kid!: string;

  @Field(() => Date)
  firstUsed!: Date;

  @Field(() => Date)
  lastUsed!: Date;

  // The keys that sign passports are the platform's own few: their standings are answered together
  // from the small part of the trust graph they hang from, unlike those of keys a caller names
  // (trustKeyStandings, 400 each).
  @Cost(KEY_USE_STANDING_WEIGHT)
  @Field(() => TrustKeyStandingReference, { description: 'The standing of the key when it first signed, answered by the trust service.' })
  standingAtFirstUse!: TrustKeyStandingReference;

  @Cost(KEY_USE_STANDING_WEIGHT)
  @Field(() => TrustKeyStandingReference, { description: 'The standing of the key when it last signed, answered by the trust service.' })
  standingAtLastUse!: TrustKeyStandingReference;

  static from(use: { role: string; kid: string; first_used: string; last_used: string }): PassportKeyUse {
    return Object.assign(new PassportKeyUse(), {
      role: use.role,
      kid: use.kid,
      firstUsed: new Date(use.first_used),
      lastUsed: new Date(use.last_used),
      standingAtFirstUse: TrustKeyStandingReference.of(use.kid, use.first_used),
      standingAtLastUse: TrustKeyStandingReference.of(use.kid, use.last_used),
    });
  }
}

@ObjectType('PassportAsOf', {
  description:
    "What a passport read with `at` stood on (EN 18222 ReadDPPVersionByIdAndDate): the instant, whether its logHead is the checkpoint signed then, and what ties that head to today's signed log.",
})
export class PassportAsOf {
  @Field(() => Date, { description: 'The instant asked about (events recorded at it are included).' })
  at!: Date;

  @Field(() => Boolean, {
    description:
      'true: logHead is the checkpoint the issuer signed at the last append up to `at` (or at creation); false: none was kept (events appended before heads were kept), logHead is unsigned and consistencyProof to currentLogHead vouches for it.',
  })
  headSigned!: boolean;

  @Field(() => Date, { nullable: true, description: 'When the last event up to `at` was recorded; null when the log was empty then.' })
  lastEventAt!: Date | null;

  @Field(() => GraphQLJSONObject, { description: "Today's signed log head, of which the head at `at` is a prefix." })
  currentLogHead!: Record<string, unknown>;

  /** The service's view, for the proof's field resolver. */
  view!: PassportAsOfView;

  static from(view: PassportAsOfView): PassportAsOf {
    return Object.assign(new PassportAsOf(), {
      at: new Date(view.state.at),
      headSigned: view.state.signed_head !== undefined,
      lastEventAt: view.state.last_event_at === undefined ? null : new Date(view.state.last_event_at),
      currentLogHead: view.current.logHead as Record<string, unknown>,
      view,
    });
  }
}

@ObjectType('PassportDisclosure', {
  description: 'A restricted member of the manifest, disclosed to a caller its audience admits: the RFC 9901 disclosure, whose digest is in the manifest’s `_sd`, and the member it reveals.',
})
export class PassportDisclosure {
  @Field(() => String, { description: 'legitimate-interest or authority.' })
  audience!: string;

  @Field(() => String, { description: 'The config vector member.' })
  name!: string;

  @Field(() => GraphQLJSON, { description: 'Its value.' })
  value!: unknown;

  @Field(() => String, { description: 'base64url of the JSON array [salt, name, value] (RFC 9901 §4.2.1); its base64url SHA-256 is in the manifest’s `_sd`.' })
  disclosure!: string;

  static from(stored: { audience: string; disclosure: string }): PassportDisclosure {
    const { name, value } = readDisclosure(stored.disclosure);
    return Object.assign(new PassportDisclosure(), { audience: stored.audience, name, value, disclosure: stored.disclosure });
  }
}

@Directive('@key(fields: "id")')
@ObjectType('Passport', {
  description:
    'A digital product passport: its core (identity, type ref, capability class, status), its manifest (the config vector), its signed event log and log head, its latest Tier-A pack and its verdict.',
})
export class Passport {
  @Field(() => ID)
  id!: string;

  @Field(() => String, { description: 'draft, active, suspended, end_of_life or revoked; changed only by lifecycle events (rule I6).' })
  status!: string;

  @Field(() => ID, { description: 'The operator that created the passport and owns it; its keys sign the passport (docs/OPERATORS.md).' })
  operator!: string;

  @Field(() => GraphQLJSONObject, { description: 'The core document, exactly as GET /passports/{id} returns it.' })
  get core(): Record<string, unknown> {
    return IssuerService.core(this.fullRow);
  }

  @Field(() => GraphQLJSONObject, {
    description:
      'The committed manifest: the config vector the passport was created with, each member its profile restricts replaced by a salted digest in `_sd` (RFC 9901); `disclosures` gives the members the caller may read. What the pack’s manifest_digest and the credential sign.',
  })
  get manifest(): Record<string, unknown> {
    return this.fullRow.configVector as Record<string, unknown>;
  }

  @Field(() => Boolean, {
    description: 'Whether its profile restricted members of its manifest (docs/OPERATORS.md, Audiences): its manifest then holds their digests in `_sd`, and its credential is a vc+sd-jwt.',
  })
  get restricted(): boolean {
    return hasRestrictedMembers(this.fullRow.configVector);
  }

  @Field(() => GraphQLJSONObject, { description: 'The signed log head (checkpoint: size and RFC 6962 root), signed JSON, verbatim.' })
  get logHead(): Record<string, unknown> {
    return this.row.logHead as Record<string, unknown>;
  }

  @Field(() => String, { nullable: true, description: 'Text of the latest Tier-A pack (DPP1:…), or null when none has been minted.' })
  latestPack!: string | null;

  @Field(() => String, { description: 'identify, trace or verify-offline: which claims the Tier-A pack carries.' })
  capabilityClass!: string;

  @Field(() => Int, { description: 'Number of events in the log.' })
  logSize!: number;

  @Field(() => Date, { nullable: true, description: 'When the latest pack was minted.' })
  latestPackAt!: Date | null;

  @Field(() => PassportTypeRef, { description: 'The registry model and version the passport is typed by.' })
  typeRef!: PassportTypeRef;

  @Field(() => RegistryRecordReference, { description: 'The registry record of the type ref (the model at that version), from the registry service.' })
  typeRecord!: RegistryRecordReference;

  @Field(() => ID, {
    nullable: true,
    description: 'The passport of the same identity this one succeeds (revoked or at end of life when this one was created), or null for the first.',
  })
  predecessorId!: string | null;

  @Field(() => PassportAsOf, { nullable: true, description: "For a passport read with `at`: the instant and what ties its head to today's signed log; null otherwise." })
  asOf!: PassportAsOf | null;

  /**
   * The stored row (as of `at` when read with one), for field resolvers; only its summary columns
   * when the request asked for no field beyond SUMMARY_FIELDS (PassportResolver.passports).
   */
  row!: PassportRow | PassportSummaryRow;

  /** The fields answered from a passport's summary columns alone (PassportSummaryRow). */
  static readonly SUMMARY_FIELDS: ReadonlySet<string> = new Set([
    '__typename',
    'id',
    'status',
    'operator',
    'capabilityClass',
    'logSize',
    'logHead',
    'signingKeys',
    'latestPack',
    'latestPackAt',
    'typeRef',
    'typeRecord',
    'predecessorId',
    'asOf',
    'predecessor',
    'successor',
  ]);

  /** The whole stored row, for every field beyond the summary; a passport read as a summary is never asked those. */
  get fullRow(): PassportRow {
    if (!('core' in this.row)) throw new Error(`passport ${this.row.id} was read as a summary, without the field asked`);
    return this.row;
  }

  static asOf(view: PassportAsOfView): Passport {
    return Object.assign(Passport.from(view.row), { asOf: PassportAsOf.from(view) });
  }

  static from(row: PassportRow | PassportSummaryRow): Passport {
    return Object.assign(new Passport(), {
      id: row.id,
      status: row.status,
      operator: row.operator,
      latestPack: row.latestPack,
      capabilityClass: row.capabilityClass,
      logSize: row.logSize,
      latestPackAt: row.latestPackAt,
      typeRef: Object.assign(new PassportTypeRef(), { id: row.typeRefId, version: row.typeRefVersion }),
      typeRecord: Object.assign(new RegistryRecordReference(), { id: row.typeRefId, version: row.typeRefVersion }),
      asOf: null,
      predecessorId: row.predecessorId,
      row,
    });
  }
}

@ObjectType('PassportEvent', {
  description: "An event of a passport's log, as its subscribers receive it (Subscription.passportEvents): the signed record, and its cursor to resume after it.",
})
export class PassportEvent {
  @Field(() => String, { description: 'Where a subscription resumes after this event (`after:`; REST: `Last-Event-ID`): its sequence number in decimal.' })
  cursor!: string;

  @Field(() => ID)
  passportId!: string;

  @Field(() => Int, { description: 'Its position in the log, from 0.' })
  seq!: number;

  @Field(() => String, { description: 'The event type (the event catalogue of GET /).' })
  type!: string;

  @Field(() => Date)
  recordedAt!: Date;

  /** The canonical signed text, as stored. */
  canonical!: string;

  @Field(() => GraphQLJSONObject, { description: 'The signed event record, verbatim (Ed25519 detached JWS over its JCS form).' })
  get record(): Record<string, unknown> {
    return JSON.parse(this.canonical) as Record<string, unknown>;
  }

  static from(passportId: string, row: StoredEventRow): PassportEvent {
    return Object.assign(new PassportEvent(), { cursor: eventCursor(row.seq), passportId, seq: row.seq, type: row.type, recordedAt: row.recordedAt, canonical: row.canonical });
  }
}

@ObjectType('PassportEventPage', { description: "A page of a passport's events, in log order." })
export class PassportEventPage {
  @Field(() => [PassportEvent])
  nodes!: PassportEvent[];

  @Field(() => PageInfo)
  pageInfo!: PageInfo;
}

@ObjectType('PassportEventAppended', { description: 'An event just appended: the signed record and the new signed log head.' })
export class PassportEventAppended {
  @Field(() => ID)
  passportId!: string;

  @Field(() => GraphQLJSONObject, { description: 'The signed event record, verbatim (Ed25519 detached JWS over its JCS form, trust "Attested").' })
  event!: Record<string, unknown>;

  @Field(() => GraphQLJSONObject, { description: 'The signed log head after the event.' })
  logHead!: Record<string, unknown>;

  @Field(() => String, { description: 'The passport status after the event.' })
  status!: string;
}

@ObjectType('PassportPack', { description: 'A Tier-A pack: COSE_Sign1 (ES256) over CBOR claims, zlib, Base45, behind "DPP1:".' })
export class PassportPack {
  @Field(() => ID)
  passportId!: string;

  @Field(() => String, { description: 'The pack text, all in the QR alphanumeric set.' })
  text!: string;

  @Field(() => Int, { description: 'Characters, prefix included.' })
  size!: number;

  @Field(() => Int, { description: 'The QR budget it was minted under.' })
  budget!: number;

  @Field(() => String, { description: 'kid of the P-256 carrier key.' })
  kid!: string;

  @Field(() => GraphQLJSONObject, { description: 'The claims, as JSON (hashes in hex).' })
  claims!: Record<string, unknown>;

  @Field(() => Date)
  mintedAt!: Date;

  static from(pack: MintedPackView): PassportPack {
    return Object.assign(new PassportPack(), pack);
  }
}

@ObjectType('IssuerProfile', { description: 'What a type of passport gets at creation: its capability classes and the claims its core carries.' })
export class IssuerProfile {
  @Field(() => ID)
  id!: string;

  @Field(() => String, { nullable: true })
  description!: string | null;

  @Field(() => [String])
  capabilityClasses!: string[];

  @Field(() => String, { description: 'The class a passport gets when its creation names none.' })
  defaultCapabilityClass!: string;

  @Field(() => GraphQLJSONObject, { description: 'Claims copied into the core of every passport created under the profile.' })
  claims!: Record<string, unknown>;

  @Field(() => GraphQLJSONObject, {
    description: 'The audience (legitimate-interest or authority) of each config vector member the profile restricts; any other member is public (docs/OPERATORS.md, Audiences).',
  })
  audiences!: Record<string, unknown>;

  @Field(() => Date)
  createdAt!: Date;

  @Field(() => Date)
  updatedAt!: Date;

  @Field(() => Boolean, { description: 'Whether this write created the profile (false: replaced it).' })
  created!: boolean;

  static from(record: ProfileRecord, created: boolean): IssuerProfile {
    return Object.assign(new IssuerProfile(), { ...record, claims: record.claims as Record<string, unknown>, audiences: record.audiences as Record<string, unknown>, created });
  }
}

@ObjectType('IssuerApplicability', { description: 'Which profile the passports of a registry model (one version, or all) get.' })
export class IssuerApplicability {
  @Field(() => ID)
  modelId!: string;

  @Field(() => Int, { nullable: true, description: 'The model version; null for every version without a rule of its own.' })
  modelVersion!: number | null;

  @Field(() => ID)
  profileId!: string;

  @Field(() => Date)
  createdAt!: Date;

  @Field(() => Date)
  updatedAt!: Date;

  @Field(() => Boolean, { description: 'Whether this write created the rule (false: replaced it).' })
  created!: boolean;

  static from(record: ApplicabilityRecord, created: boolean): IssuerApplicability {
    return Object.assign(new IssuerApplicability(), { ...record, modelVersion: record.modelVersion === ANY_VERSION ? null : record.modelVersion, created });
  }
}

@ObjectType('PlatformRestore', {
  description: 'A restore of the platform from a backup (npm run restore): appends are refused (RESTORE_UNACKNOWLEDGED) until an admin acknowledges it.',
})
export class PlatformRestore {
  @Field(() => Date)
  restoredAt!: Date;

  @Field(() => Date, { nullable: true, description: 'The backup’s snapshot, what the logs went back to; null for a restore by other means (`npm run restore -- --mark-restored`).' })
  snapshotAt!: Date | null;

  @Field(() => String, { nullable: true, description: 'The backup file restored.' })
  backup!: string | null;

  @Field(() => Int, { description: 'The passports restored; the restore listed the last sequence number of each.' })
  passports!: number;

  @Field(() => Date, { nullable: true })
  acknowledgedAt!: Date | null;

  @Field(() => String, { nullable: true, description: 'The name of the admin token that acknowledged it.' })
  acknowledgedBy!: string | null;

  static from(record: RestoreRecord): PlatformRestore {
    return Object.assign(new PlatformRestore(), record);
  }
}

@InputType('PassportTypeRefInput', { description: 'A registry model and version.' })
export class PassportTypeRefInput {
  @Field(() => ID)
  id!: string;

  @Field(() => Int)
  version!: number;
}

@InputType('CreatePassportInput')
export class CreatePassportInput {
  @Field(() => String, { description: 'A GS1 Digital Link URI or an EPC URN (sgtin, lgtin, sgtin pattern).' })
  identity!: string;

  @Field(() => String, { nullable: true, description: 'model, batch or item; checked against the identifier when given.' })
  granularity?: string | null;

  @Field(() => PassportTypeRefInput)
  typeRef!: PassportTypeRefInput;

  @Field(() => GraphQLJSONObject, { description: 'Validated against the registry model; returned as the manifest.' })
  configVector!: Record<string, unknown>;

  @Field(() => String, { nullable: true, description: "identify, trace or verify-offline; defaults to the profile's default." })
  capabilityClass?: string | null;
}

@InputType('IssuerProfileInput')
export class IssuerProfileInput {
  @Field(() => ID, { description: 'A lowercase token.' })
  id!: string;

  @Field(() => String, { nullable: true })
  description?: string | null;

  @Field(() => [String])
  capabilityClasses!: string[];

  @Field(() => String, { nullable: true })
  defaultCapabilityClass?: string | null;

  @Field(() => GraphQLJSONObject, { nullable: true })
  claims?: Record<string, unknown> | null;

  @Field(() => GraphQLJSONObject, {
    nullable: true,
    description: 'Config vector member → public, legitimate-interest or authority; a member not named is public. Another audience is INVALID_AUDIENCE (400).',
  })
  audiences?: Record<string, unknown> | null;
}

@InputType('IssuerApplicabilityInput')
export class IssuerApplicabilityInput {
  @Field(() => ID)
  modelId!: string;

  @Field(() => Int, { nullable: true, description: 'Omit for every version of the model.' })
  modelVersion?: number | null;

  @Field(() => ID)
  profileId!: string;
}

@ObjectType('IssuedCredential', {
  description: 'A verifiable credential (W3C VC Data Model 2.0) secured as an enveloped vc+jwt (W3C VC-JOSE-COSE), signed by the issuer’s credential key.',
})
export class IssuedCredentialType {
  @Field(() => String, {
    description:
      'The compact JWS (typ vc+jwt, cty vc, alg EdDSA), served as application/vc+jwt; for a passport with restricted members, the SD-JWT (typ vc+sd-jwt: the JWS, then each disclosure the caller may read, `~`-terminated), served as application/vc+sd-jwt.',
  })
  jwt!: string;

  @Field(() => GraphQLJSONObject, { description: 'The credential the JWS secures (its payload; restricted members as digests in `_sd`).' })
  credential!: Record<string, unknown>;

  @Field(() => String, { description: 'The DID URL of the verification method of the signing key in the issuer’s did:web document (the JWS kid).' })
  kid!: string;

  static from(issued: { jwt: string; credential: Record<string, unknown>; kid: string }): IssuedCredentialType {
    return Object.assign(new IssuedCredentialType(), issued);
  }
}

@ObjectType('PassportIdentityResolution', {
  description: 'What an identity (GS1 Digital Link or EPC URN, at its granularity) resolves to: at most one live passport at a time (DESIGN §3), and the passports issued for it before.',
})
export class PassportIdentityResolution {
  @Field(() => String, { description: 'The canonical GS1 Digital Link on id.gs1.org.' })
  digitalLink!: string;

  @Field(() => String, { description: 'model, batch or item.' })
  granularity!: string;

  @Field(() => GraphQLJSONObject, { description: 'The identity as the core of its passports spells it: scheme, gtin, variant, lot, serial, digital_link.' })
  identity!: Record<string, unknown>;

  @Field(() => Passport, { nullable: true, description: 'The live passport; without one, the newest (revoked or at end of life); null when none was issued.' })
  current!: Passport | null;

  // A few per identity: one live at a time, each after the last was revoked or reached its end.
  @ListSize({ assumedSize: 20 })
  @Field(() => [Passport], { description: 'Every passport of the identity: the current one first, then the others newest first.' })
  passports!: Passport[];
}
