/**
 * Every optional argument of every field a client can query through the gateway may be left out,
 * given null, or given a value. The test walks the composed schema as a client sees it
 * (introspection): every Query field, and every argument-taking field of every type reachable from
 * Query, is called once with all optional arguments left out and once with each given null
 * (literally and as a variable). Required arguments take real values from the data made below;
 * a field whose required argument has no sample value fails the test, so a new field must be
 * added to SAMPLES to be covered. Mutations change state and are not walked here.
 */
import {
  buildClientSchema,
  getIntrospectionQuery,
  getNamedType,
  isEnumType,
  isInputObjectType,
  isLeafType,
  isListType,
  isNonNullType,
  isObjectType,
  type GraphQLArgument,
  type GraphQLField,
  type GraphQLInputType,
  type GraphQLObjectType,
  type GraphQLSchema,
} from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestStack, type TestStack } from '../support/stack.js';
import { createModel, PASSPORTS_ACROSS_SERVICES, passportsAcrossServices, trustTheIssuer } from './support.js';

const MODEL = 'battery-arguments';
let platform: TestStack;
let schema: GraphQLSchema;
/** Values for required arguments, by schema coordinate (`Type.field(argument:)`). */
let SAMPLES: Record<string, unknown>;

beforeAll(async () => {
  platform = await startTestStack();
  await createModel(platform, MODEL);
  await trustTheIssuer(platform, { root: 'root-arguments', issuer: 'issuer-arguments' });
  const [id] = await passportsAcrossServices(platform, MODEL, 1);
  const registered = await platform.rest('trust', '/trust-lists', { body: { jurisdiction: 'de', framework: 'eIDAS' }, as: 'admin' });
  expect(registered.status, registered.text).toBe(201);
  const passport = (await platform.graphql(PASSPORTS_ACROSS_SERVICES, { ids: [id] })).data.passports[0];
  const key = passport.signingKeys[0];
  SAMPLES = {
    'Query.snapshot(id:)': passport.snapshots[0].id,
    'Query.passport(id:)': id,
    'Query.passportEventsAfter(passportId:)': id,
    'Query.passportSnapshotsAfter(passportId:)': id,
    'Query.passports(ids:)': [id],
    'Query.operator(id:)': 'default',
    'Query.registryRecord(id:)': MODEL,
    'Query.registryModel(id:)': MODEL,
    'Query.registryRecords(kind:)': 'model',
    'Query.registrySupersession(id:)': MODEL,
    'Query.registryValidateDocument(modelId:)': MODEL,
    'Query.identityResolution(identifier:)': 'https://id.gs1.org/01/09520123456788/21/SN-1',
    'Query.issuerStatusList(purpose:)': 'revocation',
    'Query.issuerStatusList(list:)': 0,
    'Query.trustNode(id:)': 'issuer-arguments',
    'Query.trustKeyStanding(kid:)': key.kid,
    'Query.trustKeyPath(kid:)': key.kid,
    'Query.trustKeyStanding(at:)': key.firstUsed,
    'Query.trustKeyStandings(questions:)': [{ kid: key.kid, at: key.firstUsed }],
    'Query.trustList(jurisdiction:)': 'DE',
    'Snapshot.chunks(from:)': 0,
    'Snapshot.chunks(count:)': 1,
  };
  schema = buildClientSchema((await platform.graphql(getIntrospectionQuery())).data);
}, 300_000);
afterAll(() => platform?.stop());

const required = (argument: GraphQLArgument) => isNonNullType(argument.type) && argument.defaultValue === undefined;

/** A GraphQL literal of a JSON value (input objects and lists included). */
function literal(value: unknown, type: GraphQLInputType): string {
  const named = getNamedType(type);
  if (value === null) return 'null';
  if (Array.isArray(value)) return `[${value.map((item) => literal(item, isListType(type) || isNonNullType(type) ? (type as { ofType: GraphQLInputType }).ofType : type)).join(', ')}]`;
  if (isEnumType(named)) return String(value);
  if (isInputObjectType(named)) {
    const fields = named.getFields();
    return `{ ${Object.entries(value as Record<string, unknown>)
      .map(([name, item]) => `${name}: ${literal(item, fields[name]!.type)}`)
      .join(', ')} }`;
  }
  return JSON.stringify(value);
}

function requiredArguments(type: GraphQLObjectType, field: GraphQLField<unknown, unknown>): string[] {
  return field.args.filter(required).map((argument) => {
    const coordinate = `${type.name}.${field.name}(${argument.name}:)`;
    if (!(coordinate in SAMPLES)) throw new Error(`No sample value for the required argument ${coordinate}: add one to SAMPLES`);
    return `${argument.name}: ${literal(SAMPLES[coordinate], argument.type)}`;
  });
}

/** The leaf fields without arguments of the field's type, or nothing for a leaf. */
function selectionOf(field: GraphQLField<unknown, unknown>): string {
  const named = getNamedType(field.type);
  if (isLeafType(named)) return '';
  const leaves = Object.values((named as GraphQLObjectType).getFields()).filter((child) => !child.args.length && isLeafType(getNamedType(child.type)));
  return ` { __typename ${leaves.map((child) => child.name).join(' ')} }`;
}

interface Call {
  /** `Type.field` */
  coordinate: string;
  /** Builds the document given the arguments of the field under test. */
  document(argumentsText: string[], variables?: string): string;
  type: GraphQLObjectType;
  field: GraphQLField<unknown, unknown>;
}

/**
 * Every Query field, and every field with arguments of a type reachable from Query, with the route
 * (the first found, breadth first) that reaches it.
 */
function calls(): Call[] {
  const query = schema.getQueryType()!;
  const found: Call[] = [];
  const reached = new Set<string>([query.name]);
  let frontier: { type: GraphQLObjectType; wrap: (inner: string, variables?: string) => string }[] = [{ type: query, wrap: (inner, variables) => `query${variables ?? ''} { ${inner} }` }];
  while (frontier.length) {
    const next: typeof frontier = [];
    for (const { type, wrap } of frontier) {
      for (const field of Object.values(type.getFields())) {
        if (field.name.startsWith('_')) continue;
        if (type === query || field.args.length) {
          found.push({
            coordinate: `${type.name}.${field.name}`,
            type,
            field,
            document: (args, variables) => wrap(`${field.name}${args.length ? `(${args.join(', ')})` : ''}${selectionOf(field)}`, variables),
          });
        }
        const named = getNamedType(field.type);
        if (isObjectType(named) && !reached.has(named.name)) {
          reached.add(named.name);
          next.push({ type: named, wrap: (inner, variables) => wrap(`${field.name}${field.args.some(required) ? `(${requiredArguments(type, field).join(', ')})` : ''} { ${inner} }`, variables) });
        }
      }
    }
    frontier = next;
  }
  return found;
}

describe('optional arguments', () => {
  it('may each be left out or given null, on every field a client can query', async () => {
    const all = calls();
    // The walk reaches the entities' own argument fields, not only Query's.
    expect(all.map((call) => call.coordinate)).toEqual(expect.arrayContaining(['Query.snapshots', 'Snapshot.chunks', 'TrustService.adminLog', 'Query.trustRevocations']));
    const failures: string[] = [];
    let optionalArguments = 0;
    for (const call of all) {
      const given = requiredArguments(call.type, call.field);
      const variants: { label: string; document: string; variables?: Record<string, unknown> }[] = [{ label: 'every optional argument left out', document: call.document(given) }];
      for (const argument of call.field.args.filter((candidate) => !required(candidate))) {
        optionalArguments += 1;
        variants.push({ label: `${argument.name}: null`, document: call.document([...given, `${argument.name}: null`]) });
        variants.push({
          label: `${argument.name}: $${argument.name} (null)`,
          document: call.document([...given, `${argument.name}: $${argument.name}`], `($${argument.name}: ${String(argument.type).replace(/!$/, '')})`),
          variables: { [argument.name]: null },
        });
      }
      for (const variant of variants) {
        const result = await platform.graphql(variant.document, variant.variables, 'admin');
        if (result.errors)
          failures.push(
            `${call.coordinate} with ${variant.label}: ${JSON.stringify(result.errors.map((error: { message: string; extensions?: { code?: string } }) => `${error.extensions?.code}: ${error.message}`))}\n  ${variant.document}`,
          );
        else if (result.data === undefined || result.data === null) failures.push(`${call.coordinate} with ${variant.label}: no data`);
      }
    }
    console.log(`${all.length} fields, ${optionalArguments} optional arguments, each left out and given null`);
    expect(optionalArguments).toBeGreaterThan(20);
    expect(failures).toEqual([]);
  });
});

describe('connections', () => {
  it('read the same everywhere: first and after in, nodes and pageInfo out', () => {
    const connections: string[] = [];
    for (const type of Object.values(schema.getTypeMap())) {
      // A subscription's `after` resumes a stream (docs/ONE-GRAPH.md, "Live: subscriptions"); it pages nothing.
      if (!isObjectType(type) || type.name.startsWith('__') || type === schema.getSubscriptionType()) continue;
      for (const field of Object.values(type.getFields())) {
        const named = getNamedType(field.type);
        const pages = isObjectType(named) && ('pageInfo' in named.getFields() || field.args.some((argument) => ['first', 'after', 'limit', 'cursor', 'before'].includes(argument.name)));
        if (!pages) continue;
        connections.push(`${type.name}.${field.name}`);
        const fields = (named as GraphQLObjectType).getFields();
        // A page of one kind of thing lists it as `nodes`; a page of the trust graph carries the
        // graph's own lists, so one selection reads trustGraph and every trustGraphPage alike, and
        // the version of the graph its pages read.
        const lists = named.name === 'TrustGraphPage' ? [...Object.keys((schema.getType('TrustGraph') as GraphQLObjectType).getFields()), 'version'] : ['nodes'];
        expect(Object.keys(fields).sort(), `${type.name}.${field.name}`).toEqual([...lists, 'pageInfo'].sort());
        expect(String(fields.pageInfo!.type)).toBe('PageInfo!');
        expect(
          field.args.map((argument) => argument.name),
          `${type.name}.${field.name}`,
        ).toEqual(expect.arrayContaining(['first', 'after']));
        expect(field.args.map((argument) => argument.name)).not.toEqual(expect.arrayContaining(['limit']));
      }
    }
    expect(connections).toEqual(expect.arrayContaining(['Query.snapshots', 'Query.registryRecords', 'TrustService.adminLog', 'Query.trustGraphPage', 'Query.trustRevocationPage']));
  });

  it('page to the end by pageInfo.endCursor, one node at a time', async () => {
    const page = '{ nodes { id } pageInfo { hasNextPage endCursor } }';
    const pages: Record<string, { path: string[]; query: string }> = {
      'Query.snapshots': { path: ['snapshots'], query: `query($after: String) { snapshots(first: 1, after: $after) ${page} }` },
      'Query.registryRecords': { path: ['registryRecords'], query: `query($after: String) { registryRecords(kind: "model", first: 1, after: $after) ${page} }` },
      'TrustService.adminLog': { path: ['trust', 'adminLog'], query: `query($after: String) { trust { adminLog(first: 1, after: $after) ${page} } }` },
    };
    for (const [name, { path, query }] of Object.entries(pages)) {
      const seen: string[] = [];
      let after: string | null = null;
      for (let count = 0; count < 50; count += 1) {
        const result = await platform.graphql(query, { after }, 'admin');
        expect(result.errors, name).toBeUndefined();
        const connection: { nodes: { id: string }[]; pageInfo: { hasNextPage: boolean; endCursor: string | null } } = path.reduce((value: any, key: string) => value[key], result.data);
        seen.push(...connection.nodes.map((node) => node.id));
        expect(connection.pageInfo.hasNextPage, name).toBe(connection.pageInfo.endCursor !== null);
        after = connection.pageInfo.endCursor;
        if (!after) break;
      }
      expect(after, `${name} reaches its last page`).toBeNull();
      expect(seen.length, name).toBeGreaterThan(0);
      expect(new Set(seen).size, `${name} repeats no node`).toBe(seen.length);
    }
  });
});
