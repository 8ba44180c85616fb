/** Passports in the graph: read, create, append events, mint packs, verdicts. */
import { GraphQLJSONObject } from 'graphql-scalars';
import type { GraphQLResolveInfo } from 'graphql';
import { Arg, Authorized, Ctx, FieldResolver, ID, Info, Mutation, Query, Resolver, Root } from 'type-graphql';
import { asksOnly } from '../../../lib/graphql/selection.js';
import { perRequest } from '../../../lib/graphql/batching.js';
import { Cost, ListSize, type actualCostMeter } from '../../../lib/graphql/cost.js';
import { badRequest } from '../../../lib/problem.js';
import type { RequestContext } from '../../../lib/graphql/context.js';
import type { CredentialService } from '../service/credential-service.js';
import type { IssuerService } from '../service/issuer-service.js';
import type { PassportSummaryRow } from '../data/passport-repository.js';
import { MAX_PASSPORTS_PER_CREATION, type KeyUse } from '../domain/index.js';
import {
  CreatePassportInput,
  IssuedCredentialType,
  Passport,
  PassportAsOf,
  PassportDisclosure,
  PassportEventAppended,
  PassportIdentityResolution,
  PassportKeyUse,
  PassportPack,
} from '../schema/types.js';

/** Most passports one `passports(ids)` answers. */
export const MAX_PASSPORTS_PER_QUERY = 500;

/**
 * What the fields whose work grows with a passport's log cost (lib/graphql/cost.ts: units of about
 * 10 µs of CPU), measured on a log of LOG_EVENTS events (docs/benchmarks/graphql-cost.md).
 */
const LOG_EVENTS = 300;
const WEIGHTS = {
  /** Reading the log up to `at` and replaying it. */
  readAt: 1000,
  /** Reading, checking and hashing the whole log, every signature, the pack and the standing of its keys in trust. */
  verdict: 7500,
  /** Reading and parsing one event. */
  event: 8,
  /** Reading and hashing the whole log for a consistency proof: the proof's share of it per hash (about 20 for a log of LOG_EVENTS). */
  proofHash: 150,
  /** Signing a credential. */
  credential: 50,
  /** A passport read alone (not batched with the others of a request). */
  lonePassport: 5,
  /** Creating a passport in a batch: its checks, the signature of its empty log's head, its row; measured about 0.6 ms of CPU, platform and PostgreSQL (docs/benchmarks/onboarding.md). */
  creation: 100,
} as const;

/** What each event of a log costs the fields above: a log of any length charges its actual cost (actualCostMeter). */
const PER_EVENT = {
  readAt: WEIGHTS.readAt / LOG_EVENTS,
  verdict: WEIGHTS.verdict / LOG_EVENTS,
  event: WEIGHTS.event,
  proof: (WEIGHTS.proofHash * 20) / LOG_EVENTS,
};

@Resolver(() => Passport)
export class PassportResolver {
  /** Signing keys of every passport a request shows, in one batch. */
  readonly #signingKeys = perRequest<PassportSummaryRow, KeyUse[], string>(
    async (rows) => {
      const uses = await this.issuer.signingKeys(rows);
      return rows.map((row) => uses.get(row.id) ?? []);
    },
    { cacheKeyFn: (row) => row.id },
  );

  /** `charge`: what an operation spends on passports' logs as they are, held to GRAPHQL_MAX_COST (lib/graphql/cost.ts). */
  constructor(
    private readonly issuer: IssuerService,
    private readonly credentials: CredentialService,
    private readonly charge: ReturnType<typeof actualCostMeter>,
  ) {}

  @Query(() => Passport, {
    nullable: true,
    description:
      'A passport by id; null when unknown. With `at`, the passport as it stood then (EN 18222 ReadDPPVersionByIdAndDate): status, log size, log head and events from its log up to `at`; NOT_YET_ISSUED (404) when it was created after `at`.',
  })
  async passport(
    @Arg('id', () => ID) id: string,
    @Cost(WEIGHTS.readAt)
    @Arg('at', () => String, { nullable: true, description: 'RFC 3339 date-time with Z or an offset, inclusive; a future instant answers the state of now.' })
    at: string | null | undefined,
    @Ctx() context: object,
    @Info() info: GraphQLResolveInfo,
  ): Promise<Passport | null> {
    if (at != null) {
      const view = await this.issuer.passportAt(id, at, (logSize) => this.charge(context, Math.ceil(logSize * PER_EVENT.readAt), id, `log at ${at}`));
      return view ? Passport.asOf(view) : null;
    }
    const row = asksOnly(info, Passport.SUMMARY_FIELDS) ? await this.issuer.findPassportSummary(id) : await this.issuer.findPassport(id);
    return row ? Passport.from(row) : null;
  }

  @ListSize({ assumedSize: MAX_PASSPORTS_PER_QUERY })
  @Query(() => [Passport], { nullable: 'items', description: `Passports by id, in the order asked (null for an unknown id); at most ${MAX_PASSPORTS_PER_QUERY}, read in one query.` })
  async passports(@Arg('ids', () => [ID]) ids: string[], @Info() info: GraphQLResolveInfo): Promise<(Passport | null)[]> {
    if (ids.length > MAX_PASSPORTS_PER_QUERY) throw badRequest('INVALID_QUERY', `ids may name at most ${MAX_PASSPORTS_PER_QUERY} passports.`);
    // A batch asked only for small fields (status, log size, type: a gateway listing them, say) reads
    // only their columns, in the same one statement: the rest of the row is most of a passport's cost.
    const found = asksOnly(info, Passport.SUMMARY_FIELDS) ? await this.issuer.findPassportSummaries(ids) : await this.issuer.findPassports(ids);
    const rows = new Map(found.map((row) => [row.id, row]));
    return ids.map((id) => {
      const row = rows.get(id);
      return row ? Passport.from(row) : null;
    });
  }

  @Query(() => PassportIdentityResolution, {
    description:
      'The passports of an identity, for the Digital Link resolver: a GS1 Digital Link URI on any host (`…/01/{gtin}[/22/…][/10/…][/21/…]`) or an EPC URN. A malformed identifier (e.g. a wrong check digit) is a 400 INVALID_IDENTITY.',
  })
  async identityResolution(@Arg('identifier', () => String) identifier: string): Promise<PassportIdentityResolution> {
    const { identity, passports } = await this.issuer.passportsOfIdentity(identifier);
    // The identifier as asked is the caller's; the rest is the identity as every passport's core spells it.
    const { uri: _asked, ...canonical } = identity;
    const shown = passports.map(Passport.from);
    return Object.assign(new PassportIdentityResolution(), {
      digitalLink: identity.digital_link,
      granularity: identity.granularity,
      identity: canonical,
      current: shown[0] ?? null,
      passports: shown,
    });
  }

  @Cost(WEIGHTS.lonePassport)
  @FieldResolver(() => Passport, { nullable: true, description: 'The passport this one succeeds, or null.' })
  async predecessor(@Root() passport: Passport): Promise<Passport | null> {
    const row = passport.row.predecessorId === null ? null : await this.issuer.findPassport(passport.row.predecessorId);
    return row ? Passport.from(row) : null;
  }

  @Cost(WEIGHTS.lonePassport)
  @FieldResolver(() => Passport, { nullable: true, description: 'The passport issued for the same identity after this one was revoked or reached its end of life, or null.' })
  async successor(@Root() passport: Passport): Promise<Passport | null> {
    const row = await this.issuer.findSuccessor(passport.row.id);
    return row ? Passport.from(row) : null;
  }

  // One key per role, more after rotations.
  @ListSize({ assumedSize: 5 })
  @FieldResolver(() => [PassportKeyUse], {
    description: 'Every key that signed for the passport (events, log head, latest pack) with its first and last use and its standing in trust then; loaded for all passports of a request at once.',
  })
  async signingKeys(@Root() passport: Passport, @Ctx() context: unknown): Promise<PassportKeyUse[]> {
    return (await this.#signingKeys(context).load(passport.row)).map(PassportKeyUse.from);
  }

  @ListSize({ assumedSize: 4 })
  @FieldResolver(() => [PassportDisclosure], {
    description:
      'The restricted members of the manifest this caller may read (docs/OPERATORS.md, Audiences): none anonymously; legitimate-interest tokens those of that audience; authority tokens, the owner operator’s tokens and the platform admin all.',
  })
  async disclosures(@Root() passport: Passport, @Ctx() context: RequestContext): Promise<PassportDisclosure[]> {
    return (await this.issuer.disclosures(passport.fullRow, context.principal)).map(PassportDisclosure.from);
  }

  @Cost(WEIGHTS.event)
  @ListSize({ assumedSize: LOG_EVENTS })
  @FieldResolver(() => [GraphQLJSONObject], { description: 'Every signed event the log head covers, verbatim, in sequence order.' })
  events(@Root() passport: Passport, @Ctx() context: object): Promise<unknown[]> {
    this.charge(context, Math.ceil(passport.row.logSize * PER_EVENT.event), passport.id, 'events');
    return this.issuer.events(passport.fullRow);
  }

  @Cost(WEIGHTS.verdict)
  @FieldResolver(() => GraphQLJSONObject, {
    description: 'The full-pipeline verdict with coverage, as GET /passports/{id}/verdict returns it (asks the trust service for key standing).',
  })
  verdict(@Root() passport: Passport, @Ctx() context: object): Promise<Record<string, unknown>> {
    this.charge(context, Math.ceil(passport.row.logSize * PER_EVENT.verdict), passport.id, 'verdict');
    return this.issuer.verdict(passport.fullRow) as unknown as Promise<Record<string, unknown>>;
  }

  @Cost(WEIGHTS.credential)
  @FieldResolver(() => IssuedCredentialType, {
    description:
      'The UNTP Digital Product Passport credential (UNTP DPP 0.6.1) of the passport at its log head, as GET /passports/{id}/credential serves it; re-issued whenever the passport changes. With restricted members, a vc+sd-jwt carrying the disclosures this caller may read.',
  })
  async credential(@Root() passport: Passport, @Ctx() context: RequestContext): Promise<IssuedCredentialType> {
    const row = passport.fullRow;
    return IssuedCredentialType.from(await this.credentials.passportCredential(row, await this.issuer.disclosures(row, context.principal)));
  }

  @Authorized('writer')
  @Mutation(() => Passport, { description: 'Creates a passport with an empty log (POST /passports).' })
  async createPassport(@Arg('input', () => CreatePassportInput) input: CreatePassportInput, @Ctx() context: RequestContext): Promise<Passport> {
    return Passport.from(await this.issuer.createPassport(input, context.principal!));
  }

  @Authorized('writer')
  @Cost(WEIGHTS.creation)
  @ListSize({ assumedSize: MAX_PASSPORTS_PER_CREATION })
  @Mutation(() => [Passport], {
    description: `Creates up to ${MAX_PASSPORTS_PER_CREATION} passports, each as createPassport does, all or none (POST /passports/batch); answers them in the order given. Any refused item refuses the whole creation: BATCH_REFUSED, naming each refused item by its index with its own code.`,
  })
  async createPassports(@Arg('inputs', () => [CreatePassportInput]) inputs: CreatePassportInput[], @Ctx() context: RequestContext): Promise<Passport[]> {
    return (await this.issuer.createPassports(inputs, context.principal!)).map(Passport.from);
  }

  @Authorized('writer')
  @Mutation(() => PassportEventAppended, {
    description: 'Appends a typed event, signed by the issuer (POST /passports/{id}/events); after a restore, RESTORE_UNACKNOWLEDGED (503) until an admin acknowledges it (acknowledgeRestore).',
  })
  async appendPassportEvent(
    @Arg('passportId', () => ID) passportId: string,
    @Arg('type', () => String) type: string,
    @Arg('payload', () => GraphQLJSONObject) payload: Record<string, unknown>,
    @Ctx() context: RequestContext,
  ): Promise<PassportEventAppended> {
    const appended = await this.issuer.appendEvent(passportId, { type, payload }, context.principal!);
    return Object.assign(new PassportEventAppended(), {
      passportId,
      event: appended.event as unknown as Record<string, unknown>,
      logHead: appended.head as unknown as Record<string, unknown>,
      status: appended.status,
    });
  }

  @Authorized('writer')
  @Mutation(() => PassportPack, { description: 'Mints the Tier-A pack under the QR budget (POST /passports/{id}/pack).' })
  async mintPassportPack(@Arg('passportId', () => ID) passportId: string, @Ctx() context: RequestContext): Promise<PassportPack> {
    return PassportPack.from(await this.issuer.mintPack(passportId, context.principal!));
  }
}

@Resolver(() => PassportAsOf)
export class PassportAsOfResolver {
  constructor(
    private readonly issuer: IssuerService,
    private readonly charge: ReturnType<typeof actualCostMeter>,
  ) {}

  @Cost(WEIGHTS.proofHash)
  @ListSize({ assumedSize: 20 })
  @FieldResolver(() => [String], {
    description: "RFC 6962 consistency proof (hex node hashes) from the head at `at` to currentLogHead: the head then is a prefix of today's signed log (RFC 9162 §2.1.4.2). Reads the whole log.",
  })
  consistencyProof(@Root() asOf: PassportAsOf, @Ctx() context: object): Promise<string[]> {
    this.charge(context, Math.ceil(asOf.view.current.logSize * PER_EVENT.proof), asOf.view.current.id, 'consistency proof');
    return this.issuer.consistencyProof(asOf.view);
  }
}
