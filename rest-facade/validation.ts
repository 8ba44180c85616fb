/**
 * What the facade checks of a request against its route's schemas, as Fastify's validator compiler,
 * and how a refusal reads.
 *
 * Query strings are checked whole: only declared parameters, each once, of its declared type
 * (RFC 3339 date-times and intervals as lib/time.ts reads them). Bodies are checked at the top
 * level: only declared members, and each scalar one of its declared JSON type. A number where an id
 * is a string, 1e400 (read as Infinity and sent on as null) or a misspelt member must be refused
 * here, as GraphQL would coerce or drop them; what lies deeper (keys, attestations, documents) stays
 * with the service, whose domain refuses it with the codes it documents (e.g. 422 BAD_ATTESTATION).
 * The documented schema is the full one; `bodyCheck` is the part of it the facade enforces.
 */
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import type { FastifySchemaCompiler } from 'fastify';
import { problem } from '../lib/problem.js';
import { INSTANT_EXPECTED, isRfc3339Instant, isRfc3339Interval } from '../lib/time.js';
import { RequestProblem } from '../lib/http/request-problem.js';
import type { JsonSchema } from './route-table.js';

const SCALAR_TYPES = new Set(['string', 'integer', 'number', 'boolean']);

/** The JSON types a member schema allows (`null` left to the route: an absent optional member). */
function typesOf(schema: JsonSchema): string[] | undefined {
  if (typeof schema.type === 'string') return [schema.type];
  if (Array.isArray(schema.type)) return schema.type as string[];
  if (Array.isArray(schema.enum) && schema.enum.every((value) => typeof value === 'string' || value === null)) return ['string'];
  return undefined;
}

/**
 * The top-level part of a body schema the facade enforces: declared members only (unless the schema
 * opens them), scalar members of their type or null. Bodies that are not objects pass to the route.
 */
export function bodyCheck(schema: JsonSchema): JsonSchema {
  const properties = schema.properties as Record<string, JsonSchema> | undefined;
  if (schema.type !== 'object' || !properties) return {};
  const members = Object.fromEntries(
    Object.entries(properties).map(([name, member]) => {
      const types = typesOf(member)?.filter((type) => type !== 'null');
      if (!types || types.length === 0 || !types.every((type) => SCALAR_TYPES.has(type))) return [name, {}];
      // JSON.parse reads 1e400 as Infinity, which JSON Schema's number types admit.
      return [name, { type: [...types, 'null'], ...(types.some((type) => type === 'integer' || type === 'number') ? { finite: true } : {}) }];
    }),
  );
  return {
    // Only objects are held to the member rules; an array or text goes on for GraphQL to refuse.
    if: { type: 'object' },
    // biome-ignore lint/suspicious/noThenProperty: JSON Schema's if/then keyword, not a thenable
    then: { type: 'object', properties: members, ...(schema.additionalProperties === undefined || schema.additionalProperties === false ? { additionalProperties: false } : {}) },
  };
}

const FORMATS = { 'date-time': isRfc3339Instant, interval: isRfc3339Interval };
/** Query values arrive as text and are read as their declared types; body members keep the types JSON gave them. */
const ajvFor = { querystring: new Ajv({ allErrors: true, coerceTypes: true, strict: false, formats: FORMATS }), body: new Ajv({ allErrors: true, strict: false, verbose: true, formats: FORMATS }) };
ajvFor.body.addKeyword({ keyword: 'finite', type: 'number', validate: (_: boolean, value: number) => Number.isFinite(value) });

const article = (type: string) => (type === 'integer' ? 'an integer' : `a${/^[aeiou]/.test(type) ? 'n' : ''} ${type}`);

/** One sentence per refusal, naming the member or parameter as the client wrote it. */
function sentence(error: ErrorObject, part: 'body' | 'querystring', declared: readonly string[], data: Record<string, unknown>): string {
  const name = error.instancePath.slice(1).replaceAll('~1', '/').replaceAll('~0', '~');
  switch (error.keyword) {
    case 'additionalProperties': {
      const extra = String(error.params.additionalProperty);
      return part === 'body' ? `Unknown member ${extra}; the body takes ${declared.join(', ')}.` : `unknown query parameter ${extra}; this path takes ${declared.join(', ') || 'none'}`;
    }
    case 'type':
    case 'finite': {
      if (part === 'querystring' && Array.isArray(data[name])) return `${name} may be given once`;
      const types = String(error.params.type ?? (error.parentSchema as JsonSchema).type)
        .split(',')
        .filter((type) => type !== 'null');
      return part === 'body' ? `${name} must be ${types.map(article).join(' or ')}.` : `${name} must be ${types.map(article).join(' or ')}`;
    }
    case 'format': {
      if (error.params.format === 'interval') return `${name} must be an RFC 3339 interval start/end, each end within years 0001 to 9999 in UTC; either end may be empty or ".."`;
      // A query string reads "+" as a space, so an offset written +02:00 arrives as " 02:00".
      const plusRead = part === 'querystring' && / \d{2}:\d{2}$/.test(String(data[name] ?? ''));
      return `${name} must be ${INSTANT_EXPECTED}${plusRead ? '; in a query string write the + of an offset as %2B' : ''}`;
    }
    case 'enum':
      return `${name} must be one of ${(error.params.allowedValues as unknown[]).join(', ')}`;
    case 'minimum':
    case 'maximum':
      return `${name} must be ${error.keyword === 'minimum' ? 'at least' : 'at most'} ${String(error.params.limit)}`;
    case 'maxLength':
      return `${name} is too long`;
    default:
      return `${name || part} ${error.message ?? 'is invalid'}`;
  }
}

/** The first refusal that names something: `if` failing only repeats what `then` said. */
function refusal(errors: readonly ErrorObject[], part: 'body' | 'querystring', schema: JsonSchema, data: unknown): RequestProblem {
  const first = errors.find((error) => error.keyword !== 'if') ?? errors[0]!;
  const properties = ((part === 'body' ? (schema.then as JsonSchema | undefined)?.properties : schema.properties) ?? {}) as Record<string, unknown>;
  const detail = sentence(first, part, Object.keys(properties), (data ?? {}) as Record<string, unknown>);
  return new RequestProblem(part === 'body' ? problem(400, 'INVALID_REQUEST', detail) : problem(400, 'INVALID_QUERY', detail));
}

const validators = new Map<string, ValidateFunction>();

/**
 * A schema's validator, compiled once per process: Ajv keeps compiled schemas by object, and every
 * start of a facade (a restart, each server of a facade on several ports, each stack in a test
 * process) hands it new objects of the same schemas, so each start compiled them all again.
 */
function compiled(part: 'body' | 'querystring', schema: JsonSchema): ValidateFunction {
  const key = `${part} ${JSON.stringify(schema)}`;
  let validate = validators.get(key);
  if (!validate) validators.set(key, (validate = ajvFor[part].compile(schema)));
  return validate;
}

/**
 * Fastify's validator compiler for the facade: bodies against `bodyCheck` of the documented schema,
 * query strings against theirs; path parameters are any non-empty segment (the services judge ids).
 */
export const validatorCompiler: FastifySchemaCompiler<JsonSchema> = ({ schema, httpPart }) => {
  if (httpPart !== 'body' && httpPart !== 'querystring') return () => true;
  const part = httpPart;
  const enforced = part === 'body' ? bodyCheck(schema) : schema;
  // Compiled by the route's first request, not at start: Ajv's compiles were ~0.2 CPU-s of each
  // facade's start, for routes most processes (a test's stack, a restart) never serve.
  let validate: ValidateFunction | undefined;
  return (data: unknown) => {
    validate ??= compiled(part, enforced);
    return validate(data) ? { value: data } : { error: refusal(validate.errors ?? [], part, enforced, data) };
  };
};
