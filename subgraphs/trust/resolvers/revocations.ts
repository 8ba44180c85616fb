/** Revocations, bitemporal: what was revoked at `at`, as known by `known_by`. */
import { Arg, Authorized, Mutation, Query, Resolver } from 'type-graphql';
import { parseRevocationQuery, revocationMatches } from '../domain/index.js';
import { RevocationInput, RevocationType } from '../schema/types.js';
import { orThrow, present, revocationOut, type TrustDependencies } from './shared.js';

@Resolver()
export class RevocationResolver {
  constructor(private readonly deps: TrustDependencies) {}

  @Query(() => [RevocationType], {
    description: 'Revocations (GET /revocations): at = effective by then, knownBy = recorded by then, window = effective within start/end, subject = affecting that node or key, retroactive.',
  })
  async trustRevocations(
    @Arg('at', () => String, { nullable: true }) at?: string | null,
    @Arg('knownBy', () => String, { nullable: true }) knownBy?: string | null,
    @Arg('window', () => String, { nullable: true }) window?: string | null,
    @Arg('subject', () => String, { nullable: true }) subject?: string | null,
    @Arg('retroactive', () => Boolean, { nullable: true }) retroactive?: boolean | null,
  ): Promise<RevocationType[]> {
    const params = present({ at, known_by: knownBy, window, subject, retroactive: retroactive === null || retroactive === undefined ? undefined : String(retroactive) });
    const query = orThrow(parseRevocationQuery(params as Record<string, string>));
    // Asked about one node or key, only that node's revocations are read; the domain decides on them as on all.
    return (await this.deps.store.revocations(query.subject?.node_id)).filter((revocation) => revocationMatches(revocation, query)).map(revocationOut);
  }

  @Authorized('writer')
  @Mutation(() => RevocationType, {
    description: "Declares a revocation (POST /revocations); recordedAt is the server's clock. A retroactive one needs a quorate attestation, else 422 and nothing is stored.",
  })
  async declareTrustRevocation(@Arg('input', () => RevocationInput) input: RevocationInput): Promise<RevocationType> {
    const body = present({ subject: input.subject, reason: input.reason, effective_at: input.effectiveAt, attestation: input.attestation });
    return revocationOut(orThrow(await this.deps.store.declareRevocation(body)));
  }
}
