/**
 * The cost of an operation from @cost and @listSize (lib/graphql/cost.ts), as Apollo Router counts
 * it: list size × (weight, else 1 for an object and 0 for a leaf, + the selection), the sizes from
 * slicing arguments (to the sized fields of a page), the length of a list of ids, an assumed size.
 */
import { ApolloServer } from '@apollo/server';
import { createRequire } from 'node:module';
import { buildSchema, Kind, parse, visit, type OperationDefinitionNode } from 'graphql';
import { describe, expect, it } from 'vitest';
import { actualCost, actualCostMeter, costAnnotations, costLimitPlugin, DEFAULT_LIST_SIZE, MUTATION_COST, operationCost, operationCosts } from '../../lib/graphql/cost.js';

const SDL = `
  directive @cost(weight: Int!) on ARGUMENT_DEFINITION | ENUM | FIELD_DEFINITION | INPUT_FIELD_DEFINITION | OBJECT | SCALAR
  directive @listSize(assumedSize: Int, slicingArguments: [String!], sizedFields: [String!], requireOneSlicingArgument: Boolean = true) on FIELD_DEFINITION
  type Passport {
    id: ID!
    verdict: String @cost(weight: 7000)
    events: [String!]! @cost(weight: 8) @listSize(assumedSize: 300)
    snapshots: [Snapshot!]!
    standing: Standing!
  }
  type Standing @cost(weight: 20) { standing: String }
  type Snapshot { id: ID! chunks(count: Int!): [String!]! @cost(weight: 3000) @listSize(slicingArguments: ["count"]) }
  type SnapshotPage { nodes: [Snapshot!]! pageInfo: PageInfo! }
  type PageInfo { endCursor: String }
  union Thing = Passport | Snapshot
  type Query {
    passport(id: ID!, at: String @cost(weight: 1000)): Passport
    passports(ids: [ID!]!): [Passport]! @listSize(assumedSize: 500)
    snapshots(first: Int = 20): SnapshotPage! @listSize(slicingArguments: ["first"], sizedFields: ["nodes"], requireOneSlicingArgument: false)
    records(first: Int): SnapshotPage! @listSize(slicingArguments: ["first"], sizedFields: ["nodes"], assumedSize: 50, requireOneSlicingArgument: false)
    things: [Thing!]!
  }
  type Mutation { touch: Passport }
`;
const schema = buildSchema(SDL);
const annotations = costAnnotations(parse(SDL));

function cost(query: string, variables: Record<string, unknown> = {}): number {
  const document = parse(query);
  const operation = document.definitions.find((definition): definition is OperationDefinitionNode => definition.kind === Kind.OPERATION_DEFINITION)!;
  return operationCost({ schema, document, operation, variables }, annotations);
}

/** The cost of an operation as it ran, given what it answered. */
function costAnswered(query: string, data: Record<string, unknown> | null, variables: Record<string, unknown> = {}): number {
  const document = parse(query);
  const operation = document.definitions.find((definition): definition is OperationDefinitionNode => definition.kind === Kind.OPERATION_DEFINITION)!;
  return actualCost({ schema, document, operation, variables }, annotations, data);
}

describe('the actual cost of an operation', () => {
  it('counts each list at the size it was answered, by alias, with the same weights as the estimate', () => {
    const query = '{ a: passports(ids: ["p", "q", "r"]) { verdict events } b: passport(id: "s") { id } }';
    expect(cost(query)).toBe(3 * (1 + 7000 + 300 * 8) + 1);
    const data = { a: [{ verdict: 'verified', events: ['x', 'y'] }, null, { verdict: null, events: [] }], b: { id: 's' } };
    // Two passports answered (the null one costs nothing), two events; verdict's weight whether it answered null or not.
    expect(costAnswered(query, data)).toBe(2 * (1 + 7000) + 2 * 8 + 1);
  });

  it('counts an object answered null its own weight, a field the answer lacks nothing, and a mutation its extra', () => {
    expect(costAnswered('{ passport(id: "p", at: "2026-01-01T00:00:00Z") { standing { standing } } }', { passport: null })).toBe(1 + 1000);
    expect(costAnswered('{ passport(id: "p") { id } }', {})).toBe(0);
    expect(costAnswered('{ passport(id: "p") { id } }', null)).toBe(0);
    expect(costAnswered('mutation { touch { id } }', { touch: { id: 'p' } })).toBe(MUTATION_COST + 1);
  });

  it('counts a union member by its __typename when the answer names it', () => {
    const query = '{ things { __typename ... on Passport { verdict } ... on Snapshot { chunks(count: 2) } } }';
    expect(
      costAnswered(query, {
        things: [
          { __typename: 'Snapshot', chunks: ['a', 'b'] },
          { __typename: 'Passport', verdict: 'verified' },
        ],
      }),
    ).toBe(1 + 2 * 3000 + (1 + 7000));
  });
});

describe('the cost of an operation', () => {
  it('counts 1 for an object, 0 for a leaf, and a field weight in place of its type', () => {
    expect(cost('{ passport(id: "p") { id } }')).toBe(1);
    expect(cost('{ passport(id: "p") { verdict } }')).toBe(7001);
    expect(cost('{ passport(id: "p") { standing { standing } } }')).toBe(21);
  });

  it('adds the weight of an argument given, not of one left out', () => {
    expect(cost('{ passport(id: "p", at: "2026-01-01T00:00:00Z") { id } }')).toBe(1001);
    expect(cost('query($at: String) { passport(id: "p", at: $at) { id } }', {})).toBe(1);
  });

  it('multiplies a list by its assumed size, or by the default without one', () => {
    expect(cost('{ passport(id: "p") { events } }')).toBe(1 + 300 * 8);
    expect(cost('{ passport(id: "p") { snapshots { id } } }')).toBe(1 + DEFAULT_LIST_SIZE);
  });

  it('sizes a list of ids by the ids given, at most its assumed size, variables included', () => {
    expect(cost('{ passports(ids: ["a", "b", "c"]) { verdict } }')).toBe(3 * 7001);
    expect(cost('query($ids: [ID!]!) { passports(ids: $ids) { verdict } }', { ids: Array(28).fill('a') })).toBe(28 * 7001);
    expect(cost('query($ids: [ID!]!) { passports(ids: $ids) { id } }', { ids: Array(900).fill('a') })).toBe(500);
  });

  it('sizes a list by its slicing argument, and a page by it through its sized fields (or their default)', () => {
    expect(cost('{ passport(id: "p") { snapshots { chunks(count: 8) } } }')).toBe(1 + DEFAULT_LIST_SIZE * (1 + 8 * 3000));
    expect(cost('{ snapshots(first: 100) { nodes { id } pageInfo { endCursor } } }')).toBe(1 + 100 + 1);
    expect(cost('{ snapshots { nodes { id } } }')).toBe(1 + 20);
    expect(cost('{ records { nodes { id } } }')).toBe(1 + 50);
    expect(cost('query($n: Int) { records(first: $n) { nodes { id } } }', { n: 7 })).toBe(1 + 7);
  });

  it('counts every alias, fragment and inline fragment, and leaves out what @skip or @include drop', () => {
    expect(cost('{ a: passport(id: "p") { verdict } b: passport(id: "q") { verdict } }')).toBe(2 * 7001);
    expect(cost('{ passport(id: "p") { ...V } } fragment V on Passport { verdict }')).toBe(7001);
    expect(cost('query($no: Boolean!) { passport(id: "p") { verdict @include(if: $no) id } }', { no: false })).toBe(1);
    expect(cost('{ passport(id: "p") { verdict @skip(if: true) } }')).toBe(1);
  });

  it('counts a union or interface as its costliest member', () => {
    expect(cost('{ things { ... on Passport { verdict } ... on Snapshot { id } } }')).toBe(DEFAULT_LIST_SIZE * 7001);
  });

  it('counts nothing of an operation whose variables do not fit (it is refused before anything runs), and lists with arguments that do not at their assumed size', () => {
    expect(cost('query($ids: [ID!]!) { passports(ids: $ids) { verdict } }', {})).toBe(0);
    expect(cost('{ passport(id: "p") { snapshots { chunks(count: "eight") } } }')).toBe(1 + DEFAULT_LIST_SIZE * (1 + DEFAULT_LIST_SIZE * 3000));
  });

  it('charges a mutation its own cost', () => {
    expect(cost('mutation { touch { id } }')).toBe(MUTATION_COST + 1);
  });

  it('finds a document’s fields once, for every request of it, and reads again only what @skip or @include make depend on the variables', () => {
    // A server hands every request of one text the same parsed document. Counted: lookups of a type's
    // fields, walks of each selection set, and reads of an argument that does not change the cost
    // (`standing(at:)`), over two requests of it with different variables.
    const counted = buildSchema(`scalar Instant\n${SDL.replace('standing: Standing!', 'standing(at: Instant): Standing!')}`);
    let argumentReads = 0;
    Object.assign(counted.getType('Instant')!, {
      parseLiteral: (value: { value: string }) => {
        argumentReads += 1;
        return value.value;
      },
    });
    let lookups = 0;
    for (const type of Object.values(counted.getTypeMap())) {
      if (!('getFields' in type) || type.name.startsWith('__')) continue;
      const getFields = type.getFields.bind(type);
      Object.assign(type, {
        getFields: () => {
          lookups += 1;
          return getFields();
        },
      });
    }
    const document = parse(
      'query($ids: [ID!]!, $at: String, $verdict: Boolean!) { passports(ids: $ids) { id verdict @include(if: $verdict) } passport(id: "p", at: $at) { standing(at: "2026-01-01T00:00:00Z") { standing } } }',
    );
    const operation = document.definitions[0] as OperationDefinitionNode;
    const walks = new Map<string, number>();
    visit(document, {
      SelectionSet(node, _key, parent) {
        const name = parent && 'name' in parent && parent.name ? parent.name.value : 'query';
        const { selections } = node;
        Object.defineProperty(node, 'selections', {
          get: () => {
            walks.set(name, (walks.get(name) ?? 0) + 1);
            return selections;
          },
        });
      },
    });
    const costOf = (variables: Record<string, unknown>) => operationCosts({ schema: counted, document, operation, variables }, annotations).estimated;

    expect(costOf({ ids: ['a', 'b'], at: '2026-01-01', verdict: true })).toBe(2 * (1 + 7000) + 1 + 1000 + 20);
    expect(lookups).toBeGreaterThan(0);
    lookups = 0;
    walks.clear();
    expect(costOf({ ids: ['a', 'b', 'c'], verdict: false })).toBe(3 * 1 + 1 + 20);
    expect(lookups).toBe(0);
    expect(Object.fromEntries(walks)).toEqual({ passports: 1 });
    expect(argumentReads).toBe(0);
  });
});

describe('the actual cost of an operation', () => {
  it('refuses what passes the budget, but the first of each kind for the only passport read so far, and keeps each operation apart', () => {
    const charge = actualCostMeter(100);
    const operation = {};
    charge(operation, 150, 'p1', 'events');
    charge(operation, 50, 'p1', 'verdict');
    // The same passport's events again (an id asked twice) is work again.
    expect(() => charge(operation, 1, 'p1', 'events')).toThrow(expect.objectContaining({ extensions: expect.objectContaining({ code: 'COST_ACTUAL_TOO_EXPENSIVE' }) }));
    expect(() => charge(operation, 1, 'p2', 'verdict')).toThrow(/spent 200 of its 100 .* the verdict of passport p2 would take 1 more/);
    charge({}, 90, 'p2', 'verdict');
    const other = {};
    charge(other, 60, 'p1', 'verdict');
    charge(other, 40, 'p2', 'verdict');
    expect(() => charge(other, 1, 'p3', 'verdict')).toThrow(/spent 100 of its 100/);
  });
});

describe('the cost limit of a server', () => {
  it('estimates and then counts what an operation cost over one reading of its variables', async () => {
    // A scalar that counts how often a variable of it is read (coerced): execution reads it once; so does the cost, for both its figures.
    // Built with the graphql Apollo Server loads (CommonJS), as a server's schema is.
    const graphql = createRequire(import.meta.url)('graphql') as typeof import('graphql');
    let reads = 0;
    const typeDefs = `scalar Instant\n${SDL.replace('passport(id: ID!, at: String', 'passport(id: ID!, at: Instant')}`;
    const costed = graphql.buildSchema(typeDefs);
    Object.assign(costed.getType('Instant')!, {
      parseValue: (value: unknown) => {
        reads += 1;
        return value;
      },
    });
    const server = new ApolloServer({
      schema: costed,
      rootValue: { passport: ({ id }: { id: string }) => ({ id, standing: { standing: 'valid' } }) },
      plugins: [costLimitPlugin(costAnnotations(parse(typeDefs)), 10_000, () => {})],
    });
    await server.start();
    try {
      const answer = await server.executeOperation({ query: 'query($at: Instant) { passport(id: "p", at: $at) { id standing { standing } } }', variables: { at: '2026-01-01T00:00:00Z' } });
      expect(answer.body).toMatchObject({
        kind: 'single',
        singleResult: { data: { passport: { id: 'p', standing: { standing: 'valid' } } }, extensions: { cost: { estimated: 1 + 1000 + 20, actual: 1 + 1000 + 20, max: 10_000 } } },
      });
      expect(reads).toBe(2);
    } finally {
      await server.stop();
    }
  });
});
