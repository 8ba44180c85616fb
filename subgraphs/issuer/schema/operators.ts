/** The operators' GraphQL types (docs/OPERATORS.md). */
import { GraphQLJSONObject } from 'graphql-scalars';
import { Field, ID, InputType, ObjectType } from 'type-graphql';
import type { OperatorView } from '../service/operator-service.js';

@ObjectType('Operator', { description: 'An economic operator the platform serves: it writes and signs only its own passports, with its own keys.' })
export class OperatorType {
  @Field(() => ID, { description: 'A lowercase slug; its trust node is operator:<id>.' })
  id!: string;

  @Field(() => String)
  name!: string;

  @Field(() => String, { description: 'active, or suspended: its writes are refused and its trust node revoked from suspendedAt.' })
  status!: string;

  @Field(() => Date)
  createdAt!: Date;

  @Field(() => Date, { nullable: true })
  suspendedAt!: Date | null;

  @Field(() => String, { description: 'Its did:web, the issuer its passports’ credentials name (the default operator’s is the issuer’s own).' })
  did!: string;

  @Field(() => [GraphQLJSONObject], { description: 'Its keys as the issuer keyring publishes them (event, carrier, credential), retired ones included.' })
  keys!: Record<string, unknown>[];

  static from(view: OperatorView, did: string): OperatorType {
    return Object.assign(new OperatorType(), {
      id: view.id,
      name: view.name,
      status: view.status,
      createdAt: view.createdAt,
      suspendedAt: view.suspendedAt,
      did,
      keys: view.keys as unknown as Record<string, unknown>[],
    });
  }
}

@ObjectType('OperatorCreation', { simpleResolvers: true })
export class OperatorCreationType {
  @Field(() => OperatorType)
  operator!: OperatorType;

  @Field(() => Boolean, { description: 'False when the operator existed and the request completed or restated its creation.' })
  created!: boolean;
}

@InputType('OperatorInput')
export class OperatorInput {
  @Field(() => ID, { description: 'A lowercase slug of letters, digits and inner hyphens, e.g. acme-batteries.' })
  id!: string;

  @Field(() => String, { description: 'Its display name.' })
  name!: string;
}
