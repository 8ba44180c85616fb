/**
 * Building blocks of the response schemas in the route tables: the shapes several routes share
 * (signed JSON, JWKs, pages, instants) written once, and `answer`, which pairs a schema with the
 * example the OpenAPI document shows (test/rest-facade/openapi-responses.test.ts checks that each
 * example matches its schema and that real answers do).
 */
import type { JsonSchema } from './route-table.js';

export const dateTime: JsonSchema = { type: 'string', format: 'date-time' };
export const nullableDateTime: JsonSchema = { type: ['string', 'null'], format: 'date-time' };
export const uri: JsonSchema = { type: 'string', format: 'uri' };
export const hex256: JsonSchema = { type: 'string', pattern: '^[0-9a-f]{64}$', description: 'SHA-256, lowercase hex.' };
export const hex512: JsonSchema = { type: 'string', pattern: '^[0-9a-f]{128}$', description: 'SHA-512, lowercase hex.' };
export const kid: JsonSchema = { type: 'string', minLength: 1, description: 'Key id: the RFC 7638 thumbprint (SHA-256, base64url) where the platform makes it.' };
/** A key id the platform derived itself: always the RFC 7638 thumbprint. */
export const thumbprint: JsonSchema = { type: 'string', pattern: '^[A-Za-z0-9_-]{43}$', description: 'RFC 7638 JWK thumbprint (SHA-256, base64url).' };
export const detachedJws: JsonSchema = {
  type: 'string',
  pattern: '^[A-Za-z0-9_-]+\\.\\.[A-Za-z0-9_-]+$',
  description: 'Detached compact JWS (RFC 7515 appendix F, alg Ed25519) over the RFC 8785 form of the other members.',
};

/** An object with exactly these members: `required` always present, `optional` when they apply. */
export function closed(required: Record<string, JsonSchema>, optional: Record<string, JsonSchema> = {}, description?: string): JsonSchema {
  return {
    type: 'object',
    ...(description ? { description } : {}),
    required: Object.keys(required),
    properties: { ...required, ...optional },
    additionalProperties: false,
  };
}

/** Signed JSON (DESIGN §3): the members and a detached JWS over the RFC 8785 form of the others. */
export function signed(required: Record<string, JsonSchema>, optional: Record<string, JsonSchema> = {}, description?: string): JsonSchema {
  return closed({ ...required, signature: detachedJws }, optional, description);
}

/** A JSON object whose members the caller chose (bodies, payloads, claims): any members. */
export const freeObject = (description: string): JsonSchema => ({ type: 'object', description, additionalProperties: true });

/** A public JWK: Ed25519 as OKP, P-256 as EC; other registered JWK members may ride along. */
export const publicJwk: JsonSchema = {
  type: 'object',
  description: 'A public JWK (Ed25519 as OKP, P-256 as EC); never a private member.',
  required: ['kty', 'crv', 'x'],
  properties: {
    kty: { enum: ['OKP', 'EC'] },
    crv: { enum: ['Ed25519', 'P-256'] },
    x: { type: 'string' },
    y: { type: 'string', description: 'EC keys only.' },
    kid,
  },
  propertyNames: { not: { enum: ['d', 'p', 'q', 'dp', 'dq', 'qi', 'k'] } },
};

/** When a key stopped being good, as OpenID Federation historical keys say it. */
export const keyRevocation = closed({ revoked_at: { type: 'integer', description: 'NumericDate.' }, reason: { type: 'string' } });

/** A page of an append-only list: its entries, and the cursor of the next page (null on the last). */
export function page(member: string, item: JsonSchema, cursorMember = 'next'): JsonSchema {
  return closed({ [member]: { type: 'array', items: item }, [cursorMember]: { type: ['string', 'null'], description: 'Cursor of the next page; null on the last page.' } });
}

/** A success response's schema with its example, as a route table declares it. */
export interface Answer {
  schema: JsonSchema;
  example: unknown;
}

export const answer = (schema: JsonSchema, example: unknown): Answer => ({ schema, example });

/** The `Location` of a 201: an absolute URI of what was made, or of the resource that shows it. */
export const location = (names: string): Record<string, JsonSchema> => ({ Location: { ...uri, description: `Absolute URI. ${names}` } });

export const EXAMPLE_TIME = '2026-05-04T10:15:30.000Z';
export const EXAMPLE_KID = 'yXxilhijMrYkdt9l6i-P40VYrSL318Mou92iSac463o';
export const EXAMPLE_SIGNATURE =
  'eyJhbGciOiJFZDI1NTE5Iiwia2lkIjoieVh4aWxoaWpNcllrZHQ5bDZpLVA0MFZZclNMMzE4TW91OTJpU2FjNDYzbyJ9..S3qc_snho_3EuYgFVviRm2VxyJj64WVBSKlWV-4p9z4YlXsY9LEeZJiJMbesOeQfuqBy8LoUW5I';
export const EXAMPLE_ED25519_JWK = { kty: 'OKP', crv: 'Ed25519', x: 'FWlv5QkzoSA1YhR4qNAizbGzEX9SdqGCZlXmtLufs84', kid: EXAMPLE_KID };
