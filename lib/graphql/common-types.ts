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

/** Where a page of a connection ends, as every connection of the graph reports it (first/after paging). */
@Directive('@shareable')
@ObjectType({ description: 'Where a page ends: pass endCursor as `after` for the next page.' })
export class PageInfo {
  @Field(() => Boolean)
  hasNextPage!: boolean;

  @Field(() => String, { nullable: true, description: 'Cursor to pass as `after` for the next page; null on the last page.' })
  endCursor!: string | null;

  static of(endCursor: string | null): PageInfo {
    return Object.assign(new PageInfo(), { hasNextPage: endCursor !== null, endCursor });
  }
}

@Directive('@shareable')
@ObjectType({ description: 'A page of the admin log, newest first.' })
export class AdminLogPage {
  @Field(() => [AdminLogEntry])
  nodes!: AdminLogEntry[];

  @Field(() => PageInfo)
  pageInfo!: PageInfo;
}
