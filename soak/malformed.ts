/**
 * Soak part: bad input. Generated malformed requests on every path of the route tables through the
 * REST facade, and some straight to the gateway's /graphql: JSON of the wrong type in each body
 * member, missing and unknown members, huge values, deep nesting, bodies over the limit, bad
 * encodings and media types, garbage path and query parameters, wrong methods, bad credentials.
 * Deterministic from a seed (printed in the report). Checks: no answer ≥ 500, every facade 4xx an
 * RFC 9457 problem, and every table of every service schema unchanged.
 *
 *   SOAK_SEED=<seed> npm run soak -- malformed
 */
import { loadRuntimeConfig } from '../lib/config/runtime.js';
import type { ServiceName } from '../lib/config/services.js';
import type { JsonSchema, Route } from '../rest-facade/route-table.js';
import type { SoakContext } from './context.js';
import { allRoutes, fillPath, prng, seedFixtures, validRequest, type Fixtures } from '../test/support/write-fixtures.js';
import { excerpt, pool, problemViolation, send, type RawAnswer, type RawRequest } from '../test/support/soak-http.js';
import { FailureLog, markdownTable, notRun, type SoakSection } from './report.js';
import { ADMIN_LOG_TABLES, changedTables, watchTables } from '../test/support/tables.js';

/** Requests the run makes at least; the deterministic cases come first, seeded random ones fill up. */
export const TARGET_REQUESTS = 6_000;
const WIDTH = 8;
/** The body limit the soak's platform runs with: the default configuration's. */
const BODY_LIMIT = loadRuntimeConfig({}).bodyLimit;

interface Probe {
  /** `service METHOD path` of the route aimed at, or `gateway POST /graphql`. */
  target: string;
  kind: string;
  variant: string;
  request: RawRequest;
  /** Carries a valid token: a refused mutation may then be in the admin log (DESIGN §3), never as ok. */
  authenticated: boolean;
  /** Answered by the REST facade, whose errors are RFC 9457 problems. */
  facade: boolean;
  /** Exact statuses the design gives this case, when it gives one. */
  expect?: readonly number[];
  /** The route runs a mutation: a 2xx to a malformed request would be a write. */
  mutation: boolean;
}

type Json = Record<string, unknown>;

const WRONG_VALUES: Record<string, unknown[]> = {
  string: [12345, 0, true, [], ['text'], {}, { value: 'text' }],
  integer: ['1', 1.5, true, [], {}, '', 'NaN'],
  number: ['1', true, [], {}],
  boolean: ['true', 1, [], {}],
  object: ['text', 1, true, [], [{}]],
  array: ['text', 1, true, {}],
};

/** The JSON type a body member's schema declares (enums of strings count as string). */
function typeOf(schema: JsonSchema | undefined): string | undefined {
  if (!schema) return undefined;
  if (typeof schema.type === 'string') return schema.type;
  if (Array.isArray(schema.type)) return (schema.type as string[]).find((type) => type !== 'null');
  if (Array.isArray(schema.enum)) return schema.enum.every((value) => typeof value === 'string' || value === null) ? 'string' : undefined;
  return undefined;
}

const PATH_GARBAGE = [
  '%ZZ',
  '%',
  '%C3%28',
  '%FF%FE%FD',
  '%00',
  '%2e%2e',
  '..',
  '%2F..%2F..%2Fetc%2Fpasswd',
  'a%2Fb',
  '%20%09%0A',
  '%E2%80%AE%F0%9F%92%A5',
  '%ED%A0%80',
  "'%20OR%201%3D1--",
  '%22%3E%3Cscript%3E',
  '-1',
  '99999999999999999999999999999',
  'null',
  '%7Bid%7D',
  '%7B%7D',
  'x'.repeat(300),
  'y'.repeat(8_000),
  encodeURIComponent('é'.repeat(1_000)),
];

const QUERY_GARBAGE: Record<string, string[]> = {
  integer: ['-1', '0', '-99999999999', '99999999999999999999', '1.5', '1e3', 'abc', '', '0x10', '%20%201', '%00'],
  boolean: ['yes', '1', 'TRUE', '', 'null', '%00'],
  'date-time': ['2026-13-01T00:00:00Z', 'not-a-date', '', '2026-02-30T00:00:00Z', '0000-00-00T00:00:00Z', '99999-01-01T00:00:00Z', '2026-01-01T25:61:61Z', '-2026-01-01T00:00:00Z', '1e400', '%00'],
  interval: ['/', 'x/y', '2026-01-01T00:00:00Z/2025-01-01T00:00:00Z', '../..', 'a'.repeat(2000), '%00'],
  string: ['zzz', '-1', '99999999999999999999999999', '%00', 'A'.repeat(1_100), '!!!%25%25', 'eyJpZCI6IngifQ', "'%20OR%201%3D1", '%FF', '%ED%A0%80', 'null', '0', 'a'.repeat(1_000)],
};

/** Members that name something (ids, jurisdictions, kinds), where a 300,000-character value is malformed. */
const IDENTIFIER = /(^|_)(id|identity|jurisdiction|subject|kind|type)$/;

const deepArray = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;
const deepObject = (depth: number) => `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;

/** Valid JSON text with `raw` put in place of the member `name` (or added). */
const withRawMember = (body: Json, name: string, raw: string) => {
  const rest = Object.fromEntries(Object.entries(body).filter(([member]) => member !== name));
  const text = JSON.stringify(rest);
  return `${text.slice(0, -1)}${text.length > 2 ? ',' : ''}${JSON.stringify(name)}:${raw}}`;
};

export async function runMalformed(context: SoakContext, given?: Fixtures): Promise<SoakSection> {
  const started = performance.now();
  const failures = new FailureLog(Number(process.env.SOAK_FAILURES_SHOWN) || 20);
  const random = prng(context.seed);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
  const fixtures = given ?? (await seedFixtures(context).catch((error: unknown) => notRun('Bad input', error, started)));
  if (!('run' in fixtures)) return fixtures;
  const tables = await watchTables(context.databaseUrl);
  const routes = allRoutes();

  // ---------------------------------------------------------------------------------------------
  // The probes, route by route

  const groups: { target: string; probes: Probe[] }[] = [];
  const seenPaths = new Set<string>();
  const bodyRoutes: { service: ServiceName; route: Route; body: Json; token: string }[] = [];

  for (const { service, route } of routes) {
    const target = `${service} ${route.method} ${route.path}`;
    const probes: Probe[] = [];
    const base = context.stack.facade.baseUrls[service];
    const valid = (await validRequest(context, service, route, fixtures)) ?? { params: {}, query: {}, body: {} };
    const token = route.role === 'admin' ? context.tokens.admin : context.tokens.writer;
    const auth: Record<string, string> = route.role ? { authorization: `Bearer ${token}` } : {};
    const mutation = /^\s*mutation\b/.test(route.operation);
    const validBody = valid.body === undefined ? undefined : JSON.stringify(valid.body);
    const add = (
      kind: string,
      variant: string,
      options: { method?: string; path?: string; query?: string; headers?: Record<string, string>; body?: Buffer | string; chunked?: boolean; expect?: readonly number[]; authenticated?: boolean },
    ) => {
      const path = options.path ?? fillPath(route, valid.params);
      const headers = options.headers ?? { ...auth, ...(options.body !== undefined ? { 'content-type': 'application/json' } : {}) };
      probes.push({
        target,
        kind,
        variant,
        request: {
          url: `${base}${path}${options.query === undefined ? '' : `?${options.query}`}`,
          method: options.method ?? route.method,
          headers,
          ...(options.body === undefined ? {} : { body: options.body }),
          ...(options.chunked ? { chunked: true } : {}),
        },
        authenticated: options.authenticated ?? Boolean(route.role && headers.authorization === auth.authorization),
        facade: true,
        ...(options.expect ? { expect: options.expect } : {}),
        mutation,
      });
    };
    const withBody = route.method === 'POST' && validBody !== undefined ? { body: validBody } : {};

    // Wrong methods, once per path.
    if (!seenPaths.has(`${service} ${route.path}`)) {
      seenPaths.add(`${service} ${route.path}`);
      const allowed = new Set(routes.filter((other) => other.service === service && other.route.path === route.path).map((other) => other.route.method as string));
      if (allowed.has('GET')) allowed.add('HEAD');
      for (const method of ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'TRACE']) {
        if (allowed.has(method)) continue;
        add('wrong method', method, { method, headers: { ...auth }, expect: [405] });
        if (method === 'PUT' || method === 'PATCH' || method === 'DELETE')
          add('wrong method', `${method} with a body`, { method, ...withBody, headers: { ...auth, 'content-type': 'application/json' }, body: validBody ?? '{}', expect: [405] });
      }
    }

    // Credentials.
    if (route.role) {
      const bad: [string, Record<string, string>, number][] = [
        ['no Authorization', {}, 401],
        ['bare Bearer', { authorization: 'Bearer' }, 401],
        ['Basic', { authorization: 'Basic YWRtaW46YWRtaW4=' }, 401],
        ['unknown token', { authorization: 'Bearer not-a-known-token' }, 401],
        ['8,000-character token', { authorization: `Bearer ${'a'.repeat(8_000)}` }, 401],
        ['token with a control character', { authorization: `Bearer ${token}\t${token}` }, 401],
        ...(route.role === 'admin' ? ([['writer token on an admin path', { authorization: `Bearer ${context.tokens.writer}` }, 403]] as [string, Record<string, string>, number][]) : []),
      ];
      for (const [variant, headers, status] of bad) {
        add('bad authorization', variant, { ...withBody, headers: { ...headers, ...(withBody.body ? { 'content-type': 'application/json' } : {}) }, expect: [status], authenticated: false });
      }
    }

    // Path parameters: each replaced by garbage, the rest of the request valid.
    for (const name of Object.keys(valid.params)) {
      for (const garbage of PATH_GARBAGE) {
        const params = Object.fromEntries(Object.entries(valid.params).map(([key, value]) => [key, key === name ? garbage : encodeURIComponent(value)]));
        add('bad path parameter', `${name}=${excerpt(garbage, 30)}`, { path: fillPath(route, params, true), ...withBody });
      }
    }

    // Query parameters: each declared one with values of the wrong form, and undeclared ones.
    for (const [name, spec] of Object.entries(route.query ?? {})) {
      const values = spec.enum ? ['not-in-the-enum', ...QUERY_GARBAGE.string!] : QUERY_GARBAGE[spec.type]!;
      for (const value of values) {
        // The facade checks typed parameters itself (400); strings (cursors, ids) go on to the service.
        const typed = spec.type !== 'string' || spec.enum !== undefined || value.length > 1024;
        add('bad query parameter', `${name}=${excerpt(value, 30)}`, { query: `${name}=${value}`, ...withBody, ...(typed ? { expect: [400] } : {}) });
      }
      add('bad query parameter', `${name} twice`, { query: `${name}=1&${name}=2`, ...withBody, expect: [400] });
    }
    add('bad query parameter', 'undeclared parameter', { query: 'unexpected=1', ...withBody, expect: [400] });
    add('bad query parameter', 'bad percent-encoding in the name', { query: '%ZZ%00=%ZZ', ...withBody, expect: [400] });

    // Bodies, where the route reads one.
    if (route.method === 'POST' && route.body) {
      const body = (valid.body ?? {}) as Json;
      const properties = (route.body.properties ?? {}) as Record<string, JsonSchema>;
      const required = (route.body.required ?? []) as string[];
      const sendBody = (kind: string, variant: string, text: Buffer | string, extra: { headers?: Record<string, string>; expect?: readonly number[]; chunked?: boolean } = {}) =>
        add(kind, variant, { body: text, ...extra, headers: extra.headers ?? { ...auth, 'content-type': 'application/json' } });
      if (typeof valid.body === 'object' && valid.body !== null && !Array.isArray(valid.body) && Object.keys(properties).length > 0) bodyRoutes.push({ service, route, body, token });

      for (const [name, schema] of Object.entries(properties)) {
        const type = typeOf(schema);
        if (!type) continue;
        for (const value of WRONG_VALUES[type] ?? []) sendBody('wrong JSON type', `${name}: ${excerpt(JSON.stringify(value), 20)}`, JSON.stringify({ ...body, [name]: value }));
        if (required.includes(name)) sendBody('wrong JSON type', `${name}: null`, JSON.stringify({ ...body, [name]: null }));
        // Identifiers and constrained strings; free text (a description) has no documented limit.
        if (type === 'string' && (schema.enum || schema.pattern || schema.maxLength || IDENTIFIER.test(name)))
          sendBody('huge value', `${name}: 300,000 characters`, JSON.stringify({ ...body, [name]: 'x'.repeat(300_000) }));
        if (type === 'string') {
          sendBody('huge value', `${name}: NUL and lone surrogate`, withRawMember(body, name, '"a\\u0000b\\ud800"'));
        }
        if (type === 'integer' || type === 'number') {
          for (const raw of ['1e308', '-1e308', '18446744073709551616', '1e-300', '-0.5', `1${'0'.repeat(400)}`])
            sendBody('huge value', `${name}: ${excerpt(raw, 20)}`, withRawMember(body, name, raw));
        }
        sendBody('deep nesting', `${name}: arrays 10,000 deep`, withRawMember(body, name, deepArray(10_000)));
        sendBody('deep nesting', `${name}: objects 50,000 deep`, withRawMember(body, name, deepObject(50_000)));
      }
      for (const name of required) {
        const rest = Object.fromEntries(Object.entries(body).filter(([member]) => member !== name));
        sendBody('missing required member', name, JSON.stringify(rest));
      }
      if (required.length > 1) sendBody('missing required member', 'all', '{}');
      sendBody('unknown member', 'top level', JSON.stringify({ ...body, unexpected_member: 'surprise' }));
      const twins = Object.keys(properties).filter((name) => name.includes('_'));
      if (twins.length > 0)
        sendBody(
          'unknown member',
          'camelCase twins of the members',
          JSON.stringify({ ...body, ...Object.fromEntries(twins.map((name) => [name.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase()), body[name] ?? 'x'])) }),
        );
      for (const [variant, value] of [
        ['null', null],
        ['a number', 42],
        ['a string', 'text'],
        ['an empty array', []],
        ['true', true],
        ['the valid body in an array', [body]],
      ] as [string, unknown][]) {
        sendBody('wrong JSON type', `whole body ${variant}`, JSON.stringify(value));
      }
      sendBody('deep nesting', 'whole body: arrays 100,000 deep', deepArray(100_000));
      sendBody('deep nesting', 'whole body: objects 100,000 deep', deepObject(100_000));
      sendBody('huge value', '2,000 members', JSON.stringify({ ...body, ...Object.fromEntries(Array.from({ length: 2_000 }, (_, i) => [`m${i}`, i])) }));
      const padding = 'p'.repeat(BODY_LIMIT + 100_000);
      sendBody('body over the limit', 'declared length', JSON.stringify({ ...body, padding }), { expect: [413] });
      sendBody('body over the limit', 'chunked, no length', JSON.stringify({ ...body, padding }), { chunked: true, expect: [413] });
      sendBody('body over the limit', '10 MiB declared', Buffer.alloc(10 * BODY_LIMIT, 0x20), { expect: [413] });

      const text = validBody ?? '{}';
      const bytes = Buffer.from(text);
      const invalidUtf8 = Buffer.concat([bytes.subarray(0, Math.max(1, text.indexOf('"') + 1)), Buffer.from([0xff, 0xfe, 0xc3, 0x28]), bytes.subarray(Math.max(1, text.indexOf('"') + 1))]);
      sendBody('bad encoding', 'invalid UTF-8 bytes in a string', invalidUtf8);
      sendBody('bad encoding', 'overlong UTF-8 encoding of a quote', Buffer.concat([Buffer.from('{"id":"'), Buffer.from([0xc0, 0xa2]), Buffer.from('"}')]));
      sendBody('bad encoding', 'UTF-16LE with BOM', Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, 'utf16le')]), {
        headers: { ...auth, 'content-type': 'application/json; charset=utf-16' },
      });
      sendBody('bad encoding', 'two BOMs', `\uFEFF\uFEFF${text}`);
      sendBody('bad encoding', 'BOM then truncated', `\uFEFF${text.slice(0, Math.floor(text.length / 2))}`);
      for (const cut of [1, Math.floor(text.length / 3), Math.floor((2 * text.length) / 3), text.length - 1]) sendBody('bad encoding', `truncated at ${cut} of ${text.length}`, text.slice(0, cut));
      for (const [variant, raw] of [
        ['empty body', ''],
        ['whitespace only', ' \n\t '],
        ['NaN', `{"id": NaN}`],
        ['trailing comma', `${text.slice(0, -1)},}`],
        ['single quotes', text.replaceAll('"', "'")],
        ['a comment', `/* c */${text}`],
        ['trailing garbage', `${text}x`],
        ['two documents', `${text}${text}`],
        ['unquoted member names', text.replace(/"(\w+)":/g, '$1:')],
        ['control character in a string', `{"id":"a\u0001b"}`],
      ] as [string, string][]) {
        sendBody('bad encoding', variant, raw);
      }
      for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/jsonx', 'application/xml', 'json', '']) {
        sendBody('bad media type', type || 'empty content-type', text, { headers: { ...auth, ...(type ? { 'content-type': type } : { 'content-type': '' }) }, expect: [415] });
      }
      sendBody('bad media type', 'no content-type', text, { headers: { ...auth }, expect: [415] });
    }
    groups.push({ target, probes });
  }

  // Seeded random bodies: two to four mutations, one of them certainly invalid (a required member
  // removed or null, or a declared member given a value of another JSON type).
  const deterministic = groups.reduce((sum, group) => sum + group.probes.length, 0);
  const gatewayProbes = gatewayCases(context);
  const randomCount = Math.max(0, TARGET_REQUESTS - deterministic - gatewayProbes.length);
  const garbageString = () => {
    const alphabet = ['a', 'Z', '0', ' ', '"', '\\', '/', '\u0000', '\u0007', '\u2028', 'é', '💥', '\uFEFF', '%', '#', '{', '}', '\ud800'];
    return Array.from({ length: 1 + Math.floor(random() * 64) }, () => pick(alphabet)).join('');
  };
  const randomValue = (): unknown =>
    pick<() => unknown>([
      () => garbageString(),
      () => Math.floor((random() - 0.5) * 2 ** 60),
      () => random() * 1e300,
      () => random() < 0.5,
      () => null,
      () => [],
      () => ({ [garbageString()]: garbageString() }),
      () => [randomValue()],
    ])();
  const sameTypeValue = (type: string | undefined): unknown =>
    type === 'string'
      ? garbageString()
      : type === 'integer'
        ? Math.floor((random() - 0.5) * 2 ** 40)
        : type === 'number'
          ? (random() - 0.5) * 1e300
          : type === 'boolean'
            ? random() < 0.5
            : type === 'array'
              ? [randomValue()]
              : { [garbageString()]: randomValue() };
  const randomGroups = new Map<string, Probe[]>();
  for (let i = 0; i < randomCount && bodyRoutes.length > 0; i += 1) {
    const { service, route, body, token } = pick(bodyRoutes);
    const schemas = route.body!.properties as Record<string, JsonSchema>;
    const properties = Object.keys(schemas);
    const required = (route.body!.required ?? []) as string[];
    const mutated: Json = { ...body };
    const typed = properties.filter((name) => typeOf(schemas[name]) !== undefined);
    const identifiers = properties.filter((name) => typeOf(schemas[name]) === 'string' && IDENTIFIER.test(name) && !schemas[name]!.enum);
    // Half the time the certainly invalid change is of the right JSON type, so that it passes the
    // facade and the service must refuse it: an identifier with U+0000, a space and '#' in it.
    const deep = identifiers.length > 0 && random() < 0.5;
    const certain = deep ? pick(identifiers) : required.length > 0 && (random() < 0.5 || typed.length === 0) ? pick(required) : pick(typed);
    const wrongValues = [...(WRONG_VALUES[typeOf(schemas[certain]) ?? ''] ?? []), ...(required.includes(certain) ? [null] : [])];
    if (deep) mutated[certain] = `${garbageString()}\u0000 #${garbageString()}`;
    else if (required.includes(certain) && (random() < 0.5 || wrongValues.length === 0)) delete mutated[certain];
    else mutated[certain] = pick(wrongValues);
    const changes = [`${certain} ${certain in mutated ? `→ ${excerpt(JSON.stringify(mutated[certain]), 40)}` : 'removed'}`];
    for (let j = 1 + Math.floor(random() * 3); j > 0; j -= 1) {
      // Further changes keep the JSON types when the certain one is deep, so the body gets that far.
      const name = deep ? pick(properties) : random() < 0.8 ? pick(properties) : garbageString();
      if (name === certain) continue;
      mutated[name] = deep ? sameTypeValue(typeOf(schemas[name])) : randomValue();
      changes.push(`${excerpt(JSON.stringify(name), 20)} → ${excerpt(JSON.stringify(mutated[name]), 30)}`);
    }
    const target = `${service} ${route.method} ${route.path}`;
    const valid = (await validRequest(context, service, route, fixtures))!;
    const list = randomGroups.get(target) ?? [];
    list.push({
      target,
      kind: 'random (seeded)',
      variant: changes.join('; '),
      request: {
        url: `${context.stack.facade.baseUrls[service]}${fillPath(route, valid.params)}`,
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify(mutated),
      },
      authenticated: true,
      facade: true,
      mutation: /^\s*mutation\b/.test(route.operation),
    });
    randomGroups.set(target, list);
  }
  for (const [target, probes] of randomGroups) groups.push({ target: `${target} (random)`, probes });
  groups.push({ target: 'gateway POST /graphql', probes: gatewayProbes });

  // ---------------------------------------------------------------------------------------------
  // Sending, group by group: unauthenticated probes, then authenticated ones, tables hashed between

  const byTarget = new Map<string, { requests: number; ok: number; client: number; server: number; nonProblem: number }>();
  const byKind = new Map<string, { requests: number; statuses: Map<number, number>; server: number; nonProblem: number }>();
  let total = 0;
  let serverErrors = 0;
  let nonProblems = 0;
  let unexpected = 0;
  let acceptedWrites = 0;
  const tablesChanged = new Set<string>();

  const check = (probe: Probe, answer: RawAnswer) => {
    total += 1;
    const where = `${probe.target} [${probe.kind}: ${probe.variant}]`;
    const path = byTarget.get(probe.target.replace(/ \(random\)$/, '')) ?? { requests: 0, ok: 0, client: 0, server: 0, nonProblem: 0 };
    byTarget.set(probe.target.replace(/ \(random\)$/, ''), path);
    const kind = byKind.get(probe.kind) ?? { requests: 0, statuses: new Map(), server: 0, nonProblem: 0 };
    byKind.set(probe.kind, kind);
    path.requests += 1;
    kind.requests += 1;
    kind.statuses.set(answer.status, (kind.statuses.get(answer.status) ?? 0) + 1);
    // The gateway answers a failed operation with 200 and errors: an internal error there is a 5xx.
    const internal = !probe.facade && answer.status < 500 && /"code":"INTERNAL_SERVER_ERROR"/.test(answer.text);
    if (answer.status === 0 || answer.status >= 500 || internal) {
      serverErrors += 1;
      path.server += 1;
      kind.server += 1;
      failures.add(`${where}: ${answer.status || answer.error}: ${excerpt(answer.text)}`);
      return;
    }
    if (answer.status < 300) path.ok += 1;
    if (answer.status >= 400) {
      path.client += 1;
      const violation = probe.facade ? problemViolation(answer, probe.request.method) : undefined;
      if (violation) {
        nonProblems += 1;
        path.nonProblem += 1;
        kind.nonProblem += 1;
        failures.add(`${where}: ${answer.status} is not a problem (${violation}): ${excerpt(answer.text)}`);
      }
    }
    if (probe.expect && !probe.expect.includes(answer.status)) {
      unexpected += 1;
      failures.add(`${where}: ${answer.status}, expected ${probe.expect.join(' or ')}: ${excerpt(answer.text)}`);
    } else if (probe.mutation && probe.facade && answer.status < 300 && probe.kind !== 'bad query parameter') {
      acceptedWrites += 1;
      failures.add(`${where}: a malformed write was accepted (${answer.status}): ${excerpt(answer.text)}`);
    }
  };

  try {
    for (const group of groups) {
      for (const authenticated of [false, true]) {
        const probes = group.probes.filter((probe) => probe.authenticated === authenticated);
        if (probes.length === 0) continue;
        const before = await tables.snapshot();
        await pool(probes, WIDTH, async (probe) => {
          const answer = await send(probe.request);
          // No answer is a failure all the same; sent again alone, it shows whether the server or the connection was stuck.
          if (answer.status === 0) {
            const again = await send(probe.request, 30_000, true);
            answer.error = `${answer.error}; sent again on a new connection: ${again.status || again.error}`;
          }
          check(probe, answer);
        });
        const after = await tables.snapshot();
        // A refused request by a valid token is logged with its outcome (DESIGN §3); never as ok.
        const changes = changedTables(before, after, authenticated ? ADMIN_LOG_TABLES : []);
        for (const change of changes) {
          tablesChanged.add(change.split(':')[0]!);
          failures.add(`${group.target}, ${authenticated ? 'with' : 'without'} a valid token: ${change}`);
        }
        if (authenticated) {
          for (const entry of await tables.adminLogSince(before)) {
            if (entry.outcome !== 'ok') continue;
            tablesChanged.add(`${entry.service}.admin_log`);
            failures.add(`${group.target}: a malformed request was logged as a successful ${entry.action} on ${excerpt(entry.target ?? '', 60)}`);
          }
        }
      }
    }
  } finally {
    await tables.close();
  }

  const statuses = (map: Map<number, number>) =>
    [...map]
      .sort(([a], [b]) => a - b)
      .map(([status, count]) => `${status || 'none'} ×${count}`)
      .join(', ');
  const details = [
    `Seed ${context.seed} (\`SOAK_SEED=${context.seed} npm run soak -- malformed\` repeats the run). Every request of a path is sent after the fixtures (trust nodes, an edge, a trust list, witnesses, a master-list entry, a revocation, the sample register, a model, passports with events and a pack, a snapshot), so paths with real ids get bad bodies too. Tables hashed before and after each path's requests without a valid token (every table, admin logs included), and again around those with one: there the admin logs are left out of the hash, since DESIGN §3 logs every authenticated state-changing request with its outcome, refusals included; instead each new admin-log entry must carry a refusal's outcome, never \`ok\`.`,
    '',
    '### By kind of malformation',
    '',
    markdownTable(
      ['kind', 'requests', 'statuses', '5xx', 'non-problem 4xx'],
      [...byKind].map(([kind, row]) => [kind, String(row.requests), statuses(row.statuses), String(row.server), String(row.nonProblem)]),
      ['left', 'right', 'left', 'right', 'right'],
    ),
    '',
    '### By path',
    '',
    markdownTable(
      ['path', 'requests', '2xx', '4xx', '5xx', 'non-problem 4xx'],
      [...byTarget].map(([target, row]) => [target, String(row.requests), String(row.ok), String(row.client), String(row.server), String(row.nonProblem)]),
      ['left', 'right', 'right', 'right', 'right', 'right'],
    ),
    '',
    '2xx answers are requests that stayed valid (a read with a harmless filter, a document to validate, an unknown cursor on a GraphQL read); a 2xx to a malformed write is a failure.',
  ].join('\n');

  return {
    title: 'Bad input',
    method: `${total} malformed requests (seed ${context.seed}) over all ${routes.length} paths of the route tables through the REST facade and ${gatewayProbes.length} to the gateway's /graphql; every table of every service schema hashed around each path's requests.`,
    passed: failures.empty,
    figures: [
      { measure: 'requests', value: total },
      { measure: 'paths of the route tables covered', value: `${new Set([...byTarget.keys()].filter((key) => !key.startsWith('gateway'))).size} of ${routes.length}` },
      { measure: 'responses with status ≥ 500 (or none)', value: serverErrors, expected: 0 },
      { measure: 'facade 4xx that are not RFC 9457 problems', value: nonProblems, expected: 0 },
      { measure: 'statuses other than the design gives (405, 401/403, 413, 415, 400)', value: unexpected, expected: 0 },
      { measure: 'malformed writes accepted', value: acceptedWrites, expected: 0 },
      { measure: 'tables changed', value: tablesChanged.size, expected: 0 },
    ],
    failures: failures.list(),
    details,
    seconds: (performance.now() - started) / 1000,
  };
}

/** Malformed requests straight to the gateway: transport, document and variables. */
function gatewayCases(context: SoakContext): Probe[] {
  const url = context.stack.gateway.graphqlUrl;
  const probes: Probe[] = [];
  const writer = { authorization: `Bearer ${context.tokens.writer}` };
  const add = (kind: string, variant: string, request: Omit<RawRequest, 'url'> & { path?: string }, authenticated = false) =>
    probes.push({
      target: 'gateway POST /graphql',
      kind: `gateway: ${kind}`,
      variant,
      request: { ...request, url: request.path ? url.replace(/\/graphql$/, request.path) : url },
      authenticated,
      facade: false,
      mutation: false,
    });
  const json = (payload: unknown, headers: Record<string, string> = {}) => ({
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof payload === 'string' ? payload : JSON.stringify(payload),
  });
  const mutation = 'mutation { upsertTrustNode(input: { id: "gateway-probe", kind: "issuer" }) { created } }';

  for (const [variant, raw] of [
    ['empty body', ''],
    ['truncated', '{"query": "mutation {'],
    ['not JSON', 'query { __typename }'],
    ['invalid UTF-8', Buffer.from([0x7b, 0x22, 0x71, 0xff, 0xfe, 0x22, 0x3a, 0x31, 0x7d])],
    ['two BOMs', `\uFEFF\uFEFF${JSON.stringify({ query: '{ __typename }' })}`],
    ['null', 'null'],
    ['an array', '[]'],
    ['batch of two mutations', JSON.stringify([{ query: mutation }, { query: mutation }])],
    ['query is a number', JSON.stringify({ query: 42 })],
    ['variables is a string', JSON.stringify({ query: mutation, variables: 'x' })],
    ['operationName unknown', JSON.stringify({ query: mutation, operationName: 'Nope' })],
    ['syntax error', JSON.stringify({ query: 'mutation { upsertTrustNode(' })],
    ['unknown field', JSON.stringify({ query: 'mutation { dropEverything }' })],
    ['nesting 500 deep', JSON.stringify({ query: `{ ${'a { '.repeat(500)}b${' }'.repeat(500)} }` })],
    ['10,000 aliases', JSON.stringify({ query: `{ ${Array.from({ length: 10_000 }, (_, i) => `a${i}: __typename`).join(' ')} }` })],
    ['2,000 mutation aliases', JSON.stringify({ query: `mutation { ${Array.from({ length: 2_000 }, (_, i) => `a${i}: upsertTrustNode(input: { id: "x${i}" }) { created }`).join(' ')} }` })],
    ['1,000 directives', JSON.stringify({ query: `{ __typename ${'@include(if: true) '.repeat(1_000)}}` })],
    ['over the body limit', JSON.stringify({ query: `{ __typename } #${'x'.repeat(BODY_LIMIT + 10)}` })],
  ] as [string, string | Buffer][]) {
    add('transport and document', variant, json(raw, writer), true);
    add('transport and document', `${variant}, no token`, json(raw));
  }
  for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x']) {
    add('media type', type, { method: 'POST', headers: { 'content-type': type, ...writer }, body: JSON.stringify({ query: mutation }) }, true);
  }
  add('method', 'mutation by GET', { method: 'GET', path: `/graphql?query=${encodeURIComponent(mutation)}`, headers: { ...writer, 'apollo-require-preflight': 'true' } }, true);
  add('method', 'mutation by GET, no preflight header', { method: 'GET', path: `/graphql?query=${encodeURIComponent(mutation)}`, headers: writer }, true);
  for (const method of ['PUT', 'DELETE', 'PATCH']) add('method', method, { ...json({ query: mutation }, writer), method }, true);

  // Every mutation of the route tables with each variable of a wrong type, by a valid token.
  const wrong: unknown[] = [null, 42, 'text', true, [], {}, [{}], 1e308, 'x'.repeat(100_000)];
  for (const { route } of allRoutes()) {
    const variables = [...route.operation.matchAll(/\$(\w+):/g)].map((match) => match[1]!);
    if (!/^\s*mutation\b/.test(route.operation) || variables.length === 0) continue;
    const headers = { authorization: `Bearer ${route.role === 'admin' ? context.tokens.admin : context.tokens.writer}` };
    for (const name of new Set(variables)) {
      for (const value of wrong) {
        // Everything else absent too: a mutation missing its other required variables must be refused whole.
        add('variables', `${route.operation.split(/[({]/)[0]!.trim()} $${name} = ${excerpt(JSON.stringify(value), 20)}`, json({ query: route.operation, variables: { [name]: value } }, headers), true);
      }
    }
    add('variables', `${route.operation.split(/[({]/)[0]!.trim()} with no variables`, json({ query: route.operation }, headers), true);
    add(
      'variables',
      `${route.operation.split(/[({]/)[0]!.trim()} with variables 5,000 deep`,
      json(`{"query": ${JSON.stringify(route.operation)}, "variables": {"input": ${deepObject(5_000)}, "credential": ${deepArray(5_000)}, "payload": ${deepObject(5_000)}}}`, headers),
      true,
    );
  }
  return probes;
}
