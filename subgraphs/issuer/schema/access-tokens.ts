/** The GraphQL types of the API tokens the platform issues (lib/auth/identity-store.ts, docs/OPERATORS.md "Tokens"). */
import { Field, ID, InputType, ObjectType } from 'type-graphql';
import type { IssuedToken } from '../../../lib/auth/identity-store.js';
import { ROLES } from '../../../lib/auth/tokens.js';

@ObjectType('AccessToken', { description: 'An API token the platform issued, without its secret (only its SHA-256 is kept).' })
export class AccessToken {
  @Field(() => ID)
  id!: string;

  @Field(() => String, { nullable: true, description: 'The operator it acts for; null: the platform itself.' })
  operator!: string | null;

  @Field(() => String, { description: `One of ${ROLES.join(', ')}.` })
  role!: string;

  @Field(() => String)
  label!: string;

  @Field(() => Date)
  createdAt!: Date;

  @Field(() => Date, { nullable: true, description: 'After this instant the token is refused; null: it does not expire.' })
  expiresAt!: Date | null;

  @Field(() => Date, { nullable: true })
  revokedAt!: Date | null;

  @Field(() => String, { description: 'The credential (token id, configured token name or JWT subject) that created it.' })
  createdBy!: string;

  static from(token: IssuedToken): AccessToken {
    return Object.assign(new AccessToken(), token);
  }
}

@ObjectType('IssuedAccessToken', { description: 'A token just created, with its secret: shown this once, never again.' })
export class IssuedAccessToken {
  @Field(() => AccessToken)
  token!: AccessToken;

  @Field(() => String, { description: 'The bearer token (`Authorization: Bearer <secret>`).' })
  secret!: string;
}

@InputType('AccessTokenInput')
export class AccessTokenInput {
  @Field(() => String, { nullable: true, description: "The operator the token is for; omitted: the caller's own (the platform's, for the platform admin). Only the platform admin names another." })
  operator?: string | null;

  @Field(() => String, { description: `One of ${ROLES.join(', ')}.` })
  role!: string;

  @Field(() => String, { description: 'What the token is for, 1 to 200 characters (e.g. `line 3 scanner`).' })
  label!: string;

  @Field(() => Date, { nullable: true, description: 'When it stops working; omitted: never (until revoked).' })
  expiresAt?: Date | null;
}
