/** Trust lists per jurisdiction: append-only, answerable at any instant. */
import { ListSize } from '../../../lib/graphql/cost.js';
import { Arg, Authorized, Mutation, Query, Resolver } from 'type-graphql';
import { PLATFORM_ADMIN } from '../../../lib/auth/tokens.js';
import { badRequest, ProblemError } from '../../../lib/problem.js';
import { normalizeJurisdiction, trustListAt, type TrustList } from '../domain/index.js';
import { TrustListEntryInput, TrustListEntryUpsertType, TrustListInput, TrustListType } from '../schema/types.js';
import { entryOut, instantArgument, listOut, orThrow, present, type TrustDependencies } from './shared.js';

@Resolver()
export class TrustListResolver {
  constructor(private readonly deps: TrustDependencies) {}

  // A list per jurisdiction and framework.
  @ListSize({ assumedSize: 50 })
  @Query(() => [TrustListType], { description: 'Trust lists as they stood at `at` (now by default), by jurisdiction and framework (GET /trust-lists).' })
  async trustLists(
    @Arg('at', () => String, { nullable: true, description: 'RFC 3339 date-time: the lists as they stood then (default now).' }) at?: string | null,
    @Arg('jurisdiction', () => String, { nullable: true }) jurisdiction?: string | null,
    @Arg('framework', () => String, { nullable: true }) framework?: string | null,
  ): Promise<TrustListType[]> {
    const instant = instantArgument('at', at);
    let wanted: string | undefined;
    if (jurisdiction !== null && jurisdiction !== undefined) {
      wanted = normalizeJurisdiction(jurisdiction);
      if (!wanted) throw badRequest('INVALID_QUERY', 'jurisdiction must be an ISO 3166-1 alpha-2 or ISO 3166-2 code');
    }
    const lists: TrustList[] = [];
    // One jurisdiction asked for: only its history is read, not every list's.
    const histories = wanted === undefined ? (await this.deps.trustLists.trustListHistories()).values() : [await this.deps.trustLists.trustListHistory(wanted)];
    for (const history of histories) {
      const list = trustListAt(history, instant);
      if (list && (framework === null || framework === undefined || list.framework === framework)) lists.push(list);
    }
    return lists.map(listOut);
  }

  @Query(() => TrustListType, { description: 'One trust list exactly as it stood at `at` (now by default) (GET /trust-lists/{jur}).' })
  async trustList(
    @Arg('jurisdiction', () => String) jurisdiction: string,
    @Arg('at', () => String, { nullable: true, description: 'RFC 3339 date-time: the list as it stood then (default now).' }) at?: string | null,
  ): Promise<TrustListType> {
    const instant = instantArgument('at', at);
    const code = normalizeJurisdiction(jurisdiction);
    const list = code ? trustListAt(await this.deps.trustLists.trustListHistory(code), instant) : undefined;
    if (!list) {
      const when = instant === undefined ? '' : ` at ${at}`;
      throw new ProblemError(404, 'UNKNOWN_TRUST_LIST', `No trust list is registered for ${jurisdiction}${when}.`);
    }
    return listOut(list);
  }

  @Authorized(PLATFORM_ADMIN)
  @Mutation(() => TrustListType, { description: 'Registers the trust list of a jurisdiction (POST /trust-lists); a second list for it is a 409.' })
  async registerTrustList(@Arg('input', () => TrustListInput) input: TrustListInput): Promise<TrustListType> {
    const body = present({ jurisdiction: input.jurisdiction, framework: input.framework, next_update: input.nextUpdate });
    return listOut(orThrow(await this.deps.trustLists.registerTrustList(body)));
  }

  @Authorized(PLATFORM_ADMIN)
  @Mutation(() => TrustListEntryUpsertType, {
    description: 'Upserts one entry (POST /trust-lists/{jur}/entries); supersededAt withdraws it from then on. Every change bumps the sequence number.',
  })
  async upsertTrustListEntry(@Arg('jurisdiction', () => String) jurisdiction: string, @Arg('input', () => TrustListEntryInput) input: TrustListEntryInput): Promise<TrustListEntryUpsertType> {
    const code = normalizeJurisdiction(jurisdiction);
    if (!code) throw new ProblemError(404, 'UNKNOWN_TRUST_LIST', `No trust list is registered for ${jurisdiction}.`);
    const body = present({ id: input.id, service_type: input.serviceType, name: input.name, node_id: input.nodeId, superseded_at: input.supersededAt });
    const { list, entry, changed, created } = orThrow(await this.deps.trustLists.upsertTrustListEntry(code, body));
    return { list: listOut(list), entry: entryOut(entry), changed, created };
  }
}
