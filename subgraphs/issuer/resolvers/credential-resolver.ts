/** What the issuer publishes for the credential ecosystem: its did:web document and its status lists. */
import { GraphQLJSONObject } from 'graphql-scalars';
import { Arg, Int, Query, Resolver } from 'type-graphql';
import type { IssuerService } from '../service/issuer-service.js';
import { IssuedCredentialType } from '../schema/types.js';

@Resolver()
export class CredentialResolver {
  constructor(private readonly issuer: IssuerService) {}

  @Query(() => GraphQLJSONObject, { description: 'The issuer’s DID document (did:web of its public base URL): its keys as JsonWebKey verification methods.' })
  issuerDidDocument(): Record<string, unknown> {
    return this.issuer.didDocument() as unknown as Record<string, unknown>;
  }

  @Query(() => IssuedCredentialType, {
    nullable: true,
    description: 'A Bitstring Status List credential of the issuer (purpose revocation or suspension, list number from 0); null when there is no such list.',
  })
  async issuerStatusList(@Arg('purpose', () => String) purpose: string, @Arg('list', () => Int) list: number): Promise<IssuedCredentialType | null> {
    const issued = await this.issuer.statusListCredential(purpose, list);
    return issued ? IssuedCredentialType.from(issued) : null;
  }
}
