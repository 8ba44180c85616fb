/** Profiles, applicability and restore acknowledgements, written by admins (POST /admin/profiles, /admin/applicability, /admin/restore/acknowledgement). */
import { Arg, Authorized, Ctx, Mutation, Resolver } from 'type-graphql';
import { PLATFORM_ADMIN } from '../../../lib/auth/tokens.js';
import type { RequestContext } from '../../../lib/graphql/context.js';
import type { IssuerAdminService } from '../service/admin-service.js';
import { IssuerApplicability, IssuerApplicabilityInput, IssuerProfile, IssuerProfileInput, PlatformRestore } from '../schema/types.js';

@Resolver()
export class IssuerAdminResolver {
  constructor(private readonly issuer: IssuerAdminService) {}

  @Authorized(PLATFORM_ADMIN)
  @Mutation(() => IssuerProfile, { description: 'Creates or replaces a profile: capability classes and claims a type of passport gets.' })
  async upsertIssuerProfile(@Arg('input', () => IssuerProfileInput) input: IssuerProfileInput): Promise<IssuerProfile> {
    const { profile, created } = await this.issuer.upsertProfile(input);
    return IssuerProfile.from(profile, created);
  }

  @Authorized(PLATFORM_ADMIN)
  @Mutation(() => IssuerApplicability, { description: 'Creates or replaces the rule naming the profile that passports of a registry model get.' })
  async setIssuerApplicability(@Arg('input', () => IssuerApplicabilityInput) input: IssuerApplicabilityInput): Promise<IssuerApplicability> {
    const { rule, created } = await this.issuer.setApplicability(input);
    return IssuerApplicability.from(rule, created);
  }

  @Authorized(PLATFORM_ADMIN)
  @Mutation(() => [PlatformRestore], {
    description:
      'Acknowledges the restore that holds appends, once the clients are told which sequence numbers it took back (POST /admin/restore/acknowledgement): the restores acknowledged, none when no restore held appends.',
  })
  async acknowledgeRestore(@Ctx() context: RequestContext): Promise<PlatformRestore[]> {
    return (await this.issuer.acknowledgeRestore(context.principal!.name)).map(PlatformRestore.from);
  }
}
