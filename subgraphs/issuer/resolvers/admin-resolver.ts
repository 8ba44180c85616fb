/** Profiles and applicability, written by admins (POST /admin/profiles, POST /admin/applicability). */
import { Arg, Authorized, Mutation, Resolver } from 'type-graphql';
import type { IssuerService } from '../service/issuer-service.js';
import { IssuerApplicability, IssuerApplicabilityInput, IssuerProfile, IssuerProfileInput } from '../schema/types.js';

@Resolver()
export class IssuerAdminResolver {
  constructor(private readonly issuer: IssuerService) {}

  @Authorized('admin')
  @Mutation(() => IssuerProfile, { description: 'Creates or replaces a profile: capability classes and claims a type of passport gets.' })
  async upsertIssuerProfile(@Arg('input', () => IssuerProfileInput) input: IssuerProfileInput): Promise<IssuerProfile> {
    const { profile, created } = await this.issuer.upsertProfile(input);
    return IssuerProfile.from(profile, created);
  }

  @Authorized('admin')
  @Mutation(() => IssuerApplicability, { description: 'Creates or replaces the rule naming the profile that passports of a registry model get.' })
  async setIssuerApplicability(@Arg('input', () => IssuerApplicabilityInput) input: IssuerApplicabilityInput): Promise<IssuerApplicability> {
    const { rule, created } = await this.issuer.setApplicability(input);
    return IssuerApplicability.from(rule, created);
  }
}
