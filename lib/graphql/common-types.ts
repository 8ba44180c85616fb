/** Value types every subgraph returns alike; `@shareable` lets the four define them identically. */
import { type GraphQLScalarType, Kind } from 'graphql';
import { GraphQLDateTimeISO, GraphQLJSONObject } from 'graphql-scalars';
import { Directive, Field, ID, ObjectType } from 'type-graphql';
import { badRequest } from '../problem.js';
import { epochMillis, INSTANT_EXPECTED, isRfc3339Instant } from '../time.js';

/**
 * The scalar class of the graphql that type-graphql and graphql-scalars load (the CommonJS build):
 * one made with the ES build's class, as this module imports it under the tests, is not taken for a type.
 */
const ScalarType = GraphQLDateTimeISO.constructor as typeof GraphQLScalarType;

/** A DateTimeISO given as text, read with the services' one RFC 3339 check (lib/time.ts). */
function instantOf(text: string): Date {
  if (!isRfc3339Instant(text, { spaceSeparator: false })) throw badRequest('INVALID_QUERY', `A DateTimeISO must be ${INSTANT_EXPECTED}; got ${JSON.stringify(text.slice(0, 64))}.`);
  return new Date(epochMillis(text));
}

/**
 * graphql-scalars' DateTimeISO (the type of every `Date` of the graph: its name and its answers are
 * unchanged), but it takes only the instants the services take, so that one outside years 0001 to
 * 9999 is the client's mistake (BAD_USER_INPUT with a 400 problem), not PostgreSQL's (22008, a 500).
 */
export const DateTimeISO = new ScalarType({
  ...GraphQLDateTimeISO.toConfig(),
  parseValue: (value) => (typeof value === 'string' ? instantOf(value) : GraphQLDateTimeISO.parseValue(value)),
  parseLiteral: (node, variables) => (node.kind === Kind.STRING ? instantOf(node.value) : GraphQLDateTimeISO.parseLiteral(node, variables)),
});

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

  @Field(() => String, { nullable: true, description: 'The operator the actor acted for; null for the platform itself or an anonymous caller.' })
  operator!: string | null;

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
