/**
 * The services' docs and their answers cannot drift: every error code a service's doc names with its
 * status (`409 STALE_VERSION`, a `| 400 | CODE |` row) for the paths of its paragraph is checked
 * against the code. The status must be the code's own (docs/GRAPHQL-ERRORS.md, whose rows
 * test/gateway/error-codes.test.ts ties to the source), one that path's OpenAPI operation declares
 * (rest-facade/openapi.ts, from the route tables), and a code the facade gives by a route's shape
 * only where the route has that shape (a token refusal where it needs a role, a body refusal where
 * it takes a body). What the docs say of unknown members is what the facade's validator answers.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { SERVICES, type ServiceName } from '../../lib/config/services.js';
import { routeSchema } from '../../rest-facade/openapi.js';
import type { Route } from '../../rest-facade/route-table.js';
import { ROUTE_TABLES } from '../../rest-facade/routes/index.js';
import { validatorCompiler } from '../../rest-facade/validation.js';

/** Each code's statuses, from its rows on the page of every code. */
const STATUSES_OF = new Map<string, Set<number>>();
for (const [, code, status] of readFileSync('docs/GRAPHQL-ERRORS.md', 'utf8').matchAll(/^\| `([A-Z][A-Z0-9_]+)` \| (\d{3}) \|/gm)) {
  STATUSES_OF.set(code!, (STATUSES_OF.get(code!) ?? new Set()).add(Number(status)));
}

/** Codes the facade answers by the shape of a route, not by what the service decides. */
const SHAPE_CODES: Record<string, (route: Route) => boolean> = {
  MISSING_TOKEN: (route) => route.role !== undefined,
  INVALID_TOKEN: (route) => route.role !== undefined,
  INSUFFICIENT_ROLE: (route) => route.role !== undefined,
  UNSUPPORTED_MEDIA_TYPE: (route) => route.body !== undefined,
  BODY_TOO_LARGE: (route) => route.body !== undefined,
  INVALID_BODY: (route) => route.body !== undefined,
  MALFORMED_JSON: (route) => route.method === 'POST',
};

interface Claim {
  doc: string;
  line: number;
  text: string;
  status: number;
  code: string;
  routes: { service: ServiceName; route: Route }[];
}

const normal = (path: string) => path.replace(/\{[^}]*\}/g, '{}').replace(/\/$/, '') || '/';

/** The routes a text names as `METHOD /path` (service-qualified by a preceding service name in REST.md). */
function routesNamed(text: string, services: readonly ServiceName[]): Claim['routes'] {
  const named: Claim['routes'] = [];
  for (const [, method, path] of text.matchAll(/`(GET|POST|HEAD) (\/[^`?\s]*)[^`]*`/g)) {
    for (const service of services) {
      const route = ROUTE_TABLES[service].routes.find((candidate) => candidate.method === (method === 'HEAD' ? 'GET' : method) && normal(candidate.path) === normal(path!));
      if (route) named.push({ service, route });
    }
  }
  return named;
}

/**
 * Every code a doc names after a status, in a paragraph, list item or table row: the routes are
 * those the paragraph names, else (in a service's own doc) the nearest ones named before it in its
 * section, else every route of the services the doc is about.
 */
function claimsOf(doc: string, services: readonly ServiceName[]): Claim[] {
  const carry = services.length === 1;
  const claims: Claim[] = [];
  const lines = readFileSync(doc, 'utf8').split('\n');
  let section: Claim['routes'] = [];
  let block: { start: number; text: string } | undefined;
  const flush = () => {
    if (!block) return;
    const own = routesNamed(block.text, services);
    if (own.length && carry) section = own;
    const routes = own.length ? own : section.length ? section : services.flatMap((service) => ROUTE_TABLES[service].routes.map((route) => ({ service, route })));
    // A status applies to the codes after it in its sentence or row: "422 `A` or `B`", "`400 C`", "| 400 | `D`, `E` |".
    for (const sentence of block.text.split(/(?<=\.)\s+(?=[A-Z`(])|;/)) {
      let status: number | undefined;
      for (const [token, number, code] of sentence.matchAll(/\b([1-5]\d\d)\b|`(?:[1-5]\d\d )?([A-Z][A-Z0-9_]{3,})`/g)) {
        const inline = /^`(\d{3})/.exec(token)?.[1];
        if (number) status = Number(number);
        else if (inline ?? status) claims.push({ doc, line: block.start, text: sentence.trim(), status: Number(inline ?? status), code: code!, routes });
      }
    }
    block = undefined;
  };
  lines.forEach((line, index) => {
    if (/^#/.test(line)) {
      flush();
      section = carry ? routesNamed(line, services) : [];
    } else if (line.trim() === '' || /^\s*([-*]|\d+\.) /.test(line) || line.startsWith('|')) {
      flush();
      if (line.trim() !== '') block = { start: index + 1, text: line };
    } else block = block ? { ...block, text: `${block.text} ${line.trim()}` } : { start: index + 1, text: line };
    if (line.startsWith('|')) flush();
  });
  flush();
  return claims;
}

const CLAIMS = [...SERVICES.flatMap((service) => claimsOf(`docs/${service}.md`, [service])), ...claimsOf('docs/REST.md', SERVICES)];

/** The code the facade's validator answers a body with one member the route does not declare. */
function unknownMemberCode(route: Route): string | undefined {
  const validate = validatorCompiler({ schema: route.body!, httpPart: 'body', method: route.method, url: route.path }) as (data: unknown) => { error?: { details: { code: string } } };
  return validate({ colour: 'red' }).error?.details.code;
}

describe("the routes' schemas", () => {
  // The facade compiles a route's validators at its first request (rest-facade/validation.ts), so a schema Ajv refuses is found here rather than at a start.
  it('compile, every body and query string of every route', () => {
    let compiled = 0;
    for (const service of SERVICES) {
      for (const route of ROUTE_TABLES[service].routes) {
        const schema = routeSchema(route) as Record<string, unknown>;
        for (const httpPart of ['body', 'querystring'] as const) {
          if (!schema[httpPart]) continue;
          const validate = validatorCompiler({ schema: schema[httpPart] as never, httpPart, method: route.method, url: route.path }) as (data: unknown) => unknown;
          expect(() => validate({}), `${service} ${route.method} ${route.path} ${httpPart}`).not.toThrow();
          compiled += 1;
        }
      }
    }
    expect(compiled).toBeGreaterThan(20);
  });
});

describe('error codes the docs name', () => {
  it('are read from every doc', () => {
    expect(new Set(CLAIMS.map((claim) => claim.doc))).toEqual(new Set([...SERVICES.map((service) => `docs/${service}.md`), 'docs/REST.md']));
    expect(CLAIMS.length).toBeGreaterThan(30);
  });

  it.each(CLAIMS.map((claim) => [`${claim.doc}:${claim.line} ${claim.status} ${claim.code}`, claim] as const))('%s is what its paths can answer', (_name, claim) => {
    const where = `${claim.doc}:${claim.line}: "${claim.text}"`;
    expect([...(STATUSES_OF.get(claim.code) ?? [])], `${where}: ${claim.code} is no code of the platform, or not with status ${claim.status}`).toContain(claim.status);
    const answering = claim.routes.filter(({ route }) => Object.hasOwn((routeSchema(route).response ?? {}) as object, String(claim.status)));
    expect(
      answering.map(({ route }) => `${route.method} ${route.path}`),
      `${where}: no path of the paragraph declares ${claim.status}`,
    ).not.toEqual([]);
    const shape = SHAPE_CODES[claim.code];
    if (shape)
      expect(
        answering.filter(({ route }) => shape(route)),
        `${where}: ${claim.code} does not fit these routes`,
      ).not.toEqual([]);
    if (/nknown members/.test(claim.text)) {
      for (const { route } of answering.filter(({ route }) => route.body)) expect(unknownMemberCode(route), where).toBe(claim.code);
    }
  });
});
