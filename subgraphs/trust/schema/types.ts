/**
 * The trust service's GraphQL types. Keys, credentials, scopes and bodies are opaque JSON: they
 * pass through verbatim, as verifiers check them byte for byte.
 *
 * Output types are plain data with `simpleResolvers`: their fields skip the global middlewares and
 * auth checks (nothing on them needs either), which a read of 20,000 edges or 1,000 verdicts with
 * 5,000 cosignature outcomes would otherwise run for every field.
 */
import { GraphQLJSON, GraphQLJSONObject } from 'graphql-scalars';
import { ListSize } from '../../../lib/graphql/cost.js';
import { Directive, Field, ID, InputType, Int, ObjectType } from 'type-graphql';
import { PageInfo } from '../../../lib/graphql/common-types.js';

@Directive('@key(fields: "id")')
@ObjectType('TrustNode', { simpleResolvers: true, description: 'A node of the trust graph: root, authority, issuer, witness or quorum, with its keys.' })
export class TrustNodeType {
  @Field(() => ID)
  id!: string;

  @Field(() => String, { description: 'root, authority, issuer, witness or quorum.' })
  kind!: string;

  @Field(() => String, { nullable: true, description: 'ISO 3166-1 alpha-2 or ISO 3166-2 code, upper case.' })
  jurisdiction?: string | null;

  @Field(() => [GraphQLJSONObject], { description: 'Public JWKs with iat, exp and revoked (NumericDate), none ever dropped.' })
  keys!: object[];

  @Field(() => Int, { nullable: true, description: 'Quorum nodes: distinct member keys an attestation needs.' })
  threshold?: number | null;

  @Field(() => GraphQLJSONObject, { nullable: true, description: 'Quorum nodes: the pinned FROST (RFC 9591) Ed25519 group key.' })
  groupKey?: object | null;
}

@ObjectType('TrustDelegationEdge', { simpleResolvers: true, description: 'A validated delegation credential, with the credential verbatim.' })
export class DelegationEdgeType {
  @Field(() => ID, { description: 'base64url SHA-256 of the credential (of the JWS text, or of the JCS form of signed JSON).' })
  id!: string;

  @Field(() => String, { description: 'Issuer node id.' })
  iss!: string;

  @Field(() => String, { description: 'Subject node id.' })
  sub!: string;

  @Field(() => GraphQLJSONObject, { description: 'jurisdictions, event_types, capabilities; an absent dimension is unrestricted.' })
  scope!: object;

  @Field(() => String)
  iat!: string;

  @Field(() => String)
  nbf!: string;

  @Field(() => String, { nullable: true, description: 'Null when the credential has no exp: the delegation stands until revoked.' })
  exp?: string;

  @Field(() => String, { description: 'The issuer key that signed the credential.' })
  kid!: string;

  @Field(() => GraphQLJSON, { description: 'Signed JSON (an object) or a compact JWS (a string), exactly as submitted.' })
  credential!: unknown;
}

@ObjectType('TrustRevocation', { simpleResolvers: true, description: 'A revocation, bitemporal: effective (valid time) and recorded (transaction time).' })
export class RevocationType {
  @Field(() => String, { description: 'A node id, or "<node id>#<kid>" for one key.' })
  subject!: string;

  @Field(() => String, { description: 'RFC 5280 CRLReason name.' })
  reason!: string;

  @Field(() => String, { description: 'As declared (and attested).' })
  effectiveAt!: string;

  @Field(() => String, { description: "The server's clock when it accepted the declaration." })
  recordedAt!: string;

  @Field(() => Boolean)
  retroactive!: boolean;

  @Field(() => GraphQLJSONObject, { nullable: true, description: '{quorum, slots} or {quorum, group_signature}, verbatim.' })
  attestation!: object | null;
}

@Directive('@key(fields: "kid at")')
@ObjectType('TrustKeyStanding', {
  simpleResolvers: true,
  description: 'The standing of a key at an instant: whether a delegation path from a root vouches for it then, and whether it was revoked, expired or not yet valid.',
})
export class KeyStandingType {
  @Field(() => String, { description: 'The key (RFC 7638 thumbprint).' })
  kid!: string;

  @Field(() => Date, { description: 'The instant asked about.' })
  at!: Date;

  @Field(() => String, { description: 'valid, revoked, unknown, not_yet_valid or expired.' })
  standing!: string;

  @Field(() => Boolean, { description: 'Whether the key or its node was revoked by then.' })
  revoked!: boolean;

  @Field(() => ID, { nullable: true, description: 'The node that lists the key; null when none does.' })
  nodeId!: string | null;

  @Field(() => TrustNodeType, { nullable: true, description: 'That node.' })
  node!: TrustNodeType | null;

  @Field(() => ID, { nullable: true, description: 'The root the delegation path starts from, when the standing is valid.' })
  rootId!: string | null;

  @ListSize({ assumedSize: 5 })
  @Field(() => [DelegationEdgeType], { nullable: true, description: "The delegations from the root down to the node, when the standing is valid (empty for a root's own key)." })
  path!: DelegationEdgeType[] | null;

  @Field(() => String, { nullable: true, description: 'Why the standing is not valid.' })
  reason!: string | null;
}

@InputType('TrustKeyStandingQuestion')
export class KeyStandingQuestionInput {
  @Field(() => String)
  kid!: string;

  @Field(() => Date)
  at!: Date;
}

@ObjectType('TrustGraph', { simpleResolvers: true, description: 'Every node, edge and revocation: enough to resolve any path offline, at any instant.' })
export class TrustGraphType {
  // At most MAX_ONE_ANSWER_RECORDS (resolvers/graph.ts) records together; any one list may hold them all.
  @ListSize({ assumedSize: 20_000 })
  @Field(() => [TrustNodeType])
  nodes!: TrustNodeType[];

  @ListSize({ assumedSize: 20_000 })
  @Field(() => [DelegationEdgeType])
  edges!: DelegationEdgeType[];

  @ListSize({ assumedSize: 20_000 })
  @Field(() => [RevocationType], { description: 'Every revocation recorded, in recording order (a verifier applies them as of its own known_by).' })
  revocations!: RevocationType[];
}

@ObjectType('TrustGraphPage', {
  simpleResolvers: true,
  description: 'A page of the whole graph in one snapshot taken by the first page: nodes in id order, then edges and revocations in recording order; the pages together are exactly one trustGraph.',
})
export class TrustGraphPageType {
  @Field(() => String, {
    description:
      'The version of the graph these pages read, the same on every page of one read: it changes with every node, edge or revocation written, and equal versions are equal graphs (GET /graph sends it as its ETag).',
  })
  version!: string;

  @Field(() => [TrustNodeType])
  nodes!: TrustNodeType[];

  @Field(() => [DelegationEdgeType])
  edges!: DelegationEdgeType[];

  @Field(() => [RevocationType])
  revocations!: RevocationType[];

  @Field(() => PageInfo)
  pageInfo!: PageInfo;
}

@ObjectType('TrustRevocationPage', { simpleResolvers: true, description: 'One page of revocations, all pages in the snapshot of the first.' })
export class TrustRevocationPageType {
  @Field(() => [RevocationType], { description: 'The matching revocations of the page, in recording order; a page may hold fewer than asked, or none, and still have a next one.' })
  nodes!: RevocationType[];

  @Field(() => PageInfo)
  pageInfo!: PageInfo;
}

@ObjectType('TrustNodeUpsert', { simpleResolvers: true })
export class TrustNodeUpsertType {
  @Field(() => TrustNodeType)
  node!: TrustNodeType;

  @Field(() => Boolean, { description: 'False when the node existed and the upsert merged into it.' })
  created!: boolean;
}

@ObjectType('TrustPlatformKeysPlacement', { simpleResolvers: true })
export class PlatformKeysPlacementType extends TrustNodeUpsertType {
  @Field(() => [String], { description: 'The operators whose nodes (operator:<id>) hold their keys under a delegation from the platform node.' })
  operators!: string[];
}

@ObjectType('TrustDelegationEdgeAddition', { simpleResolvers: true })
export class DelegationEdgeAdditionType {
  @Field(() => DelegationEdgeType)
  edge!: DelegationEdgeType;

  @Field(() => Boolean, { description: 'False when the same credential was already stored.' })
  created!: boolean;
}

@ObjectType('TrustListEntryStatus', { simpleResolvers: true, description: 'One status instance of a trust-list entry (ETSI TS 119 612 service information).' })
export class TrustListEntryStatusType {
  @Field(() => String, { description: 'Absolute URI, e.g. http://uri.etsi.org/TrstSvc/Svctype/CA/QC.' })
  serviceType!: string;

  @Field(() => String, { nullable: true })
  name?: string | null;

  @Field(() => String, { nullable: true, description: 'The trust-graph node the entry stands for.' })
  nodeId?: string | null;

  @Field(() => String, { description: 'granted or withdrawn.' })
  status!: string;

  @Field(() => String)
  statusStartingTime!: string;
}

@ObjectType('TrustListEntry', { simpleResolvers: true })
export class TrustListEntryType extends TrustListEntryStatusType {
  @Field(() => String)
  id!: string;

  @ListSize({ assumedSize: 5 })
  @Field(() => [TrustListEntryStatusType], { description: 'Earlier status instances, newest first.' })
  history!: TrustListEntryStatusType[];
}

@ObjectType('TrustList', { simpleResolvers: true, description: 'A trust list as it stood at one instant.' })
export class TrustListType {
  @Field(() => String)
  jurisdiction!: string;

  @Field(() => String)
  framework!: string;

  @Field(() => Int, { description: 'Bumped by every change; a number always means one content.' })
  sequenceNumber!: number;

  @Field(() => String, { description: 'Issue time of this version: when its last change was recorded.' })
  issuedAt!: string;

  @Field(() => String)
  nextUpdate!: string;

  @ListSize({ assumedSize: 200 })
  @Field(() => [TrustListEntryType])
  entries!: TrustListEntryType[];
}

@ObjectType('TrustListEntryUpsert', { simpleResolvers: true })
export class TrustListEntryUpsertType {
  @Field(() => TrustListType, { description: 'The list after the upsert.' })
  list!: TrustListType;

  @Field(() => TrustListEntryType)
  entry!: TrustListEntryType;

  @Field(() => Boolean, { description: 'False when the entry was restated unchanged and nothing was recorded.' })
  changed!: boolean;

  @Field(() => Boolean, { description: 'True when the upsert added an entry the list did not hold (REST: 201).' })
  created!: boolean;
}

@ObjectType('TrustWitnessSet', { simpleResolvers: true, description: 'The witnesses of the master list: m of K Ed25519 keys.' })
export class WitnessSetType {
  @Field(() => Int)
  m!: number;

  @Field(() => [GraphQLJSONObject])
  keys!: object[];

  @Field(() => String, { description: 'When this set replaced the previous one.' })
  recordedAt!: string;
}

@ObjectType('TrustCosignatureOutcome', { simpleResolvers: true })
export class CosignatureOutcomeType {
  @Field(() => Int)
  index!: number;

  @Field(() => String)
  kid!: string;

  @Field(() => String, { description: 'VALID, UNKNOWN_WITNESS, BAD_SIGNATURE or DUPLICATE.' })
  outcome!: string;
}

@ObjectType('TrustQuorumVerdict', { simpleResolvers: true, description: 'Computed on every read against the current witness set.' })
export class QuorumVerdictType {
  @Field(() => Int, { description: 'Valid cosignatures from distinct witnesses of the current set.' })
  valid!: number;

  @Field(() => Int, { nullable: true, description: 'm of the current witness set; null when none is set.' })
  required!: number | null;

  @Field(() => Boolean)
  quorate!: boolean;

  @Field(() => [CosignatureOutcomeType])
  reasons!: CosignatureOutcomeType[];

  @Field(() => String, { description: 'Why the entry is or is not quorate.' })
  explanation!: string;
}

@ObjectType('TrustMasterListEntry', { simpleResolvers: true })
export class MasterListEntryType {
  @Field(() => ID)
  id!: string;

  @Field(() => GraphQLJSONObject)
  body!: object;

  @Field(() => [GraphQLJSONObject], { description: '{kid, time, signature} as submitted (C2SP tlog-cosignature).' })
  cosignatures!: object[];

  @Field(() => QuorumVerdictType)
  verdict!: QuorumVerdictType;

  @Field(() => Boolean, { nullable: true, description: 'On the answer of upsertTrustMasterListEntry: true when the id was new (REST: 201). Null when read.' })
  created?: boolean;
}

@ObjectType('TrustMasterList', { simpleResolvers: true })
export class MasterListType {
  @Field(() => String, { description: "The origin line witnesses cosign; names this deployment's master list." })
  origin!: string;

  @Field(() => String, { description: 'The M-of-K shape, e.g. "3-of-5"; "none" without a witness set.' })
  shape!: string;

  @Field(() => Int, { nullable: true })
  m!: number | null;

  @Field(() => Int)
  k!: number;

  @Field(() => WitnessSetType, { nullable: true })
  witnessSet!: WitnessSetType | null;

  @ListSize({ assumedSize: 200 })
  @Field(() => [MasterListEntryType])
  entries!: MasterListEntryType[];
}

// Opaque members of inputs are JSON of any shape: the domain judges them and answers 422 with the
// reason, where a scalar refusing them inside the subgraph would be an opaque failure.
@InputType('TrustNodeInput')
export class TrustNodeInput {
  @Field(() => ID)
  id!: string;

  @Field(() => String, { nullable: true, description: 'Required when the node is new.' })
  kind?: string | null;

  @Field(() => String, { nullable: true })
  jurisdiction?: string | null;

  @Field(() => [GraphQLJSON], { nullable: true, description: 'Keys to merge by kid.' })
  keys?: unknown[] | null;

  @Field(() => Int, { nullable: true })
  threshold?: number | null;

  @Field(() => GraphQLJSON, { nullable: true })
  groupKey?: unknown;
}

@InputType('TrustListInput')
export class TrustListInput {
  @Field(() => String)
  jurisdiction!: string;

  @Field(() => String)
  framework!: string;

  @Field(() => String, { nullable: true, description: 'RFC 3339; default 180 days after issue.' })
  nextUpdate?: string | null;
}

@InputType('TrustListEntryInput')
export class TrustListEntryInput {
  @Field(() => String)
  id!: string;

  @Field(() => String, { nullable: true })
  serviceType?: string | null;

  @Field(() => String, { nullable: true })
  name?: string | null;

  @Field(() => String, { nullable: true })
  nodeId?: string | null;

  @Field(() => String, { nullable: true, description: 'RFC 3339: withdraws the entry from then on.' })
  supersededAt?: string | null;
}

@InputType('TrustWitnessSetInput')
export class WitnessSetInput {
  @Field(() => Int)
  m!: number;

  @Field(() => [GraphQLJSON])
  keys!: unknown[];
}

@InputType('TrustMasterListEntryInput')
export class MasterListEntryInput {
  @Field(() => String)
  id!: string;

  @Field(() => GraphQLJSON)
  body!: unknown;

  @Field(() => [GraphQLJSON], { nullable: true })
  cosignatures?: unknown[] | null;
}

@InputType('TrustRevocationInput')
export class RevocationInput {
  @Field(() => String)
  subject!: string;

  @Field(() => String)
  reason!: string;

  @Field(() => String, { nullable: true, description: 'RFC 3339; defaults to the recording time.' })
  effectiveAt?: string | null;

  @Field(() => GraphQLJSON, { nullable: true })
  attestation?: unknown;
}
