/**
 * Instants at the edges of what the services take (years 0001 to 9999 in UTC once the offset is
 * applied, lib/time.ts), at every place a client gives one: each query parameter of the four served
 * OpenAPI documents that is a date-time or an interval (or says it takes RFC 3339), and every
 * argument and input field of the gateway's graph that is a DateTimeISO (or says it takes RFC 3339).
 * Just outside the range each is refused as the client's mistake, naming what was wrong (REST: 400
 * INVALID_QUERY naming the parameter; the graph: a 4xx problem); just inside, none is a 5xx. Both
 * lists are read from what the platform serves, so a parameter added later is tried here at once
 * (an argument of the graph also needs a sample operation below, or this file fails saying so).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { SERVICES, type ServiceName } from '../../lib/config/services.js';
import { createModel, createPassport } from '../issuer/support.js';
import { sharedTestStack, TOKENS, type RestResponse, type SharedTestStack } from '../support/stack.js';

/** Just outside years 0001–9999 in UTC: year 0000 by itself, or pushed over either end by its offset. */
const OUTSIDE = ['0000-01-01T00:00:00Z', '0000-12-31T23:59:59.999999Z', '0001-01-01T00:00:00+00:01', '0001-01-01T00:00:00+23:59', '9999-12-31T23:59:59-23:59', '9999-12-31T00:01:00-23:59'];
/** Just inside, at either end, with and without an offset. */
const INSIDE = ['0001-01-01T00:00:00Z', '0001-01-01T00:01:00+00:01', '9999-12-31T23:59:59.999999Z', '9999-12-31T00:00:59.999999-23:59'];
/** What every refusal of an instant out of range says. */
const RANGE = 'within years 0001 to 9999 in UTC';

/** Named like an instant: such a parameter must be declared as one, so that it is found here. */
const INSTANT_NAME = /^(at|known_?by|knownBy|window|since)$|(_at|At|_since|Since|_from|From|_to|To|Update|_update)$/;

const run = Date.now().toString(36);
let platform: SharedTestStack;
let passportId: string;
/** A trust list of this run's own (a subdivision code no other file uses), and a registry item. */
const jurisdiction = `ZZ-${run.slice(-3).toUpperCase()}`;
const item = `instant-edges-${run}`;
let serial = 0;

beforeAll(async () => {
  platform = await sharedTestStack();
  const model = `instant-edges-model-${run}`;
  await createModel(platform, model);
  passportId = (await createPassport(platform, model)).passport_id;
  const list = await platform.rest('trust', '/trust-lists', { body: { jurisdiction, framework: 'ESPR' }, as: 'admin' });
  expect(list.status, list.text).toBe(201);
  const record = await platform.rest('registry', '/', { body: { kind: 'item', id: item, body: {} }, as: 'writer' });
  expect(record.status, record.text).toBe(201);
});

interface Parameter {
  service: ServiceName;
  method: string;
  path: string;
  name: string;
  interval: boolean;
}

/** The values a parameter is tried with: the instant itself, or an interval with it at either end. */
const asGiven = (parameter: { interval: boolean }, instant: string) => (parameter.interval ? [`${instant}/..`, `../${instant}`] : [instant]);

describe('every instant query parameter of the OpenAPI documents', () => {
  let parameters: Parameter[];
  beforeAll(async () => {
    parameters = [];
    for (const service of SERVICES) {
      const document = (await (await fetch(`${new URL(platform.base(service)).origin}/docs/${service}/openapi.json`)).json()) as {
        paths: Record<string, Record<string, { parameters?: { in: string; name: string; description?: string; schema: { format?: string } }[] }>>;
      };
      for (const [path, operations] of Object.entries(document.paths)) {
        for (const [method, operation] of Object.entries(operations)) {
          for (const { in: where, name, description, schema } of operation.parameters ?? []) {
            if (where !== 'query') continue;
            const instant = schema.format === 'date-time' || schema.format === 'interval' || /RFC 3339/.test(description ?? '');
            if (instant) parameters.push({ service, method: method.toUpperCase(), path, name, interval: schema.format === 'interval' });
            else expect(name, `${service} ${method} ${path}: ${name} looks like an instant; declare it as a date-time`).not.toMatch(INSTANT_NAME);
          }
        }
      }
    }
  });

  /** The path with its parameters filled in: this file's passport and trust list where they are asked for. */
  const pathOf = (parameter: Parameter) => parameter.path.replace(/\{(\w+)\}/g, (_, name: string) => ({ id: passportId, jur: jurisdiction })[name] ?? 'x');
  /** Every parameter (side by side) with each of the instants (one after another), and what was answered. */
  const eachParameter = (instants: readonly string[], check: (parameter: Parameter, answer: RestResponse, where: string) => void) =>
    Promise.all(
      parameters.map(async (parameter) => {
        for (const value of instants.flatMap((instant) => asGiven(parameter, instant))) {
          const path = `${pathOf(parameter)}?${parameter.name}=${encodeURIComponent(value)}`;
          const answer = await platform.rest(parameter.service, path, { method: parameter.method, as: 'admin' });
          check(parameter, answer, `${parameter.service} ${parameter.method} ${path}: ${answer.text}`);
        }
      }),
    );

  it('are found in every place the issue names', () => {
    const found = parameters.map(({ service, path, name }) => `${service} ${path} ${name}`);
    expect(found).toEqual(
      expect.arrayContaining([
        'issuer /passports/{id} at',
        'issuer /passports/{id}/credential at',
        'archive /snapshots at',
        'registry /models updated_since',
        'registry /applicability at',
        'trust /revocations window',
      ]),
    );
  });

  it('refuse an instant just outside the range with 400 INVALID_QUERY naming the parameter', async () => {
    await eachParameter(OUTSIDE, (parameter, answer, where) => {
      expect([answer.status, answer.headers.get('content-type'), answer.body?.code], where).toEqual([400, 'application/problem+json', 'INVALID_QUERY']);
      expect(answer.body.detail, where).toMatch(new RegExp(`^${parameter.name} must be .*${RANGE}`));
    });
  });

  it('take an instant just inside the range, without a 5xx', async () => {
    await eachParameter(INSIDE, (_parameter, answer, where) => {
      expect(answer.status, where).toBeLessThan(500);
      expect(answer.body?.detail ?? '', where).not.toContain(RANGE);
    });
  });
});

interface GraphqlRequest {
  query: string;
  variables?: Record<string, unknown>;
  as?: 'writer' | 'admin';
}

/**
 * An operation for each instant argument or input field of the graph, given the instant `v`. Input
 * objects are given whole as variables, so that `v` lands in the named field.
 */
const SAMPLES: Record<string, (v: string) => GraphqlRequest> = {
  'Query.passport(at)': (v) => asked('String', `passport(id: "${passportId}", at: $v)`, v),
  'Query.snapshots(at)': (v) => asked('DateTimeISO', 'snapshots(at: $v)', v),
  'Query.registryRecords(updatedSince)': (v) => asked('String', 'registryRecords(kind: "model", updatedSince: $v)', v),
  'Query.registryApplicability(at)': (v) => asked('String', 'registryApplicability(at: $v)', v),
  'Query.trustKeyStanding(at)': (v) => asked('DateTimeISO!', 'trustKeyStanding(kid: "x", at: $v)', v, ''),
  'Query.trustKeyStanding(knownBy)': (v) => asked('String', 'trustKeyStanding(kid: "x", at: "2026-01-31T12:00:00Z", knownBy: $v)', v, ''),
  'TrustKeyStandingQuestion.at': (v) => asked('DateTimeISO!', 'trustKeyStandings(questions: [{ kid: "x", at: $v }])', v),
  // The revocation filters, alike on the field of one answer and on the paged one.
  ...Object.fromEntries(
    ['trustRevocations', 'trustRevocationPage'].flatMap((field) => ['at', 'knownBy', 'window'].map((name) => [`Query.${field}(${name})`, (v: string) => asked('String', `${field}(${name}: $v)`, v)])),
  ),
  'Query.trustLists(at)': (v) => asked('String', 'trustLists(at: $v)', v),
  'Query.trustList(at)': (v) => asked('String', `trustList(jurisdiction: "${jurisdiction}", at: $v)`, v),
  'RegistryRecordInput.effectiveFrom': (v) => createItem({ effectiveFrom: v }),
  'RegistryRecordInput.effectiveTo': (v) => createItem({ effectiveTo: v }),
  'RegistryVersionInput.effectiveFrom': (v) => appendVersion({ effectiveFrom: v }),
  'RegistryVersionInput.effectiveTo': (v) => appendVersion({ effectiveTo: v }),
  'TrustListInput.nextUpdate': (v) => ({
    query: 'mutation($input: TrustListInput!) { registerTrustList(input: $input) { __typename } }',
    variables: { input: { jurisdiction: `ZY-${((serial += 1)).toString(36)}`, framework: 'ESPR', nextUpdate: v } },
    as: 'admin',
  }),
  'TrustListEntryInput.supersededAt': (v) => ({
    query: `mutation($input: TrustListEntryInput!) { upsertTrustListEntry(jurisdiction: "${jurisdiction}", input: $input) { __typename } }`,
    variables: { input: { id: 'entry-1', supersededAt: v } },
    as: 'admin',
  }),
  'AccessTokenInput.expiresAt': (v) => ({
    query: 'mutation($input: AccessTokenInput!) { createAccessToken(input: $input) { __typename } }',
    variables: { input: { operator: 'default', role: 'reader', label: 'instant edge', expiresAt: v } },
    as: 'admin',
  }),
  'TrustRevocationInput.effectiveAt': (v) => ({
    query: 'mutation($input: TrustRevocationInput!) { declareTrustRevocation(input: $input) { __typename } }',
    variables: { input: { subject: `no-such-node-${run}`, reason: 'unspecified', effectiveAt: v } },
    as: 'admin',
  }),
};

/** A query of one field, given the instant as its variable $v of `type`; an object answer is asked for its __typename only. */
function asked(type: string, field: string, v: string, selection = ' { __typename }'): GraphqlRequest {
  return { query: `query($v: ${type}) { ${field}${selection} }`, variables: { v } };
}

function createItem(window: Record<string, string>): GraphqlRequest {
  return {
    query: 'mutation($input: RegistryRecordInput!) { createRegistryRecord(input: $input) { __typename } }',
    variables: { input: { kind: 'item', id: `${item}-${((serial += 1)).toString(36)}`, body: {}, ...window } },
    as: 'writer',
  };
}

function appendVersion(window: Record<string, string>): GraphqlRequest {
  return {
    query: `mutation($input: RegistryVersionInput!) { appendRegistryRecordVersion(id: "${item}", input: $input) { __typename } }`,
    variables: { input: { body: {}, expectedVersion: 1, ...window } },
    as: 'writer',
  };
}

interface IntrospectedValue {
  name: string;
  description: string | null;
  type: { kind: string; name: string | null; ofType: { name: string | null; ofType: { name: string | null } | null } | null };
}

const namedType = (type: IntrospectedValue['type']) => type.name ?? type.ofType?.name ?? type.ofType?.ofType?.name;

describe('every instant argument and input field of the graph', () => {
  let coordinates: string[];
  beforeAll(async () => {
    const { data } = await platform.graphql<{ __schema: { types: { name: string; fields: { name: string; args: IntrospectedValue[] }[] | null; inputFields: IntrospectedValue[] | null }[] } }>(
      `{ __schema { types { name
          fields { name args { name description type { kind name ofType { name ofType { name } } } } }
          inputFields { name description type { kind name ofType { name ofType { name } } } } } } }`,
    );
    coordinates = [];
    const judge = (coordinate: string, value: IntrospectedValue) => {
      const type = namedType(value.type);
      if (type === 'DateTimeISO' || (type === 'String' && /RFC 3339/.test(value.description ?? ''))) coordinates.push(coordinate);
      else expect(value.name, `${coordinate} looks like an instant; make it a DateTimeISO or say it takes RFC 3339`).not.toMatch(INSTANT_NAME);
    };
    for (const type of data!.__schema.types.filter(({ name }) => !name.startsWith('__'))) {
      for (const field of type.fields ?? []) for (const argument of field.args) judge(`${type.name}.${field.name}(${argument.name})`, argument);
      for (const field of type.inputFields ?? []) judge(`${type.name}.${field.name}`, field);
    }
  });

  interface GraphqlAnswer {
    status: number;
    body: { errors?: { message: string; extensions?: { code?: string; problem?: { status: number } } }[] };
  }

  /** Every coordinate that has a sample (side by side) with each of the instants (one after another), and what was answered. */
  const eachCoordinate = (instants: readonly string[], check: (answer: GraphqlAnswer, where: string) => void) =>
    Promise.all(
      coordinates
        .filter((coordinate) => SAMPLES[coordinate])
        .map(async (coordinate) => {
          for (const value of instants.flatMap((instant) => asGiven({ interval: coordinate.endsWith('(window)') }, instant))) {
            const { as, ...request } = SAMPLES[coordinate]!(value);
            const response = await fetch(platform.stack.gateway.graphqlUrl, {
              method: 'POST',
              headers: { 'content-type': 'application/json', ...(as ? { authorization: `Bearer ${TOKENS[as]}` } : {}) },
              body: JSON.stringify(request),
            });
            const answer = { status: response.status, body: (await response.json()) as GraphqlAnswer['body'] };
            check(answer, `${coordinate} = ${value}: ${JSON.stringify(answer.body)}`);
          }
        }),
    );

  it('each has a sample operation here, and the issue’s own are among them', () => {
    expect(
      coordinates.filter((coordinate) => !SAMPLES[coordinate]),
      'instant arguments without a sample operation in SAMPLES',
    ).toEqual([]);
    expect(coordinates).toEqual(expect.arrayContaining(['Query.passport(at)', 'Query.snapshots(at)', 'Query.registryRecords(updatedSince)', 'TrustKeyStandingQuestion.at']));
  });

  it('refuse an instant just outside the range as the client’s mistake, with its problem', async () => {
    await eachCoordinate(OUTSIDE, ({ status, body }, where) => {
      expect(status, where).toBeLessThan(500);
      const [error] = body.errors ?? [];
      expect(error?.message, where).toContain(RANGE);
      expect(error?.extensions?.problem?.status, where).toBeOneOf([400, 422]);
    });
  });

  it('take an instant just inside the range, without an internal error', async () => {
    await eachCoordinate(INSIDE, ({ status, body }, where) => {
      expect(status, where).toBeLessThan(500);
      for (const error of body.errors ?? []) {
        // Nor a sample of this file that the graph refuses for its shape.
        expect(error.extensions?.code, where).not.toBeOneOf(['INTERNAL_SERVER_ERROR', 'GRAPHQL_VALIDATION_FAILED', 'BAD_USER_INPUT']);
        expect(error.extensions?.problem?.status ?? 400, where).toBeLessThan(500);
        expect(error.message, where).not.toContain(RANGE);
      }
    });
  });
});
