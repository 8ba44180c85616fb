/** Value types every subgraph returns alike; `@shareable` lets the four define them identically. */
import { GraphQLJSONObject } from 'graphql-scalars';
import { Directive, Field, ID, ObjectType } from 'type-graphql';

@Directive('@shareable')
@ObjectType({ description: 'One state-changing request, as the admin log keeps it.' })
export class AdminLogEntry {
  @Field(() => ID)
  id!: string;

  @Field(() => Date, { description: 'When the request was made (RFC 3339).' })
  at!: Date;

  @Field(() => String, { description: 'Name of the token that made the request.' })
  actor!: string;

  @Field(() => String)
  role!: string;

  @Field(() => String, { description: 'The operation, e.g. appendPassportEvent.' })
  action!: string;

  @Field(() => String, { nullable: true, description: 'The record the request named.' })
  target!: string | null;

  @Field(() => String, { description: '`ok`, or the problem code the request ended with.' })
  outcome!: string;

  @Field(() => GraphQLJSONObject, { nullable: true })
  detail!: object | null;
}

@Directive('@shareable')
@ObjectType({ description: 'A page of the admin log, newest first.' })
export class AdminLogPage {
  @Field(() => [AdminLogEntry])
  entries!: AdminLogEntry[];

  @Field(() => String, { nullable: true, description: 'Cursor of the next, older page.' })
  next!: string | null;
}
