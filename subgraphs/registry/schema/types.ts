/**
 * The registry's GraphQL types. Record bodies, JSON Schemas and validation results are opaque JSON
 * documents (JSONObject), passed through unrenamed.
 */
import { PageInfo } from '../../../lib/graphql/common-types.js';
import { GraphQLJSONObject } from 'graphql-scalars';
import { ListSize } from '../../../lib/graphql/cost.js';
import { Directive, Field, ID, InputType, Int, ObjectType } from 'type-graphql';

@Directive('@key(fields: "id version")')
@ObjectType({ description: 'One version of a registry record. Versions never change; a change is a new version that supersedes the one before.' })
export class RegistryRecord {
  @Field(() => ID, { description: 'The record id, unique across kinds.' })
  id!: string;

  @Field(() => Int, { description: 'The version number, from 1.' })
  version!: number;

  @Field(() => String, { description: 'item, model, service, cross_register_mapping, protocol_binding, verification_mechanism or generic.' })
  kind!: string;

  @Field(() => String, { description: 'draft, active, deprecated or withdrawn.' })
  status!: string;

  @Field(() => GraphQLJSONObject, { description: 'The record content; for a model, its title, JSON Schema 2020-12 and applicability.' })
  body!: Record<string, unknown>;

  @Field(() => Date, { nullable: true, description: 'Start of the effective window (inclusive); null since always.' })
  effectiveFrom!: Date | null;

  @Field(() => Date, { nullable: true, description: 'End of the effective window (exclusive); null when open-ended.' })
  effectiveTo!: Date | null;

  @Field(() => Date, { description: 'When this version was stored.' })
  createdAt!: Date;

  @Field(() => Int, { nullable: true, description: 'The version this one supersedes; null for version 1.' })
  supersedes!: number | null;

  @Field(() => Int, { nullable: true, description: 'The version that supersedes this one; null for the current version.' })
  supersededBy!: number | null;

  @Field(() => Boolean, { description: "Whether this is the record's current (latest) version." })
  current!: boolean;

  @Field(() => Int, { description: "The record's current version number." })
  currentVersion!: number;

  @Field(() => String, { description: "The record's path under the registry's REST base address, e.g. /items/battery." })
  path!: string;
}

@ObjectType({ description: 'One link of a supersession chain.' })
export class RegistrySupersessionLink {
  @Field(() => Int)
  version!: number;

  @Field(() => String)
  status!: string;

  @Field(() => Int, { nullable: true, description: 'The version this one supersedes.' })
  predecessor!: number | null;

  @Field(() => Int, { nullable: true, description: 'The version that supersedes this one.' })
  successor!: number | null;

  @Field(() => Boolean)
  current!: boolean;

  @Field(() => Date)
  createdAt!: Date;

  @Field(() => Date, { nullable: true })
  effectiveFrom!: Date | null;

  @Field(() => Date, { nullable: true })
  effectiveTo!: Date | null;
}

@ObjectType({ description: 'Every version of a record, oldest first, and which one is current.' })
export class RegistrySupersession {
  @Field(() => ID)
  id!: string;

  @Field(() => String)
  kind!: string;

  @Field(() => Int, { description: 'The current version number.' })
  current!: number;

  @ListSize({ assumedSize: 50 })
  @Field(() => [RegistrySupersessionLink])
  versions!: RegistrySupersessionLink[];
}

@ObjectType({ description: 'A page of records at their current versions, in id order.' })
export class RegistryRecordPage {
  @Field(() => [RegistryRecord])
  nodes!: RegistryRecord[];

  @Field(() => PageInfo)
  pageInfo!: PageInfo;
}

@ObjectType({ description: 'A model or profile version that applies.' })
export class RegistryApplicable {
  @Field(() => String, { description: 'model or profile.' })
  kind!: string;

  @Field(() => ID)
  id!: string;

  @Field(() => Int)
  version!: number;

  @Field(() => String, { description: '"id@version", the form of a passport type ref.' })
  ref!: string;

  @Field(() => String)
  status!: string;

  @Field(() => [String])
  productCategories!: string[];

  @Field(() => [String])
  jurisdictions!: string[];

  @Field(() => Date, { nullable: true })
  effectiveFrom!: Date | null;

  @Field(() => Date, { nullable: true })
  effectiveTo!: Date | null;

  @Field(() => String, { nullable: true, description: 'For a profile: the model version its passports conform to.' })
  model!: string | null;
}

@ObjectType({ description: 'The models and profiles that apply to a product category and jurisdiction at an instant.' })
export class RegistryApplicability {
  @Field(() => Date)
  at!: Date;

  @Field(() => String, { nullable: true })
  productCategory!: string | null;

  @Field(() => String, { nullable: true })
  jurisdiction!: string | null;

  @ListSize({ assumedSize: 50 })
  @Field(() => [RegistryApplicable])
  models!: RegistryApplicable[];

  @ListSize({ assumedSize: 50 })
  @Field(() => [RegistryApplicable])
  profiles!: RegistryApplicable[];
}

@ObjectType({ description: 'A record of the sample register that was left as it was.' })
export class RegistrySeedSkip {
  @Field(() => String)
  kind!: string;

  @Field(() => ID)
  id!: string;

  @Field(() => String)
  reason!: string;
}

@ObjectType({ description: 'What loading the sample register did.' })
export class RegistrySeedResult {
  @Field(() => Int, { description: 'Records in the sample register.' })
  records!: number;

  @Field(() => Int, { description: 'Versions stored by this request.' })
  versionsInserted!: number;

  @Field(() => Int, { description: 'Versions that were stored already.' })
  versionsPresent!: number;

  @Field(() => [RegistrySeedSkip])
  skipped!: RegistrySeedSkip[];
}

/** What every version of a record carries: its body and the window in which it is in force. */
@InputType()
class RecordContentInput {
  @Field(() => GraphQLJSONObject)
  body!: Record<string, unknown>;

  @Field(() => String, { nullable: true, description: 'RFC 3339 date-time.' })
  effectiveFrom?: string | null;

  @Field(() => String, { nullable: true, description: 'RFC 3339 date-time.' })
  effectiveTo?: string | null;
}

@InputType({ description: 'A new record.' })
export class RegistryRecordInput extends RecordContentInput {
  @Field(() => String, {
    description: 'The kind: item, model, service, cross_register_mapping, protocol_binding, verification_mechanism or generic (collection names such as items are accepted too).',
  })
  kind!: string;

  @Field(() => ID)
  id!: string;

  @Field(() => String, { nullable: true, description: 'Defaults to active.' })
  status?: string | null;
}

@InputType({ description: 'The next version of a record.' })
export class RegistryVersionInput extends RecordContentInput {
  @Field(() => Int, { description: "The version the change builds on: the record's current version." })
  expectedVersion!: number;

  @Field(() => String, { nullable: true, description: "Defaults to the current version's status." })
  status?: string | null;
}
