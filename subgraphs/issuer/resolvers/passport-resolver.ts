/** Passports in the graph: read, create, append events, mint packs, verdicts. */
import { GraphQLJSONObject } from 'graphql-scalars';
import { Arg, Authorized, FieldResolver, ID, Mutation, Query, Resolver, Root } from 'type-graphql';
import type { IssuerService } from '../service/issuer-service.js';
import { CreatePassportInput, Passport, PassportEventAppended, PassportPack } from '../schema/types.js';

@Resolver(() => Passport)
export class PassportResolver {
  constructor(private readonly issuer: IssuerService) {}

  @Query(() => Passport, { nullable: true, description: 'A passport by id; null when unknown.' })
  async passport(@Arg('id', () => ID) id: string): Promise<Passport | null> {
    const row = await this.issuer.findPassport(id);
    return row ? Passport.from(row) : null;
  }

  @FieldResolver(() => [GraphQLJSONObject], { description: 'Every signed event, verbatim, in sequence order.' })
  events(@Root() passport: Passport): Promise<unknown[]> {
    return this.issuer.events(passport.id);
  }

  @FieldResolver(() => GraphQLJSONObject, {
    description: 'The full-pipeline verdict with coverage, as GET /passports/{id}/verdict returns it (asks the trust service for key standing).',
  })
  verdict(@Root() passport: Passport): Promise<Record<string, unknown>> {
    return this.issuer.verdict(passport.row) as unknown as Promise<Record<string, unknown>>;
  }

  @Authorized('writer')
  @Mutation(() => Passport, { description: 'Creates a passport with an empty log (POST /passports).' })
  async createPassport(@Arg('input', () => CreatePassportInput) input: CreatePassportInput): Promise<Passport> {
    return Passport.from(await this.issuer.createPassport(input));
  }

  @Authorized('writer')
  @Mutation(() => PassportEventAppended, { description: 'Appends a typed event, signed by the issuer (POST /passports/{id}/events).' })
  async appendPassportEvent(
    @Arg('passportId', () => ID) passportId: string,
    @Arg('type', () => String) type: string,
    @Arg('payload', () => GraphQLJSONObject) payload: Record<string, unknown>,
  ): Promise<PassportEventAppended> {
    const appended = await this.issuer.appendEvent(passportId, { type, payload });
    return Object.assign(new PassportEventAppended(), {
      passportId,
      event: appended.event as unknown as Record<string, unknown>,
      logHead: appended.head as unknown as Record<string, unknown>,
      status: appended.status,
    });
  }

  @Authorized('writer')
  @Mutation(() => PassportPack, { description: 'Mints the Tier-A pack under the QR budget (POST /passports/{id}/pack).' })
  async mintPassportPack(@Arg('passportId', () => ID) passportId: string): Promise<PassportPack> {
    return PassportPack.from(await this.issuer.mintPack(passportId));
  }
}
