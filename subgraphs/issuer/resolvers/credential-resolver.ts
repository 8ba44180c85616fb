/** What the issuer publishes for the credential ecosystem: its did:web document, its status lists, and the JSON-LD context and vocabulary of its credentials' own terms. */
import { GraphQLJSONObject } from 'graphql-scalars';
import { Arg, ID, Int, Query, Resolver } from 'type-graphql';
import type { CredentialService } from '../service/credential-service.js';
import { IssuedCredentialType } from '../schema/types.js';

@Resolver()
export class CredentialResolver {
  constructor(private readonly issuer: CredentialService) {}

  @Query(() => GraphQLJSONObject, {
    nullable: true,
    description:
      'An operator’s DID document (did:web): its keys as JsonWebKey verification methods. Without `operator`, the issuer’s own (did:web of its public base URL: the default operator’s keys and the service key); an operator’s is did:web of {issuer}/operators/{id}. Null for an operator without keys.',
  })
  async issuerDidDocument(@Arg('operator', () => ID, { nullable: true }) operator?: string | null): Promise<Record<string, unknown> | null> {
    return ((await this.issuer.didDocument(operator ?? undefined)) as unknown as Record<string, unknown> | undefined) ?? null;
  }

  @Query(() => String, {
    description: 'The JSON-LD context v1 of the terms the issuer’s passport credentials add to VC 2.0 and UNTP DPP, as the exact text served at /contexts/passport/v1 (credentials carry its SHA-384).',
  })
  issuerPassportContext(): string {
    return this.issuer.passportContext().text;
  }

  @Query(() => GraphQLJSONObject, { description: 'The issuer’s vocabulary (RDF Schema in JSON-LD) of those terms, whose IRIs are {issuer}/vocab#{term}.' })
  issuerVocabulary(): Record<string, unknown> {
    return this.issuer.passportVocabulary();
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
