/**
 * The registry's GraphQL operations: thin resolvers over the record repository and the domain
 * rules, with domain errors mapped to RFC 9457 problems.
 */
import { GraphQLJSON, GraphQLJSONObject } from 'graphql-scalars';
import { Cost, ListSize } from '../../../lib/graphql/cost.js';
import { Arg, Authorized, Ctx, ID, Int, Mutation, Query, Resolver } from 'type-graphql';
import { PLATFORM_ADMIN } from '../../../lib/auth/tokens.js';
import { actingOperator } from '../../../lib/auth/operators.js';
import type { RequestContext } from '../../../lib/graphql/context.js';
import { perRequest } from '../../../lib/graphql/batching.js';
import { PageInfo } from '../../../lib/graphql/common-types.js';
import { badRequest, conflict, notFound, ProblemError, refusing } from '../../../lib/problem.js';
import { RecordStateError, type RecordRepository, type StoredVersion } from '../data/record-repository.js';
import {
  KIND_COLLECTIONS,
  type ModelValidatorCache,
  RECORD_KINDS,
  RegistryError,
  assertVersionableThroughApi,
  formatRecordRef,
  parseApplicabilityQuery,
  parseListQuery,
  profileManifestSchema,
  seedRegister,
  type Applicable,
  type RecordKind,
  type SupersessionChain,
  type ValidationIssue,
} from '../domain/index.js';
import {
  RegistryApplicability,
  type RegistryApplicable,
  RegistryRecord,
  RegistryRecordInput,
  RegistryRecordPage,
  RegistrySeedResult,
  RegistrySupersession,
  RegistryVersionInput,
} from '../schema/types.js';

export interface RegistryDependencies {
  records: RecordRepository;
  validators: ModelValidatorCache;
}

/** Kind names a caller may use: the kind itself, its collection path segment, or its hyphenated form. */
const KIND_NAMES = new Map<string, RecordKind>(
  RECORD_KINDS.flatMap((kind) => [[kind, kind], [kind.replaceAll('_', '-'), kind], ...(kind === 'generic' ? [] : [[KIND_COLLECTIONS[kind], kind] as const])]),
);

function kindOf(name: string): RecordKind {
  const kind = KIND_NAMES.get(name);
  if (!kind) throw badRequest('INVALID_KIND', `kind must be one of ${RECORD_KINDS.join(', ')}; got ${JSON.stringify(name)}`);
  return kind;
}

/** A kind argument that may be absent (any kind). */
const optionalKind = (name: string | null | undefined) => (name == null ? undefined : kindOf(name));

const pathOf = (kind: RecordKind, id: string) => (kind === 'generic' ? `/${id}` : `/${KIND_COLLECTIONS[kind]}/${id}`);
const dateOrNull = (instant: string | null) => (instant === null ? null : new Date(instant));

export function toRecord(version: StoredVersion): RegistryRecord {
  return {
    id: version.id,
    version: version.version,
    kind: version.kind,
    status: version.status,
    body: version.body,
    effectiveFrom: dateOrNull(version.effectiveFrom),
    effectiveTo: dateOrNull(version.effectiveTo),
    createdAt: new Date(version.createdAt),
    supersedes: version.supersedes,
    supersededBy: version.version < version.currentVersion ? version.version + 1 : null,
    current: version.version === version.currentVersion,
    currentVersion: version.currentVersion,
    path: pathOf(version.kind, version.id),
  };
}

function toSupersession(chain: SupersessionChain): RegistrySupersession {
  return {
    id: chain.id,
    kind: chain.kind,
    current: chain.current,
    versions: chain.versions.map((link) => ({
      ...link,
      createdAt: new Date(link.createdAt),
      effectiveFrom: dateOrNull(link.effectiveFrom),
      effectiveTo: dateOrNull(link.effectiveTo),
    })),
  };
}

const toApplicable = (applicable: Applicable): RegistryApplicable => ({
  ...applicable,
  productCategories: [...applicable.productCategories],
  jurisdictions: [...applicable.jurisdictions],
  effectiveFrom: dateOrNull(applicable.effectiveFrom),
  effectiveTo: dateOrNull(applicable.effectiveTo),
  model: applicable.model ?? null,
});

/** A validation issue as JSON members (snake_case, as REST clients read them). */
const issueJson = (issue: ValidationIssue) => ({
  pointer: issue.pointer,
  keyword: issue.keyword,
  message: issue.message,
  schema_path: issue.schemaPath,
  params: issue.params,
});

/** The registry's refusals as problems (for `refusing`); undefined for any other error. */
function registryProblem(error: unknown): ProblemError | undefined {
  if (error instanceof RegistryError) {
    return new ProblemError(error.status, error.code, error.message, error.issues.length > 0 ? { errors: error.issues.map(issueJson) } : {});
  }
  if (error instanceof RecordStateError) {
    return error.code === 'NOT_FOUND' ? notFound(error.message) : conflict(error.code, error.message, error.details);
  }
  return undefined;
}

@Resolver(() => RegistryRecord)
export class RegistryRecordResolver {
  /** Records by id (latest, or a version) and kind, for every root field of a request at once. */
  readonly #records = perRequest<{ id: string; kind?: RecordKind; version: number | null }, StoredVersion | null, string>((questions) => this.dependencies.records.findEach(questions), {
    cacheKeyFn: ({ id, kind, version }) => `${id}\n${kind ?? ''}\n${version ?? ''}`,
  });

  constructor(private readonly dependencies: RegistryDependencies) {}

  @Query(() => RegistryRecord, { nullable: true, description: 'A record version: the current one unless a version is given; null when there is none.' })
  async registryRecord(
    @Arg('id', () => ID) id: string,
    @Arg('version', () => Int, { nullable: true }) version: number | null,
    @Arg('kind', () => String, { nullable: true, description: 'Only a record of this kind.' }) kind: string | null,
    @Ctx() context: unknown,
  ): Promise<RegistryRecord | null> {
    const found = await this.#records(context).load({ id, kind: optionalKind(kind), version });
    return found ? toRecord(found) : null;
  }

  @Query(() => RegistryRecord, { nullable: true, description: 'A model record version (current unless a version is given), or null.' })
  async registryModel(@Arg('id', () => ID) id: string, @Arg('version', () => Int, { nullable: true }) version: number | null, @Ctx() context: unknown): Promise<RegistryRecord | null> {
    const found = await this.#records(context).load({ id, kind: 'model', version });
    return found ? toRecord(found) : null;
  }

  @ListSize({ slicingArguments: ['first'], sizedFields: ['nodes'], assumedSize: 50, requireOneSlicingArgument: false })
  @Query(() => RegistryRecordPage, { description: "A page of one kind's records at their current versions, in id order." })
  async registryRecords(
    @Arg('kind', () => String) kind: string,
    @Arg('first', () => Int, { nullable: true, description: 'Page size, 1 to 500, default 50.' }) first: number | null,
    @Arg('after', () => String, { nullable: true, description: 'pageInfo.endCursor of the previous page.' }) after: string | null,
    @Arg('status', () => String, { nullable: true, description: 'Comma-separated statuses of the current version.' }) status: string | null,
    @Arg('idPrefix', () => String, { nullable: true }) idPrefix: string | null,
    @Arg('updatedSince', () => String, { nullable: true, description: 'RFC 3339: current version stored at or after.' }) updatedSince: string | null,
  ): Promise<RegistryRecordPage> {
    const recordKind = kindOf(kind);
    // The listing's own names are the REST query's (limit, cursor).
    const given = Object.entries({ limit: first, cursor: after, status, id_prefix: idPrefix, updated_since: updatedSince }).filter(([, value]) => value !== null && value !== undefined);
    const page = await refusing(() => this.dependencies.records.list(recordKind, parseListQuery(Object.fromEntries(given))), registryProblem);
    return { nodes: page.items.map(toRecord), pageInfo: PageInfo.of(page.nextCursor) };
  }

  @Query(() => RegistrySupersession, { nullable: true, description: 'Every version of a record with predecessor and successor, and which is current; null when there is no such record.' })
  async registrySupersession(@Arg('id', () => ID) id: string, @Arg('kind', () => String, { nullable: true }) kind: string | null): Promise<RegistrySupersession | null> {
    const chain = await this.dependencies.records.supersession(id, optionalKind(kind));
    return chain ? toSupersession(chain) : null;
  }

  // A JSON Schema validation of a document up to the body limit.
  @Cost(1000)
  @Query(() => GraphQLJSONObject, {
    description:
      'Validates a document against a model version (current unless given): { valid, model, errors: [{ pointer, keyword, message, schema_path, params }] }, every error with its JSON Pointer.',
  })
  async registryValidateDocument(
    @Arg('modelId', () => ID) modelId: string,
    @Arg('version', () => Int, { nullable: true }) version: number | null,
    // Nullable because null is itself a JSON document a model may accept or refuse.
    @Arg('document', () => GraphQLJSON, { nullable: true, description: 'Any JSON value; null is the JSON document null.' }) document: unknown,
  ): Promise<Record<string, unknown>> {
    const model = await this.dependencies.records.find(modelId, { kind: 'model', version });
    if (!model) throw notFound(version === null ? `no model has the id ${modelId}` : `model ${modelId} has no version ${version}`);
    const result = await refusing(() => this.dependencies.validators.validate({ id: model.id, version: model.version, schema: model.body.schema }, document ?? null), registryProblem);
    return { valid: result.valid, model: formatRecordRef(model), errors: result.errors.map(issueJson) };
  }

  @Query(() => GraphQLJSONObject, { description: 'The JSON Schema 2020-12 of a profile manifest (without $id; the REST API adds its own address).' })
  registryProfileManifestSchema(): Record<string, unknown> {
    return profileManifestSchema;
  }

  @Query(() => RegistryApplicability, { description: 'The model and profile versions in force for a product category and jurisdiction at an instant (default now).' })
  async registryApplicability(
    @Arg('productCategory', () => String, { nullable: true, description: 'Dotted category path, e.g. battery.ev.' }) productCategory: string | null,
    @Arg('jurisdiction', () => String, { nullable: true, description: 'ISO 3166-1 alpha-2 code or EU.' }) jurisdiction: string | null,
    @Arg('at', () => String, { nullable: true, description: 'RFC 3339 date-time or date.' }) at: string | null,
  ): Promise<RegistryApplicability> {
    const given = Object.entries({ product_category: productCategory, jurisdiction, at }).filter(([, value]) => value !== null && value !== undefined);
    const query = await refusing(() => parseApplicabilityQuery(Object.fromEntries(given), new Date()), registryProblem);
    const applicable = (await this.dependencies.records.applicable(query)).map(toApplicable);
    return {
      at: new Date(query.at),
      productCategory: query.productCategory ?? null,
      jurisdiction: query.jurisdiction ?? null,
      models: applicable.filter((item) => item.kind === 'model'),
      profiles: applicable.filter((item) => item.kind === 'profile'),
    };
  }

  @Authorized('writer')
  @Mutation(() => RegistryRecord, {
    description: "Creates a record at version 1, the caller's operator's (the default operator's, for the platform admin). Its id must be free in the whole register.",
  })
  async createRegistryRecord(@Arg('input', () => RegistryRecordInput) input: RegistryRecordInput, @Ctx() context: RequestContext): Promise<RegistryRecord> {
    const kind = kindOf(input.kind);
    const created = await refusing(
      () =>
        this.dependencies.records.create(
          kind,
          input.id,
          { body: input.body, ...(input.status == null ? {} : { status: input.status }), effectiveFrom: input.effectiveFrom, effectiveTo: input.effectiveTo },
          new Date(),
          actingOperator(context.principal!),
        ),
      registryProblem,
    );
    return toRecord(created);
  }

  @Authorized('writer')
  @Mutation(() => RegistryRecord, {
    description:
      "Adds the next version to a record (item, service, cross-register mapping or generic) of the caller's operator (any, for the platform admin; another operator's is 403 OWNED_BY_ANOTHER_OPERATOR). expectedVersion must be the current version; otherwise 409 STALE_VERSION and nothing is written.",
  })
  async appendRegistryRecordVersion(
    // type-graphql lists arguments last parameter first, and the admin log names a mutation's
    // target by its first string argument: declared last, `id` comes first.
    @Arg('kind', () => String, { nullable: true, description: "The record's kind, when the caller addresses it through a collection." }) kind: string | null,
    @Arg('input', () => RegistryVersionInput) input: RegistryVersionInput,
    @Arg('id', () => ID) id: string,
    @Ctx() context: RequestContext,
  ): Promise<RegistryRecord> {
    const recordKind = optionalKind(kind) ?? (await this.kindOfRecord(id));
    const appended = await refusing(async () => {
      assertVersionableThroughApi(recordKind);
      return this.dependencies.records.append(
        recordKind,
        id,
        { expectedVersion: input.expectedVersion, body: input.body, ...(input.status == null ? {} : { status: input.status }), effectiveFrom: input.effectiveFrom, effectiveTo: input.effectiveTo },
        new Date(),
        context.principal!,
      );
    }, registryProblem);
    return toRecord(appended);
  }

  @Authorized(PLATFORM_ADMIN)
  @Mutation(() => RegistrySeedResult, { description: 'Loads the sample register; versions already stored are left as they are, so running it again changes nothing.' })
  async seedRegistry(): Promise<RegistrySeedResult> {
    return refusing(() => this.dependencies.records.seed(seedRegister()), registryProblem);
  }

  private async kindOfRecord(id: string): Promise<RecordKind> {
    const current = await this.dependencies.records.find(id);
    if (!current) throw notFound(`no record has the id ${id}`);
    return current.kind;
  }
}
